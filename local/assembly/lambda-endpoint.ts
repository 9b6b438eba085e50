/**
 * A small Lambda API endpoint (REST-JSON) serving the two event source mapping calls the functions
 * make: ListEventSourceMappings and UpdateEventSourceMapping's `Enabled`, which an HTTP consumer's
 * circuit breaker uses to pause itself as `hookledger pause` does on AWS. The mappings are the
 * template's; disabling an SQS one pauses its poller. Every call is checked against the caller's
 * role like the emulators' (`lambda:FunctionArn` as the condition key IAM sees on the update); a
 * caller that is neither a function nor the operator is refused before any route (callers.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { sendAwsRefusal } from '../listener-guard';
import { identifyCaller, type KnownCallers } from './callers';
import type { Authorizer, LocalPrincipal } from './iam';
import { answerJson, listenOnLoopback } from './loopback';
import { LOCAL_ACCOUNT } from './template';

/** One event source mapping of the template, by its UUID (locally its logical id). */
export interface LocalMapping {
  readonly uuid: string;
  readonly eventSourceArn: string;
  readonly functionArn: string;
  /** Only SQS mappings can be disabled locally. */
  readonly setEnabled?: (enabled: boolean) => void;
  readonly enabled: () => boolean;
}

export interface LambdaEndpointOptions extends KnownCallers {
  readonly mappings: () => readonly LocalMapping[];
  readonly authorizer: Authorizer;
}

const PREFIX = '/2015-03-31/event-source-mappings';
const UPDATE_PATH = /^\/2015-03-31\/event-source-mappings\/([^/]+)$/;

/** One call, its caller identified: what the routes read. */
interface Call {
  readonly options: LambdaEndpointOptions;
  readonly res: ServerResponse;
  /** Undefined for the operator, whose calls are not checked. */
  readonly principal: LocalPrincipal | undefined;
  readonly url: URL;
  readonly body: Buffer;
}

export async function startLambdaEndpoint(options: LambdaEndpointOptions) {
  const server = createServer((req, res) => {
    handle(options, req, res).catch((error: unknown) =>
      send(res, 500, { Type: 'Service', message: error instanceof Error ? error.name : 'Error' }, 'ServiceException'),
    );
  });
  return listenOnLoopback(server);
}

async function handle(options: LambdaEndpointOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const caller = identifyCaller(req, body, options);
  if (!caller.ok) return sendAwsRefusal(res, 'rest-json', caller.refusal);
  const url = new URL(req.url ?? '/', 'http://lambda.local');
  const call: Call = { options, res, principal: caller.principal, url, body };
  const path = url.pathname.replace(/\/+$/, '');
  if (req.method === 'GET' && path === PREFIX) return listMappings(call);
  const update = UPDATE_PATH.exec(path);
  if (update && req.method === 'PUT') return updateMapping(call, decodeURIComponent(update[1]!));
  return send(res, 400, { Type: 'User', message: `${req.method} ${path} is not served locally` }, 'InvalidRequestContentException');
}

/** Whether the caller's role allows `action` on `resource`; when not, answers 403 as Lambda does. */
async function allowed(call: Call, action: string, resource: string, context?: Record<string, string>): Promise<boolean> {
  const { principal } = call;
  if (!principal) return true;
  const decision = await call.options.authorizer.authorize(principal, { action, resource, ...(context ? { context } : {}) });
  if (decision.allowed) return true;
  const message = `User: ${principal.roleArn} is not authorized to perform: ${action} on resource: ${resource}`;
  send(call.res, 403, { Type: 'User', message }, 'AccessDeniedException');
  return false;
}

/** ListEventSourceMappings, by EventSourceArn and FunctionName (a name or an ARN). */
async function listMappings(call: Call): Promise<void> {
  if (!(await allowed(call, 'lambda:ListEventSourceMappings', '*'))) return;
  const source = call.url.searchParams.get('EventSourceArn');
  const fn = call.url.searchParams.get('FunctionName');
  const listed = call.options
    .mappings()
    .filter((m) => (!source || m.eventSourceArn === source) && (!fn || m.functionArn === fn || m.functionArn.endsWith(`:function:${fn}`)));
  send(call.res, 200, { EventSourceMappings: listed.map((m) => describe(m)) });
}

/** UpdateEventSourceMapping: only `Enabled`, only on an SQS mapping (disabling one pauses its poller). */
async function updateMapping(call: Call, uuid: string): Promise<void> {
  const { res } = call;
  const mapping = call.options.mappings().find((m) => m.uuid === uuid);
  const arn = `arn:aws:lambda:us-east-1:${LOCAL_ACCOUNT}:event-source-mapping:${uuid}`;
  if (!(await allowed(call, 'lambda:UpdateEventSourceMapping', arn, mapping ? { 'lambda:FunctionArn': mapping.functionArn } : undefined))) {
    return;
  }
  if (!mapping) {
    return send(res, 404, { Type: 'User', message: `The resource you requested does not exist. (${uuid})` }, 'ResourceNotFoundException');
  }
  const body = JSON.parse(call.body.toString('utf8') || '{}') as Record<string, unknown>;
  const other = Object.keys(body).filter((k) => k !== 'Enabled');
  if (other.length > 0 || typeof body.Enabled !== 'boolean' || !mapping.setEnabled) {
    const what = other.length > 0 ? other.join(', ') : mapping.setEnabled ? 'a request without Enabled' : 'a stream mapping';
    const message = `${what} is not served locally: only Enabled on an SQS mapping`;
    return send(res, 400, { Type: 'User', message }, 'InvalidParameterValueException');
  }
  mapping.setEnabled(body.Enabled);
  send(res, 202, { ...describe(mapping), State: body.Enabled ? 'Enabling' : 'Disabling' });
}

function describe(m: LocalMapping) {
  return { UUID: m.uuid, EventSourceArn: m.eventSourceArn, FunctionArn: m.functionArn, State: m.enabled() ? 'Enabled' : 'Disabled' };
}

/** Every answer of this endpoint, in its protocol's content type. */
function send(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  answerJson(res, status, body, 'application/json', errorType);
}
