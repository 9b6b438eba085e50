/**
 * The local pipeline builder: one set of named steps that plain `npm start`, assembly mode and the
 * bench's first-invocation rig all run, differing only in their source (where the resources and
 * functions come from, and whether each call is IAM-checked):
 *
 *   emulators → provision → functions → gateway → mappings → start-up repair → (pollers start)
 *   → admin;  drain;  stop (the reverse of start, storage last)
 *
 * The consumer switches exist before the functions, so whatever pauses a consumer (an HTTP
 * consumer's circuit breaker during the first batches included) always has a pipeline to pause.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { RepairResult } from '../../lambdas/reconcile/repair';
import { startAdminServer } from '../admin-server';
import { processCredentials } from '../credentials';
import { type HttpHandler, startHttpGateway } from '../http-gateway';
import type { PollerLogger } from '../support';
import { drain } from './drain';
import { type EmulatorOptions, type Emulators, startEmulators } from './emulators';
import { EventSourceMappings } from './mappings';
import type { PipelineFunctions, PipelinePlan } from './plan';
import { repairOnStart } from './repair';
import { StopList } from './stops';
import { ConsumerSwitches } from './switches';

/** What provisioning gives every later step. */
export interface Provisioned {
  readonly plan: PipelinePlan;
  /** The operator's SQS client for the plan's queue URLs (the drain reads their depth with it). */
  readonly operatorSqs: SQSClient;
}

/** Where a pipeline's resources and functions come from. */
export interface PipelineSource<P extends Provisioned, F extends PipelineFunctions = PipelineFunctions> {
  /** Step 2: the tables, queues and bucket on the emulators, and the plan of what runs. */
  provision(emulators: Emulators, stops: StopList): Promise<P>;
  /** Step 3: the functions, told where to pause a consumer. */
  functions(provisioned: P, switches: ConsumerSwitches, stops: StopList): Promise<F>;
}

export interface PipelineOptions {
  readonly emulators: EmulatorOptions;
  /** The webhook gateway's port; 0 picks a free one. */
  readonly httpPort: number;
  /** Called when the gateway's function throws (the client gets a 500). Default: console.error. */
  readonly onGatewayError?: (error: unknown) => void;
  /** Consumers left paused at start (their queues fill; resume starts them). */
  readonly paused?: readonly string[];
  /** Re-queue what an earlier run left unfinished. Default: when the data is file-backed. */
  readonly repairOnStart?: boolean;
  /** Who the start-up repair's audit names. */
  readonly operator: string;
  readonly clock?: () => number;
  readonly streamPollIntervalMs?: number;
  readonly pollerLogger?: (poller: string) => PollerLogger;
  /** The admin endpoint `hookledger pause|resume` reach. Default true. */
  readonly admin?: boolean;
  /** What the drain's timeout calls the stack. */
  readonly name: string;
}

export interface Pipeline<P extends Provisioned, F extends PipelineFunctions = PipelineFunctions> {
  readonly emulators: Emulators;
  readonly provisioned: P;
  readonly functions: F;
  readonly switches: ConsumerSwitches;
  readonly mappings: EventSourceMappings;
  readonly gateway: { readonly url: string; readonly port: number };
  /** Undefined when `admin` is false. */
  readonly adminUrl?: string;
  readonly startupRepair?: RepairResult;
  drain(options?: { timeoutMs?: number }): Promise<void>;
  /** The pollers are told synchronously, in the call itself; then the rest in reverse order. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startPipeline<P extends Provisioned, F extends PipelineFunctions>(
  source: PipelineSource<P, F>,
  options: PipelineOptions,
): Promise<Pipeline<P, F>> {
  const stops = new StopList();
  try {
    const emulators = await startEmulators(options.emulators, stops);
    const provisioned = await source.provision(emulators, stops);
    const { plan } = provisioned;
    const switches = new ConsumerSwitches(
      plan.queues.map((q) => q.consumerId),
      options.paused,
    );
    const functions = await source.functions(provisioned, switches, stops);
    const gateway = await startGateway(plan, functions, options, stops);
    const mappings = new EventSourceMappings({ plan, functions, switches, dataDir: emulators.dataDir, ...pollerOptions(options) });
    const startupRepair = await startupRepairOf(emulators, plan, switches, options);
    await mappings.start();
    const adminUrl = options.admin === false ? undefined : await startAdmin(switches, functions, stops);
    let stopped: Promise<void> | undefined;
    return {
      emulators,
      provisioned,
      functions,
      switches,
      mappings,
      gateway,
      ...(adminUrl ? { adminUrl } : {}),
      ...(startupRepair ? { startupRepair } : {}),
      drain: (drainOptions) =>
        drain(
          {
            name: options.name,
            streams: mappings.streamPollers,
            sqs: provisioned.operatorSqs,
            runningQueues: () => plan.queues.filter((q) => !switches.isPaused(q.consumerId)).map((q) => q.queueUrl),
            invocationsInFlight: () => mappings.invocationsInFlight,
          },
          drainOptions,
        ),
      stop() {
        stopped ??= (async () => {
          await mappings.stop();
          await stops.stopAll();
        })();
        return stopped;
      },
    };
  } catch (error) {
    await stops.stopAll();
    throw error;
  }
}

function pollerOptions(options: PipelineOptions) {
  return {
    ...(options.streamPollIntervalMs !== undefined ? { streamPollIntervalMs: options.streamPollIntervalMs } : {}),
    ...(options.pollerLogger ? { pollerLogger: options.pollerLogger } : {}),
  };
}

/** Step 4, the gateway: the HTTP API's routes, or the function URL, on the one function behind them. */
async function startGateway(plan: PipelinePlan, functions: PipelineFunctions, options: PipelineOptions, stops: StopList) {
  const { functionId, routeKeys, functionUrl } = plan.gateway;
  const gateway = await startHttpGateway({
    port: options.httpPort,
    handler: ((event) => functions.invoke(functionId, event)) as HttpHandler,
    ...(functionUrl ? { functionUrl } : routeKeys ? { routeKeys } : {}),
    ...(options.onGatewayError ? { onError: options.onGatewayError } : {}),
  });
  stops.add(() => gateway.close());
  return gateway;
}

/** Step 6 when it applies (see ./repair.ts): before any poller runs, so no lease of this process looks abandoned. */
async function startupRepairOf(
  emulators: Emulators,
  plan: PipelinePlan,
  switches: ConsumerSwitches,
  options: PipelineOptions,
): Promise<RepairResult | undefined> {
  const wanted = options.repairOnStart ?? emulators.dataDir !== null;
  if (!wanted || !plan.tables.events || !plan.tables.ledger) return undefined;
  return repairOnStart({
    dynamoEndpoint: emulators.endpoints.dynamodb,
    tables: plan.tables,
    operator: options.operator,
    paused: new Set(switches.paused()),
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

/** The loopback admin endpoint: `hookledger pause|resume` and the intake counts reach the running stack here. */
async function startAdmin(switches: ConsumerSwitches, functions: PipelineFunctions, stops: StopList): Promise<string> {
  const admin = await startAdminServer(
    {
      pause: (id) => switches.pause(id),
      resume: (id) => switches.resume(id),
      paused: () => switches.paused(),
      intakeOutcomes: () => functions.intakeOutcomes(),
      signatureFailures: () => functions.signatureFailures(),
      consumers: [...switches.consumerIds],
    },
    { token: processCredentials().adminToken },
  );
  stops.add(() => new Promise<void>((resolve) => admin.server.close(() => resolve())));
  return admin.url;
}
