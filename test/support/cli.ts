/** Runs `hookledger` in-process with captured output, as the CLI tests do. */
import { main } from '../../bin/cli';
import type { HookledgerConfig } from '../../core/config/schema';

/** `stdin`: what the command reads from standard input (`--value-file -`); default the process's. */
export async function runCli(
  argv: string[],
  config: HookledgerConfig,
  env: NodeJS.ProcessEnv,
  stdin: NodeJS.ReadableStream = process.stdin,
) {
  let stdout = '';
  let stderr = '';
  const sink = (write: (s: string) => void) =>
    ({
      write: (chunk: string) => {
        write(String(chunk));
        return true;
      },
    }) as unknown as NodeJS.WritableStream;
  const code = await main(argv, { stdout: sink((t) => (stdout += t)), stderr: sink((t) => (stderr += t)), stdin, env }, config);
  return { code, stdout, stderr };
}
