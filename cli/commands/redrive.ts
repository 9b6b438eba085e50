/** `hookledger redrive <consumer>`: move a consumer's DLQ messages back to its queue. */
import { type Command, InvalidArgumentError } from 'commander';
import type { RedriveResult } from '../../ops/redrive';
import { requireConsumer } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('redrive')
    .description("move a consumer's DLQ messages back to its queue (SQS move task; by hand where the emulator lacks it)")
    .argument('<consumer>', 'consumer id')
    .option('--rate <perSecond>', 'move-task rate cap, messages per second (1-500)', (v) => positiveInt(v, '--rate'))
    .action(
      ctx.withTarget(async (connect, globals, consumer: string, options: { rate?: number }) => {
        requireConsumer(ctx.config, consumer);
        const target = await connect();
        const { redrive } = await import('../../ops/redrive');
        const bar = ctx.progress('moved');
        const result = await redrive(
          { config: ctx.config, sqs: target.sqs, queues: target.queues },
          { consumer, maxPerSecond: options.rate, onProgress: bar },
        );
        bar.end();
        ctx.print(globals, result, () => formatRedrive(result, consumer));
      }),
    );
}

export function formatRedrive(result: RedriveResult, consumer: string): string {
  return result.toMove === 0 && result.moved === 0
    ? `the DLQ of ${consumer} is empty: nothing to move.`
    : `${result.moved} of ${result.toMove} messages moved from the DLQ of ${consumer} to its queue (${result.method}).`;
}

/** A commander argument parser: its error is a commander usage error (exit 2). */
function positiveInt(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive integer`);
  return n;
}
