/**
 * What the CLI's `console` command needs of the console without importing it: the options it is
 * started with and what it hands back. console/serve.ts implements it; bin/cli.ts passes it in.
 * The console's /api, its routes and the responses the page reads, is in console-api.ts (apart,
 * because the page imports it and its typecheck has no Node types).
 */
import type { HookledgerConfig } from '../core/config/schema';

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

/** A console started on a target. */
export interface ServedConsoleHandle {
  /** The line that announces it, its one-time sign-in link included. */
  readonly line: string;
  readonly target: { readonly label: string };
  close(): Promise<void>;
}

export type ServeConsole = (options: ServeConsoleOptions) => Promise<ServedConsoleHandle>;
