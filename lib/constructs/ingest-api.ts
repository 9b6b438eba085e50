import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { IntakeEndpoint } from '../../core/config/schema';
import { ENV } from '../../core/env';
import { ConfigurationError } from '../../core/errors';
import { HookledgerFunction } from './hookledger-function';
import { grantIntakeWrites } from './storage';

/**
 * What the dashboard and the Api5xx alarm read of intake's endpoint: the HTTP API's own metrics, or
 * the function URL's (AWS/Lambda `UrlRequestCount`, `Url4xxCount`, `Url5xxCount`, `UrlRequestLatency`).
 */
export interface IntakeEndpointMetrics {
  metricCount(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricClientError(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricServerError(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
}

export interface IngestApiProps {
  /**
   * `'http-api'`: an API Gateway HTTP API with stage throttling and access logs in front of intake.
   * `'function-url'`: intake's own Lambda function URL, auth NONE (each webhook is verified by its
   * signature, as behind the HTTP API): no per-request API Gateway charge, and no stage throttling,
   * access log, WAF or custom domain; intake's concurrency is then the only brake.
   * @default 'http-api'
   */
  readonly endpoint?: IntakeEndpoint;
  /** Source ids from the config; one route parameter value and one signing secret each. */
  readonly sourceIds: readonly string[];
  /** The EventStore table: intake writes receipts and payloads there and reads `key#` registry items. */
  readonly events: dynamodb.ITable;
  /**
   * Steady-state requests per second for the whole API; beyond it callers get 429 and retry.
   * Sized so that intake stays under a new on-demand table's initial ~4,000 WRU/s. HTTP API only.
   * @default 1000
   */
  readonly throttlingRateLimit?: number;
  /** @default 2000 */
  readonly throttlingBurstLimit?: number;
  /** Intake Lambda timeout; providers stop waiting after 3-10 s. @default Duration.seconds(10) */
  readonly timeout?: Duration;
  /** @default 512 (more memory is more CPU for HMAC and a faster cold start) */
  readonly memorySize?: number;
  /**
   * Reserved concurrency of the intake function (config `intake.reservedConcurrency`), on either
   * endpoint: requests above it are throttled (429 on a function URL; providers retry) instead of
   * taking the concurrency the fan-out and the consumers need. An integer of at least 1; Lambda refuses
   * one that leaves the account under 100 unreserved, so the deploy fails.
   * @default - none: the account's shared pool
   */
  readonly reservedConcurrency?: number;
}

/**
 * Webhook intake: `POST /hooks/{source}` (and `GET` on the same path, for handshakes) on an HTTP API
 * (payload format 2.0) in front of the ingest function, or on the function's own URL (the same event
 * format; intake routes by the raw path), with one Secrets Manager secret per source holding its signing secret.
 */
export class IngestApi extends Construct {
  /** The HTTP API; absent with `endpoint: 'function-url'`. */
  readonly api?: apigwv2.HttpApi;
  /** The HTTP API's stage; absent with `endpoint: 'function-url'`. */
  readonly stage?: apigwv2.HttpStage;
  /** Intake's function URL; only with `endpoint: 'function-url'`. */
  readonly functionUrl?: lambda.FunctionUrl;
  /** Requests, 4xx, 5xx and latency of whichever endpoint webhooks arrive at. */
  readonly metrics: IntakeEndpointMetrics;
  readonly handler: HookledgerFunction;
  /** Signing secret per source id. */
  readonly secrets: ReadonlyMap<string, secretsmanager.ISecret>;
  /** The deployment's payload-hash key: receipts keep HMAC-SHA256(key, body), never a plain hash. */
  readonly payloadHashKey: secretsmanager.ISecret;
  /** The stage URL (or the function URL) followed by `hooks/`; append the source id. */
  readonly webhookBaseUrl: string;

  constructor(scope: Construct, id: string, props: IngestApiProps) {
    super(scope, id);
    const endpoint = props.endpoint ?? 'http-api';
    const throttle = throttleOf(props, endpoint);
    checkReservedConcurrency(props.reservedConcurrency);
    if (props.sourceIds.length === 0) {
      throw new ConfigurationError('sourceIds must name at least one source, got none; add a source to hookledger.config.ts');
    }
    this.secrets = this.buildSourceSecrets(props.sourceIds);
    this.payloadHashKey = this.buildPayloadHashKey();
    this.handler = this.buildHandler(props);
    if (endpoint === 'function-url') {
      this.functionUrl = this.buildFunctionUrl();
      this.metrics = functionUrlMetrics(this.handler.function);
      // The URL ends in '/': https://<url-id>.lambda-url.<region>.on.aws/
      this.webhookBaseUrl = `${this.functionUrl.url}hooks/`;
      return;
    }
    const api = new apigwv2.HttpApi(this, 'Api', {
      // Named per stack: two copies in one account are told apart in the console and in metrics.
      apiName: `${Stack.of(this).stackName}-intake`,
      description: 'hookledger webhook intake',
      createDefaultStage: false,
    });
    this.api = api;
    this.metrics = api;
    this.stage = this.buildStage(api, throttle);
    this.addWebhookRoute(api);
    this.webhookBaseUrl = `${this.stage.url}hooks/`;
  }

  /**
   * Every path and method reaches intake through its URL; intake answers only `/hooks/{source}`
   * (404 elsewhere) and POST or a source's handshake GET (405 otherwise). No CORS: providers call
   * server to server, and a browser has no business posting webhooks.
   */
  private buildFunctionUrl(): lambda.FunctionUrl {
    // Auth NONE: providers call unsigned and authenticate by signing the body, which intake verifies
    // on the raw bytes, as behind the HTTP API. CDK grants lambda:InvokeFunctionUrl to everyone and
    // lambda:InvokeFunction only when invoked via the URL.
    return this.handler.function.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
  }

  /** One secret per source, holding the signing secret its provider issued. */
  private buildSourceSecrets(sourceIds: readonly string[]): Map<string, secretsmanager.ISecret> {
    const secretsScope = new Construct(this, 'Secrets');
    const secrets = new Map<string, secretsmanager.ISecret>();
    for (const sourceId of sourceIds) {
      const secret = new secretsmanager.Secret(secretsScope, sourceId, {
        description: `hookledger webhook signing secret for source "${sourceId}": put the secret the provider issued here (the generated value is a placeholder)`,
        generateSecretString: { passwordLength: 48, excludePunctuation: true },
        // Kept when the source or the stack goes away: a provider may still sign with it, and the
        // value cannot be recovered once the secret is deleted.
        removalPolicy: RemovalPolicy.RETAIN,
      });
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'The signing secret is issued by the webhook provider, so it cannot be rotated by a Lambda; operators rotate it with the provider and intake accepts AWSCURRENT and AWSPREVIOUS during the overlap.',
      });
      secrets.set(sourceId, secret);
    }
    return secrets;
  }

  /**
   * Retained: without it no stored hash can be checked again and replay protection by body would
   * start afresh. It never leaves AWS except to `hookledger verify-payload`.
   */
  private buildPayloadHashKey(): secretsmanager.ISecret {
    const hashKey = new secretsmanager.Secret(this, 'PayloadHashKey', {
      description: 'hookledger payload-hash key: receipts keep HMAC-SHA256(key, body) so a table dump cannot reveal low-entropy bodies',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(hashKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotating the payload-hash key would make every stored keyed hash uncheckable and reset replay protection by body; it is a long-lived key by design.',
    });
    return hashKey;
  }

  private buildHandler(props: IngestApiProps): HookledgerFunction {
    const handler = new HookledgerFunction(this, 'Handler', {
      entry: 'lambdas/ingest/handler.ts',
      description: 'hookledger intake: verifies the signature on the raw body and records the event',
      serviceName: 'hookledger-ingest',
      timeout: props.timeout ?? Duration.seconds(10),
      memorySize: props.memorySize ?? 512,
      reservedConcurrentExecutions: props.reservedConcurrency,
      environment: {
        [ENV.eventsTable]: props.events.tableName,
        // The `Stack` dimension of IntakeRequests: two copies in one account keep their own numbers.
        [ENV.stackName]: Stack.of(this).stackName,
        [ENV.sourceSecrets]: Stack.of(this).toJsonString(
          Object.fromEntries([...this.secrets].map(([sourceId, secret]) => [sourceId, secret.secretArn])),
        ),
        [ENV.payloadHashKeySecret]: this.payloadHashKey.secretArn,
      },
    });
    // Intake writes by leading key only (grantIntakeWrites); it can neither forge a tenant key nor
    // touch the Ledger.
    grantIntakeWrites(props.events, handler);
    this.payloadHashKey.grantRead(handler);
    for (const secret of this.secrets.values()) secret.grantRead(handler);
    return handler;
  }

  private buildStage(api: apigwv2.HttpApi, throttle: { rateLimit: number; burstLimit: number }): apigwv2.HttpStage {
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logs.RetentionDays.ONE_MONTH });
    return new apigwv2.HttpStage(this, 'DefaultStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        // No headers: they carry signatures. The path carries only the source id.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            ip: '$context.identity.sourceIp',
            requestTime: '$context.requestTimeEpoch',
            routeKey: '$context.routeKey',
            path: '$context.path',
            status: '$context.status',
            responseLength: '$context.responseLength',
            latencyMs: '$context.responseLatency',
            integrationLatencyMs: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
  }

  /**
   * POST: the webhooks. GET on the same path: the handshakes of Meta (hub.challenge), Dropbox and
   * Okta; intake answers a GET only for sources whose preset has one (405 Allow: POST otherwise).
   */
  private addWebhookRoute(api: apigwv2.HttpApi): void {
    const route = api.addRoutes({
      path: '/hooks/{source}',
      methods: [apigwv2.HttpMethod.POST, apigwv2.HttpMethod.GET],
      integration: new HttpLambdaIntegration('Ingest', this.handler.function, {
        payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0,
      }),
    });
    for (const r of route) {
      Validations.of(r).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Webhook providers authenticate by signing the body; an authorizer never sees the body, so the ingest function verifies the signature on the raw body instead.',
      });
    }
  }
}

/** The stage's throttling, checked: steady rate above 0, burst a whole number of at least 1; none on a function URL. */
function throttleOf(props: IngestApiProps, endpoint: IntakeEndpoint): { rateLimit: number; burstLimit: number } {
  if (endpoint === 'function-url' && (props.throttlingRateLimit !== undefined || props.throttlingBurstLimit !== undefined)) {
    throw new ConfigurationError(
      `throttlingRateLimit and throttlingBurstLimit apply to the HTTP API's stage, and endpoint 'function-url' has none (got rate ${props.throttlingRateLimit} and burst ${props.throttlingBurstLimit}); remove them, or use endpoint 'http-api'`,
    );
  }
  const rateLimit = props.throttlingRateLimit ?? 1000;
  const burstLimit = props.throttlingBurstLimit ?? 2000;
  if (!(rateLimit > 0) || !Number.isInteger(burstLimit) || burstLimit < 1) {
    throw new ConfigurationError(
      `throttlingRateLimit must be above 0 and throttlingBurstLimit an integer of at least 1, got rate ${rateLimit} and burst ${burstLimit}; omit them for 1000 and 2000`,
    );
  }
  return { rateLimit, burstLimit };
}

/** The intake function's reservation, checked: a whole number of executions, at least 1, or none. */
function checkReservedConcurrency(reserved: number | undefined): void {
  if (reserved !== undefined && !(Number.isInteger(reserved) && reserved >= 1)) {
    throw new ConfigurationError(
      `reservedConcurrency must be an integer of at least 1, got ${reserved}; omit it to leave intake in the account's shared pool`,
    );
  }
}

/**
 * The function URL's metrics (AWS/Lambda, dimension FunctionName). Url5xxCount counts what the URL
 * answered 5xx: intake's own 503s, and a function error or timeout. A throttled invocation is
 * answered 429 and counts in Url4xxCount, so Api5xx does not see it: the IntakeThrottles alarm, on the
 * function's own Throttles, does (docs/configuration.md).
 */
function functionUrlMetrics(fn: lambda.IFunction): IntakeEndpointMetrics {
  const metric = (metricName: string, statistic: string) => (props?: cloudwatch.MetricOptions) =>
    new cloudwatch.Metric({
      namespace: 'AWS/Lambda',
      metricName,
      dimensionsMap: { FunctionName: fn.functionName },
      statistic,
      ...props,
    });
  return {
    metricCount: metric('UrlRequestCount', 'Sum'),
    metricClientError: metric('Url4xxCount', 'Sum'),
    metricServerError: metric('Url5xxCount', 'Sum'),
    metricLatency: metric('UrlRequestLatency', 'Average'),
  };
}
