/**
 * `hookledger console`: the operator console in the browser, on 127.0.0.1, until Ctrl-C. The console
 * is a front end of its own beside the CLI: the CLI's composition root (bin/cli.ts) hands its server
 * in, so cli/ never imports console/.
 */
import { type Command, InvalidArgumentError } from 'commander';
import type { ServeConsole } from '../../ops/console-contract';
import type { CommandContext } from './context';

export const consoleCommand = (serveConsole: ServeConsole) => (program: Command, ctx: CommandContext) => {
  program
    .command('console')
    .description(
      'serve the operator console (events, consumers, usage, reconcile, sources) on 127.0.0.1 for the local stack or --stack, with your own credentials, until Ctrl-C; its link signs one browser in once (run it again for a new link)',
    )
    .option('--port <n>', 'port on 127.0.0.1 (default: a free one)', (v) => port(v))
    .action(
      ctx.action(async (globals, options: { port?: number }) => {
        const running = await serveConsole({
          config: ctx.config,
          root: ctx.root,
          stack: globals.stack,
          region: globals.region,
          env: ctx.io.env,
          port: options.port,
          operator: `${ctx.operator} (console)`,
          warn: ctx.warn,
        });
        ctx.io.stdout.write(`${running.line}\n  target          ${running.target.label}\nPress Ctrl-C to stop.\n`);
        await (ctx.io.interrupted ?? interrupted());
        await running.close();
      }),
    );
};

function interrupted(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** A commander argument parser: its error is a commander usage error (exit 2). */
function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('--port must be a port number (0-65535)');
  return n;
}
