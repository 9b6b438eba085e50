/**
 * Who calls one of the assembly's endpoints (the IAM-checked proxies, the Secrets Manager and Lambda
 * endpoints): a function, by its principal's key (`AKLOCAL<logical id>` and the secret its process
 * was given at start), whose every call is then checked against its role; the operator, by the
 * stack's per-start key (the CLI, the stack's own set-up), unchecked as an administrator's; or nobody
 * this stack knows, refused before anything is read, as AWS refuses an unsigned request, an unknown
 * key or a wrong signature. The listener checks (Host, Origin) come first (local/listener-guard.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { AccessKey } from '../credentials';
import { checkSignedCaller, localPortOf, type Refusal } from '../listener-guard';
import type { LocalPrincipal } from './iam';

export interface KnownCallers {
  /** By access key id. */
  readonly principals: ReadonlyMap<string, LocalPrincipal>;
  readonly operator: AccessKey;
}

export type Identified =
  | { readonly ok: true /** Undefined for the operator. */; readonly principal?: LocalPrincipal }
  | { readonly ok: false; readonly refusal: Refusal };

export function identifyCaller(req: IncomingMessage, body: Buffer, callers: KnownCallers): Identified {
  const secretOf = (accessKeyId: string) =>
    accessKeyId === callers.operator.accessKeyId ? callers.operator.secretAccessKey : callers.principals.get(accessKeyId)?.secretAccessKey;
  const check = checkSignedCaller(
    { method: req.method ?? 'GET', target: req.url ?? '/', headers: req.headers, body },
    localPortOf(req),
    secretOf,
  );
  if (!check.ok) return check;
  const principal = callers.principals.get(check.accessKeyId);
  return principal ? { ok: true, principal } : { ok: true };
}
