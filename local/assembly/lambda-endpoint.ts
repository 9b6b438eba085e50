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
import type { Authorizer } from './iam';
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

export async function startLambdaEndpoint(options: LambdaEndpointOptions) {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) =>
      send(res, 500, { Type: 'Service', message: error instanceof Error ? error.name : 'Error' }, 'ServiceException'),
    );
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const caller = identifyCaller(req, Buffer.concat(chunks), options);
    if (!caller.ok) return sendAwsRefusal(res, 'rest-json', caller.refusal);
    const { principal } = caller;
    const url = new URL(req.url ?? '/', 'http://lambda.local');
    const path = url.pathname.replace(/\/+$/, '');
    const check = async (action: string, resource: string, context?: Record<string, string>) => {
      if (!principal) return true;
      const decision = await options.authorizer.authorize(principal, { action, resource, ...(context ? { context } : {}) });
      if (decision.allowed) return true;
      const message = `User: ${principal.roleArn} is not authorized to perform: ${action} on resource: ${resource}`;
      send(res, 403, { Type: 'User', message }, 'AccessDeniedException');
      return false;
    };

    if (req.method === 'GET' && path === PREFIX) {
      if (!(await check('lambda:ListEventSourceMappings', '*'))) return;
      const source = url.searchParams.get('EventSourceArn');
      const fn = url.searchParams.get('FunctionName');
      const listed = options
        .mappings()
        .filter(
          (m) => (!source || m.eventSourceArn === source) && (!fn || m.functionArn === fn || m.functionArn.endsWith(`:function:${fn}`)),
        );
      return send(res, 200, { EventSourceMappings: listed.map((m) => describe(m)) });
    }
    const update = /^\/2015-03-31\/event-source-mappings\/([^/]+)$/.exec(path);
    if (update && req.method === 'PUT') {
      const uuid = decodeURIComponent(update[1]!);
      const mapping = options.mappings().find((m) => m.uuid === uuid);
      const arn = `arn:aws:lambda:us-east-1:${LOCAL_ACCOUNT}:event-source-mapping:${uuid}`;
      if (!(await check('lambda:UpdateEventSourceMapping', arn, mapping ? { 'lambda:FunctionArn': mapping.functionArn } : undefined)))
        return;
      if (!mapping)
        return send(
          res,
          404,
          { Type: 'User', message: `The resource you requested does not exist. (${uuid})` },
          'ResourceNotFoundException',
        );
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      const other = Object.keys(body).filter((k) => k !== 'Enabled');
      if (other.length > 0 || typeof body.Enabled !== 'boolean' || !mapping.setEnabled) {
        const what = other.length > 0 ? other.join(', ') : mapping.setEnabled ? 'a request without Enabled' : 'a stream mapping';
        return send(
          res,
          400,
          { Type: 'User', message: `${what} is not served locally: only Enabled on an SQS mapping` },
          'InvalidParameterValueException',
        );
      }
      mapping.setEnabled(body.Enabled);
      return send(res, 202, { ...describe(mapping), State: body.Enabled ? 'Enabling' : 'Disabling' });
    }
    return send(res, 400, { Type: 'User', message: `${req.method} ${path} is not served locally` }, 'InvalidRequestContentException');
  }

  return listenOnLoopback(server);
}

function describe(m: LocalMapping) {
  return { UUID: m.uuid, EventSourceArn: m.eventSourceArn, FunctionArn: m.functionArn, State: m.enabled() ? 'Enabled' : 'Disabled' };
}

/** Every answer of this endpoint, in its protocol's content type. */
function send(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  answerJson(res, status, body, 'application/json', errorType);
}
