/** `hookledger send`: POST a signed sample webhook to the stack's intake. */
import type { Command } from 'commander';
import { EXIT, UsageError } from '../../ops/errors';
import type { SendResult } from '../../ops/send';
import { requireSource } from './args';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('send')
    .description("POST a signed test webhook to the stack's intake, signed as the source's scheme requires")
    .option('--source <id>', 'source id (default: the only configured source, or the one configured with --provider)')
    .option('--provider <name>', "send the provider's sample event, signed as it signs (see `hookledger providers`)")
    .option('--file <path>', 'send this file as the body, byte for byte')
    .option('--type <eventType>', 'event type of the sample', 'payment.succeeded')
    .option('--tenant <id>', 'tenant of the sample', 'tenant_204')
    .option('--key <id>', 'key id of the sample', 'key_42')
    .option('--id <eventId>', 'event id of the sample (default: a new evt_ id)')
    .action(
      ctx.withTarget(
        async (
          connect,
          globals,
          options: { source?: string; provider?: string; file?: string; type: string; tenant: string; key: string; id?: string },
        ) => {
          const { PROVIDER_WITH_FILE, providerSource, send } = await import('../../ops/send');
          // Unknown or unconfigured providers are refused before any stack is reached.
          if (options.provider !== undefined && options.file !== undefined) throw new UsageError(PROVIDER_WITH_FILE);
          if (options.provider !== undefined) providerSource({ config: ctx.config }, options.provider, options.source);
          else if (options.source !== undefined) requireSource(ctx.config, options.source);
          const target = await connect();
          const result = await send(
            { config: ctx.config, webhookUrl: (s) => target.webhookUrl(s), signingSecret: (s) => target.signingSecret(s) },
            { ...options, eventId: options.id },
          );
          ctx.print(globals, result, () => formatSend(result));
          return result.status >= 200 && result.status < 300 ? EXIT.ok : EXIT.found;
        },
      ),
    );
}

export function formatSend(result: SendResult): string {
  return [
    `POST ${result.url}${result.provider ? `  as ${result.provider}` : ''}${eventNote(result)}`,
    `${result.status} ${JSON.stringify(result.body)}`,
  ].join('\n');
}

function eventNote(result: SendResult): string {
  if (result.eventIdAssignedAtIntake) {
    // bh_ + the deployment's keyed hash of the body: only intake holds the key.
    return result.eventId ? `  (event ${result.eventId}, derived from the body at intake)` : '  (event id derived from the body at intake)';
  }
  return result.eventId ? `  (event ${result.eventId})` : '';
}
