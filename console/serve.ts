/**
 * The console on a target: the local stack (its state file, as the CLI reads it) or a deployed stack
 * (`--stack`, the operator's own AWS credentials); `npm start` and `hookledger console` both call this.
 */

import type { HookledgerConfig } from '../core/config/schema';
import { resolveTarget, type Target } from '../ops/target';
import { type RunningConsole, startConsole } from './server';

export interface ServeConsoleOptions {
  readonly config: HookledgerConfig;
  /** Repository root: where .hookledger/ lives. */
  readonly root: string;
  readonly stack?: string;
  readonly region?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly port?: number;
  readonly operator: string;
  readonly warn?: (line: string) => void;
}

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
