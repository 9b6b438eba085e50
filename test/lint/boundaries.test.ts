/**
 * The import boundaries in biome.jsonc hold: each case plants a file that breaks (or keeps) one rule
 * in the folder it governs, lints it with Biome exactly as `npm test` does, and removes it again.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIOME = path.join(ROOT, 'node_modules/.bin/biome');

interface Diagnostic {
  readonly category: string;
  readonly message: string;
}

async function lintPlanted(folder: string, source: string): Promise<Diagnostic[]> {
  const file = path.join(folder, `planted-${randomUUID().slice(0, 8)}.ts`);
  await writeFile(path.join(ROOT, file), source);
  try {
    const { stdout } = await promisify(execFile)(BIOME, ['lint', '--reporter=json', file], { cwd: ROOT }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
    );
    return (JSON.parse(stdout) as { diagnostics: Diagnostic[] }).diagnostics;
  } finally {
    await rm(path.join(ROOT, file), { force: true });
  }
}

const restricted = (diagnostics: readonly Diagnostic[]) =>
  diagnostics.filter((d) => d.category === 'lint/style/noRestrictedImports').map((d) => d.message);

describe('import boundaries (biome.jsonc)', () => {
  it.each([
    ['lambdas/ingest', "import { Stack } from 'aws-cdk-lib';\nexport const planted = Stack;\n", 'Handler code never imports the CDK'],
    [
      'adapters',
      "import { createLogger } from '../lambdas/shared/logger';\nexport const planted = createLogger;\n",
      'Adapters stand under the handlers',
    ],
    ['adapters', "import { z } from 'zod';\nexport const planted = z;\n", 'never zod'],
    ['transforms', "import { z } from 'zod';\nexport const planted = z;\n", 'Lambdas never bundle zod'],
    [
      'lib/constructs',
      "import { Receipts } from '../../adapters/receipts';\nexport const planted = Receipts;\n",
      'Constructs never import handler internals',
    ],
    [
      'cli',
      "import { createLogger } from '../lambdas/shared/logger';\nexport const planted = createLogger;\n",
      'The CLI parses, calls the operations floor (ops/) and prints',
    ],
    [
      'core',
      "import { Ledger } from '../adapters/ledger';\nexport const planted = Ledger;\n",
      'core/ is the dependency-free contracts module',
    ],
    [
      'lambdas/shared',
      "import { PROJECT_ROOT } from '../../lib/constructs/naming';\nexport const planted = PROJECT_ROOT;\n",
      'Handler code never imports the CDK',
    ],
    ['lambdas/shared', "import { z } from 'zod';\nexport const planted = z;\n", 'Lambdas never bundle zod'],
    [
      'lambdas/fanout',
      "import { runCli } from '../../cli/program';\nexport const planted = runCli;\n",
      'Handler code never imports the operations, the CLI',
    ],
    [
      'lib/constructs',
      "import { createLogger } from '../../lambdas/shared/logger';\nexport const planted = createLogger;\n",
      'Constructs never import handler internals',
    ],
    [
      'cli',
      "import { createIngestHandler } from '../lambdas/ingest/app';\nexport const planted = createIngestHandler;\n",
      'The CLI parses, calls the operations floor (ops/) and prints',
    ],
    [
      'cli',
      "import { startLocalStack } from '../local/stack';\nexport const planted = startLocalStack;\n",
      'The CLI parses, calls the operations floor (ops/) and prints',
    ],
    [
      'cli/commands',
      "import { reconcile } from '../../lambdas/reconcile/reconcile';\nexport const planted = reconcile;\n",
      'The CLI parses, calls the operations floor (ops/) and prints',
    ],
    [
      'cli',
      "import { KeyRegistry } from '../adapters/key-registry';\nexport const planted = KeyRegistry;\n",
      'The CLI parses, calls the operations floor (ops/) and prints',
    ],
    [
      'core',
      "import { createLogger } from '../lambdas/shared/logger';\nexport const planted = createLogger;\n",
      'core/ is the dependency-free contracts module',
    ],
    ['core/config', "import { SQSClient } from '@aws-sdk/client-sqs';\nexport const planted = SQSClient;\n", 'core/ holds contracts only'],
    [
      'console',
      "import { startLocalStack } from '../local/stack';\nexport const planted = startLocalStack;\n",
      "The console's server parses, calls the operations floor (ops/) and answers",
    ],
    [
      'console',
      "import { ledgerItemsByKey } from '../adapters/table-scan';\nexport const planted = ledgerItemsByKey;\n",
      "The console's server parses, calls the operations floor (ops/) and answers",
    ],
    [
      'console/client',
      "import { trace } from '../../ops/trace';\nexport const planted = trace;\n",
      "The console's page runs in the browser",
    ],
    // The operator half's floors: ops/ under the two front ends (cli/, console/) and the bench, which never
    // import each other; the local stack under all of them; the entry points (bin/) above.
    ['ops', "import { runCli } from '../cli/program';\nexport const planted = runCli;\n", 'The operations floor stands under the CLI'],
    [
      'ops',
      "import { serveConsole } from '../console/serve';\nexport const planted = serveConsole;\n",
      'The operations floor stands under the CLI',
    ],
    ['ops', "import { runBench } from '../bench/run';\nexport const planted = runBench;\n", 'The operations floor stands under the CLI'],
    [
      'ops',
      "import { startLocalStack } from '../local/stack';\nexport const planted = startLocalStack;\n",
      'The operations reach a local stack through its contract only',
    ],
    [
      'ops',
      "import { createIngestHandler } from '../lambdas/ingest/app';\nexport const planted = createIngestHandler;\n",
      'The operations take from lambdas/ only the checks the scheduled run makes',
    ],
    // A dynamic import() is held to the same rule: none slips around it.
    [
      'ops',
      "export const planted = () => import('../lambdas/ingest/record');\n",
      'The operations take from lambdas/ only the checks the scheduled run makes',
    ],
    // Handlers' folders never reach into each other: gap recovery runs intake's write steps from
    // lambdas/recording/, which both import; a dynamic import() is refused just as a static one.
    [
      'lambdas/reconcile',
      "import { checkShape } from '../ingest/request';\nexport const planted = checkShape;\n",
      "The reconcile handlers never import another handler's folder",
    ],
    [
      'lambdas/reconcile',
      "export const planted = () => import('../ingest/request');\n",
      "The reconcile handlers never import another handler's folder",
    ],
    ['lambdas/reconcile', "import { Stack } from 'aws-cdk-lib';\nexport const planted = Stack;\n", 'Handler code never imports the CDK'],
    [
      'lambdas/recording',
      "import { answerHandshake } from '../ingest/handshake';\nexport const planted = answerHandshake;\n",
      'lambdas/recording/ holds the steps intake and gap recovery share',
    ],
    [
      'lambdas/recording',
      "import { gapRecovery } from '../reconcile/gap-recovery';\nexport const planted = gapRecovery;\n",
      'lambdas/recording/ holds the steps intake and gap recovery share',
    ],
    ['lambdas/recording', "import { z } from 'zod';\nexport const planted = z;\n", 'Lambdas never bundle zod'],
    [
      'cli/commands',
      "import { serveConsole } from '../../console/serve';\nexport const planted = serveConsole;\n",
      'The CLI and the console are front ends side by side',
    ],
    [
      'console',
      "import { formatUsage } from '../cli/commands/usage';\nexport const planted = formatUsage;\n",
      'The console and the CLI are front ends side by side',
    ],
    ['bench', "import { runCli } from '../cli/program';\nexport const planted = runCli;\n", 'The bench uses the operations floor'],
    [
      'bench',
      "import { serveConsole } from '../console/serve';\nexport const planted = serveConsole;\n",
      'The bench uses the operations floor',
    ],
    [
      'local',
      "import { serveConsole } from '../console/serve';\nexport const planted = serveConsole;\n",
      'The local stack imports none of',
    ],
    ['local', "import { resolveTarget } from '../ops/target';\nexport const planted = resolveTarget;\n", 'The local stack imports none of'],
    ['local/assembly', "import { runCli } from '../../cli/program';\nexport const planted = runCli;\n", 'The local stack imports none of'],
  ])('refuses a planted import in %s (%#)', async (folder, source, message) => {
    const messages = restricted(await lintPlanted(folder, source));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(message);
  });

  it.each([
    ['lambdas/shared', "import { eventKey } from '../../core/model';\nexport const planted = eventKey;\n"],
    ['lib/constructs', "import { ENV } from '../../core/env';\nexport const planted = ENV;\n"],
    ['cli', "import { trace } from '../ops/trace';\nexport const planted = trace;\n"],
    ['cli/commands', "import { repairTarget } from '../../ops/reconcile';\nexport const planted = repairTarget;\n"],
    ['ops', "import { reconcile } from '../lambdas/reconcile/reconcile';\nexport const planted = reconcile;\n"],
    ['ops', "import { gapRecovery } from '../lambdas/reconcile/gap-recovery';\nexport const planted = gapRecovery;\n"],
    ['ops', "import { readState } from '../local/state';\nexport const planted = readState;\n"],
    ['ops', "import { KeyRegistry } from '../adapters/key-registry';\nexport const planted = KeyRegistry;\n"],
    ['bench', "import { estimateCost } from '../ops/cost-model';\nexport const planted = estimateCost;\n"],
    ['adapters', "import { eventKey } from '../core/model';\nexport const planted = eventKey;\n"],
    ['lambdas/ingest', "import { Receipts } from '../../adapters/receipts';\nexport const planted = Receipts;\n"],
    ['lambdas/ingest', "import { record } from '../recording/record';\nexport const planted = record;\n"],
    ['lambdas/reconcile', "import { record } from '../recording/record';\nexport const planted = record;\n"],
    ['lambdas/reconcile', "export const planted = () => import('./paused');\n"],
    ['lambdas/recording', "import { IntakeStore } from '../../adapters/event-stores';\nexport type Planted = IntakeStore;\n"],
    ['core/config', "import { SCHEMES } from '../schemes';\nexport const planted = SCHEMES;\n"],
    ['console', "import { trace } from '../ops/trace';\nexport const planted = trace;\n"],
    ['console/client', "import { render } from 'preact';\nexport const planted = render;\n"],
  ])('accepts an import the layering allows in %s (%#)', async (folder, source) => {
    expect(restricted(await lintPlanted(folder, source))).toEqual([]);
  });
});
