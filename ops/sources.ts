/**
 * Sources: per configured source, the event types it declares it receives, the events it recorded in a window (through the window index) by
 * the secret that verified them, the last one the previous secret verified, and where its rotation
 * stands (a previous secret kept, verifying until when). Never a secret's value: the rotation state
 * comes from metadata (the target's `secretRotation`).
 */
import type { Window } from '../adapters/table-scan';
import { WindowReader } from '../adapters/window-index';
import type { ConfigDeps, StoreDeps } from './deps';

export interface RotationState {
  readonly source: string;
  readonly hasPrevious: boolean;
  readonly previousUntil?: number;
}

export interface SourceReport {
  readonly source: string;
  readonly provider?: string;
  readonly scheme: string;
  /** The provider event types the source declares it receives (`events`); absent when it declares none. */
  readonly declaredEvents?: readonly string[];
  /** Events recorded in the window. */
  readonly events: number;
  readonly bySecretVersion: Readonly<Record<string, number>>;
  /** The newest receipt the previous secret verified in the window. */
  readonly previousSecretLastVerified?: number;
  /** Absent when the rotation state could not be read (`rotationError` says why). */
  readonly rotation?: RotationState;
  readonly rotationError?: string;
}

export interface SourcesReport {
  readonly window: Window;
  readonly sources: readonly SourceReport[];
  /** Intake requests by outcome (recorded, duplicate, refusals): the local stack's counters; absent on AWS. */
  readonly outcomes?: Readonly<Record<string, number>>;
}

export async function sourcesReport(
  deps: StoreDeps & ConfigDeps & { readonly secretRotation: (sourceId: string) => Promise<RotationState> },
  options: { readonly window: Window; readonly outcomes?: Readonly<Record<string, number>> },
): Promise<SourcesReport> {
  const receipts = await new WindowReader(deps).receipts({ window: options.window });
  const sources = await Promise.all(
    deps.config.sources.map(async (source): Promise<SourceReport> => {
      const mine = receipts.filter((r) => r.source === source.id);
      const bySecretVersion: Record<string, number> = {};
      let previousSecretLastVerified: number | undefined;
      for (const r of mine) {
        // Recovered from the provider's API (`gaps --recover`): verified by no secret, counted as such.
        const version = r.secretVersion ?? 'provider_api';
        bySecretVersion[version] = (bySecretVersion[version] ?? 0) + 1;
        if (r.secretVersion === 'previous') previousSecretLastVerified = Math.max(previousSecretLastVerified ?? 0, r.receivedAt);
      }
      let rotation: RotationState | undefined;
      let rotationError: string | undefined;
      try {
        rotation = await deps.secretRotation(source.id);
      } catch (error) {
        rotationError = error instanceof Error ? error.message : String(error);
      }
      return {
        source: source.id,
        ...(source.provider ? { provider: source.provider } : {}),
        scheme: source.scheme.type,
        ...(source.events ? { declaredEvents: source.events } : {}),
        events: mine.length,
        bySecretVersion,
        ...(previousSecretLastVerified !== undefined ? { previousSecretLastVerified } : {}),
        ...(rotation ? { rotation } : {}),
        ...(rotationError ? { rotationError } : {}),
      };
    }),
  );
  return { window: options.window, sources, ...(options.outcomes ? { outcomes: options.outcomes } : {}) };
}
