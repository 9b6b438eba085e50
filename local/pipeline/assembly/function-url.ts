/**
 * Intake behind its function URL (`intake.endpoint: 'function-url'`) in assembly mode: the local
 * gateway serves the same webhook URLs, and the event it builds for the HTTP API's route is handed to
 * intake as the function URL delivers it. Both are payload format 2.0 with the same headers,
 * cookies, query, body and `requestContext.http`; a function URL has no route (`$default`, path
 * parameters and stage variables null: intake reads the source from the raw path) and, with AuthType
 * NONE, an anonymous caller account, and its `apiId` is the URL id.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { IntakeEndpoint } from './plan';

/** A function URL's request event (Lambda sends null where the aws-lambda types declare optional fields). */
export type FunctionUrlEvent = Omit<APIGatewayProxyEventV2, 'pathParameters' | 'stageVariables'> & {
  readonly pathParameters: null;
  readonly stageVariables: null;
};

const ROUTE_KEY = '$default';

/** The gateway's HTTP API event as the function URL `urlId` delivers the same request. */
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

type Invoke = (functionId: string, event: unknown) => Promise<unknown>;

/** `invoke`, handing intake's function the function URL's event when that is what reaches intake. */
export function withIntakeEvents(intake: IntakeEndpoint, invoke: Invoke): Invoke {
  if (intake.kind !== 'function-url') return invoke;
  return (functionId, event) =>
    invoke(functionId, functionId === intake.functionId ? asFunctionUrlEvent(event as APIGatewayProxyEventV2, intake.urlId) : event);
}
