/**
 * The CLI builds clients; it must not load the local pipeline (intake, fan-out, consumer runtime,
 * the local stack's wiring) to do so. Walks the static imports from bin/cli.ts with the TypeScript
 * parser: `import`, `import type` and `export ... from` with a relative specifier. A dynamic
 * `import()` is not followed: loading something lazily inside the branch that needs it is allowed.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The local pipeline's handlers and runners, as paths from the repository root (a folder ends with /). */
const PIPELINE = [
  'lambdas/ingest/',
  'lambdas/recording/',
  'lambdas/fanout/',
  'lambdas/consumers/',
  'lambdas/runtime/',
  'local/stack.ts',
  'local/wiring.ts',
  'bin/start.ts',
  'local/http-gateway.ts',
  'local/sqs-poller.ts',
  'local/streams/',
];

/** Every file reachable from `entry` through static relative imports, each with the chain that reaches it. */
function staticImports(entry: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
        statement.moduleSpecifier &&
        ts.isStringLiteral(statement.moduleSpecifier)
          ? statement.moduleSpecifier.text
          : undefined;
      if (!specifier?.startsWith('.')) continue;
      const target = resolve(file, specifier);
      if (chains.has(target)) continue;
      chains.set(target, [...(chains.get(file) as string[]), target]);
      queue.push(target);
    }
  }
  return chains;
}

function resolve(from: string, specifier: string): string {
  const base = path.join(path.dirname(from), specifier);
  const found = [base, `${base}.ts`, path.join(base, 'index.ts')].find((p) => p.endsWith('.ts') && existsSync(path.join(ROOT, p)));
  if (!found) throw new Error(`${from}: cannot resolve import "${specifier}"`);
  return found.split(path.sep).join('/');
}

/** An import or re-export that loads its module when run: not `import type`, nor one that names types only. */
function loadsAtRunTime(statement: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(statement)) return !statement.isTypeOnly;
  const clause = statement.importClause;
  if (!clause) return true;
  if (clause.isTypeOnly) return false;
  const bindings = clause.namedBindings;
  return clause.name !== undefined || !bindings || ts.isNamespaceImport(bindings) || bindings.elements.some((e) => !e.isTypeOnly);
}

/** The packages loaded by `entry`'s static imports that run (type-only ones left out), each with the chain of files that loads it. */
function packagesLoaded(entry: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[entry, [entry]]]);
  const packages = new Map<string, string[]>();
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const source = ts.createSourceFile(file, readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) || !loadsAtRunTime(statement)) continue;
      const specifier =
        statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier) ? statement.moduleSpecifier.text : undefined;
      if (specifier === undefined) continue;
      const chain = chains.get(file) as string[];
      if (!specifier.startsWith('.')) {
        if (!packages.has(specifier)) packages.set(specifier, [...chain, specifier]);
        continue;
      }
      const target = resolve(file, specifier);
      if (chains.has(target)) continue;
      chains.set(target, [...chain, target]);
      queue.push(target);
    }
  }
  return packages;
}

const pipelineReached = (chains: Map<string, string[]>) =>
  [...chains.entries()].filter(([file]) => PIPELINE.some((p) => file.startsWith(p))).map(([, chain]) => chain.join(' -> '));

describe('cli static imports', () => {
  it('reach no local pipeline module from bin/cli.ts (ingest, fan-out, consumers, local stack and wiring)', () => {
    const chains = staticImports('bin/cli.ts');

    expect(pipelineReached(chains)).toEqual([]);
    for (const file of [
      'lambdas/ingest/app.ts',
      'lambdas/fanout/app.ts',
      'lambdas/runtime/runtime.ts',
      'local/stack.ts',
      'local/wiring.ts',
    ]) {
      expect(chains.has(file), file).toBe(false);
    }
  });

  it('do follow the commands down to the client and state modules the targets use', () => {
    const chains = staticImports('bin/cli.ts');

    for (const file of ['cli/commands/index.ts', 'cli/commands/status.ts', 'ops/target.ts', 'local/store-clients.ts', 'local/state.ts']) {
      expect(chains.has(file), file).toBe(true);
    }
  });

  it("load no Lambda client with the local target: only a deployed stack's pause control uses one", () => {
    const lambda = [...packagesLoaded('ops/target.ts').entries()].filter(([name]) => name === '@aws-sdk/client-lambda');

    expect(lambda.map(([, chain]) => chain.join(' -> '))).toEqual([]);
  });

  it('would catch a Lambda client: the deployed target loads one', () => {
    expect(packagesLoaded('ops/target-aws.ts').has('@aws-sdk/client-lambda')).toBe(true);
  });

  it('would catch the pipeline: from local/wiring.ts they reach intake, fan-out and the consumer runtime', () => {
    const reached = pipelineReached(staticImports('local/wiring.ts'));

    expect(reached).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/ -> lambdas\/ingest\/app\.ts$/),
        expect.stringMatching(/ -> lambdas\/fanout\/app\.ts$/),
        expect.stringMatching(/ -> lambdas\/runtime\/runtime\.ts$/),
      ]),
    );
  });
});
