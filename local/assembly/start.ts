/**
 * `npm start -- --assembly [<dir>]`: the local stack from a synthesized cloud assembly. Without a
 * folder it synthesizes one into `.hookledger/cdk.out` first (`cdk synth -o`, bundling included; the
 * folder 0700 and no bundle left writable by group or other); a folder given runs only when no other
 * user could have changed its bundles (`permissions.ts`).
 * Prints each denied call as it happens (`AccessDenied <action> ...`) and, at Ctrl-C, the
 * least-privilege report: per role, the actions granted, used and never used.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { HOOKLEDGER_DIR, privateDir, PROJECT_ROOT as ROOT } from '../../core/paths';
import { removeState, writeState } from '../state';
import { formatUsage } from './iam';
import { synthesizeAssembly, vouchForAssembly } from './permissions';
import { startAssemblyStack } from './stack';

export const DEFAULT_ASSEMBLY_DIR = '.hookledger/cdk.out';

/** `--assembly` in argv: undefined when absent, null when given without a folder. */
export function assemblyArg(argv: readonly string[]): string | null | undefined {
  const at = argv.indexOf('--assembly');
  if (at === -1) return undefined;
  const next = argv[at + 1];
  return next === undefined || next.startsWith('--') ? null : next;
}

/** `cdk synth -o <outDir>`, bundling included. */
function cdkSynth(outDir: string): void {
  execFileSync('npx', ['cdk', 'synth', '--quiet', '--no-notices', '-o', outDir], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: '1' },
  });
}

export async function startAssemblyMode(dir: string | null, options: { port: number; home: string | undefined }): Promise<void> {
  const t0 = Date.now();
  const assemblyDir = dir === null ? path.join(ROOT, DEFAULT_ASSEMBLY_DIR) : path.resolve(dir);
  const home = options.home ?? HOOKLEDGER_DIR;
  privateDir(home);
  if (dir === null) {
    console.log(`hookledger: synthesizing the CDK app into ${path.relative(ROOT, assemblyDir)} ...`);
    synthesizeAssembly(assemblyDir, { synth: cdkSynth, say: (line) => console.log(line) });
  } else {
    // A folder this run did not synthesize: run it only if no other user could have changed its bundles.
    const cleared = vouchForAssembly(assemblyDir);
    if (cleared) console.log(cleared);
  }
  console.log(`hookledger: starting the assembly in ${assemblyDir} on DynamoDB Local and the SQS emulator...`);
  const stack = await startAssemblyStack({
    assemblyDir,
    dataDir: path.join(home, 'assembly-data'),
    secretsFile: path.join(home, 'secrets.json'),
    httpPort: options.port,
    onLog: (id, line) => {
      if (process.env.HOOKLEDGER_LOG === 'json') console.log(`[${id}] ${line}`);
    },
    onDenied: (d) => console.log(`AccessDenied ${d.action} on ${d.resource} (principal ${d.principal}, function ${d.functionId})`),
  });
  const stateFile = path.join(home, 'state.json');
  await writeState(stateFile, stack.state);
  const source = stack.sourceIds[0] ?? 'platform';
  console.log(`
hookledger is running the synthesized assembly (${Date.now() - t0} ms).

  webhook URL     ${stack.webhookUrl(source)}
  functions       ${Object.keys(stack.functions).length} bundles, each in its own process, signing as its own role
  IAM             every DynamoDB, SQS, S3, Secrets Manager and Lambda call checked against the template's policies
  state file      ${path.relative(ROOT, stateFile)}

Press Ctrl-C to stop; the least-privilege report is printed then.
`);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    console.log('\nhookledger: stopping...');
    console.log(`\nLeast privilege, measured (granted / used / unused per role):\n\n${formatUsage(stack.iam.report())}\n`);
    await Promise.all([stack.stop(), removeState(stateFile)]);
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
