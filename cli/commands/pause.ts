/** `hookledger pause|resume <consumer>`: stop or restart one consumer's worker taking messages. */
import type { Command } from 'commander';
import { requireConsumer } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    program
      .command(name)
      .description(
        paused
          ? "stop a consumer's worker taking messages (they wait in its queue); intake and other consumers go on"
          : "let a paused consumer's worker take messages again",
      )
      .argument('<consumer>', 'consumer id')
      .action(
        ctx.withTarget(async (connect, globals, consumer: string) => {
          requireConsumer(ctx.config, consumer);
          const target = await connect();
          const { setPaused } = await import('../../ops/pause');
          const consumerIds = ctx.config.consumers.map((c) => c.id);
          const result = await setPaused(target.pauseControl, consumerIds, consumer, paused);
          ctx.print(globals, result, () => `${consumer} ${paused ? 'paused' : 'resumed'} on ${target.label}.`);
        }),
      );
  }
}
