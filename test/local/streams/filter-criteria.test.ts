import { describe, expect, it } from 'vitest';
import { compileFilters, FilterCriteriaError } from '../../../local/streams/filter-criteria';

function streamRecord(eventName: string, newImage?: Record<string, unknown>) {
  return {
    eventName,
    eventSource: 'aws:dynamodb',
    dynamodb: { Keys: { pk: { S: 'evt#platform#evt_01J8K7M2Q4' } }, ...(newImage ? { NewImage: newImage } : {}) },
  };
}

const fanout = { eventName: ['INSERT'], dynamodb: { NewImage: { kind: { S: ['event', 'requeue'] } } } };

describe('compileFilters', () => {
  describe('equality lists and nested objects', () => {
    const matches = compileFilters([fanout]);

    it('matches an INSERT whose kind is listed', () => {
      expect(matches(streamRecord('INSERT', { kind: { S: 'event' }, tenantId: { S: 'tenant_204' } }))).toBe(true);
      expect(matches(streamRecord('INSERT', { kind: { S: 'requeue' } }))).toBe(true);
    });

    it('drops other kinds, other event names and records without the field', () => {
      expect(matches(streamRecord('INSERT', { kind: { S: 'payload' } }))).toBe(false);
      expect(matches(streamRecord('MODIFY', { kind: { S: 'event' } }))).toBe(false);
      expect(matches(streamRecord('REMOVE'))).toBe(false);
      expect(matches(streamRecord('INSERT', { kind: { N: '1' } }))).toBe(false);
    });
  });

  it('ORs several patterns and accepts the JSON strings Lambda stores', () => {
    const matches = compileFilters([JSON.stringify(fanout), { eventName: ['REMOVE'] }]);

    expect(matches(streamRecord('REMOVE'))).toBe(true);
    expect(matches(streamRecord('INSERT', { kind: { S: 'event' } }))).toBe(true);
    expect(matches(streamRecord('MODIFY', { kind: { S: 'event' } }))).toBe(false);
  });

  it('lets everything through without patterns', () => {
    expect(compileFilters(undefined)(streamRecord('MODIFY'))).toBe(true);
    expect(compileFilters([])(streamRecord('MODIFY'))).toBe(true);
  });

  describe('exists', () => {
    it('matches on presence, and exists:false also through a missing parent', () => {
      const absent = compileFilters([{ dynamodb: { NewImage: { replayId: [{ exists: false }] } } }]);
      const withReplay = streamRecord('INSERT', { replayId: { S: 'rpl_01' } });
      const withoutReplay = streamRecord('INSERT', { kind: { S: 'event' } });

      const exists = compileFilters([{ dynamodb: { NewImage: { replayId: [{ exists: true }] } } }]);
      expect(exists(withReplay)).toBe(true);
      expect(exists(withoutReplay)).toBe(false);
      expect(absent(withoutReplay)).toBe(true);
      expect(absent(withReplay)).toBe(false);
      expect(absent(streamRecord('REMOVE'))).toBe(true);
    });
  });

  describe('prefix and anything-but', () => {
    it('matches string prefixes', () => {
      const matches = compileFilters([{ dynamodb: { Keys: { pk: { S: [{ prefix: 'evt#' }] } } } }]);

      expect(matches(streamRecord('INSERT'))).toBe(true);
      expect(matches({ dynamodb: { Keys: { pk: { S: 'pay#platform#evt_01J8K7M2Q4' } } } })).toBe(false);
    });

    it('matches anything but a value, a list or a prefix, and never a missing field', () => {
      const notPayload = compileFilters([{ dynamodb: { NewImage: { kind: { S: [{ 'anything-but': ['payload', 'key'] }] } } } }]);
      const notAudit = compileFilters([{ dynamodb: { Keys: { pk: { S: [{ 'anything-but': { prefix: 'audit#' } }] } } } }]);
      const notRemove = compileFilters([{ eventName: [{ 'anything-but': 'REMOVE' }] }]);

      expect(notPayload(streamRecord('INSERT', { kind: { S: 'event' } }))).toBe(true);
      expect(notPayload(streamRecord('INSERT', { kind: { S: 'payload' } }))).toBe(false);
      expect(notPayload(streamRecord('REMOVE'))).toBe(false);
      expect(notAudit(streamRecord('INSERT'))).toBe(true);
      expect(notAudit({ dynamodb: { Keys: { pk: { S: 'audit#1#a' } } } })).toBe(false);
      expect(notRemove(streamRecord('INSERT'))).toBe(true);
      expect(notRemove(streamRecord('REMOVE'))).toBe(false);
    });

    it('matches when any element of an array value matches', () => {
      const matches = compileFilters([{ consumers: ['billing-meter'] }]);

      expect(matches({ consumers: ['audit-writer', 'billing-meter'] })).toBe(true);
      expect(matches({ consumers: ['audit-writer'] })).toBe(false);
    });
  });

  describe('invalid patterns', () => {
    it.each([
      [{ eventName: [] }, /at least one value/],
      [{ eventName: [{ numeric: ['>', 1] }] }, /operator "numeric" is not emulated/],
      [{ eventName: [{ prefix: 1 }] }, /prefix takes a string/],
      [{}, /non-empty object/],
      [{ dynamodb: { NewImage: { replayId: { exists: true } } } }, /must be a non-empty object, got true/],
      ['{not json', /not valid JSON/],
    ])('refuses %j', (pattern, message) => {
      expect(() => compileFilters([pattern as never])).toThrow(FilterCriteriaError);
      expect(() => compileFilters([pattern as never])).toThrow(message);
    });
  });
});
