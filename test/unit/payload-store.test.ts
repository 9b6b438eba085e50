/**
 * Where a stored body goes (core/blobs.ts payloadStoreFor) and the configuration value that decides
 * it (`payloads.inlineMaxBytes`, validated at synth).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_INLINE_PAYLOAD_BYTES, MAX_INLINE_PAYLOAD_BYTES, payloadStoreFor } from '../../core/blobs';
import { defineConfig } from '../../core/config/schema';
import baseConfig from '../../hookledger.config';

describe('payloadStoreFor: item or bucket by stored size', () => {
  it.each([
    [0, 7000, 'item'],
    [7000, 7000, 'item'],
    [7001, 7000, 'bucket'],
    [300_000, 300_000, 'item'],
    [300_001, 300_000, 'bucket'],
    [1, 0, 'bucket'],
    [0, 0, 'item'],
  ] as const)('a body stored in %i bytes with inlineMaxBytes %i goes to the %s', (stored, threshold, where) => {
    expect(payloadStoreFor(stored, threshold)).toBe(where);
  });
});

describe('payloads.inlineMaxBytes in the configuration', () => {
  it('defaults to 7,000 stored bytes', () => {
    expect(DEFAULT_INLINE_PAYLOAD_BYTES).toBe(7000);
    expect(defineConfig(baseConfig).payloads).toEqual({ inlineMaxBytes: 7000 });
  });

  it('takes any whole number of bytes from 0 (every body in the bucket) to 300,000', () => {
    expect(defineConfig({ ...baseConfig, payloads: { inlineMaxBytes: 0 } }).payloads.inlineMaxBytes).toBe(0);
    expect(defineConfig({ ...baseConfig, payloads: { inlineMaxBytes: MAX_INLINE_PAYLOAD_BYTES } }).payloads.inlineMaxBytes).toBe(300_000);
  });

  it('refuses 300,001 bytes (over a DynamoDB item), naming the path, the value and the limit', () => {
    expect(() => defineConfig({ ...baseConfig, payloads: { inlineMaxBytes: 300_001 } })).toThrow(
      'payloads.inlineMaxBytes (value 300001): inlineMaxBytes must be at most 300000 bytes: a larger stored body does not fit a DynamoDB item (400 KB)',
    );
  });

  it.each([[-1], [6999.5]])('refuses %s bytes, naming the path', (value) => {
    expect(() => defineConfig({ ...baseConfig, payloads: { inlineMaxBytes: value } })).toThrow(`payloads.inlineMaxBytes (value ${value})`);
  });

  it('refuses an unknown key under payloads, naming it', () => {
    expect(() => defineConfig({ ...baseConfig, payloads: { inlineMaxBytes: 7000, inlineMaxKb: 7 } as never })).toThrow(/payloads/);
  });
});
