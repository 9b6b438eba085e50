/** What intake is given: the configuration, its ports (store, secrets, verification keys) and observers. */
import type { IntakeStore } from '../../adapters/event-stores';
import type { SecretsPort } from '../../adapters/secrets';
import type { HookledgerConfig } from '../../core/config/schema';
import type { SchemeSet } from '../../core/schemes/set';
import type { VerificationKeysPort } from '../../core/schemes/types';
import type { Logger } from '../shared/logger';
import type { InvocationTracing } from '../shared/tracing';

export interface IngestDeps {
  readonly config: HookledgerConfig;
  readonly store: IntakeStore;
  readonly secrets: SecretsPort;
  /**
   * The schemes of the configured sources: on AWS only those are bundled (core/schemes/bundled.ts);
   * the local stack and tests pass every scheme (ALL_SCHEMES, core/schemes/index.ts).
   */
  readonly schemes: SchemeSet;
  readonly logger: Logger;
  readonly clock?: () => number;
  /**
   * Told the outcome of every request: `recorded`, `duplicate` (same event id, same bytes),
   * `duplicate_conflict` (same event id, other bytes), `duplicate_body` (same signed bytes under
   * other unsigned headers, sources with replay protection by body), `challenge`, or the error code of a
   * refusal (`signature_mismatch`, `unknown_source`, `storage_unavailable`, ...). A short, closed set:
   * fit for a metric dimension. With it the source id the request's path names: a configured source's
   * whenever the outcome is a verification failure (an unknown source is refused before verification),
   * so per-source counts of those stay as few as the sources.
   */
  readonly onOutcome?: (outcome: string, sourceId: string) => void;
  /**
   * Where schemes whose keys are fetched by key id (jwks: Plaid) get them, cached
   * (adapters/verification-keys.ts). Without it such sources answer 503; no other scheme uses it.
   */
  readonly verificationKeys?: VerificationKeysPort;
  /**
   * With `tracing: 'xray'`: the invocation's trace header, written on the receipt, and the trace's
   * annotations (event_id, tenant_id). @default - none: tracing off
   */
  readonly tracing?: InvocationTracing;
}
