/**
 * Assembly mode serves the secrets with the rotation overlaps the assembly's own intake bundle was
 * built with (local/pipeline/assembly/bundled-config.ts), never hookledger.config.ts: the overlap is
 * read from the configuration synth inlined into the bundle, found as a string literal, never run.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AssemblyError, readAssembly } from '../../../local/assembly/template';
import { bundledSourceOverlaps } from '../../../local/pipeline/assembly/bundled-config';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An assembly of one function whose bundle holds `files` (path under the asset folder -> code). */
function assemblyWithBundle(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'hookledger-bundled-config-'));
  dirs.push(dir);
  writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      artifacts: { Hookledger: { type: 'aws:cloudformation:stack', properties: { templateFile: 'Hookledger.template.json' } } },
    }),
  );
  const template = { Resources: { IngestHandler: { Type: 'AWS::Lambda::Function', Properties: { Code: { S3Key: 'abc123.zip' } } } } };
  writeFileSync(path.join(dir, 'Hookledger.template.json'), JSON.stringify(template));
  for (const [file, code] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, 'asset.abc123', file)), { recursive: true });
    writeFileSync(path.join(dir, 'asset.abc123', file), code);
  }
  return readAssembly(dir);
}

describe('bundledSourceOverlaps', () => {
  it('reads each source overlap from the configuration inlined in a split chunk of the bundle: platform 24 h, stripe 1 h', () => {
    const assembly = assemblyWithBundle({
      'index.mjs': 'import "./chunks/config.mjs"; export const handler = async () => ({ statusCode: 202 });',
      'chunks/config.mjs':
        'function ia(){return JSON.parse(\'{"sources":[{"id":"platform","secretOverlapHours":24},{"id":"stripe","secretOverlapHours":1}],"consumers":[]}\')}',
    });
    expect(bundledSourceOverlaps(assembly, 'IngestHandler')).toEqual({ platform: 86_400_000, stripe: 3_600_000 });
  });

  it('decodes the literal as a string, escapes included (a description holding a quote)', () => {
    const assembly = assemblyWithBundle({
      'index.mjs': 'var c=JSON.parse(\'{"sources":[{"id":"platform","description":"tenant\\\'s hooks","secretOverlapHours":72}]}\');',
    });
    expect(bundledSourceOverlaps(assembly, 'IngestHandler')).toEqual({ platform: 259_200_000 });
  });

  it('refuses a bundle without an inlined configuration, naming the function', () => {
    const assembly = assemblyWithBundle({ 'index.mjs': 'export const handler = async () => ({ statusCode: 202 });' });
    expect(() => bundledSourceOverlaps(assembly, 'IngestHandler')).toThrow(AssemblyError);
    expect(() => bundledSourceOverlaps(assembly, 'IngestHandler')).toThrow(/function IngestHandler: no inlined hookledger configuration/);
  });

  it('refuses a template literal with a substitution instead of running it', () => {
    const substitution = ['$', '{globalThis.x}'].join('');
    const assembly = assemblyWithBundle({ 'index.mjs': `var c=JSON.parse(\`{"sources":[${substitution}]}\`);` });
    expect(() => bundledSourceOverlaps(assembly, 'IngestHandler')).toThrow(/the inlined configuration is not a plain string literal/);
  });
});
