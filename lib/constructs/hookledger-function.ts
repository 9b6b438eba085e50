import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { AssetHashType, DockerImage, Duration, type ILocalBundling, Validations } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type BuildOptions, buildSync, type Metafile } from 'esbuild';
import { BUNDLED_FEATURE_FLAGS, featuresUsed } from '../../core/bundled-features';
import { BUNDLED_CONFIG_DEFINE } from '../../core/env';
import { ConfigurationError } from '../../core/errors';
/** Namespace of every custom metric the stack emits and alarms on (Powertools reads it from env). */
import { METRICS_NAMESPACE } from '../../core/metrics';
import { PROJECT_ROOT } from '../../core/paths';
import { SCHEME_TYPES } from '../../core/schemes';
import { bundledSchemeFlag } from '../../core/schemes/bundled';
import { type BundlePluginName, pluginsNamed } from './bundle-plugins.mjs';

/** The one runtime for every function; the esbuild target below must match it. */
export const RUNTIME = lambda.Runtime.NODEJS_22_X;

/**
 * Lets CommonJS dependencies that call `require` run inside the ESM bundle. The alias keeps the
 * banner from clashing with a bundled module that imports `createRequire` itself.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __hookledgerCreateRequire } from 'node:module'; const require = __hookledgerCreateRequire(import.meta.url);";

/**
 * Packages bundled apart from the handler, each with the names the handlers use of it. In the
 * handler's build the package is external; `bundleApart` then writes it as a bundle of its own under
 * the output's `node_modules/`, where Node finds it at its first import. Both are loaded only on a
 * rare path, and apart they keep what they share with the cold start out of it:
 *
 * - The S3 client (only adapters/payload-blobs.ts loads it, with one `import()`;
 *   test/lint/bundle-contents.test.ts holds it to these names). Inside the handler's build, code
 *   splitting would share its protocol code (XML, checksums, streams) with the DynamoDB client's
 *   through the SDK's index modules, so every cold start would load it: about 20 KiB, and Node's web
 *   streams, which S3's checksum stream touches at import. Apart, it loads with the first body or
 *   view in the bucket.
 * - Powertools' Logger (lambdas/shared/logger.ts, loaded with the first line printed,
 *   lambdas/shared/lambda-logger.ts). Inside the handler's build, the invoke store it imports (for
 *   its side effect only: `globalThis.awslambda`) is shared with the SDK's recursion detection, so
 *   code splitting gave it a chunk of its own, one more file each cold start reads, maps and
 *   compiles (about 0.6 ms). Apart, the Logger carries its own copy, which the invoke store allows:
 *   every copy keeps its state on `globalThis.awslambda`.
 */
export const APART_PACKAGES: Readonly<Record<string, readonly string[]>> = {
  '@aws-sdk/client-s3': ['DeleteObjectsCommand', 'GetObjectCommand', 'ListObjectsV2Command', 'NoSuchKey', 'PutObjectCommand', 'S3Client'],
  '@aws-lambda-powertools/logger': ['Logger'],
};

/**
 * How every handler is bundled (the bench builds with the same options): esbuild, ESM for Node 22,
 * minified with names kept, the createRequire banner, a linked source map without sources content
 * (read only when an error escapes a handler: lambdas/shared/stack-map.ts),
 * the AWS SDK inside (no externals), the validated configuration inlined (`define`), and code
 * splitting: what a handler imports with `import()` (clients of rare paths: S3 for large bodies,
 * Secrets Manager, the key port, the SDK's own credential providers) lands in chunks/ and is loaded
 * on first use, not at cold start.
 */
export function handlerBuildOptions(define?: Record<string, string>, entry?: string): BuildOptions {
  const plugins = handlerPluginNames(entry);
  return {
    ...baseBuildOptions(define),
    ...(plugins.length > 0 ? { plugins: pluginsNamed(plugins) } : {}),
  };
}

/**
 * The entries whose Secrets Manager client is built with their DynamoDB client's credentials, so that
 * the bundle gives it no credential chain of its own (bundle-plugins.mjs): intake's, whose only such
 * client is in its first-request chunk (lambdas/ingest/first-request.ts).
 */
export const SHARED_CREDENTIALS_ENTRIES: ReadonlySet<string> = new Set(['lambdas/ingest/handler.ts']);

/** The bundling plugins of `entry` (a path relative to the repository), by name. */
export function handlerPluginNames(entry?: string): BundlePluginName[] {
  return entry !== undefined && SHARED_CREDENTIALS_ENTRIES.has(path.posix.normalize(entry)) ? ['secrets-client-shares-credentials'] : [];
}

function baseBuildOptions(define?: Record<string, string>): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    minify: true,
    keepNames: true,
    sourcemap: true,
    sourcesContent: false,
    external: Object.keys(APART_PACKAGES),
    splitting: true,
    entryNames: 'index',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    ...(define ? { define } : {}),
    logLevel: 'warning',
  };
}

/** Bundles one handler into `outdir`: index.mjs (exports `handler`), chunks/, source maps, and its clients apart. */
export function bundleHandler(entry: string, outdir: string, define?: Record<string, string>): void {
  const options: BuildOptions = { ...baseBuildOptions(define), entryPoints: [path.join(PROJECT_ROOT, entry)], outdir, metafile: true };
  const plugins = handlerPluginNames(entry);
  const metafile = plugins.length === 0 ? (buildSync(options).metafile as Metafile) : buildInChild(options, plugins);
  bundleApart(metafile, outdir);
  sourcesFromRoot(outdir);
}

/** esbuild's asynchronous build, for plugins, from this synchronous caller (CDK's tryBundle): bundle-runner.mjs. */
function buildInChild(options: BuildOptions, plugins: readonly BundlePluginName[]): Metafile {
  const out = execFileSync(process.execPath, [path.join(PROJECT_ROOT, 'lib', 'constructs', 'bundle-runner.mjs')], {
    input: JSON.stringify({ options, plugins }),
    stdio: ['pipe', 'pipe', 'inherit'],
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  });
  return JSON.parse(out) as Metafile;
}

/**
 * Rewrites the `sources` of every source map under `outdir` relative to the repository
 * (`lambdas/ingest/app.ts`, `node_modules/@smithy/core/...`), not to wherever the bundle was written
 * (cdk.out, a temp folder): a stack mapped on the error path (lambdas/shared/stack-map.ts) then names
 * files as the repository does.
 */
export function sourcesFromRoot(outdir: string): void {
  const maps = readdirSync(outdir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.map'));
  for (const file of maps) {
    const mapFile = path.join(outdir, file);
    const map = JSON.parse(readFileSync(mapFile, 'utf8')) as { sources: string[] };
    map.sources = map.sources.map((s) =>
      path
        .relative(PROJECT_ROOT, path.resolve(path.dirname(mapFile), s))
        .split(path.sep)
        .join('/'),
    );
    writeFileSync(mapFile, JSON.stringify(map));
  }
}

/**
 * The output files a cold start loads, from a handler build's metafile: index.mjs and the chunks it
 * imports statically, transitively (not the `import()` chunks, nor the packages bundled apart).
 */
export function coldStartOutputs(metafile: Metafile): Set<string> {
  const { outputs } = metafile;
  const atStart = new Set<string>();
  const visit = (file: string) => {
    if (atStart.has(file) || !outputs[file]) return;
    atStart.add(file);
    for (const i of outputs[file].imports) if (i.kind === 'import-statement') visit(i.path);
  };
  const index = Object.keys(outputs).find((f) => f.endsWith('/index.mjs'));
  if (index) visit(index);
  return atStart;
}

/**
 * Writes each package of APART_PACKAGES that the handler's build (its metafile) imports as a bundle of
 * its own: `<outdir>/node_modules/<package>/index.mjs`, exporting the listed names, with the same
 * options but no splitting. Returns the files written.
 */
export function bundleApart(metafile: Metafile, outdir: string): string[] {
  const imported = new Set(Object.values(metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path)));
  const written: string[] = [];
  for (const [pkg, names] of Object.entries(APART_PACKAGES)) {
    if (!imported.has(pkg)) continue;
    const dir = path.join(outdir, 'node_modules', ...pkg.split('/'));
    const { splitting: _, chunkNames: __, entryNames: ___, external: ____, ...options } = handlerBuildOptions();
    buildSync({
      ...options,
      stdin: { contents: `export { ${names.join(', ')} } from '${pkg}';`, resolveDir: PROJECT_ROOT, sourcefile: `${pkg}-apart.js` },
      outfile: path.join(dir, 'index.mjs'),
    });
    writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: pkg, type: 'module', exports: './index.mjs' })}\n`);
    written.push(path.join(dir, 'index.mjs'));
  }
  return written;
}

/**
 * esbuild in this process. The entry and the define are fields, not only closed over: CDK keys its
 * asset cache by the bundling options' JSON, and two functions must never share a bundle.
 */
class LocalHandlerBundling implements ILocalBundling {
  constructor(
    readonly entry: string,
    readonly define?: Record<string, string>,
  ) {}

  tryBundle(outputDir: string): boolean {
    bundleHandler(this.entry, outputDir, this.define);
    return true;
  }
}

export interface HookledgerFunctionProps {
  /** Entry file relative to the repository root, e.g. `lambdas/ingest/handler.ts`; it must export `handler`. */
  readonly entry: string;
  /** Shown in the console: what the function is for. */
  readonly description: string;
  /** POWERTOOLS_SERVICE_NAME: the `service` key on every log line and metric. */
  readonly serviceName: string;
  /**
   * The application's environment: exactly the variables of core/env.ts the handler reads.
   * @default - none
   */
  readonly environment?: Readonly<Record<string, string>>;
  /** @default Duration.seconds(10) */
  readonly timeout?: Duration;
  /** @default 256 */
  readonly memorySize?: number;
  /**
   * The execution role. Pass one when the role is an identity in its own right (a consumer's principal).
   * @default - a new role whose only permission is writing to this function's log group
   */
  readonly role?: iam.IRole;
  /** @default - unreserved (the account's shared pool) */
  readonly reservedConcurrentExecutions?: number;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Where asynchronous invocations that still fail after Lambda's retries go. Only for a function
   * invoked asynchronously (the scheduled reconcile); event-source functions fail to their queues.
   * @default - none
   */
  readonly deadLetterQueue?: sqs.IQueue;
  /**
   * Lambda's platform log lines (START, END, REPORT) kept at this level and above; the function logs
   * in JSON, which level filtering needs.
   * @default - the configuration's `logs.platformLevel` (bundled in the stack's context), else WARN
   */
  readonly platformLogLevel?: 'WARN' | 'INFO' | 'DEBUG';
  /**
   * The handler's own lines kept at this level and above (Lambda's application log level, which
   * Powertools follows).
   * @default - the configuration's `logs.applicationLevel`, else INFO
   */
  readonly applicationLogLevel?: 'INFO' | 'DEBUG';
  /** @default - not in a VPC */
  readonly vpc?: ec2.IVpc;
  /** @default - the VPC's private subnets (only with `vpc`) */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** @default - a new security group (only with `vpc`) */
  readonly securityGroups?: ec2.ISecurityGroup[];
}

/**
 * The function defaults, set once: Node.js 22 on arm64, an explicit log group with retention, a role
 * without the managed AWSLambdaBasicExecutionRole (which could write to every log group), and a local
 * esbuild bundle (no Docker) that is minified ESM with source maps and bundles the AWS SDK so the
 * versions in package-lock.json are the versions that run.
 */
export class HookledgerFunction extends Construct implements iam.IGrantable {
  readonly function: NodejsFunction;
  readonly role: iam.IRole;
  readonly logGroup: logs.LogGroup;
  /** The entry bundled, relative to the repository (`lambdas/ingest/handler.ts`). */
  readonly entry: string;

  constructor(scope: Construct, id: string, props: HookledgerFunctionProps) {
    super(scope, id);
    if (path.isAbsolute(props.entry) || props.entry.split(/[\\/]/).includes('..')) {
      throw new ConfigurationError(`entry must be a path inside the repository like "lambdas/ingest/handler.ts", got "${props.entry}"`);
    }
    this.entry = props.entry;

    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });
    this.role =
      props.role ??
      new iam.Role(this, 'Role', {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        description: `Execution role of ${props.serviceName}`,
      });
    this.logGroup.grantWrite(this.role);

    const define = bundledConfigDefine(this);
    const tracing = bundledTracing(this);
    this.function = new NodejsFunction(this, 'Function', {
      // Bundled here rather than by NodejsFunction's esbuild command line, which cannot split code.
      code: lambda.Code.fromAsset(PROJECT_ROOT, {
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          // Never pulled: local bundling always succeeds (esbuild is a dependency of this project).
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs22.x'),
          local: new LocalHandlerBundling(props.entry, define),
        },
      }),
      handler: 'index.handler',
      description: props.description,
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(10),
      role: this.role,
      logGroup: this.logGroup,
      // JSON: Powertools already writes JSON lines; level filtering needs the JSON format.
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: lambda.ApplicationLogLevel[props.applicationLogLevel ?? bundledLogLevels(this).applicationLevel],
      systemLogLevelV2: lambda.SystemLogLevel[props.platformLogLevel ?? bundledLogLevels(this).platformLevel],
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      // `tracing: 'xray'`: CDK grants xray:PutTraceSegments/PutTelemetryRecords (handler side: lambdas/shared/tracing.ts).
      ...(tracing ? { tracing: lambda.Tracing.ACTIVE } : {}),
      deadLetterQueue: props.deadLetterQueue,
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
      securityGroups: props.securityGroups,
      environment: {
        ...props.environment,
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        // No NODE_OPTIONS=--enable-source-maps: Node would parse every loaded file's map at each cold
        // start (about 10 ms of the floor's 84 ms on the bench machine, 17 ms of intake's). The maps ship
        // beside the bundle and an error escaping a handler has its stack mapped then
        // (lambdas/shared/stack-map.ts, through flushingLogs).
      },
    });
    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Pinned to nodejs22.x (Node 22 LTS, matching the esbuild target node22 and the version the handlers are tested on); moving to nodejs24.x is a deliberate upgrade with its own test pass, not a side effect of a newer CDK.',
    });
    // cdk-nag Serverless pack: the same pinning, and two choices explained where they are made.
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaLatestVersion',
      reason:
        'Pinned to nodejs22.x on purpose (the esbuild target node22 and the tested Node version); a runtime upgrade is a deliberate change with its own test pass, not a side effect of a newer CDK.',
    });
    acknowledgeTracing(this, tracing);
    if (!props.deadLetterQueue) {
      Validations.of(this.function).acknowledge({
        id: 'Serverless-LambdaDLQ',
        reason:
          'Never invoked asynchronously: API Gateway calls intake synchronously and event source mappings call the others, whose failures go to the consumer DLQ or the stream on-failure queue, so an async DLQ would never receive anything.',
      });
    }
  }

  get grantPrincipal(): iam.IPrincipal {
    return this.function.grantPrincipal;
  }
}

/** cdk-nag on tracing: off is the configuration's choice; on, X-Ray's two actions are granted on "*". */
function acknowledgeTracing(fn: HookledgerFunction, tracing: boolean): void {
  if (!tracing) {
    Validations.of(fn.function).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason:
        "Tracing is the configuration's choice (`tracing: 'xray'`), off by default so that no bundle carries tracer code; off, every log line carries event_id, tenant_id and consumer_id, and `hookledger trace <event>` rebuilds a delivery across all functions from the receipt and the ledger.",
    });
    return;
  }
  Validations.of(fn.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      "xray:PutTraceSegments and xray:PutTelemetryRecords, granted by Lambda's active tracing (`tracing: 'xray'`), have no resource-level permissions and must be granted on \"*\".",
  });
}

/** Context key under which HookledgerStack puts the validated configuration (JSON). */
export const BUNDLED_CONFIG_CONTEXT = 'hookledger:bundledConfig';

function bundledConfigDefine(scope: Construct): Record<string, string> | undefined {
  const json: unknown = scope.node.tryGetContext(BUNDLED_CONFIG_CONTEXT);
  if (json === undefined) return undefined;
  if (typeof json !== 'string') {
    throw new ConfigurationError(
      `context ${BUNDLED_CONFIG_CONTEXT} must be a JSON string, got ${Array.isArray(json) ? 'an array' : typeof json}; HookledgerStack sets it from the validated configuration: do not set it by hand`,
    );
  }
  return bundledDefines(json);
}

/**
 * What a bundle is built with from the validated configuration's JSON: the configuration inlined
 * (lambdas/shared/bundled-config.ts); per scheme type, whether intake's bundle keeps its module
 * (core/schemes/bundled.ts): only the schemes the sources name; and whether the bundles keep the
 * content-filter matcher and the handshakes (core/bundled-features.ts): only when some consumer has
 * a filter, some source a handshake.
 */
export function bundledDefines(configJson: string): Record<string, string> {
  const config = JSON.parse(configJson) as {
    sources?: { scheme?: { type?: string }; handshake?: string }[];
    consumers?: { filter?: unknown }[];
  };
  const configured = new Set((config.sources ?? []).map((s) => s.scheme?.type));
  const used = featuresUsed(config);
  return {
    // esbuild's define takes an expression: a string literal holding the JSON.
    [BUNDLED_CONFIG_DEFINE]: JSON.stringify(configJson),
    ...Object.fromEntries(SCHEME_TYPES.map((type) => [bundledSchemeFlag(type), JSON.stringify(String(configured.has(type)))])),
    ...Object.fromEntries(
      Object.entries(BUNDLED_FEATURE_FLAGS).map(([feature, flag]) => [flag, JSON.stringify(String(used[feature as keyof typeof used]))]),
    ),
  };
}

interface LogLevels {
  readonly platformLevel: 'WARN' | 'INFO' | 'DEBUG';
  readonly applicationLevel: 'INFO' | 'DEBUG';
}

/** Whether the configuration's `tracing` is `'xray'` (the stack puts the validated configuration in its context). */
function bundledTracing(scope: Construct): boolean {
  const json: unknown = scope.node.tryGetContext(BUNDLED_CONFIG_CONTEXT);
  return typeof json === 'string' && (JSON.parse(json) as { tracing?: string }).tracing === 'xray';
}

/** The configuration's `logs` (the stack puts the validated configuration in its context). */
function bundledLogLevels(scope: Construct): LogLevels {
  const json: unknown = scope.node.tryGetContext(BUNDLED_CONFIG_CONTEXT);
  const logs = typeof json === 'string' ? (JSON.parse(json) as { logs?: Partial<LogLevels> }).logs : undefined;
  return { platformLevel: logs?.platformLevel ?? 'WARN', applicationLevel: logs?.applicationLevel ?? 'INFO' };
}
