/** `hookledger filter test` and `hookledger transform test`: a consumer's filter or transform tried on one stored event. */
import type { Command } from 'commander';
import { EXIT } from '../../ops/errors';
import type { FilterTestResult, TransformTestResult } from '../../ops/filters';
import type { Target } from '../../ops/target';
import { requireConsumer, requireSource } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('filter')
    .description('consumer filters (EventBridge event patterns, evaluated at intake)')
    .command('test')
    .description("does the consumer's filter match a stored event, and which part of the pattern decided? (exit 0 match, 1 no match)")
    .requiredOption('--consumer <id>', 'the consumer (its filter as configured now)')
    .requiredOption('--event <eventId>', 'the event id, e.g. evt_01J8K7M2Q4')
    .option('--source <id>', 'the source (default: every configured source is tried)')
    .action(
      ctx.withTarget(async (connect, globals, options: { consumer: string; event: string; source?: string }) => {
        requireConsumer(ctx.config, options.consumer);
        if (options.source !== undefined) requireSource(ctx.config, options.source);
        const target = await connect();
        const { filterTest } = await import('../../ops/filters');
        const result = await filterTest(
          { ddb: target.ddb, tables: target.tables, config: ctx.config, ...blobsOf(target) },
          { ...options, eventId: options.event },
        );
        ctx.print(globals, result, () => formatFilterTest(result));
        return result.matched ? EXIT.ok : EXIT.found;
      }),
    );
  program
    .command('transform')
    .description("HTTP destinations' transforms")
    .command('test')
    .description("what the consumer's transform would send for a stored event (the body before signing, and its headers)")
    .requiredOption('--consumer <id>', 'the http consumer with a transform')
    .requiredOption('--event <eventId>', 'the event id, e.g. evt_01J8K7M2Q4')
    .option('--source <id>', 'the source (default: every configured source is tried)')
    .action(
      ctx.withTarget(async (connect, globals, options: { consumer: string; event: string; source?: string }) => {
        requireConsumer(ctx.config, options.consumer);
        if (options.source !== undefined) requireSource(ctx.config, options.source);
        const target = await connect();
        const { transformTest } = await import('../../ops/filters');
        // The transform is the project's TypeScript, imported as it is: the prebuilt CLI loads it through tsx.
        await ctx.io.loadTypeScript?.();
        const result = await transformTest(
          { ddb: target.ddb, tables: target.tables, config: ctx.config, root: ctx.root, ...blobsOf(target) },
          { ...options, eventId: options.event },
        );
        ctx.print(globals, result, () => formatTransformTest(result));
      }),
    );
}

export function formatFilterTest(r: FilterTestResult): string {
  const verdict = r.matched ? 'match' : 'no match';
  const decided = r.decidedBy ? ` (decided by ${r.decidedBy})` : '';
  const now = r.inDeliverySet ? `in its delivery set` : 'not in its delivery set';
  return `${verdict}${decided}: ${r.consumer} on ${r.source} ${r.eventId} (${r.eventType})\n${r.reason}\nThe receipt has ${r.consumer} ${now}.`;
}

export function formatTransformTest(r: TransformTestResult): string {
  const headers = Object.entries(r.headers).map(([k, v]) => `${k}: ${v}`);
  return [
    `${r.consumer} (${r.transform}) would POST for ${r.eventId}, signed with its secret:`,
    ...(headers.length > 0 ? headers : ['(no extra headers)']),
    '',
    JSON.stringify(r.body, null, 2),
  ].join('\n');
}

/** Bodies over `payloads.inlineMaxBytes` are read from the target's payload bucket, when it names one. */
const blobsOf = (target: Target) => (target.payloadBucket ? { blobs: target.payloadBucket } : {});
