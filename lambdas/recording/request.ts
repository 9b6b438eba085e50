/**
 * One webhook request, as the steps after intake's `route` read it (lambdas/ingest/request.ts builds it
 * from the Lambda event); gap recovery builds one from a body the provider's API lists.
 */
import type { SourceConfig } from '../../core/config/schema';

export interface IngestRequest {
  readonly source: SourceConfig;
  /** Upper case; POST unless the event says otherwise. */
  readonly method: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly rawBody: Buffer;
  readonly query: URLSearchParams;
  /** The URL the provider called, as Twilio and Square sign it. */
  readonly url: string;
  readonly receivedAt: number;
}
