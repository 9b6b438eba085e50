/**
 * `npm start`'s banner, one for both modes (plain and `--assembly`): every source's webhook URL, the
 * console URL, where the signing secrets are (and the first source's), the emulators, the state file,
 * a ready `send` command, and what the line per delivery below it says. Assembly mode adds one line
 * saying what differs there.
 */
import path from 'node:path';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import type { RepairResult } from '../lambdas/reconcile/repair';

/** What differs in assembly mode, in the banner's one line for it. */
export const ASSEMBLY_MODE_LINE =
  'the synthesized bundles, each in its own process as its own role, every call IAM-checked; the least-privilege report prints at stop';

export interface BannerFacts {
  /** Milliseconds since `npm start` began. */
  readonly elapsedMs: number;
  /** Each source's id and webhook URL, in config order. */
  readonly sources: readonly { readonly id: string; readonly url: string }[];
  /** serveConsole's `console URL ...` line; undefined when the console did not start. */
  readonly consoleLine: string | undefined;
  readonly secretsFile: string;
  /** The first source's current signing secret, shown for the `send` command's source. */
  readonly firstSecret: string | undefined;
  readonly dynamodb: string;
  readonly sqs: string;
  /** DynamoDB Local's data folder; null keeps everything in memory. */
  readonly dataDir: string | null;
  readonly stateFile: string;
  /** Set in assembly mode: the line saying what differs there. */
  readonly assemblyDir?: string;
  readonly startupRepair?: RepairResult;
}

/** Relative to the repository when inside it (`.hookledger/...`), else as given. */
function relative(file: string): string {
  const inside = path.relative(ROOT, file);
  return inside && !inside.startsWith('..') && !path.isAbsolute(inside) ? inside : file;
}

export function formatBanner(facts: BannerFacts): string {
  const first = facts.sources[0]?.id ?? 'platform';
  const width = Math.max(...facts.sources.map((s) => s.id.length), 0);
  const urls = facts.sources.map((s, i) => `  ${i === 0 ? 'webhook URLs  ' : '              '}  ${s.id.padEnd(width)}  ${s.url}`);
  const secret = facts.firstSecret ? `; ${first}'s: ${facts.firstSecret}` : '';
  const lines = [
    '',
    `hookledger is running${facts.assemblyDir ? ' the synthesized assembly' : ''} (${facts.elapsedMs} ms).`,
    '',
    ...urls,
    `  ${facts.consoleLine ?? 'console URL     (not started: see the error above)'}`,
    `  signing secrets ${relative(facts.secretsFile)} (Standard Webhooks, git-ignored)${secret}`,
    `  DynamoDB Local  ${facts.dynamodb}   (data in ${facts.dataDir ? relative(facts.dataDir) : 'memory'})`,
    `  SQS emulator    ${facts.sqs}`,
    `  state file      ${relative(facts.stateFile)}`,
    ...(facts.assemblyDir ? [`  assembly mode   ${relative(facts.assemblyDir)}: ${ASSEMBLY_MODE_LINE}`] : []),
    '',
    'Send a signed test event (in another terminal):',
    '',
    `  npx hookledger send --source ${first} --type payment.succeeded --tenant tenant_204`,
    '',
    'Then: npx hookledger status · npx hookledger trace <event_id> · npx hookledger usage --from -1h',
    'One line per delivery follows (ok, FAIL ... retrying, DLQ ... quarantined). Press Ctrl-C to stop.',
    '',
    ...resumedLines(facts.startupRepair),
  ];
  return lines.join('\n');
}

function resumedLines(resumed: RepairResult | undefined): string[] {
  if (!resumed || (resumed.repaired === 0 && resumed.unrepaired === 0)) return [];
  return [
    `Resumed from the last run: ${resumed.repaired} unfinished deliveries re-queued (repair ${resumed.repairId ?? '-'})` +
      `${resumed.unrepaired > 0 ? `, ${resumed.unrepaired} not (${JSON.stringify(resumed.unrepairedByReason)})` : ''}.`,
    '',
  ];
}

export function printBanner(facts: BannerFacts): void {
  console.log(formatBanner(facts));
}
