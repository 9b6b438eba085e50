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
import { createLogger } from '../lambdas/shared/logger';
import { assemblyArg, startAssemblyMode } from '../local/assembly/start';
import { reportDeliveries } from '../local/delivery-report';
import { assertJava, EmulatorError } from '../local/emulators';
import { type LocalStack, stackState, startLocalStack } from '../local/stack';
import { DEFAULT_STATE_FILE, removeState, writeState } from '../local/state';
import { localDocumentClient } from '../local/wiring';

// The SDK's notice that Node 20 support ends in 2027 (set it to 'false' to see it).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const port = Number(process.env.HOOKLEDGER_PORT ?? 3000);
/** Where data, secrets and the state file live. Default `.hookledger/` (tests point it elsewhere). */
const home = process.env.HOOKLEDGER_HOME ? path.resolve(process.env.HOOKLEDGER_HOME) : undefined;

async function main(): Promise<void> {
  try {
    assertJava();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  // `npm start -- --assembly [<dir>]`: run what ships (local/assembly).
  const assembly = assemblyArg(process.argv.slice(2));
  if (assembly === undefined) return startFromSources();
  try {
    await startAssemblyMode(assembly, { port, home });
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
  await writeState(stateFile, stackState(stack, stack.dataDir));
  // The operator console, on this stack through its state file as the CLI reads it (console/); the
  // pipeline runs on without it if it cannot start.
  const console_ = await serveConsole({
    config: stack.config,
    root: ROOT,
    env: { ...process.env, HOOKLEDGER_STATE: stateFile },
    operator: `${process.env.USER ?? 'operator'} (console)`,
    ...(process.env.HOOKLEDGER_CONSOLE_PORT ? { port: Number(process.env.HOOKLEDGER_CONSOLE_PORT) } : {}),
  }).catch((error: unknown) => {
    console.error(`hookledger: the console did not start: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  });
  printBanner(stack, { t0, source: source.id, secret, stateFile, consoleLine: console_?.line });
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    // Stop at once, before anything is awaited: Ctrl-C reached DynamoDB Local's JVM as well, so the
    // pollers must stop reading now. The stack stops in the reverse order of start, storage last.
    const stopped = Promise.all([console_?.close(), stack.stop()]);
    console.log('\nhookledger: stopping...');
    await Promise.all([stopped, removeState(stateFile)]);
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

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

interface Banner {
  readonly t0: number;
  readonly source: string;
  readonly secret: string;
  readonly stateFile: string;
  readonly consoleLine: string | undefined;
}

function printBanner(stack: LocalStack, banner: Banner): void {
  const { source, secret } = banner;
  console.log(`
hookledger is running (${Date.now() - banner.t0} ms).

  webhook URL     ${stack.webhookUrl(source)}
  ${banner.consoleLine ?? 'console URL     (not started: see the error above)'}
  signing secret  ${secret}   (Standard Webhooks; kept in .hookledger/secrets.json, git-ignored)
  DynamoDB Local  ${stack.endpoints.dynamodb}   (data in ${path.relative(ROOT, stack.dataDir ?? '') || 'memory'})
  SQS emulator    ${stack.endpoints.sqs}
  state file      ${path.relative(ROOT, banner.stateFile)}

Send a signed test event (in another terminal):

  npx hookledger send --source ${source} --type payment.succeeded --tenant tenant_204

Then: npx hookledger status · npx hookledger trace <event_id> · npx hookledger usage --from -1h
Press Ctrl-C to stop.
`);
  const resumed = stack.startupRepair;
  if (resumed && (resumed.repaired > 0 || resumed.unrepaired > 0)) {
    console.log(
      `Resumed from the last run: ${resumed.repaired} unfinished deliveries re-queued (repair ${resumed.repairId ?? '-'})` +
        `${resumed.unrepaired > 0 ? `, ${resumed.unrepaired} not (${JSON.stringify(resumed.unrepairedByReason)})` : ''}.\n`,
    );
  }
}

await main();
