/**
 * `tracing` in the stack: off (the default), no function traces and no bundle holds tracer code
 * (the flag folds lambdas/shared/tracing.ts's import of the X-Ray side away, core/bundled-features.ts);
 * 'xray', every function has active tracing and the grants X-Ray needs, its bundle loads the Tracer,
 * and cdk-nag still passes with every acknowledgement matching a finding.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import {
  bundledDefines,
  bundleHandler,
  coldStartOutputs,
  HookledgerFunction,
  handlerBuildOptions,
} from '../../lib/constructs/hookledger-function';
import type { HookledgerStack } from '../../lib/hookledger-stack';
import { actionsOf, defaultConfig, GAP_CHECK_CONFIG, type Json, resourcesOfType, statementsOfRole, synth } from './support';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Every kind of function the stack builds: intake, fan-out, reconcile, two gap checks, three team consumers and an HTTP worker. */
const EVERY_KIND: HookledgerConfigInput = {
  ...GAP_CHECK_CONFIG,
  consumers: [
    ...defaultConfig.consumers,
    {
      id: 'crm-sync',
      kind: 'http',
      url: 'https://crm.internal.example.com/hooks/hookledger',
      subscribes: ['payment.*'],
      fields: ['id', 'type', 'tenant_id'],
    },
  ],
};
/** Every function the stack builds is a HookledgerFunction: its bundles are the entries of these. */
const hookledgerFunctions = (stack: HookledgerStack) =>
  stack.node.findAll().filter((n): n is HookledgerFunction => n instanceof HookledgerFunction);
const OFF = synth(EVERY_KIND);
const ENTRIES = [...new Set(hookledgerFunctions(OFF.stack).map((f) => f.entry))].sort();
const TRACER_CODE = /@aws-lambda-powertools\/tracer|aws-xray-sdk/;

/** Every output file's text and every input of the bundle of `entry`, as the stack bundles it for `tracing`. */
async function bundleOf(
  entry: string,
  tracing: 'off' | 'xray',
): Promise<{ inputs: string[]; text: string; atColdStart: string[]; bytesOf: (input: string) => number }> {
  const config = defineConfig({ ...EVERY_KIND, tracing });
  const result = await build({
    ...handlerBuildOptions(bundledDefines(JSON.stringify(config)), entry),
    entryPoints: [path.join(ROOT, entry)],
    outdir: path.join(ROOT, 'bench', 'bundles', 'probe-tracing'),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const { outputs } = result.metafile;
  return {
    inputs: Object.values(outputs).flatMap((o) => Object.keys(o.inputs)),
    text: result.outputFiles.map((f) => f.text).join('\n'),
    atColdStart: [...coldStartOutputs(result.metafile)].flatMap((f) => Object.keys(outputs[f]!.inputs)),
    bytesOf: (input) => Object.values(outputs).reduce((sum, o) => sum + (o.inputs[input]?.bytesInOutput ?? 0), 0),
  };
}

const functionsOf = (json: Json) => resourcesOfType(json, 'AWS::Lambda::Function');
const roleOf = (fn: Json): string => fn.Properties.Role['Fn::GetAtt'][0];

describe('tracing off (the default)', () => {
  it('no function of any kind has active tracing', () => {
    const { json, stack } = OFF;
    const functions = functionsOf(json);
    expect(functions).toHaveLength(hookledgerFunctions(stack).length);
    expect(ENTRIES).toEqual(
      expect.arrayContaining(['lambdas/ingest/handler.ts', 'lambdas/runtime/http-worker.ts', 'lambdas/reconcile/gap-check-handler.ts']),
    );
    expect(functions.filter(([, fn]) => fn.Properties.TracingConfig !== undefined).map(([id]) => id)).toEqual([]);
    const xray = functions
      .flatMap(([, fn]) => statementsOfRole(json, roleOf(fn)))
      .filter((s) => actionsOf(s).some((a) => a.startsWith('xray:')));
    expect(xray).toEqual([]);
  });

  it.each(ENTRIES)('the bundle of %s holds no tracer code (neither the Tracer nor the X-Ray SDK)', async (entry) => {
    const { inputs, text, bytesOf } = await bundleOf(entry, 'off');
    expect(inputs.filter((f) => TRACER_CODE.test(f) || f === 'lambdas/shared/xray.ts')).toEqual([]);
    expect(text).not.toMatch(TRACER_CODE);
    // Of lambdas/shared/tracing.ts only the pass-through is left (`traced` returning the handler).
    expect(bytesOf('lambdas/shared/tracing.ts')).toBeLessThan(100);
  });
});

describe("tracing 'xray'", () => {
  const ON = synth({ ...EVERY_KIND, tracing: 'xray' });

  it('every function of every kind has active tracing and may put trace segments and telemetry', () => {
    const { json, stack } = ON;
    const functions = functionsOf(json);
    expect(functions).toHaveLength(hookledgerFunctions(stack).length);
    for (const [id, fn] of functions) {
      expect(fn.Properties.TracingConfig, id).toEqual({ Mode: 'Active' });
      const granted = statementsOfRole(json, roleOf(fn)).flatMap((s) => (s.Effect === 'Allow' ? actionsOf(s) : []));
      expect(granted, id).toEqual(expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
    }
  });

  it("intake's bundle holds the Tracer (the X-Ray SDK with it), in a chunk of its own, not in what a cold start loads", async () => {
    const { inputs, atColdStart } = await bundleOf('lambdas/ingest/handler.ts', 'xray');
    expect(inputs).toContain('lambdas/shared/xray.ts');
    expect(inputs.some((f) => f.includes('node_modules/aws-xray-sdk-core/'))).toBe(true);
    // Loaded with the first invocation (lambdas/shared/tracing.ts), as the Logger is with the first line.
    expect(atColdStart.filter((f) => TRACER_CODE.test(f) || f === 'lambdas/shared/xray.ts')).toEqual([]);
  });

  it("a traced fan-out bundle runs where no X-Ray daemon is (the local stack's assembly mode): the Tracer stays a no-op", () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'hookledger-traced-'));
    try {
      bundleHandler('lambdas/fanout/handler.ts', outdir, bundledDefines(JSON.stringify(defineConfig({ ...EVERY_KIND, tracing: 'xray' }))));
      // An acknowledgement's record (MODIFY): nothing to send, so nothing is called.
      const script =
        "const { handler } = await import(process.argv[1]); const image = { kind: { S: 'event' }, eventId: { S: 'evt_01J8K7M2Q4' }, tenantId: { S: 'tenant_204' } };" +
        "console.log(JSON.stringify(await handler({ Records: [{ eventName: 'MODIFY', dynamodb: { SequenceNumber: '1', NewImage: image } }] }, { awsRequestId: 'req-1' })));";
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(path.join(outdir, 'index.mjs')).href], {
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          PATH: process.env.PATH ?? '',
          AWS_REGION: 'us-east-1',
          AWS_LAMBDA_FUNCTION_NAME: 'hookledger-fanout',
          EVENTS_TABLE: 'e',
          PAYLOAD_BUCKET: 'b',
          QUEUE_URLS: '{}',
          STACK_NAME: 's',
        },
      });
      expect(run.stderr).not.toMatch(/error/i);
      expect(run.stdout.trim().split('\n').pop()).toBe('{"batchItemFailures":[]}');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });

  // Without the HTTP consumer: its circuit breaker's policy has findings of its own, tracing or not (test/cdk/nag.test.ts's configs have none).
  it('passes both cdk-nag packs, and each acknowledgement still matches a finding', () => {
    const { stack } = synth({ ...GAP_CHECK_CONFIG, tracing: 'xray' });
    for (const pack of [new AwsSolutionsChecks(undefined, { verbose: true }), new ServerlessChecks(undefined, { verbose: true })]) {
      const report = pack.validateScope(stack);
      expect(report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    }
    const findings = [new AwsSolutionsChecks(), new ServerlessChecks()].flatMap((raw) => {
      // As test/cdk/nag.test.ts: acknowledgements ignored, so a stale one shows.
      (raw as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
      return raw
        .validateScope(stack)
        .violations.flatMap((v) => v.violatingResources.map((r) => ({ id: v.ruleName, path: r.constructPath ?? '' })));
    });
    for (const node of stack.node.findAll()) {
      for (const entry of node.node.metadata) {
        if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
        for (const raw of Object.keys(entry.data as Record<string, string>)) {
          const id = raw.replace(/^annotation::/i, '');
          const matched = findings.some((f) => f.id === id && (f.path === node.node.path || f.path.startsWith(`${node.node.path}/`)));
          expect(matched, `${id} at ${node.node.path} no longer matches a finding`).toBe(true);
        }
      }
    }
  });
});
