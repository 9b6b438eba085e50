/** `hookledger verify-payload <eventId> <file>`: is this the body the event was received with? */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { EXIT, UsageError } from '../../ops/errors';
import { iso } from '../../ops/time';
import type { VerifyPayloadResult } from '../../ops/verify-payload';
import { requireSource } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('verify-payload')
    .description("is this file the body received for the event? (checks the receipt's keyed hash; works after retention)")
    .argument('<eventId>', 'the event id, e.g. evt_01J8K7M2Q4')
    .argument('<file>', 'the body to check, byte for byte (- for standard input)')
    .option('--source <id>', 'the source (default: every configured source is tried)')
    .action(
      ctx.withTarget(async (connect, globals, eventId: string, file: string, options: { source?: string }) => {
        if (options.source !== undefined) requireSource(ctx.config, options.source);
        let body: Buffer;
        try {
          body = file === '-' ? await readAll(ctx.io.stdin) : await readFile(file);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          throw new UsageError(
            `cannot read ${file}${code ? ` (${code})` : ''}; give the path of the body to check, or - for standard input`,
          );
        }
        const target = await connect();
        const { verifyPayload } = await import('../../ops/verify-payload');
        const result = await verifyPayload(
          { ddb: target.ddb, tables: target.tables, config: ctx.config, payloadHashKey: () => target.payloadHashKey() },
          eventId,
          body,
          { source: options.source },
        );
        ctx.print(globals, result, () => formatVerifyPayload(result, file));
        return result.matches ? EXIT.ok : EXIT.found;
      }),
    );
}

export function formatVerifyPayload(result: VerifyPayloadResult, file: string): string {
  return result.matches
    ? `match: ${file} is the body ${result.source} ${result.eventId} was received with (${result.presentedBytes} bytes, ${result.hash}, received ${iso(result.receivedAt)}).`
    : `no match: ${file} (${result.presentedBytes} bytes) is not the body ${result.source} ${result.eventId} was received with (${result.receivedBytes} bytes, ${result.hash}).`;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
