/**
 * IAM on the local stack: each function's role policies from the template (AWS::IAM::Policy and the
 * role's inline Policies, intrinsics resolved), and every call a function makes evaluated against
 * them by @cloud-copilot/iam-simulate (identity policies; same account). Records what each role
 * used and was denied, for the least-privilege report.
 */
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { type AccessKey, generateAccessKey } from '../credentials';
import { type CloudAssembly, LOCAL_ACCOUNT, type LocalResource, resolveIntrinsics, resourcesOfType } from './template';

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly PolicyStatement[];
}
interface PolicyStatement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | string[];
  readonly Resource?: string | string[];
  readonly Condition?: Record<string, unknown>;
}

/** One function's identity on the local stack. */
export interface LocalPrincipal {
  /** The access key id its SDK signs with: `AKLOCAL` + the function's logical id. */
  readonly accessKeyId: string;
  /** Its secret, random for each start: given to the function's process only, checked on every call it signs. */
  readonly secretAccessKey: string;
  readonly functionId: string;
  readonly roleId: string;
  readonly roleArn: string;
  readonly policies: readonly { readonly name: string; readonly policy: PolicyDocument }[];
}

export interface AccessRequest {
  readonly action: string;
  readonly resource: string;
  readonly context?: Readonly<Record<string, string | string[]>>;
}

export interface Decision {
  readonly allowed: boolean;
  /** `Allowed`, `ImplicitlyDenied`, `ExplicitlyDenied`, or the library's validation error. */
  readonly result: string;
}

export interface Denial {
  readonly principal: string;
  readonly functionId: string;
  readonly action: string;
  readonly resource: string;
}

export interface RoleUsage {
  readonly roleId: string;
  readonly functions: readonly string[];
  readonly granted: readonly string[];
  readonly used: readonly string[];
  readonly unused: readonly string[];
  readonly denied: readonly string[];
}

export const accessKeyIdOf = (functionId: string) => `AKLOCAL${functionId}`;

/** Services whose calls the local stack sees; other granted actions (logs:*) are the Lambda platform's. */
export const CHECKED_SERVICES = ['dynamodb', 'sqs', 's3', 'secretsmanager', 'lambda'] as const;

export function principalsOf(assembly: CloudAssembly, locals: ReadonlyMap<string, LocalResource>): Map<string, LocalPrincipal> {
  const policiesByRole = new Map<string, { name: string; policy: PolicyDocument }[]>();
  const add = (roleId: string, name: string, policy: PolicyDocument) =>
    policiesByRole.set(roleId, [...(policiesByRole.get(roleId) ?? []), { name, policy }]);
  for (const [id, resource] of resourcesOfType(assembly, 'AWS::IAM::Policy')) {
    const props = resource.Properties ?? {};
    const doc = resolveIntrinsics(props.PolicyDocument, locals, `${id}.PolicyDocument`) as unknown as PolicyDocument;
    for (const role of (props.Roles as { Ref?: string }[] | undefined) ?? []) if (role.Ref) add(role.Ref, id, doc);
  }
  for (const [id, resource] of resourcesOfType(assembly, 'AWS::IAM::Role')) {
    const inline = (resource.Properties?.Policies as { PolicyName: string; PolicyDocument: unknown }[] | undefined) ?? [];
    for (const p of inline)
      add(id, p.PolicyName, resolveIntrinsics(p.PolicyDocument, locals, `${id}.Policies`) as unknown as PolicyDocument);
  }
  const principals = new Map<string, LocalPrincipal>();
  for (const [functionId, fn] of resourcesOfType(assembly, 'AWS::Lambda::Function')) {
    const role = fn.Properties?.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
    const roleId = role?.['Fn::GetAtt']?.[0];
    if (!roleId) continue;
    const accessKeyId = accessKeyIdOf(functionId);
    principals.set(accessKeyId, {
      accessKeyId,
      secretAccessKey: generateAccessKey().secretAccessKey,
      functionId,
      roleId,
      roleArn: locals.get(roleId)?.attributes.Arn ?? `arn:aws:iam::${LOCAL_ACCOUNT}:role/${roleId}`,
      policies: policiesByRole.get(roleId) ?? [],
    });
  }
  return principals;
}

/**
 * The key each function's process signs with: its principal's, or, for a function the template gives
 * no role, a key no endpoint knows (so each of its calls is refused). Stable per function.
 */
export function functionKeys(principals: ReadonlyMap<string, LocalPrincipal>): (functionId: string) => AccessKey {
  const roleless = new Map<string, AccessKey>();
  return (functionId) => {
    const principal = principals.get(accessKeyIdOf(functionId));
    if (principal) return { accessKeyId: principal.accessKeyId, secretAccessKey: principal.secretAccessKey };
    const key = roleless.get(functionId) ?? {
      accessKeyId: accessKeyIdOf(functionId),
      secretAccessKey: generateAccessKey().secretAccessKey,
    };
    roleless.set(functionId, key);
    return key;
  };
}

export interface Authorizer {
  authorize(principal: LocalPrincipal, request: AccessRequest): Promise<Decision>;
  denials(): readonly Denial[];
  /** Granted, used, unused and denied actions per role (only the services the local stack checks). */
  report(): RoleUsage[];
}

/** What an authorizer has seen: the actions each role used and was denied, and every denial in order. */
interface UsageRecord {
  readonly used: Map<string, Set<string>>;
  readonly denied: Map<string, Set<string>>;
  readonly denials: Denial[];
  readonly onDenied: ((denial: Denial) => void) | undefined;
}

export function createAuthorizer(principals: ReadonlyMap<string, LocalPrincipal>, onDenied?: (denial: Denial) => void): Authorizer {
  const record: UsageRecord = { used: new Map(), denied: new Map(), denials: [], onDenied };
  return {
    authorize: (principal, request) => authorize(record, principal, request),
    denials: () => [...record.denials],
    report: () => roleUsage(principals, record),
  };
}

/** The role's identity policies evaluated on the request (same account), noted as used or denied. */
async function authorize(record: UsageRecord, principal: LocalPrincipal, request: AccessRequest): Promise<Decision> {
  const simulation: Simulation = {
    identityPolicies: principal.policies.map((p) => ({ name: p.name, policy: p.policy as never })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    request: {
      action: request.action,
      principal: principal.roleArn,
      resource: { accountId: LOCAL_ACCOUNT, resource: request.resource },
      // The proxy stands in for AWS's TLS endpoint.
      contextVariables: { 'aws:SecureTransport': 'true', ...request.context },
    },
  };
  const response = await runSimulation(simulation, {});
  const result = response.resultType === 'error' ? `error: ${response.errors.message}` : response.overallResult;
  const allowed = result === 'Allowed';
  if (allowed) {
    note(record.used, principal.roleId, request.action);
  } else {
    note(record.denied, principal.roleId, request.action);
    const denial = { principal: principal.roleArn, functionId: principal.functionId, action: request.action, resource: request.resource };
    record.denials.push(denial);
    record.onDenied?.(denial);
  }
  return { allowed, result };
}

function note(map: Map<string, Set<string>>, roleId: string, action: string): void {
  map.set(roleId, (map.get(roleId) ?? new Set()).add(action));
}

/** Per role (the functions sharing it together): granted, used, unused and denied actions. */
function roleUsage(principals: ReadonlyMap<string, LocalPrincipal>, record: UsageRecord): RoleUsage[] {
  const byRole = new Map<string, LocalPrincipal[]>();
  for (const p of principals.values()) byRole.set(p.roleId, [...(byRole.get(p.roleId) ?? []), p]);
  return [...byRole].map(([roleId, ps]) => {
    const granted = checkedGrants(ps[0]!.policies);
    const used = [...(record.used.get(roleId) ?? [])];
    return {
      roleId,
      functions: ps.map((p) => p.functionId),
      granted,
      used: used.sort(),
      unused: granted.filter((g) => !used.some((u) => actionMatches(g, u))),
      denied: [...(record.denied.get(roleId) ?? [])].sort(),
    };
  });
}

/** The actions the policies allow in the services the local stack checks, sorted. */
function checkedGrants(policies: LocalPrincipal['policies']): string[] {
  const granted = new Set<string>();
  for (const { policy } of policies) {
    for (const s of policy.Statement) {
      if (s.Effect !== 'Allow') continue;
      for (const a of [s.Action ?? []].flat()) if (CHECKED_SERVICES.some((svc) => a.startsWith(`${svc}:`))) granted.add(a);
    }
  }
  return [...granted].sort();
}

/** Whether a granted action (`sqs:Send*`: IAM's wildcard, case-insensitive) covers an action used. */
function actionMatches(pattern: string, action: string): boolean {
  return new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i').test(action);
}

/** The report as a Markdown table (README, `npm start`'s exit). */
export function formatUsage(report: readonly RoleUsage[]): string {
  const lines = ['| role | granted | used | unused | denied |', '|---|---|---|---|---|'];
  const list = (xs: readonly string[]) => (xs.length === 0 ? '-' : xs.map((x) => `\`${x}\``).join(', '));
  for (const r of report) lines.push(`| ${r.roleId} | ${list(r.granted)} | ${list(r.used)} | ${list(r.unused)} | ${list(r.denied)} |`);
  return lines.join('\n');
}
