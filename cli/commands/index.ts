/**
 * The commands, in the order `hookledger --help` lists them. A new command is one file in this
 * folder exporting `register(program, ctx)`, imported here and added to COMMANDS. `console` is not
 * here: it needs the console's server, which the composition root (bin/cli.ts) hands in and lists last.
 */
import type { Command } from 'commander';
import { register as alarms } from './alarms';
import { register as backfill } from './backfill';
import type { CommandContext } from './context';
import { register as cost } from './cost';
import { register as doctor } from './doctor';
import { register as erase } from './erase';
import { register as filter } from './filter'; // and transform
import { register as gaps } from './gaps';
import { register as indexBackfill } from './index-backfill';
import { register as keys } from './keys';
import { register as pause } from './pause';
import { register as providers } from './providers';
import { register as reconcile } from './reconcile';
import { register as redrive } from './redrive';
import { register as replay } from './replay';
import { register as secrets } from './secrets';
import { register as send } from './send';
import { register as sourcesAdd } from './sources-add';
import { register as sourcesConnect } from './sources-connect';
import { register as status } from './status';
import { register as trace } from './trace';
import { register as usage } from './usage';
import { register as verifyPayload } from './verify-payload';

export type RegisterCommand = (program: Command, ctx: CommandContext) => void;

export const COMMANDS: readonly RegisterCommand[] = [
  status,
  alarms,
  trace,
  verifyPayload,
  usage,
  replay,
  backfill,
  erase,
  filter, // and transform
  pause, // and resume
  redrive,
  reconcile,
  gaps,
  indexBackfill,
  send,
  sourcesAdd, // `sources add`
  sourcesConnect, // `sources connect | disconnect | remote`
  doctor,
  keys,
  secrets,
  providers,
  cost,
];
