#!/usr/bin/env node
// `npx hookledger`: runs bin/cli.ts (the CLI's composition root) through tsx (no build step).
import { register } from 'tsx/esm/api';

// The SDK's Node-20 support notice would open every command's output; set it to 'false' to see it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const { main } = await import('./cli.ts');
const code = await main();
// Exit once stdout is flushed: idle keep-alive sockets must not hold the process open.
process.stdout.write('', () => process.exit(code));
