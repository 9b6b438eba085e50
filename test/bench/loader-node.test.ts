/**
 * Which `node` loads the bench's bundles (bench/bundles.ts resolveLoaderNode): this process's by
 * default, or the executable HOOKLEDGER_BENCH_NODE names (a Node 22, Lambda's major), refused with a
 * message naming the variable when it is not one.
 */
import { describe, expect, it } from 'vitest';
import { resolveLoaderNode } from '../../bench/bundles';

describe('the node that loads the bundles', () => {
  it("is this process's node when HOOKLEDGER_BENCH_NODE is unset or blank", () => {
    expect(resolveLoaderNode({})).toEqual({ path: process.execPath, version: process.version });
    expect(resolveLoaderNode({ HOOKLEDGER_BENCH_NODE: '  ' })).toEqual({ path: process.execPath, version: process.version });
  });

  it('is the named executable, with the version it reports', () => {
    expect(resolveLoaderNode({ HOOKLEDGER_BENCH_NODE: process.execPath })).toEqual({ path: process.execPath, version: process.version });
  });

  it.each([['/nonexistent/node-22/bin/node'], ['/bin/true']])('refuses %s, naming the variable and what to do', (named) => {
    expect(() => resolveLoaderNode({ HOOKLEDGER_BENCH_NODE: named })).toThrow(
      new RegExp(`^HOOKLEDGER_BENCH_NODE=${named} is not a node binary that runs here .*; name a node executable, or unset it`),
    );
  });
});
