/** `hookledger secrets rotate|retire <source>`: webhook signing secrets; values are never printed. */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from '../../ops/errors';
import type { ProvidedSecret, RETIRE_BOUND_MS, RetireResult, RotateResult } from '../../ops/secrets';
import type { Target } from '../../ops/target';
import { iso, parseDuration } from '../../ops/time';
import { requireConsumer, requireSource } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  const secrets = program.command('secrets').description('webhook signing secrets: rotate, retire; get (http consumers)');
  secrets
    .command('get')
    .description("print an http consumer's current signing secret, for the team running its receiver (never logged)")
    .argument('<consumer>', 'http consumer id')
    .action(
      ctx.withTarget(async (connect, globals, consumer: string) => {
        requireConsumer(ctx.config, consumer);
        const target = await connect();
        const { consumerSecret } = await import('../../ops/secrets');
        const result = await consumerSecret({ config: ctx.config, secrets: target.consumerSecrets }, consumer);
        ctx.print(globals, result, () => result.current);
      }),
    );
  secrets
    .command('rotate')
    .description(
      'new signing secret for a source or http consumer; the old one keeps verifying (consumers: keeps signing too) for the overlap (never printed)',
    )
    .argument('<source>', 'source id, or http consumer id')
    .option(
      '--overlap <duration>',
      "how long the old secret keeps verifying, 1h to 720h (local stack only; default: the source's secretOverlapHours)",
    )
    .option(
      '--value-file <path>',
      "the provider's new secret (its public key, hex key, credentials), read from a file or - for standard input; " +
        'required where the provider issues the secret (discord, telnyx, sendgrid, adyen, onfleet, plaid, ...); never printed',
    )
    .action(
      ctx.withTarget(async (connect, globals, source: string, options: { overlap?: string; valueFile?: string }) => {
        const consumer = isHttpConsumer(ctx, source);
        if (!consumer) requireSource(ctx.config, source);
        const overlapMs = options.overlap === undefined ? undefined : parseDuration(options.overlap, '--overlap');
        const value = options.valueFile === undefined ? undefined : await readValue(ctx.io.stdin, options.valueFile);
        const target = await connect();
        const rotator = consumer ? target.consumerSecrets.rotator : target.rotator;
        const { rotateSecret } = await import('../../ops/secrets');
        const result = await rotateSecret({ ...ctx.opsDeps(target), rotator }, { source, overlapMs, consumer, value });
        ctx.print(globals, result, () => formatRotate(result, source, target, consumer, options.valueFile));
      }),
    );
  secrets
    .command('retire')
    .description('end the rotation overlap now: the previous secret stops verifying (same 401 as any bad signature)')
    .argument('<source>', 'source id, or http consumer id')
    .action(
      ctx.withTarget(async (connect, globals, source: string) => {
        const consumer = isHttpConsumer(ctx, source);
        if (!consumer) requireSource(ctx.config, source);
        const target = await connect();
        const rotator = consumer ? target.consumerSecrets.rotator : target.rotator;
        const { retireSecret, RETIRE_BOUND_MS: bound } = await import('../../ops/secrets');
        const result = await retireSecret({ ...ctx.opsDeps(target), rotator }, { source, consumer });
        ctx.print(globals, result, () => formatRetire(result, source, target, bound));
      }),
    );
}

/**
 * The value in `--value-file` (`-`: standard input), without the surrounding whitespace a file or a
 * pipe adds (keys and credentials hold none). The read error names the file, never a value.
 */
async function readValue(stdin: NodeJS.ReadableStream, file: string): Promise<ProvidedSecret> {
  let bytes: Buffer;
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      bytes = Buffer.concat(chunks);
    } else {
      bytes = await readFile(file);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read --value-file ${file}${code ? ` (${code})` : ''}; give the path of a file holding the new secret, or - for standard input`,
    );
  }
  return { text: bytes.toString('utf8').trim(), from: file };
}

/** An id naming an http consumer and no source (sources and consumers have separate id spaces). */
function isHttpConsumer(ctx: CommandContext, id: string): boolean {
  return !ctx.config.sources.some((s) => s.id === id) && ctx.config.consumers.some((c) => c.id === id && c.kind === 'http');
}

export function formatRotate(
  result: RotateResult,
  source: string,
  target: Pick<Target, 'kind' | 'label'>,
  consumer = false,
  valueFile?: string,
): string {
  const version = result.versionId ? ` (version ${result.versionId})` : '';
  const counted = target.kind === 'aws' ? " (counted from the new version's creation)" : '';
  const from = valueFile === '-' ? 'standard input' : valueFile;
  return [
    `rotated the signing secret of ${source} on ${target.label}${version}${result.value === 'provided' ? ` to the value in ${from}` : ''}.`,
    consumer
      ? `deliveries carry signatures under both secrets until ${iso(result.previousUntil)}: give the receiving service the new one (\`hookledger secrets get ${source}\`) before then.`
      : result.value === 'provided'
        ? `the previous secret verifies until ${iso(result.previousUntil)}${counted}, the provider's new one from now on.`
        : `the previous secret verifies until ${iso(result.previousUntil)}${counted}: give the provider the new one now.`,
    `end the overlap sooner with \`hookledger secrets retire ${source}\`.`,
    result.value === 'provided'
      ? ''
      : target.kind === 'local'
        ? 'The new value is in .hookledger/secrets.json.'
        : 'Read the new value in Secrets Manager.',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

/** `bound`: RETIRE_BOUND_MS of ops/secrets.ts, passed in by the action that loaded it. */
export function formatRetire(
  result: RetireResult,
  source: string,
  target: Pick<Target, 'kind' | 'label'>,
  bound: typeof RETIRE_BOUND_MS,
): string {
  const within =
    target.kind === 'aws'
      ? ` (on every intake container within ${bound.afterRetire / 1000} s of this retire, ` +
        `or ${bound.afterRotation / 60_000} minutes of the rotation if that is later)`
      : " (from the local stack's next request)";
  return result.retired
    ? `retired the previous signing secret of ${source} on ${target.label}${result.versionId ? ` (version ${result.versionId} lost AWSPREVIOUS)` : ''}: ` +
        `only the current secret verifies${within}.`
    : `${source} has no previous signing secret on ${target.label}: nothing to retire.`;
}
