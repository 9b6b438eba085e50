/**
 * `npm start`: the whole pipeline on this machine, on loopback only. Prints the webhook URL, the
 * local signing secret and a ready-to-paste command that sends a signed test event, then one line
 * per delivery as consumers process it. Ctrl-C stops everything it started.
 *
 * The composition root of the local stack (local/) and the operator console (console/), on the top
 * floor: local/ never imports the console; the console reaches the stack through its state file, as
 * the CLI does.
 */
import path from 'node:path';
import { Ledger } from '../adapters/ledger';
import { serveConsole } from '../console/serve';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import config from '../hookledger.config';
import { createLogger } from '../lambdas/shared/logger';
import { assemblyArg, type ConsoleStarter, startAssemblyMode } from '../local/assembly/start';
import { printBanner } from '../local/banner';
import { reportDeliveries } from '../local/delivery-report';
import { assertJava, EmulatorError } from '../local/emulators';
import { stopOnSignals } from '../local/lifecycle';
import { type LocalStack, stackState, startLocalStack } from '../local/stack';
import { configFingerprint, DEFAULT_STATE_FILE, removeState, writeState } from '../local/state';
import { localDocumentClient } from '../local/wiring';
import { sampleWarnings } from '../ops/source-check';

// The SDK's notice that Node 20 support ends in 2027 (set it to 'false' to see it).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const port = Number(process.env.HOOKLEDGER_PORT ?? 3000);
/** Where data, secrets and the state file live. Default `.hookledger/` (tests point it elsewhere). */
const home = process.env.HOOKLEDGER_HOME ? path.resolve(process.env.HOOKLEDGER_HOME) : undefined;
/** The configuration file as this process read it: recorded in the state file, so the CLI can say when it changed. */
const configRecord = configFingerprint(path.join(ROOT, 'hookledger.config.ts'));

async function main(): Promise<void> {
  try {
    assertJava();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  // Each attribution path a preset's sample event lacks: found now, not when a webhook answers 400.
  for (const line of sampleWarnings(config)) console.error(line);
  // `npm start -- --assembly [<dir>]`: run what ships (local/assembly).
  const assembly = assemblyArg(process.argv.slice(2));
  if (assembly === undefined) return startFromSources();
  try {
    await startAssemblyMode(assembly, { port, home, startConsole, ...(configRecord ? { config: configRecord } : {}) });
  } catch (error) {
    console.error(`hookledger: could not start the assembly: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}

/** Plain `npm start`: the pipeline from the sources, its state file, the console on it, the banner. */
async function startFromSources(): Promise<void> {
  const t0 = Date.now();
  console.log('hookledger: starting DynamoDB Local, the SQS emulator and the pipeline...');
  const stack = await startStack();
  const source = stack.config.sources[0]!;
  const secret = (await stack.secrets.get(source.id)).current;
  const stateFile = home ? path.join(home, 'state.json') : path.join(ROOT, DEFAULT_STATE_FILE);
  await writeState(stateFile, { ...stackState(stack, stack.dataDir), ...(configRecord ? { config: configRecord } : {}) });
  const console_ = await startConsole(stateFile);
  printBanner({
    elapsedMs: Date.now() - t0,
    sources: stack.config.sources.map((s) => ({ id: s.id, url: stack.webhookUrl(s.id) })),
    consoleLine: console_?.line,
    secretsFile: stack.secretsFile,
    firstSecret: secret,
    dynamodb: stack.endpoints.dynamodb,
    sqs: stack.endpoints.sqs,
    dataDir: stack.dataDir,
    stateFile,
    ...(stack.startupRepair ? { startupRepair: stack.startupRepair } : {}),
  });
  stopOnSignals(async () => {
    // Stop at once, before anything is awaited: the pollers must stop reading now. The stack stops
    // in the reverse order of start, storage last.
    const stopped = Promise.all([console_?.close(), stack.stop()]);
    console.log('\nhookledger: stopping...');
    await Promise.all([stopped, removeState(stateFile)]);
  });
}

/**
 * The operator console, on the stack through its state file as the CLI reads it (console/); the
 * pipeline runs on without it if it cannot start.
 */
const startConsole: ConsoleStarter = (stateFile) =>
  serveConsole({
    config,
    root: ROOT,
    env: { ...process.env, HOOKLEDGER_STATE: stateFile },
    operator: `${process.env.USER ?? 'operator'} (console)`,
    ...(process.env.HOOKLEDGER_CONSOLE_PORT ? { port: Number(process.env.HOOKLEDGER_CONSOLE_PORT) } : {}),
  }).catch((error: unknown) => {
    console.error(`hookledger: the console did not start: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  });

/** The local stack with one progress line per delivery; exits 1 (nothing left running) when it cannot start. */
async function startStack(): Promise<LocalStack> {
  let ledger: Ledger | undefined;
  try {
    const stack = await startLocalStack({
      httpPort: port,
      ...(home ? { dataDir: path.join(home, 'data'), secretsFile: path.join(home, 'secrets.json') } : {}),
      logger: (service) => createLogger(service, { silent: process.env.HOOKLEDGER_LOG !== 'json' }),
      // One line per delivery saying what happened to it (ok, retrying, or quarantined to the DLQ
      // with its category), read from its ledger row once the stack is up.
      wrapConsumer: reportDeliveries({
        readRow: async (source, eventId, consumerId) => ledger?.get(source, eventId, consumerId),
        print: (line) => console.log(line),
      }),
    });
    ledger = new Ledger({ client: localDocumentClient(stack.endpoints.dynamodb), tableName: stack.resources.tables.ledger });
    return stack;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`hookledger: could not start: ${message}`);
    if (error instanceof EmulatorError) console.error('Nothing was left running.');
    process.exit(1);
  }
}

await main();
