/**
 * Intake behind its Lambda function URL (`intake.endpoint: 'function-url'`), locally: plain
 * `npm start` on such a configuration and assembly mode on such a template put the local gateway
 * (./http-gateway.ts) in front of intake as the URL, not as the HTTP API. The URL has no routes:
 * every path and method reaches intake, which answers 404 outside `/hooks/<source>` and 405 for a
 * method the source does not take. Its event is payload format 2.0 with the HTTP API's headers,
 * cookies, query, body and `requestContext.http`, but no route (`$default`, path parameters and stage
 * variables null: intake reads the source from the raw path), with AuthType NONE an anonymous caller
 * account, and the URL id as `apiId`. Lambda takes at most 6 MB of request payload through it (the
 * HTTP API takes 10 MB), counted on that event.
 */
import { createHash } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { PipelinePlan } from './pipeline/plan';

/** A function URL's request event (Lambda sends null where the aws-lambda types declare optional fields). */
export type FunctionUrlEvent = Omit<APIGatewayProxyEventV2, 'pathParameters' | 'stageVariables'> & {
  readonly pathParameters: null;
  readonly stageVariables: null;
};

/** Lambda's synchronous request payload limit, which a BUFFERED function URL's requests are held to. */
export const FUNCTION_URL_MAX_PAYLOAD = 6 * 1024 * 1024;

const ROUTE_KEY = '$default';

/** The HTTP API's event for a request, as the function URL `urlId` delivers the same request. */
export function asFunctionUrlEvent(event: APIGatewayProxyEventV2, urlId: string): FunctionUrlEvent {
  const { pathParameters: _route, stageVariables: _stage, ...request } = event;
  return {
    ...request,
    routeKey: ROUTE_KEY,
    requestContext: { ...event.requestContext, accountId: 'anonymous', apiId: urlId, routeKey: ROUTE_KEY, stage: ROUTE_KEY },
    pathParameters: null,
    stageVariables: null,
  };
}

/** A function URL id for `name`: 32 of [a-z0-9], as AWS's, the same for the same name. */
export function functionUrlIdOf(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 32);
}

/** `plan` with its gateway in front of intake as the function URL `urlId`, instead of as the HTTP API. */
export function behindFunctionUrl(plan: PipelinePlan, urlId: string): PipelinePlan {
  return { ...plan, gateway: { functionId: plan.gateway.functionId, functionUrl: { urlId } } };
}
