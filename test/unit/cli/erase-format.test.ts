import { describe, expect, it } from 'vitest';
import { formatErase } from '../../../cli/commands/erase';
import type { EraseResult } from '../../../ops/erase';

const result = (over: Partial<EraseResult> = {}): EraseResult => ({
  tenant: 'tenant_204',
  from: '2026-12-01T00:00:00.000Z',
  to: '2026-12-02T00:00:00.000Z',
  events: 3,
  payloadItems: 3,
  objects: 2,
  deliveriesQuarantined: 1,
  errorMessagesScrubbed: 4,
  alreadyErased: 0,
  dryRun: false,
  erasureId: 'era_01J8K7M2Q4',
  complete: true,
  ...over,
});

describe('formatErase', () => {
  it('says how many delivery error messages were scrubbed, in a run and in a dry run', () => {
    expect(formatErase(result(), 'ops@example.com')).toContain(
      '1 pending deliveries quarantined payload_erased, 4 error messages scrubbed.',
    );
    expect(formatErase(result({ dryRun: true, errorMessagesScrubbed: 2 }), 'ops@example.com')).toMatch(
      /2 error messages scrubbed\.\nDry run: nothing deleted\.$/,
    );
  });
});
