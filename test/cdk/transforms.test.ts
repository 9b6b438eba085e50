/**
 * An HTTP destination's transform is bundled into that consumer's worker only: synth writes the
 * generated entry (the shared HTTP worker given the transform), esbuild bundles the transform's code
 * into it, the other HTTP consumer keeps the shared worker; a missing module stops synth naming the consumer.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { workerEntry } from '../../core/config/consumers';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { PROJECT_ROOT } from '../../core/paths';
import { defaultConfig, synth } from './support';

const http = (id: string, transform?: string) => ({
  id,
  kind: 'http' as const,
  url: `https://${id}.internal.example.com/hooks`,
  subscribes: ['payment.*'],
  fields: ['id', 'data.amount', 'data.currency'],
  ...(transform ? { transform } : {}),
});

describe('transform bundling', () => {
  it('gives crm-sync a generated entry that bundles transforms/crm.ts; plain-sync keeps the shared worker', async () => {
    const input: HookledgerConfigInput = {
      sources: defaultConfig.sources,
      consumers: [http('crm-sync', 'transforms/crm.ts'), http('plain-sync')],
    };
    synth(input, 'TransformStack');
    const config = defineConfig(input);
    const [crm, plain] = config.consumers;
    expect(workerEntry(plain!)).toBe('lambdas/runtime/http-worker.ts');
    expect(workerEntry(crm!)).toBe('.hookledger/workers/crm-sync.ts');
    const entry = path.join(PROJECT_ROOT, workerEntry(crm!));
    expect(existsSync(entry)).toBe(true);
    expect(readFileSync(entry, 'utf8')).toContain("import { transform } from '../../transforms/crm';");
    // What NodejsFunction does with the entry: one bundle holding the worker and the transform.
    // (The SDK and Powertools left out here only to keep the test fast; the stack bundles them.)
    const out = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      logLevel: 'silent',
      external: ['@aws-sdk/*', '@aws-lambda-powertools/*', '@smithy/*'],
    });
    const code = out.outputFiles[0]!.text;
    expect(code).toContain('the CRM needs a numeric data.amount');
    expect(code).toContain('httpWorker(transform)');
  }, 120_000);

  it('stops synth naming the consumer when the transform module does not exist', () => {
    const input: HookledgerConfigInput = { sources: defaultConfig.sources, consumers: [http('erp-sync', 'transforms/erp-missing.ts')] };
    expect(() => synth(input, 'MissingTransform')).toThrow(
      'consumer erp-sync: transform transforms/erp-missing.ts does not exist; create it, exporting transform({ eventId, eventType, tenantId, keyId, payload })',
    );
  }, 60_000);
});
