/**
 * `npm start -- --assembly [<dir>]`: the local stack from a synthesized cloud assembly. Without a
 * folder it synthesizes one into `.hookledger/cdk.out` first (`cdk synth -o`, bundling included; the
 * folder 0700 and no bundle left writable by group or other); a folder given runs only when no other
 * user could have changed its bundles (`permissions.ts`).
 * Prints the banner plain `npm start` prints (local/banner.ts: the console included, which the entry
 * point starts on this stack's state file), one line per delivery, each denied call as it happens
 * (`AccessDenied <action> ...`) and, at Ctrl-C, the least-privilege report: per role, the actions
 * granted, used and never used.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createDocumentClient } from '../../adapters/clients';
import { Ledger } from '../../adapters/ledger';
import { HOOKLEDGER_DIR, privateDir, PROJECT_ROOT as ROOT } from '../../core/paths';
import { printBanner } from '../banner';
import { localDynamoClient } from '../clients';
import { reportInvocations } from '../delivery-report';
import { stopOnSignals } from '../lifecycle';
import { type ConfigFingerprint, removeState, writeState } from '../state';
import { formatUsage } from './iam';
import { synthesizeAssembly, vouchForAssembly } from './permissions';
import { type AssemblyStack, startAssemblyStack } from './stack';

export const DEFAULT_ASSEMBLY_DIR = '.hookledger/cdk.out';

/**
 * Starts the operator console on the stack whose state file is given (the entry point's: local/ never
 * imports the console); undefined when it did not start.
 */
export type ConsoleStarter = (stateFile: string) => Promise<{ readonly line: string; close(): Promise<void> } | undefined>;

export interface AssemblyModeOptions {
  readonly port: number;
  readonly home: string | undefined;
  readonly startConsole?: ConsoleStarter;
  /** The configuration file as `npm start` read it, recorded in the state file. */
  readonly config?: ConfigFingerprint;
}

/** `--assembly` in argv: undefined when absent, null when given without a folder. */
export function assemblyArg(argv: readonly string[]): string | null | undefined {
  const at = argv.indexOf('--assembly');
  if (at === -1) return undefined;
  const next = argv[at + 1];
  return next === undefined || next.startsWith('--') ? null : next;
}

/** `cdk synth -o <outDir>`, bundling included. */
function cdkSynth(outDir: string): void {
  execFileSync('npx', ['cdk', 'synth', '--quiet', '--no-notices', '-o', outDir], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
  });
}

export async function startAssemblyMode(dir: string | null, options: AssemblyModeOptions): Promise<void> {
  const t0 = Date.now();
  const assemblyDir = dir === null ? path.join(ROOT, DEFAULT_ASSEMBLY_DIR) : path.resolve(dir);
  const home = options.home ?? HOOKLEDGER_DIR;
  privateDir(home);
  if (dir === null) {
    console.log(`hookledger: synthesizing the CDK app into ${path.relative(ROOT, assemblyDir)} ...`);
    synthesizeAssembly(assemblyDir, { synth: cdkSynth, say: (line) => console.log(line) });
  } else {
    // A folder this run did not synthesize: run it only if no other user could have changed its bundles.
    const cleared = vouchForAssembly(assemblyDir);
    if (cleared) console.log(cleared);
  }
  console.log(`hookledger: starting the assembly in ${assemblyDir} on DynamoDB Local and the SQS emulator...`);
  const deliveries = deliveryLines();
  const secretsFile = path.join(home, 'secrets.json');
  const dataDir = path.join(home, 'assembly-data');
  const stack = await startAssemblyStack({
    assemblyDir,
    dataDir,
    secretsFile,
    httpPort: options.port,
    onLog: (id, line) => {
      if (process.env.HOOKLEDGER_LOG === 'json') console.log(`[${id}] ${line}`);
    },
    onDenied: (d) => console.log(`AccessDenied ${d.action} on ${d.resource} (principal ${d.principal}, function ${d.functionId})`),
    onInvoke: deliveries.onInvoke,
  });
  const stateFile = path.join(home, 'state.json');
  await writeState(stateFile, { ...stack.state, ...(options.config ? { config: options.config } : {}) });
  deliveries.attach(stack);
  const console_ = await options.startConsole?.(stateFile);
  const first = stack.sourceIds[0];
  printBanner({
    elapsedMs: Date.now() - t0,
    sources: stack.sourceIds.map((id) => ({ id, url: stack.webhookUrl(id) })),
    consoleLine: console_?.line,
    secretsFile,
    firstSecret: first ? (await stack.secrets.get(first)).current : undefined,
    dynamodb: stack.endpoints.dynamodb,
    sqs: stack.endpoints.sqs,
    dataDir,
    stateFile,
    assemblyDir,
    ...(stack.startupRepair ? { startupRepair: stack.startupRepair } : {}),
  });
  stopOnSignals(async () => {
    console.log('\nhookledger: stopping...');
    console.log(`\nLeast privilege, measured (granted / used / unused per role):\n\n${formatUsage(stack.iam.report())}\n`);
    await Promise.all([console_?.close(), stack.stop(), removeState(stateFile), deliveries.close()]);
  });
}

/**
 * The line per delivery, as plain mode prints it: each consumer invocation's outcome, with its ledger
 * row (read as the operator once the stack is up; its consumer known by the queue its records came from).
 */
function deliveryLines() {
  let ledger: Ledger | undefined;
  let client: ReturnType<typeof createDocumentClient> | undefined;
  let consumers = new Map<string, string>();
  return {
    onInvoke: reportInvocations({
      readRow: async (source, eventId, consumerId) => ledger?.get(source, eventId, consumerId),
      print: (line) => console.log(line),
      consumerOfQueue: (arn) => consumers.get(arn),
    }),
    attach(stack: AssemblyStack): void {
      client = createDocumentClient(localDynamoClient(stack.endpoints.dynamodb, stack.credentials));
      ledger = new Ledger({ client, tableName: stack.state.tables.ledger });
      consumers = new Map(Object.entries(stack.state.queues).map(([id, q]) => [q.arn, id]));
    },
    close: async () => client?.destroy(),
  };
}
