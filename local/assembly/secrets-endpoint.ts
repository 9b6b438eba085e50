/**
 * A small Secrets Manager endpoint (JSON protocol: GetSecretValue, DescribeSecret) answering from
 * the local secrets file, so the deployed adapter (adapters/secrets-manager.ts) is what runs:
 * AWSCURRENT is the file's current value (created at its `rotatedAt`), AWSPREVIOUS its previous one
 * while its overlap is open. Every call is checked against the caller's role like the emulators';
 * a caller that is neither a function nor the operator is refused before any secret is read
 * (callers.ts), as AWS refuses an unsigned request or an unknown key.
 */
import { createServer, type ServerResponse } from 'node:http';
import { sendAwsRefusal } from '../listener-guard';
import type { FileSecrets } from '../secrets-file';
import { identifyCaller, type KnownCallers } from './callers';
import type { Authorizer } from './iam';
import { answerJson, listenOnLoopback } from './loopback';

/** What a secret ARN holds: a source's signing secrets, an HTTP consumer's, or the payload-hash key. */
export type SecretBinding =
  | { readonly kind: 'source'; readonly id: string }
  | { readonly kind: 'consumer'; readonly id: string }
  | { readonly kind: 'payloadHashKey' };

export interface SecretsEndpointOptions extends KnownCallers {
  readonly secrets: FileSecrets;
  /** By secret ARN. */
  readonly bindings: ReadonlyMap<string, SecretBinding>;
  readonly authorizer: Authorizer;
  /** Each source's rotation overlap, ms: AWSCURRENT's CreatedDate is the file's `previousUntil` less it. */
  readonly overlapMs?: Readonly<Record<string, number>>;
}

export async function startSecretsEndpoint(options: SecretsEndpointOptions) {
  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      const caller = identifyCaller(req, raw, options);
      if (!caller.ok) return sendAwsRefusal(res, 'json', caller.refusal);
      const { principal } = caller;
      const body = JSON.parse(raw.toString('utf8') || '{}') as { SecretId?: string; VersionStage?: string };
      const op = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      const secretId = body.SecretId ?? '';
      const arn = options.bindings.has(secretId) ? secretId : [...options.bindings.keys()].find((a) => a.includes(`:secret:${secretId}-`));
      if (principal) {
        const action = `secretsmanager:${op}`;
        const decision = await options.authorizer.authorize(principal, { action, resource: arn ?? secretId });
        if (!decision.allowed) {
          const message = `User: ${principal.roleArn} is not authorized to perform: ${action} on resource: ${arn ?? secretId}`;
          return send(res, 400, { __type: 'AccessDeniedException', message }, 'AccessDeniedException');
        }
      }
      const binding = arn ? options.bindings.get(arn) : undefined;
      if (!arn || !binding)
        return send(
          res,
          400,
          { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." },
          'ResourceNotFoundException',
        );
      if (op === 'DescribeSecret') return send(res, 200, { ARN: arn, Name: arn.split(':secret:')[1] });
      if (op !== 'GetSecretValue')
        return send(res, 400, { __type: 'InvalidRequestException', message: `${op} is not served locally` }, 'InvalidRequestException');
      const stage = body.VersionStage ?? 'AWSCURRENT';
      if (binding.kind === 'payloadHashKey') {
        if (stage !== 'AWSCURRENT') return notFound(res, stage);
        return send(res, 200, value(arn, (await options.secrets.payloadHashKey()).toString('utf8'), 0, stage));
      }
      const entry =
        binding.kind === 'source' ? await options.secrets.refresh(binding.id) : await options.secrets.consumerSecrets().get(binding.id);
      const overlap = binding.kind === 'source' ? (options.overlapMs?.[binding.id] ?? 0) : 0;
      const rotatedAt = entry.previousUntil !== undefined ? entry.previousUntil - overlap : 0;
      if (stage === 'AWSCURRENT') return send(res, 200, value(arn, entry.current, rotatedAt, stage));
      const open = entry.previous !== undefined && entry.previousUntil !== undefined && Date.now() < entry.previousUntil;
      if (stage === 'AWSPREVIOUS' && open) return send(res, 200, value(arn, entry.previous!, rotatedAt, stage));
      return notFound(res, stage);
    } catch (error) {
      // The error's name only: a message could carry a value.
      send(res, 500, { __type: 'InternalServiceError', message: error instanceof Error ? error.name : 'Error' }, 'InternalServiceError');
    }
  });
  return listenOnLoopback(server);
}

function value(arn: string, secret: string, createdAtMs: number, stage: string) {
  return {
    ARN: arn,
    Name: arn.split(':secret:')[1],
    VersionId: `${stage.toLowerCase()}-${createdAtMs}`,
    SecretString: secret,
    VersionStages: [stage],
    CreatedDate: createdAtMs / 1000,
  };
}

function notFound(res: ServerResponse, stage: string): void {
  send(res, 400, { __type: 'ResourceNotFoundException', message: `no version with stage ${stage}` }, 'ResourceNotFoundException');
}

/** Every answer of this endpoint, in its protocol's content type. */
function send(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  answerJson(res, status, body, 'application/x-amz-json-1.1', errorType);
}
