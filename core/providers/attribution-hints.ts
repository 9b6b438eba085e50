/**
 * Where a new source of a preset reads what the preset leaves to it (its tenant, always its key),
 * chosen in the provider's sample event (samples.ts) so that `hookledger sources add` prints paths
 * that resolve: a per-provider hint where the sample has the field a person would pick and its name
 * does not say so, else the first leaf whose name says tenant or key (the lists below, in order),
 * else a fixed value the entry tells its reader to change. Pure functions over a body already read.
 */
import type { FieldLocation } from './catalog';

/** The attribution fields a source may have to give itself. */
export type SourceField = 'tenantId' | 'keyId';

/**
 * Per provider, where its sample has the field a person would pick but the name lists miss it, or
 * would pick another. Only paths the sample has (test/unit/source-entry.test.ts proves each).
 */
export const ATTRIBUTION_HINTS: Readonly<Record<string, Partial<Record<SourceField, FieldLocation>>>> = {
  // The GitHub App installation a delivery is for: one per customer account.
  github: { tenantId: { body: 'installation.id' } },
  // A balance platform is Adyen's customer account; the environment (test, live) is not a tenant.
  adyen: { tenantId: { body: 'data.balancePlatform' } },
  // The Dropbox account whose files changed.
  dropbox: { tenantId: { body: 'list_folder.accounts.0' } },
  // The WhatsApp Business phone number that received the message, beside the account (the preset's tenant).
  meta: { keyId: { body: 'entry.0.changes.0.value.metadata.phone_number_id' } },
};

/** Leaf names (the last part of a dotted path) that name the account an event belongs to, first match wins. */
export const TENANT_FIELD_NAMES: readonly string[] = [
  'tenant_id',
  'tenantId',
  'account_id',
  'accountId',
  'AccountSid',
  'account',
  'organization_id',
  'organizationId',
  'workspace_id',
  'team_id',
  'merchant_id',
  'business_id',
  'company_id',
  'portalId',
  'project_id',
  'projectId',
  'guild_id',
];

/** Leaf names that name the key, app or subscription an event came through, first match wins. */
export const KEY_FIELD_NAMES: readonly string[] = [
  'key_id',
  'api_key',
  'application_id',
  'api_app_id',
  'app_id',
  'subscription_id',
  'subscriptionId',
  'agent_id',
];

const FIELD_NAMES: Readonly<Record<SourceField, readonly string[]>> = { tenantId: TENANT_FIELD_NAMES, keyId: KEY_FIELD_NAMES };

/** Attribution values intake accepts (lambdas/recording/parse.ts): printable ASCII without spaces, at most 200 characters. */
const ID_TEXT = /^[\x21-\x7e]{1,200}$/;

/** A value intake would take as an attribution field: a string or a safe integer, printable, not too long. */
export function isIdValue(value: unknown): value is string | number {
  if (typeof value === 'number') return Number.isSafeInteger(value);
  return typeof value === 'string' && ID_TEXT.test(value);
}

/** Every leaf of a read body as a dotted path (array items by index, as readPath addresses them), in document order. */
export function leafPaths(body: unknown): { readonly path: string; readonly value: unknown }[] {
  const leaves: { path: string; value: unknown }[] = [];
  const walk = (node: unknown, prefix: string) => {
    if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) walk(child, prefix === '' ? key : `${prefix}.${key}`);
    } else if (prefix !== '') {
      leaves.push({ path: prefix, value: node });
    }
  };
  walk(body, '');
  return leaves;
}

export interface Suggestion {
  readonly location: FieldLocation;
  /** `hint`: ATTRIBUTION_HINTS; `name`: a leaf the name lists matched; `fixed`: nothing fitted. */
  readonly how: 'hint' | 'name' | 'fixed';
  /** The value the sample has there. */
  readonly sampleValue?: string | number;
}

/**
 * Where a source of `provider` reads `field`: its hint, else the first leaf of the sample (among
 * `readable`: the paths the scheme signs) whose name is in the field's list and whose value is an
 * id, else `{ value: fixed }`. `sample` is the body as read, undefined when the provider has none.
 */
export function suggestField(
  provider: string,
  field: SourceField,
  sample: unknown,
  readable: (path: string) => boolean,
  fixed: string,
): Suggestion {
  const leaves = sample === undefined ? [] : leafPaths(sample).filter((leaf) => readable(leaf.path) && isIdValue(leaf.value));
  const hint = ATTRIBUTION_HINTS[provider]?.[field];
  if (hint) {
    const at = 'body' in hint ? leaves.find((leaf) => leaf.path === hint.body) : undefined;
    return { location: hint, how: 'hint', ...(at ? { sampleValue: at.value as string | number } : {}) };
  }
  for (const name of FIELD_NAMES[field]) {
    const at = leaves.find((leaf) => leaf.path.split('.').at(-1) === name);
    if (at) return { location: { body: at.path }, how: 'name', sampleValue: at.value as string | number };
  }
  return { location: { value: fixed }, how: 'fixed' };
}
