/**
 * The console on a target: the local stack (its state file, as the CLI reads it) or a deployed stack
 * (`--stack`, the operator's own AWS credentials); `npm start` and `hookledger console` both call this.
 */

import type { ServeConsoleOptions } from '../ops/console-contract';
import { resolveTarget, type Target } from '../ops/target';
import { type RunningConsole, startConsole } from './server';

export interface ServedConsole extends RunningConsole {
  readonly target: Target;
  /** The line `npm start` and `hookledger console` print: the link's code is spent by its first visit. */
  readonly line: string;
}

export async function serveConsole(options: ServeConsoleOptions): Promise<ServedConsole> {
  const target = await resolveTarget(options);
  try {
    const running = await startConsole({
      config: options.config,
      target,
      operator: options.operator,
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.warn ? { warn: options.warn } : {}),
    });
    return {
      ...running,
      target,
      line: `console URL     ${running.url}   (signs in one browser, once)`,
      close: async () => {
        await running.close();
        target.destroy();
      },
    };
  } catch (error) {
    target.destroy();
    throw error;
  }
}
