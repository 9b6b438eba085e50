/**
 * `npx hookledger <command>`: operate a hookledger stack, local (default) or deployed (--stack).
 * The commands are thin: parse, call one function of cli/ops, print a table or (--json) the data.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import defaultConfig from '../hookledger.config';
import { type ReconcileReport, reconcile } from '../lambdas/reconcile/reconcile';
import { type RepairResult, repair } from '../lambdas/reconcile/repair';
import type { HookledgerConfig } from '../core/config/schema';
import { backfill } from './ops/backfill';
import { DEFAULT_STACK_NAME } from '../core/outputs';
import { bootstrapRequirement, type DoctorReport, doctor, doctorClients } from './ops/doctor';
import type { OperatorDeps, Progress } from './ops/deps';
import { CliError, EXIT, UsageError } from './errors';
import { issueKey, listKeys, revokeKey } from './ops/keys';
import { setPaused } from './ops/pause';
import { redrive } from './ops/redrive';
import { replay } from './ops/replay';
import { retireSecret, rotateSecret } from './ops/secrets';
import { send } from './ops/send';
import { type StatusReport, status } from './ops/status';
import { type TraceReport, trace } from './ops/trace';
import { type UsageReport, usage } from './ops/usage';
import { verifyPayload } from './ops/verify-payload';
import { fields, table } from './format';
import { resolveTarget, type Target } from './target';
import { formatAge, iso, parseDuration, parseTime } from './time';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
}

interface Globals {
  readonly stack?: string;
  readonly region?: string;
  readonly json?: boolean;
}

/** Runs one command line; resolves to the process exit code. */
export async function main(
  argv: readonly string[] = process.argv.slice(2),
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env },
  config: HookledgerConfig = defaultConfig,
): Promise<number> {
  let exitCode: number = EXIT.ok;
  const out = (text: string) => io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  const warn = (text: string) => io.stderr.write(`${text}\n`);
  const operator = io.env.USER || io.env.USERNAME || safeUsername();
  const consumerIds = config.consumers.map((c) => c.id);

  const program = new Command('hookledger')
    .description('Operate a hookledger stack: the local one from `npm start` (default), or a deployed one with --stack.')
    .option('--stack <name>', 'a deployed CloudFormation stack (reads its outputs); default: the local stack')
    .option('--region <region>', 'AWS region of --stack (default: AWS_REGION / your profile)')
    .option('--json', 'print the result as JSON (for scripts)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      `
Times: ISO-8601 (2026-11-29T12:00:00Z; UTC when no offset) or relative to now (-30m, -1h, -7d, now).
Local stack: .hookledger/state.json, written by \`npm start\` (HOOKLEDGER_STATE overrides the path).
Exit codes: 0 ok; 1 reconcile found violations, or what was asked for was not found / refused;
            2 usage error; 3 the stack could not be reached or the operation failed.`,
    );

  /**
   * An action that reaches the stack through `connect()`, called after the arguments are checked
   * (a usage error never waits on the network); the clients are closed afterwards.
   */
  const withTarget =
    <A extends unknown[]>(fn: (connect: () => Promise<Target>, globals: Globals, ...args: A) => Promise<number | void>) =>
    async (...args: A) => {
      const command = args[args.length - 1] as Command;
      const globals = command.optsWithGlobals<Globals>();
      let target: Target | undefined;
      const connect = async () =>
        (target ??= await resolveTarget({ config, root: ROOT, stack: globals.stack, region: globals.region, env: io.env }));
      try {
        const code = await fn(connect, globals, ...args);
        if (typeof code === 'number') exitCode = code;
      } finally {
        target?.destroy();
      }
    };
  const opsDeps = (target: Target): OperatorDeps & { config: HookledgerConfig } => ({
    ddb: target.ddb,
    tables: target.tables,
    operator,
    config,
  });
  const print = (globals: Globals, data: unknown, human: () => string) => out(globals.json ? JSON.stringify(data, null, 2) : human());
  const progress = (label: string): Progress & { end(): void } => {
    const live = io.stderr.isTTY === true;
    let shown = false;
    const report = ((done: number, total: number | undefined) => {
      if (!live) return;
      shown = true;
      io.stderr.write(`\r${label}: ${done}${total !== undefined ? `/${total}` : ''}   `);
    }) as Progress & { end(): void };
    report.end = () => {
      if (shown) io.stderr.write('\n');
      shown = false;
    };
    return report;
  };
  /** Asks on a terminal; scripts (no TTY) and --yes go ahead. */
  const confirm = async (yes: boolean | undefined, question: string): Promise<boolean> => {
    if (yes || !io.stdin.isTTY || !io.stderr.isTTY) return true;
    const rl = createInterface({ input: io.stdin, output: io.stderr });
    try {
      return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
    } finally {
      rl.close();
    }
  };
  const parseWindow = (fromText: string, toText: string) => {
    const now = Date.now();
    const from = parseTime(fromText, now, '--from');
    const to = parseTime(toText, now, '--to');
    if (!(from < to)) throw new UsageError(`--from must be before --to (got ${iso(from)} .. ${iso(to)})`);
    return { from, to };
  };
  const requireConsumer = (id: string) => {
    if (!consumerIds.includes(id)) throw new UsageError(`unknown consumer "${id}"; configured: ${consumerIds.join(', ')}`);
    return id;
  };
  const requireSource = (id: string) => {
    const ids = config.sources.map((s) => s.id);
    if (!ids.includes(id)) throw new UsageError(`unknown source "${id}"; configured: ${ids.join(', ')}`);
    return id;
  };

  // --- status -------------------------------------------------------------------------------------
  program
    .command('status')
    .description('per consumer: deliveries by state, queue and DLQ depth, oldest pending delivery, paused; intake counts')
    .action(
      withTarget(async (connect, globals) => {
        const target = await connect();
        let paused: Set<string> | undefined;
        try {
          paused = await target.pauseControl.paused();
        } catch (error) {
          warn(`warning: paused state unknown: ${(error as Error).message}`);
        }
        let intakeOutcomes: Record<string, number> | undefined;
        try {
          intakeOutcomes = await target.intakeOutcomes();
        } catch (error) {
          warn(`warning: intake outcomes unknown: ${(error as Error).message}`);
        }
        const bar = progress('scanning');
        const report = await status(
          { ddb: target.ddb, tables: target.tables, config, sqs: target.sqs, queues: target.queues, fanoutFailureQueueUrl: target.fanoutFailureQueueUrl },
          { paused, intakeOutcomes, onProgress: bar },
        );
        bar.end();
        print(globals, report, () => formatStatus(report, target));
      }),
    );

  // --- trace --------------------------------------------------------------------------------------
  program
    .command('trace')
    .description('everything recorded about one event: receipt, deliveries, attempts, errors, usage, replays, access log')
    .argument('<eventId>', 'the event id, e.g. evt_01J8K7M2Q4')
    .option('--source <id>', 'the source (default: every configured source is tried)')
    .action(
      withTarget(async (connect, globals, eventId: string, options: { source?: string }) => {
        if (options.source !== undefined) requireSource(options.source);
        const target = await connect();
        const report = await trace({ ddb: target.ddb, tables: target.tables, config }, eventId, { source: options.source });
        print(globals, report, () => formatTrace(report));
      }),
    );

  // --- verify-payload -----------------------------------------------------------------------------
  program
    .command('verify-payload')
    .description('is this file the body received for the event? (checks the receipt\'s keyed hash; works after retention)')
    .argument('<eventId>', 'the event id, e.g. evt_01J8K7M2Q4')
    .argument('<file>', 'the body to check, byte for byte (- for standard input)')
    .option('--source <id>', 'the source (default: every configured source is tried)')
    .action(
      withTarget(async (connect, globals, eventId: string, file: string, options: { source?: string }) => {
        if (options.source !== undefined) requireSource(options.source);
        let body: Buffer;
        try {
          body = file === '-' ? await readAll(io.stdin) : await readFile(file);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          throw new UsageError(`cannot read ${file}${code ? ` (${code})` : ''}; give the path of the body to check, or - for standard input`);
        }
        const target = await connect();
        const result = await verifyPayload(
          { ddb: target.ddb, tables: target.tables, config, payloadHashKey: () => target.payloadHashKey() },
          eventId,
          body,
          { source: options.source },
        );
        print(globals, result, () =>
          result.matches
            ? `match: ${file} is the body ${result.source} ${result.eventId} was received with (${result.presentedBytes} bytes, ${result.hash}, received ${iso(result.receivedAt)}).`
            : `no match: ${file} (${result.presentedBytes} bytes) is not the body ${result.source} ${result.eventId} was received with (${result.receivedBytes} bytes, ${result.hash}).`,
        );
        return result.matches ? EXIT.ok : EXIT.found;
      }),
    );

  // --- usage --------------------------------------------------------------------------------------
  program
    .command('usage')
    .description('billable units by tenant and consumer, over deliveries acknowledged in [from, to)')
    .option('--from <time>', 'start (inclusive)', '-24h')
    .option('--to <time>', 'end (exclusive)', 'now')
    .option('--tenant <id>', 'only this tenant')
    .option('--consumer <id>', 'only this consumer')
    .action(
      withTarget(async (connect, globals, options: { from: string; to: string; tenant?: string; consumer?: string }) => {
        const window = parseWindow(options.from, options.to);
        const consumer = options.consumer === undefined ? undefined : requireConsumer(options.consumer);
        const target = await connect();
        const bar = progress('scanning ledger');
        const report = await usage({ ddb: target.ddb, tables: target.tables }, { ...window, tenant: options.tenant, consumer, onProgress: bar });
        bar.end();
        print(globals, report, () => formatUsage(report));
      }),
    );

  // --- replay -------------------------------------------------------------------------------------
  program
    .command('replay')
    .description("send one consumer's deliveries again (never adds usage); other consumers are not touched")
    .requiredOption('--consumer <id>', 'the consumer to replay to')
    .option('--event <eventId>', 'one event')
    .option('--source <id>', 'source of --event (default: every configured source is tried)')
    .option('--from <time>', 'receipts received at or after this time')
    .option('--to <time>', 'receipts received before this time (default: now)')
    .option('--tenant <id>', 'only this tenant')
    .option('--type <eventType>', 'only this event type')
    .option('--dry-run', 'count the matching deliveries; write nothing')
    .option('--yes', 'do not ask for confirmation')
    .action(
      withTarget(
        async (
          connect,
          globals,
          options: {
            consumer: string;
            event?: string;
            source?: string;
            from?: string;
            to?: string;
            tenant?: string;
            type?: string;
            dryRun?: boolean;
            yes?: boolean;
          },
        ) => {
          if (options.event !== undefined && (options.from !== undefined || options.to !== undefined)) {
            throw new UsageError('give --event or --from/--to, not both');
          }
          if (options.event === undefined && options.from === undefined) {
            throw new UsageError('give --event <id>, or --from <time> [--to <time>]');
          }
          const consumer = requireConsumer(options.consumer);
          if (options.source !== undefined) requireSource(options.source);
          const selection =
            options.event !== undefined
              ? { event: { eventId: options.event, source: options.source } }
              : { window: parseWindow(options.from as string, options.to ?? 'now') };
          const target = await connect();
          const bar = progress('replay');
          const result = await replay(opsDeps(target), {
            consumer,
            ...selection,
            tenant: options.tenant,
            type: options.type,
            dryRun: options.dryRun,
            onProgress: bar,
            confirm: async (plan) => {
              bar.end();
              return confirm(options.yes, `Replay ${plan.matched} deliveries to ${plan.consumer} (${describeStates(plan.byState)})?`);
            },
          });
          bar.end();
          print(globals, result, () => {
            const head =
              `${result.matched} deliveries of ${result.consumer} match (${describeStates(result.byState)}).` +
              (result.expired > 0 ? ` ${result.expired} left out: payload past retention.` : '');
            if (result.dryRun) return `${head}\nDry run: nothing written.`;
            if (result.declined) return `${head}\nNot replayed.`;
            if (!result.replayId) return head;
            return `${head}\nReplay ${result.replayId}: ${result.requeued} requeued, ${result.annotated} ledger items noted; audit written (operator ${operator}).`;
          });
        },
      ),
    );

  // --- backfill -----------------------------------------------------------------------------------
  program
    .command('backfill')
    .description('deliver past events to a consumer that subscribes to their type but was not in their delivery set')
    .requiredOption('--consumer <id>', 'the consumer (as configured now)')
    .requiredOption('--from <time>', 'receipts received at or after this time')
    .option('--to <time>', 'receipts received before this time', 'now')
    .option('--dry-run', 'count the matching receipts; write nothing')
    .option('--yes', 'do not ask for confirmation')
    .action(
      withTarget(async (connect, globals, options: { consumer: string; from: string; to: string; dryRun?: boolean; yes?: boolean }) => {
        const consumer = requireConsumer(options.consumer);
        const window = parseWindow(options.from, options.to);
        const target = await connect();
        const bar = progress('backfill');
        const result = await backfill(opsDeps(target), {
          consumer,
          ...window,
          dryRun: options.dryRun,
          onProgress: bar,
          confirm: async (plan) => {
            bar.end();
            return confirm(options.yes, `Add ${plan.consumer} to ${plan.matched} receipts and deliver them?`);
          },
        });
        bar.end();
        print(globals, result, () => {
          const head =
            `${result.matched} receipts of the window lack ${result.consumer}.` +
            (result.expired > 0 ? ` ${result.expired} left out: payload past retention.` : '');
          if (result.dryRun) return `${head}\nDry run: nothing written.`;
          if (result.declined) return `${head}\nNot backfilled.`;
          if (!result.replayId) return head;
          const already = result.alreadyPresent ? `, ${result.alreadyPresent} already had it` : '';
          return `${head}\nBackfill ${result.replayId}: ${result.added} added and requeued${already}; audit written (operator ${operator}).`;
        });
      }),
    );

  // --- pause / resume -----------------------------------------------------------------------------
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    program
      .command(name)
      .description(
        paused
          ? "stop a consumer's worker taking messages (they wait in its queue); intake and other consumers go on"
          : "let a paused consumer's worker take messages again",
      )
      .argument('<consumer>', 'consumer id')
      .action(
        withTarget(async (connect, globals, consumer: string) => {
          requireConsumer(consumer);
          const target = await connect();
          const result = await setPaused(target.pauseControl, consumerIds, consumer, paused);
          print(globals, result, () => `${consumer} ${paused ? 'paused' : 'resumed'} on ${target.label}.`);
        }),
      );
  }

  // --- redrive ------------------------------------------------------------------------------------
  program
    .command('redrive')
    .description("move a consumer's DLQ messages back to its queue (SQS move task; by hand where the emulator lacks it)")
    .argument('<consumer>', 'consumer id')
    .option('--rate <perSecond>', 'move-task rate cap, messages per second (1-500)', (v) => positiveInt(v, '--rate'))
    .action(
      withTarget(async (connect, globals, consumer: string, options: { rate?: number }) => {
        requireConsumer(consumer);
        const target = await connect();
        const bar = progress('moved');
        const result = await redrive(
          { config, sqs: target.sqs, queues: target.queues },
          { consumer, maxPerSecond: options.rate, onProgress: bar },
        );
        bar.end();
        print(globals, result, () =>
          result.toMove === 0 && result.moved === 0
            ? `the DLQ of ${consumer} is empty: nothing to move.`
            : `${result.moved} of ${result.toMove} messages moved from the DLQ of ${consumer} to its queue (${result.method}).`,
        );
      }),
    );

  // --- reconcile ----------------------------------------------------------------------------------
  program
    .command('reconcile')
    .description('check receipts against ledger items in [from, to); exit 1 and list every violation by its ids')
    .option('--from <time>', 'receipts received at or after this time', '-24h')
    .option('--to <time>', 'receipts received before this time', 'now')
    .option('--grace <duration>', 'receipts younger than this are not yet expected to be delivered', '15m')
    .option('--repair', 're-queue missing and stalled deliveries (never a second ledger row); paused consumers are reported, not repaired')
    .option('--dry-run', 'with --repair: count what would be repaired; write nothing')
    .action(
      withTarget(async (connect, globals, options: { from: string; to: string; grace: string; repair?: boolean; dryRun?: boolean }) => {
        const window = parseWindow(options.from, options.to);
        const graceMs = parseDuration(options.grace, '--grace');
        if (options.dryRun && !options.repair) throw new UsageError('--dry-run goes with --repair (reconcile alone writes nothing)');
        const target = await connect();
        const bar = progress('scanning');
        if (!options.repair) {
          const report = await reconcile({ ddb: target.ddb, tables: target.tables }, { ...window, graceMs, onProgress: bar });
          bar.end();
          print(globals, report, () => formatReconcile(report));
          return report.violations.length > 0 ? EXIT.found : EXIT.ok;
        }
        // Paused consumers are not repaired: an unknown pause state must not be guessed.
        const paused = await target.pauseControl.paused();
        const result = await repair(
          {
            ddb: target.ddb,
            tables: target.tables,
            operator,
            ...(target.fanoutFailureQueueUrl ? { fanoutFailures: { sqs: target.sqs, queueUrl: target.fanoutFailureQueueUrl } } : {}),
          },
          { ...window, graceMs, paused, dryRun: options.dryRun, trigger: 'cli', onProgress: bar },
        );
        bar.end();
        print(globals, result, () => `${formatReconcile(result.report)}\n\n${formatRepair(result)}`);
        if (result.dryRun) return result.candidates > 0 || result.report.violations.length > 0 ? EXIT.found : EXIT.ok;
        return result.unrepaired > 0 || result.notRepairable > 0 ? EXIT.found : EXIT.ok;
      }),
    );

  // --- send ---------------------------------------------------------------------------------------
  program
    .command('send')
    .description("POST a signed test webhook to the stack's intake, signed as the source's scheme requires")
    .option('--source <id>', 'source id (default: the only configured source)')
    .option('--file <path>', 'send this file as the body, byte for byte')
    .option('--type <eventType>', 'event type of the sample', 'payment.succeeded')
    .option('--tenant <id>', 'tenant of the sample', 'tenant_204')
    .option('--key <id>', 'key id of the sample', 'key_42')
    .action(
      withTarget(async (connect, globals, options: { source?: string; file?: string; type: string; tenant: string; key: string }) => {
        if (options.source !== undefined) requireSource(options.source);
        const target = await connect();
        const result = await send({ config, webhookUrl: (s) => target.webhookUrl(s), signingSecret: (s) => target.signingSecret(s) }, options);
        print(globals, result, () =>
          [`POST ${result.url}${result.eventId ? `  (event ${result.eventId})` : ''}`, `${result.status} ${JSON.stringify(result.body)}`].join('\n'),
        );
        return result.status >= 200 && result.status < 300 ? EXIT.ok : EXIT.found;
      }),
    );

  // --- doctor -------------------------------------------------------------------------------------
  program
    .command('doctor')
    .description(
      `preflight a deployment (before or after cdk deploy): CDK bootstrap, account concurrency, signing secrets set, alarm subscription, consumer event sources; each problem with its fix; exit 1 when any (--stack defaults to ${DEFAULT_STACK_NAME})`,
    )
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<Globals>();
      const stackName = globals.stack ?? DEFAULT_STACK_NAME;
      const clients = doctorClients(globals.region);
      try {
        const report = await doctor(clients, { config, stackName, bootstrap: await bootstrapRequirement(ROOT, stackName) });
        print(globals, report, () => formatDoctor(report));
        exitCode = report.problems > 0 ? EXIT.found : EXIT.ok;
      } finally {
        clients.destroy();
      }
    });

  // --- keys ---------------------------------------------------------------------------------------
  const keys = program.command('keys').description('the tenant key registry: issue, revoke, list');
  keys
    .command('issue')
    .description('register a key for a tenant (key ids are never reused)')
    .requiredOption('--tenant <id>', 'the tenant the key belongs to')
    .option('--key-id <id>', 'the key id (default: a new random one)')
    .action(
      withTarget(async (connect, globals, options: { tenant: string; keyId?: string }) => {
        const target = await connect();
        const key = await issueKey(opsDeps(target), { tenant: options.tenant, keyId: options.keyId });
        print(globals, key, () => `issued ${key.keyId} for ${key.tenantId}`);
      }),
    );
  keys
    .command('revoke')
    .description('revoke a key: consumers see it revoked from now on; past events keep their attribution')
    .argument('<keyId>', 'the key id')
    .action(
      withTarget(async (connect, globals, keyId: string) => {
        const target = await connect();
        const result = await revokeKey(opsDeps(target), { keyId });
        print(globals, result, () =>
          result.alreadyRevoked
            ? `${keyId} was already revoked at ${iso(result.key.revokedAt)}`
            : `revoked ${keyId} (tenant ${result.key.tenantId})`,
        );
      }),
    );
  keys
    .command('list')
    .description('registered keys, newest first')
    .option('--tenant <id>', 'only this tenant')
    .action(
      withTarget(async (connect, globals, options: { tenant?: string }) => {
        const target = await connect();
        const list = await listKeys({ ddb: target.ddb, tables: target.tables }, { tenant: options.tenant });
        print(globals, list, () =>
          list.length === 0
            ? 'no keys'
            : table(list, [
                { header: 'KEY', value: (k) => k.keyId },
                { header: 'TENANT', value: (k) => k.tenantId },
                { header: 'STATUS', value: (k) => k.status },
                { header: 'CREATED', value: (k) => iso(k.createdAt) },
                { header: 'REVOKED', value: (k) => (k.revokedAt ? iso(k.revokedAt) : undefined) },
              ]),
        );
      }),
    );

  // --- secrets ------------------------------------------------------------------------------------
  const secrets = program.command('secrets').description('webhook signing secrets: rotate, retire');
  secrets
    .command('rotate')
    .description('new signing secret for a source; the old one keeps verifying for the overlap (never printed)')
    .argument('<source>', 'source id')
    .option('--overlap <duration>', "how long the old secret keeps verifying, 1h to 720h (local stack only; default: the source's secretOverlapHours)")
    .action(
      withTarget(async (connect, globals, source: string, options: { overlap?: string }) => {
        requireSource(source);
        const overlapMs = options.overlap === undefined ? undefined : parseDuration(options.overlap, '--overlap');
        const target = await connect();
        const result = await rotateSecret({ ...opsDeps(target), rotator: target.rotator }, { source, overlapMs });
        print(globals, result, () =>
          [
            `rotated the signing secret of ${source} on ${target.label}${result.versionId ? ` (version ${result.versionId})` : ''}.`,
            `the previous secret verifies until ${iso(result.previousUntil)}${target.kind === 'aws' ? ' (counted from the new version\'s creation)' : ''}: give the provider the new one now.`,
            `end the overlap sooner with \`hookledger secrets retire ${source}\`.`,
            target.kind === 'local' ? 'The new value is in .hookledger/secrets.json.' : 'Read the new value in Secrets Manager.',
          ].join('\n'),
        );
      }),
    );
  secrets
    .command('retire')
    .description('end the rotation overlap now: the previous secret stops verifying (same 401 as any bad signature)')
    .argument('<source>', 'source id')
    .action(
      withTarget(async (connect, globals, source: string) => {
        requireSource(source);
        const target = await connect();
        const result = await retireSecret({ ...opsDeps(target), rotator: target.rotator }, { source });
        print(globals, result, () =>
          result.retired
            ? `retired the previous signing secret of ${source} on ${target.label}${result.versionId ? ` (version ${result.versionId} lost AWSPREVIOUS)` : ''}: ` +
              `only the current secret verifies${target.kind === 'aws' ? ' (each intake container within 30 s)' : ''}.`
            : `${source} has no previous signing secret on ${target.label}: nothing to retire.`,
        );
      }),
    );

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    return failure(error, warn);
  }
}

function failure(error: unknown, warn: (text: string) => void): number {
  if (error instanceof CommanderError) {
    // Commander printed its own message (or the help).
    return ['commander.helpDisplayed', 'commander.help', 'commander.version', 'commander.executeSubCommandAsync'].includes(error.code)
      ? EXIT.ok
      : EXIT.usage;
  }
  if (error instanceof CliError) {
    warn(`error: ${error.message}`);
    return error.exitCode;
  }
  // Unexpected (an SDK error, a bug): the class name helps whoever reads the report.
  const name = error instanceof Error ? error.name : 'Error';
  warn(`error: ${name}: ${error instanceof Error ? error.message : String(error)}`);
  return EXIT.failed;
}

// --- human output ---------------------------------------------------------------------------------

function formatStatus(report: StatusReport, target: Target): string {
  const depth = (d?: { visible: number; inFlight: number }) => (d ? `${d.visible}/${d.inFlight}` : undefined);
  const lines = [
    `${target.label} at ${iso(report.at)}`,
    '',
    table(report.consumers, [
      { header: 'CONSUMER', value: (c) => c.consumer },
      { header: 'PAUSED', value: (c) => (c.paused === undefined ? '?' : c.paused ? 'yes' : 'no') },
      { header: 'READY', value: (c) => c.ready },
      { header: 'LEASED', value: (c) => c.leased },
      { header: 'EXPIRED', value: (c) => c.expiredLeases },
      { header: 'RETRYING', value: (c) => c.retrying },
      { header: 'QUARANTINED', value: (c) => c.quarantined },
      { header: 'DONE', value: (c) => c.done },
      { header: 'QUEUE vis/fly', value: (c) => depth(c.queue), align: 'right' },
      { header: 'DLQ vis/fly', value: (c) => depth(c.dlq), align: 'right' },
      { header: 'OLDEST PENDING', value: (c) => (c.oldestPendingAgeMs === undefined ? undefined : formatAge(c.oldestPendingAgeMs)), align: 'right' },
    ]),
    '',
    `intake: ${report.intake.events} events`,
  ];
  const types = Object.entries(report.intake.byType);
  if (types.length > 0) {
    lines.push(table(types, [
      { header: '  TYPE', value: ([t]) => `  ${t}` },
      { header: 'EVENTS', value: ([, n]) => n },
    ]));
    lines.push(
      `secret version: ${Object.entries(report.intake.bySecretVersion).map(([v, n]) => `${v} ${n}`).join(', ')}`,
    );
  }
  const lastPrevious = Object.entries(report.intake.previousSecretLastVerified);
  lines.push(
    `previous secret last verified a request: ${
      lastPrevious.map(([source, at]) => `${source} ${iso(at)} (${formatAge(report.at - at)} ago)`).join(', ') || 'never'
    }`,
  );
  const outcomes = report.intake.outcomes;
  lines.push(
    outcomes
      ? `requests by outcome since the local stack started: ${Object.entries(outcomes).map(([o, n]) => `${o} ${n}`).join(', ') || 'none yet'}`
      : 'requests by outcome: the IntakeRequests widget on the stack\'s CloudWatch dashboard',
  );
  if (report.fanoutFailures) {
    const f = report.fanoutFailures;
    lines.push(
      `fan-out on-failure queue: ${f.visible + f.inFlight} record(s)${f.visible + f.inFlight > 0 ? ' (stream batches not fanned out: `hookledger reconcile --repair` re-queues their deliveries and clears them)' : ''}`,
    );
  }
  return lines.join('\n');
}

function formatDoctor(report: DoctorReport): string {
  const label = { ok: 'ok     ', problem: 'PROBLEM', info: 'info   ' } as const;
  const lines = [`hookledger doctor: stack ${report.stack} in ${report.region}`, ''];
  for (const check of report.checks) {
    lines.push(`${label[check.status]}  ${check.id.padEnd(24)} ${check.message}`);
    if (check.fix) lines.push(`${' '.repeat(9)}${' '.repeat(25)}fix: ${check.fix}`);
  }
  lines.push('', report.problems === 0 ? 'no problems found' : `${report.problems} problem(s) found`);
  return lines.join('\n');
}

function formatTrace(report: TraceReport): string {
  const r = report.receipt;
  const lines = [
    fields([
      ['event', `${r.source} ${r.eventId}`],
      ['type', r.eventType],
      ['tenant', r.tenantId],
      ['key', r.keyId],
      ['received', iso(r.receivedAt)],
      ['secret', r.secretVersion],
      ['payload', `${r.payload} (${r.payloadBytes} bytes, kept until ${iso(r.payloadExpiresAt)}; ${r.payloadHash})`],
      ['delivery set', r.consumers.join(', ') || '(none)'],
      ...(report.conflicts.count > 0
        ? ([['conflicts', `${report.conflicts.count} request(s) reused this event id with other bytes (answered duplicate_conflict)`]] as [string, string][])
        : []),
    ]),
    '',
    table(report.deliveries, [
      { header: 'CONSUMER', value: (d) => d.consumer + (d.expected ? '' : ' (unexpected)') },
      { header: 'STATE', value: (d) => d.state },
      { header: 'ATTEMPTS', value: (d) => d.attempts },
      { header: 'UNITS', value: (d) => d.units },
      { header: 'TENANT', value: (d) => d.tenantId },
      { header: 'POLICY', value: (d) => d.policyVersion },
      { header: 'OUTCOME', value: (d) => d.outcome },
      { header: 'LAST ERROR', value: (d) => d.lastErrorCategory },
      { header: 'ACKED', value: (d) => (d.ackAt ? iso(d.ackAt) : undefined) },
    ]),
  ];
  for (const d of report.deliveries) {
    const detail: string[] = [];
    if (d.principal) detail.push(`  acknowledged by ${d.principal}`);
    for (const e of d.errors) detail.push(`  error   attempt ${e.attempt} ${iso(e.at)} ${e.category}: ${e.message}`);
    for (const read of d.reads) detail.push(`  read    ${iso(read.at)} ${read.principal}${read.replayId ? ` (replay ${read.replayId})` : ''}`);
    for (const p of d.replayRequests) detail.push(`  replay requested ${p.replayId} ${iso(p.at)}${p.operator ? ` by ${p.operator}` : ''}`);
    for (const p of d.replays) detail.push(`  replayed ${p.replayId} ${iso(p.at)} attempt ${p.attempt} policy ${p.policyVersion}: ${p.outcome}`);
    if (detail.length > 0) lines.push('', `${d.consumer}:`, ...detail);
  }
  if (report.conflicts.entries.length > 0) {
    lines.push('', 'duplicate_conflict requests (stored: nothing but this audit):');
    for (const c of report.conflicts.entries) {
      lines.push(`  ${iso(c.at)} ${c.payloadBytes} bytes, secret ${c.secretVersion}, hmac-sha256:${c.payloadHmac}`);
    }
  }
  return lines.join('\n');
}

function formatUsage(report: UsageReport): string {
  const head = `usage acknowledged in [${iso(report.from)}, ${iso(report.to)})`;
  if (report.rows.length === 0) return `${head}\nno done deliveries`;
  return [
    head,
    '',
    table(report.rows, [
      { header: 'TENANT', value: (r) => r.tenantId },
      { header: 'CONSUMER', value: (r) => r.consumerId },
      { header: 'UNITS', value: (r) => r.units },
      { header: 'DELIVERIES', value: (r) => r.deliveries },
    ]),
    '',
    `total ${report.totalUnits} units`,
  ].join('\n');
}

function formatReconcile(report: ReconcileReport): string {
  const lines = [
    `reconcile [${iso(report.from)}, ${iso(report.to)}): ${report.receipts} receipts, ${report.expectedDeliveries} expected deliveries, ` +
      `${report.ledgerItems} ledger items; ${report.quarantined} quarantined (not a violation); ${report.inGrace} still within the ${formatAge(report.graceMs)} grace`,
  ];
  if (report.violations.length === 0) {
    lines.push('ok: no violations');
    return lines.join('\n');
  }
  lines.push(
    `${report.violations.length} violation(s):`,
    '',
    table(report.violations, [
      { header: 'KIND', value: (v) => v.kind },
      { header: 'SOURCE', value: (v) => v.source },
      { header: 'EVENT', value: (v) => v.eventId },
      { header: 'CONSUMER', value: (v) => v.consumerId },
      { header: 'LEDGER KEY', value: (v) => v.ledgerKey },
      { header: 'DETAIL', value: (v) => (v.kind === 'tenant_mismatch' ? `receipt ${v.receiptTenantId} / ledger ${v.ledgerTenantId}` : undefined) },
    ]),
  );
  return lines.join('\n');
}

function formatRepair(result: RepairResult): string {
  const unrepaired = Object.entries(result.unrepairedByReason)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  const failures = result.fanoutFailureRecords;
  const lines = [
    result.dryRun
      ? `Dry run: ${result.repaired} deliveries would be re-queued, ${result.unrepaired} not (${unrepaired || 'none'}). Nothing written.`
      : result.repairId
        ? `Repair ${result.repairId}: ${result.repaired} repaired (re-queued), ${result.unrepaired} not repaired (${unrepaired || 'none'}); audit written.`
        : `Nothing to repair${result.unrepaired > 0 ? `; ${result.unrepaired} not repaired (${unrepaired})` : ''}.`,
  ];
  if (result.unrepairedByReason.paused > 0) {
    const consumers = [...new Set(result.unrepairedDeliveries.filter((d) => d.reason === 'paused').map((d) => d.consumerId))].sort();
    lines.push(`Paused, not repaired: ${consumers.join(', ')} (resume them, then run the repair again if their deliveries stay pending).`);
  }
  if (result.notRepairable > 0) lines.push(`${result.notRepairable} violation(s) a re-send cannot fix (see the list above).`);
  if (failures && failures.read > 0) {
    lines.push(`Fan-out failure records: ${failures.read} read, ${failures.cleared} cleared${failures.unreadable ? `, ${failures.unreadable} unreadable (left)` : ''}.`);
  }
  return lines.join('\n');
}

function describeStates(byState: Readonly<Record<string, number | undefined>>): string {
  const parts = Object.entries(byState)
    .filter(([, n]) => n)
    .map(([state, n]) => `${state} ${n}`);
  return parts.length > 0 ? parts.join(', ') : 'none';
}

function positiveInt(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer`);
  return n;
}

function safeUsername(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'unknown';
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
