/**
 * The local stack run from a synthesized cloud assembly: the emulators of local/stack.ts, the
 * tables, queues and bucket the template declares, each function's bundle in its own process with
 * the template's environment, the HTTP API's routes on the local gateway, and the template's event
 * source mappings played by the same stream and SQS pollers; every call a function makes (and each
 * of its event source mappings makes with its role) goes through a proxy that checks it against the
 * function's role policies. Used by `npm start -- --assembly` and test/assembly.
 */
import path from 'node:path';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import defaultConfig from '../../hookledger.config';
import { type RepairResult, repair } from '../../lambdas/reconcile/repair';
import { startAdminServer } from '../admin-server';
import { LOCAL_REGION, localDynamoClient, localS3Client, localSqsClient } from '../clients';
import { type AccessKey, type LocalStackCredentials, processCredentials } from '../credentials';
import { freePort, startDynamoLocal, startSqsEmulator } from '../emulators';
import { type HttpHandler, startHttpGateway } from '../http-gateway';
import { FileSecrets } from '../secrets-file';
import { createSqsPoller, type SqsPoller } from '../sqs-poller';
import type { RunningStackState } from '../state';
import { fileCheckpointStore } from '../streams/checkpoints';
import { createSdkStreamsApi } from '../streams/dynamodb-streams';
import { createStreamPoller, type StreamPoller } from '../streams/poller';
import { type PollerLogger, sleep } from '../support';
import { localDocumentClient } from '../wiring';
import { intakeOutcomeCounter } from './emf';
import { type LocalFunction, startLocalFunction } from './functions';
import { type Authorizer, createAuthorizer, type Denial, functionKeys, type LocalPrincipal, principalsOf } from './iam';
import { type LocalMapping, startLambdaEndpoint } from './lambda-endpoint';
import { type CheckedProxy, startCheckedProxy } from './proxy';
import type { TableKeys } from './requests';
import { type AssemblyResources, provisionAssembly } from './resources';
import { type SecretBinding, startSecretsEndpoint } from './secrets-endpoint';
import { AssemblyError, type CloudAssembly, functionCodeDir, readAssembly, resolveIntrinsics, resourcesOfType } from './template';

export interface AssemblyStackOptions {
  /** The `cdk synth -o <dir>` output. */
  readonly assemblyDir: string;
  /** DynamoDB Local's folder; null keeps everything in memory (tests). */
  readonly dataDir: string | null;
  readonly secretsFile: string;
  /** 0 picks a free port. */
  readonly httpPort: number;
  /** Every line a function writes, tagged with its logical id. */
  readonly onLog?: (functionId: string, line: string) => void;
  /** Each denied call (also in `denials()`). */
  readonly onDenied?: (denial: Denial) => void;
  /** Each invocation an event source mapping or the gateway made, with its outcome. */
  readonly onInvoke?: (functionId: string, event: unknown, outcome: { ok: boolean; error?: string }) => void;
  readonly pollerLogger?: (poller: string) => PollerLogger;
  readonly streamPollIntervalMs?: number;
  /**
   * At start, re-queue every delivery an earlier run left unfinished (the emulated queues keep
   * nothing across a restart), as plain `npm start` does. Default: on when `dataDir` is not null.
   */
  readonly repairOnStart?: boolean;
}

export interface AssemblyStack {
  readonly assembly: CloudAssembly;
  readonly url: string;
  webhookUrl(sourceId: string): string;
  readonly secrets: FileSecrets;
  /** The sources intake's SOURCE_SECRETS names. */
  readonly sourceIds: readonly string[];
  readonly resources: AssemblyResources;
  /** The raw emulator endpoints (the operator's; unchecked). */
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string; readonly s3: string };
  /** The checked proxies' endpoints (a function's credentials are checked there). */
  readonly proxies: {
    readonly dynamodb: string;
    readonly sqs: string;
    readonly s3: string;
    readonly secretsmanager: string;
    /** The event source mapping calls (list, enable/disable) of the Lambda API. */
    readonly lambda: string;
  };
  /** What the CLI reads: tables and each consumer's queues, from the functions' environment (and the credential, written beside it). */
  readonly state: RunningStackState;
  /**
   * The operator's per-start credential: the emulators accept only its key, the proxies and endpoints
   * let it through unchecked, the admin endpoint takes its token.
   */
  readonly credentials: LocalStackCredentials;
  /** The key a function's process signs with (its principal's; the proxies check its calls against its role). */
  functionKey(functionId: string): AccessKey;
  readonly functions: Readonly<Record<string, LocalFunction>>;
  readonly iam: Authorizer;
  /** What the start-up repair re-queued (undefined when it did not run). */
  readonly startupRepair?: RepairResult;
  denials(): readonly Denial[];
  pause(consumerId: string): Promise<void>;
  resume(consumerId: string): void;
  /** The consumers paused now (by `pause`, or by disabling their mapping through the Lambda API). */
  paused(): string[];
  /** Until the stream is read to its end and every consumer queue is empty, twice in a row. */
  drain(options?: { timeoutMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

type Env = Record<string, string>;

export async function startAssemblyStack(options: AssemblyStackOptions): Promise<AssemblyStack> {
  const assembly = readAssembly(path.resolve(options.assemblyDir));
  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const part of [...started].reverse()) await part.stop().catch(() => undefined);
  };
  try {
    const dynamo = await startDynamoLocal({ port: await freePort(), dbPath: options.dataDir });
    started.push(dynamo);
    // The bucket's objects kept beside the tables, as plain `npm start` keeps them (local/durable-s3.ts).
    const fauxqs = await startSqsEmulator({
      port: await freePort(),
      s3Dir: options.dataDir === null ? null : path.join(options.dataDir, 's3'),
    });
    started.push(fauxqs);
    const endpoints = { dynamodb: dynamo.endpoint, sqs: fauxqs.endpoint, s3: fauxqs.endpoint };

    // Filled once the template is resolved; the proxies read them per request.
    const principals = new Map<string, LocalPrincipal>();
    const operator = processCredentials();
    const tableKeys = new Map<string, TableKeys>();
    const denials: Denial[] = [];
    const authorizer = createAuthorizer(principals, (denial) => {
      denials.push(denial);
      options.onDenied?.(denial);
    });
    let upstreamQueueBase = '';
    const proxy = async (service: 'dynamodb' | 'sqs' | 's3', upstream: string): Promise<CheckedProxy> => {
      const p = await startCheckedProxy({
        service,
        upstream,
        principals,
        operator,
        authorizer,
        tables: tableKeys,
        ...(service === 'sqs' ? { queueUrlBase: () => upstreamQueueBase } : {}),
      });
      started.push({ stop: () => p.close() });
      return p;
    };
    const proxies = {
      dynamodb: await proxy('dynamodb', endpoints.dynamodb),
      sqs: await proxy('sqs', endpoints.sqs),
      s3: await proxy('s3', endpoints.s3),
    };

    const operatorDynamo = localDynamoClient(endpoints.dynamodb);
    let operatorSqs = localSqsClient(endpoints.sqs);
    const operatorS3 = localS3Client(endpoints.s3);
    const resources = await provisionAssembly({
      assembly,
      dynamo: operatorDynamo,
      sqs: operatorSqs,
      s3: operatorS3,
      sqsProxyEndpoint: proxies.sqs.endpoint,
    });
    operatorS3.destroy();
    upstreamQueueBase = resources.upstreamQueueBase;
    // From here on queue URLs name the SQS proxy; the operator's calls through it are not checked.
    operatorSqs.destroy();
    operatorSqs = localSqsClient(proxies.sqs.endpoint);
    for (const [k, v] of principalsOf(assembly, resources.locals)) principals.set(k, v);
    for (const [id, table] of Object.entries(resources.tables)) {
      const gsis = (assembly.resources[id]?.Properties?.GlobalSecondaryIndexes ?? []) as {
        IndexName: string;
        KeySchema: { AttributeName: string; KeyType: string }[];
      }[];
      tableKeys.set(table.name, {
        partitionKey: table.partitionKey,
        indexKeys: Object.fromEntries(gsis.map((g) => [g.IndexName, g.KeySchema.find((k) => k.KeyType === 'HASH')?.AttributeName ?? ''])),
        ...(table.streamArn ? { streamArn: table.streamArn } : {}),
      });
    }

    // Which functions run: those an event source mapping or an API route invokes.
    const esms = resourcesOfType(assembly, 'AWS::Lambda::EventSourceMapping');
    const routes = resourcesOfType(assembly, 'AWS::ApiGatewayV2::Route');
    const integrationTarget = (routeProps: Record<string, unknown>): string => {
      const target = JSON.stringify(routeProps.Target ?? '');
      const integrationId = /"Ref":"([^"]+)"/.exec(target)?.[1] ?? '';
      const uri = assembly.resources[integrationId]?.Properties?.IntegrationUri as { 'Fn::GetAtt'?: [string, string] } | undefined;
      const fn = uri?.['Fn::GetAtt']?.[0];
      if (!fn) throw new AssemblyError(`route ${String(routeProps.RouteKey)}: its integration ${integrationId} names no Lambda function`);
      return fn;
    };
    const functionOf = (ref: unknown) => (ref as { Ref?: string }).Ref ?? '';
    const running = new Set<string>([
      ...esms.map(([, e]) => functionOf(e.Properties?.FunctionName)),
      ...routes.map(([, r]) => integrationTarget(r.Properties ?? {})),
    ]);

    const envOf = (id: string): Env =>
      resolveIntrinsics(
        (assembly.resources[id]?.Properties?.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
        resources.locals,
        `${id}.Environment.Variables`,
      ) as Env;
    const envs = Object.fromEntries([...running].map((id) => [id, envOf(id)]));

    // The secrets the template hands to the functions, bound to the local secrets file's entries.
    const bindings = new Map<string, SecretBinding>();
    const sourceIds = new Set<string>();
    const httpConsumers = new Set<string>();
    for (const env of Object.values(envs)) {
      if (env.SOURCE_SECRETS) {
        for (const [source, arn] of Object.entries(JSON.parse(env.SOURCE_SECRETS) as Record<string, string>)) {
          bindings.set(arn, { kind: 'source', id: source });
          sourceIds.add(source);
        }
      }
      if (env.PAYLOAD_HASH_KEY_SECRET) bindings.set(env.PAYLOAD_HASH_KEY_SECRET, { kind: 'payloadHashKey' });
      if (env.CONSUMER_SECRET && env.CONSUMER_ID) {
        bindings.set(env.CONSUMER_SECRET, { kind: 'consumer', id: env.CONSUMER_ID });
        httpConsumers.add(env.CONSUMER_ID);
      }
    }
    const secrets = new FileSecrets({ path: options.secretsFile, sourceIds: [...sourceIds], consumerIds: [...httpConsumers] });
    const secretsEndpoint = await startSecretsEndpoint({
      secrets,
      bindings,
      principals,
      operator,
      authorizer,
      overlapMs: Object.fromEntries(defaultConfig.sources.map((s) => [s.id, s.secretOverlapHours * 3_600_000])),
    });
    started.push({ stop: () => secretsEndpoint.close() });
    // The template's event source mappings, filled below; a circuit breaker disables its own.
    const mappings: LocalMapping[] = [];
    const lambdaEndpoint = await startLambdaEndpoint({ mappings: () => mappings, principals, operator, authorizer });
    started.push({ stop: () => lambdaEndpoint.close() });

    const functionKey = functionKeys(principals);
    const functions: Record<string, LocalFunction> = {};
    const intake = intakeOutcomeCounter();
    for (const id of running) {
      const props = assembly.resources[id]?.Properties ?? {};
      const name = resources.locals.get(id)?.ref ?? id;
      const fn = startLocalFunction({
        logicalId: id,
        functionName: name,
        functionArn: resources.locals.get(id)?.attributes.Arn ?? '',
        codeDir: functionCodeDir(assembly, id),
        handler: String(props.Handler ?? 'index.handler'),
        timeoutSeconds: Number(props.Timeout ?? 3),
        memorySize: Number(props.MemorySize ?? 128),
        environment: {
          PATH: process.env.PATH ?? '',
          ...envs[id],
          AWS_REGION: LOCAL_REGION,
          AWS_DEFAULT_REGION: LOCAL_REGION,
          AWS_ACCESS_KEY_ID: functionKey(id).accessKeyId,
          AWS_SECRET_ACCESS_KEY: functionKey(id).secretAccessKey,
          AWS_ENDPOINT_URL_DYNAMODB: proxies.dynamodb.endpoint,
          AWS_ENDPOINT_URL_SQS: proxies.sqs.endpoint,
          AWS_ENDPOINT_URL_S3: proxies.s3.endpoint,
          AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsEndpoint.endpoint,
          AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint.endpoint,
          AWS_EC2_METADATA_DISABLED: 'true',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          AWS_LAMBDA_FUNCTION_NAME: name,
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(props.MemorySize ?? 128),
          AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        },
        onLog: (line) => {
          intake.add(line);
          options.onLog?.(id, line);
        },
      });
      functions[id] = fn;
      started.push({ stop: () => fn.stop() });
    }
    await Promise.all(Object.values(functions).map((f) => f.ready()));

    let inFlight = 0;
    const invoker =
      (id: string) =>
      async <T>(event: unknown): Promise<T> => {
        inFlight++;
        try {
          const result = await functions[id]!.invoke<T>(event);
          options.onInvoke?.(id, event, { ok: true });
          return result;
        } catch (error) {
          options.onInvoke?.(id, event, { ok: false, error: error instanceof Error ? error.message : String(error) });
          throw error;
        } finally {
          inFlight--;
        }
      };

    // The HTTP API: its routes, all on the one integration the local gateway serves.
    const targets = new Set(routes.map(([, r]) => integrationTarget(r.Properties ?? {})));
    if (targets.size !== 1) throw new AssemblyError(`the HTTP API routes to ${targets.size} functions; the local gateway serves one`);
    const ingestId = [...targets][0]!;
    const gateway = await startHttpGateway({
      port: options.httpPort,
      routeKeys: routes.map(([, r]) => String(r.Properties?.RouteKey)),
      handler: invoker(ingestId) as HttpHandler,
    });
    started.push({ stop: () => gateway.close() });

    // The event source mappings, each reading with its function's role.
    const streamPollers: StreamPoller[] = [];
    const sqsPollers = new Map<string, SqsPoller>();
    const paused = new Set<string>();
    const pauseConsumer = async (consumerId: string) => {
      paused.add(consumerId);
      await sqsPollers.get(consumerId)?.pause();
    };
    const resumeConsumer = (consumerId: string) => {
      paused.delete(consumerId);
      sqsPollers.get(consumerId)?.resume();
    };
    const consumerQueues = new Map<string, string>();
    const queueIdByArn = new Map(Object.values(resources.queues).map((q) => [q.arn, q]));
    for (const [esmId, esm] of esms) {
      const props = resolveIntrinsics(esm.Properties ?? {}, resources.locals, esmId) as Record<string, unknown>;
      const fnId = functionOf(esm.Properties?.FunctionName);
      const source = (esm.Properties?.EventSourceArn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
      const reportBatchItemFailures = ((props.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures');
      const filters = ((props.FilterCriteria as { Filters?: { Pattern: string }[] } | undefined)?.Filters ?? []).map((f) => f.Pattern);
      const sqsAsFunction = new SQSClient({
        endpoint: proxies.sqs.endpoint,
        region: LOCAL_REGION,
        credentials: functionKey(fnId),
        useQueueUrlAsEndpoint: false,
        maxAttempts: 3,
      });
      if (source?.[1] === 'StreamArn') {
        const table = resources.tables[source[0]];
        if (!table) throw new AssemblyError(`${esmId}: its stream belongs to ${source[0]}, not a table the local stack runs`);
        const onFailureArn = (props.DestinationConfig as { OnFailure?: { Destination?: string } } | undefined)?.OnFailure?.Destination;
        const onFailureQueue = onFailureArn ? queueIdByArn.get(onFailureArn) : undefined;
        if (onFailureArn && !onFailureQueue)
          throw new AssemblyError(`${esmId}: on-failure destination ${onFailureArn} is not an SQS queue of the stack`);
        const invoke = invoker(fnId);
        mappings.push({
          uuid: esmId,
          eventSourceArn: table.streamArn ?? '',
          functionArn: resources.locals.get(fnId)?.attributes.Arn ?? '',
          enabled: () => true,
        });
        streamPollers.push(
          createStreamPoller({
            streams: createSdkStreamsApi(
              new DynamoDBStreamsClient({
                endpoint: proxies.dynamodb.endpoint,
                region: LOCAL_REGION,
                credentials: functionKey(fnId),
                maxAttempts: 3,
              }),
            ),
            tableName: table.name,
            handler: (event: DynamoDBStreamEvent) => invoke(event),
            filters,
            ...(props.BatchSize !== undefined ? { batchSize: Number(props.BatchSize) } : {}),
            ...(props.MaximumRetryAttempts !== undefined ? { maxRetryAttempts: Number(props.MaximumRetryAttempts) } : {}),
            ...(props.MaximumRecordAgeInSeconds !== undefined ? { maxRecordAgeSeconds: Number(props.MaximumRecordAgeInSeconds) } : {}),
            bisectBatchOnFunctionError: props.BisectBatchOnFunctionError === true,
            reportBatchItemFailures,
            ...(onFailureQueue ? { onFailure: { sqs: sqsAsFunction, queueUrl: onFailureQueue.url } } : {}),
            functionName: resources.locals.get(fnId)?.ref ?? fnId,
            startingPosition: props.StartingPosition === 'LATEST' ? 'LATEST' : 'TRIM_HORIZON',
            pollIntervalMs: options.streamPollIntervalMs ?? 50,
            logger: options.pollerLogger?.(`stream ${esmId}`),
            // File-backed data gets file-backed checkpoints: a restart resumes where it stopped.
            ...(options.dataDir === null
              ? {}
              : { checkpoints: fileCheckpointStore(path.join(options.dataDir, `stream-checkpoints-${esmId}.json`)) }),
          }),
        );
        continue;
      }
      const queue = source?.[1] === 'Arn' ? resources.queues[source[0]] : undefined;
      if (!queue)
        throw new AssemblyError(
          `${esmId}: event source ${JSON.stringify(esm.Properties?.EventSourceArn)} is neither a table stream nor a queue of the stack`,
        );
      const consumerId = envs[fnId]?.CONSUMER_ID ?? fnId;
      consumerQueues.set(consumerId, queue.url);
      mappings.push({
        uuid: esmId,
        eventSourceArn: queue.arn,
        functionArn: resources.locals.get(fnId)?.attributes.Arn ?? '',
        enabled: () => !paused.has(consumerId),
        // Not awaited: the caller may be the batch the pause waits for (Lambda answers Disabling too).
        setEnabled: (enabled) => (enabled ? resumeConsumer(consumerId) : void pauseConsumer(consumerId)),
      });
      const invoke = invoker(fnId);
      sqsPollers.set(
        consumerId,
        createSqsPoller({
          sqs: sqsAsFunction,
          queueUrl: queue.url,
          queueArn: queue.arn,
          handler: (event: SQSEvent) => invoke(event),
          ...(props.BatchSize !== undefined ? { batchSize: Number(props.BatchSize) } : {}),
          ...(props.MaximumBatchingWindowInSeconds !== undefined
            ? { batchingWindowSeconds: Number(props.MaximumBatchingWindowInSeconds) }
            : {}),
          filters,
          // One sandbox per function runs one invocation at a time; more receives would only wait.
          maxConcurrency: Math.min(
            Number((props.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency ?? 2),
            2,
          ),
          reportBatchItemFailures,
          logger: options.pollerLogger?.(`sqs ${consumerId}`),
        }),
      );
    }
    // The queues start empty on every start while the tables remember every delivery not yet done:
    // re-queue those (the operator's repair, as plain `npm start` does) before any poller runs.
    let startupRepair: RepairResult | undefined;
    const tables = {
      events: Object.values(envs).find((e) => e.EVENTS_TABLE)?.EVENTS_TABLE ?? '',
      ledger: Object.values(envs).find((e) => e.LEDGER_TABLE)?.LEDGER_TABLE ?? '',
    };
    if ((options.repairOnStart ?? options.dataDir !== null) && tables.events && tables.ledger) {
      const ddb = localDocumentClient(endpoints.dynamodb);
      try {
        startupRepair = await repair(
          { ddb, tables, operator: 'npm start --assembly' },
          { from: 0, to: Date.now() + 1, graceMs: 0, leasesAbandoned: true, trigger: 'start', scan: true },
        );
      } finally {
        ddb.destroy();
      }
    }
    for (const p of streamPollers) await p.start();
    for (const p of sqsPollers.values()) p.start();
    started.push({
      stop: async () => {
        await Promise.all([...streamPollers.map((p) => p.stop()), ...[...sqsPollers.values()].map((p) => p.stop())]);
      },
    });

    // `hookledger pause|resume` reach the running stack here, as with plain `npm start`.
    const admin = await startAdminServer(
      {
        pause: pauseConsumer,
        resume: resumeConsumer,
        paused: () => [...paused].sort(),
        // From the ingest bundle's own IntakeRequests EMF lines, as the dashboard counts them.
        intakeOutcomes: () => intake.outcomes(),
        consumers: [...consumerQueues.keys()],
      },
      { token: operator.adminToken },
    );
    started.push({ stop: () => new Promise<void>((resolve) => admin.server.close(() => resolve())) });
    const fanoutEnv = Object.values(envs).find((e) => e.QUEUE_URLS);
    const consumerEnvs = Object.values(envs).filter((e) => e.CONSUMER_ID);
    const state: RunningStackState = {
      version: 1,
      pid: process.pid,
      startedAt: new Date().toISOString(),
      region: LOCAL_REGION,
      dynamo: { endpoint: endpoints.dynamodb, port: dynamo.port, dbPath: options.dataDir },
      // The CLI reaches the queues through the proxy too (queue URLs name it); as the operator, unchecked.
      sqs: { endpoint: proxies.sqs.endpoint, port: Number(new URL(proxies.sqs.endpoint).port) },
      gateway: { url: gateway.url, port: gateway.port },
      webhookUrl: `${gateway.url}/hooks/{source}`,
      adminUrl: admin.url,
      secretsFile: options.secretsFile,
      tables: { events: consumerEnvs[0]?.EVENTS_TABLE ?? fanoutEnv?.EVENTS_TABLE ?? '', ledger: consumerEnvs[0]?.LEDGER_TABLE ?? '' },
      queues: Object.fromEntries(
        consumerEnvs.map((e) => {
          const q = Object.values(resources.queues).find((x) => x.url === e.QUEUE_URL);
          const dlq = Object.values(resources.queues).find((x) => x.url === e.DLQ_URL);
          return [e.CONSUMER_ID!, { url: q?.url ?? '', arn: q?.arn ?? '', dlqUrl: dlq?.url ?? '', dlqArn: dlq?.arn ?? '' }];
        }),
      ),
      fanoutFailureQueue: (() => {
        const fanoutEsm = esms.find(([, e]) => (e.Properties?.DestinationConfig as object | undefined) !== undefined);
        const arn = fanoutEsm
          ? (resolveIntrinsics(fanoutEsm[1].Properties?.DestinationConfig, resources.locals) as { OnFailure: { Destination: string } })
              .OnFailure.Destination
          : '';
        const q = queueIdByArn.get(arn);
        return { url: q?.url ?? '', arn: q?.arn ?? '' };
      })(),
      credentials: operator,
    };

    let stopped: Promise<void> | undefined;
    return {
      assembly,
      url: gateway.url,
      webhookUrl: (sourceId) => `${gateway.url}/hooks/${sourceId}`,
      secrets,
      sourceIds: [...sourceIds],
      resources,
      endpoints,
      proxies: {
        dynamodb: proxies.dynamodb.endpoint,
        sqs: proxies.sqs.endpoint,
        s3: proxies.s3.endpoint,
        secretsmanager: secretsEndpoint.endpoint,
        lambda: lambdaEndpoint.endpoint,
      },
      state,
      credentials: operator,
      functionKey,
      functions,
      iam: authorizer,
      ...(startupRepair ? { startupRepair } : {}),
      denials: () => [...denials],
      pause: pauseConsumer,
      resume: resumeConsumer,
      paused: () => [...paused].sort(),
      async drain({ timeoutMs = 60_000 } = {}) {
        const deadline = Date.now() + timeoutMs;
        for (let quiet = 0; quiet < 2; ) {
          if (Date.now() > deadline) throw new Error(`assembly stack did not drain within ${timeoutMs} ms`);
          for (const p of streamPollers) await p.drained({ timeoutMs: Math.max(1000, deadline - Date.now()) });
          let backlog = 0;
          for (const [id, url] of consumerQueues) {
            if (paused.has(id)) continue;
            const out = await operatorSqs.send(
              new GetQueueAttributesCommand({
                QueueUrl: url,
                AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
              }),
            );
            backlog +=
              Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
          }
          quiet = backlog === 0 && inFlight === 0 ? quiet + 1 : 0;
          await sleep(200);
        }
      },
      stop() {
        stopped ??= (async () => {
          await stopAll();
          operatorDynamo.destroy();
          operatorSqs.destroy();
        })();
        return stopped;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
