/**
 * Reads a synthesized cloud assembly (`cdk synth -o <dir>`): the stack's template, its resources by
 * type, and each function's asset bundle folder; and resolves the intrinsics the template uses
 * (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, the pseudo parameters) against what the local
 * stack created for each logical id.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { HookledgerError } from '../../core/errors';

export class AssemblyError extends HookledgerError {
  override readonly name: string = 'AssemblyError';
}

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

export interface CloudAssembly {
  /** The assembly folder. */
  readonly dir: string;
  readonly stackName: string;
  readonly templateFile: string;
  readonly resources: Readonly<Record<string, TemplateResource>>;
}

/** The local account and region every resolved ARN is in. */
export const LOCAL_ACCOUNT = '000000000000';

/** Reads `manifest.json` and the one CloudFormation stack it names. */
export function readAssembly(dir: string): CloudAssembly {
  const manifestFile = path.join(dir, 'manifest.json');
  if (!existsSync(manifestFile)) {
    throw new AssemblyError(
      `${manifestFile} not found: pass the output folder of \`cdk synth -o <dir>\`, or --assembly alone to synthesize one`,
    );
  }
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as {
    artifacts?: Record<string, { type?: string; properties?: { templateFile?: string } }>;
  };
  const stacks = Object.entries(manifest.artifacts ?? {}).filter(([, a]) => a.type === 'aws:cloudformation:stack');
  if (stacks.length !== 1) {
    throw new AssemblyError(`${manifestFile} names ${stacks.length} stacks (${stacks.map(([n]) => n).join(', ')}); expected exactly one`);
  }
  const [stackName, artifact] = stacks[0]!;
  const templateFile = path.join(dir, artifact.properties?.templateFile ?? `${stackName}.template.json`);
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as { Resources?: Record<string, TemplateResource> };
  return { dir, stackName, templateFile, resources: template.Resources ?? {} };
}

/** Logical ids of the resources of one type, in template order. */
export function resourcesOfType(assembly: CloudAssembly, type: string): [string, TemplateResource][] {
  return Object.entries(assembly.resources).filter(([, r]) => r.Type === type);
}

/** The asset folder holding a function's bundle: the S3 key `<hash>.zip` is the folder `asset.<hash>`. */
export function functionCodeDir(assembly: CloudAssembly, logicalId: string): string {
  const props = assembly.resources[logicalId]?.Properties ?? {};
  const assetPath = assembly.resources[logicalId]?.Metadata?.['aws:asset:path'];
  const key = (props.Code as { S3Key?: unknown } | undefined)?.S3Key;
  const folder = typeof assetPath === 'string' ? assetPath : typeof key === 'string' ? `asset.${key.replace(/\.zip$/, '')}` : undefined;
  if (!folder) throw new AssemblyError(`function ${logicalId} has no Code.S3Key and no aws:asset:path; only asset bundles can run locally`);
  const dir = path.join(assembly.dir, folder);
  if (!existsSync(dir)) throw new AssemblyError(`function ${logicalId}: its bundle ${dir} is missing from the assembly`);
  return dir;
}

/** What a logical id stands for locally: its Ref and its attributes. */
export interface LocalResource {
  readonly ref: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export type Resolved = string | number | boolean | null | Resolved[] | { [key: string]: Resolved };

/** Resolves every intrinsic in `value`; throws naming the path of what cannot be resolved. */
export function resolveIntrinsics(value: unknown, locals: ReadonlyMap<string, LocalResource>, at = '$'): Resolved {
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': 'us-east-1',
    'AWS::AccountId': LOCAL_ACCOUNT,
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::NoValue': '',
  };
  const ref = (name: string): string => {
    if (name in pseudo) return pseudo[name]!;
    if (name.startsWith('AWS::StackName')) return 'local';
    const local = locals.get(name);
    if (!local) throw new AssemblyError(`${at}: Ref to ${name}, which the local stack does not run`);
    return local.ref;
  };
  const getAtt = (id: string, attribute: string): string => {
    const value = locals.get(id)?.attributes[attribute];
    if (value === undefined) throw new AssemblyError(`${at}: Fn::GetAtt ${id}.${attribute}, which the local stack does not provide`);
    return value;
  };
  if (Array.isArray(value)) return value.map((v, i) => resolveIntrinsics(v, locals, `${at}[${i}]`));
  if (value === null || typeof value !== 'object') return value as Resolved;
  const entries = Object.entries(value);
  if (entries.length === 1) {
    const [key, arg] = entries[0]!;
    if (key === 'Ref') return ref(String(arg));
    if (key === 'Fn::GetAtt') {
      const [id, attribute] = Array.isArray(arg) ? arg.map(String) : String(arg).split(/\.(.*)/);
      return getAtt(id ?? '', attribute ?? '');
    }
    if (key === 'Fn::Join') {
      const [sep, parts] = arg as [string, unknown[]];
      return (resolveIntrinsics(parts, locals, `${at}.Fn::Join`) as Resolved[]).map(String).join(sep);
    }
    if (key === 'Fn::Select') {
      const [index, list] = arg as [unknown, unknown];
      const items = resolveIntrinsics(list, locals, `${at}.Fn::Select`) as Resolved[];
      return items[Number(resolveIntrinsics(index, locals, at))] ?? '';
    }
    if (key === 'Fn::Sub') {
      const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [String(arg), {}];
      const bound = resolveIntrinsics(vars, locals, `${at}.Fn::Sub`) as Record<string, Resolved>;
      return text.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
        if (name in bound) return String(bound[name]);
        const [id, attribute] = name.split(/\.(.*)/);
        return attribute ? getAtt(id ?? '', attribute) : ref(name);
      });
    }
    if (key.startsWith('Fn::')) throw new AssemblyError(`${at}: ${key} is not supported by the local stack`);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveIntrinsics(v, locals, `${at}.${k}`)]));
}
