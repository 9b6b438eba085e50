/** `hookledger providers`: the provider catalog a source can name with `provider: '<name>'`. */
import type { Command } from 'commander';
import type { ProviderSummary } from '../../core/providers/catalog';
import { providerSummaries } from '../../core/providers/table';
import { table } from '../format';
import type { CommandContext } from './context';

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('providers')
    .description(
      'the provider presets: scheme, what the signature covers, where the event id is read, handshake, proof (sdk, vector, unproved)',
    )
    .option('--proved', "only the entries proved by the provider's own code or a published vector")
    .action(
      ctx.action(
        async (globals, options: { proved?: boolean }) => {
          const rows = providerSummaries().filter((p) => !options.proved || p.proof !== 'unproved');
          ctx.print(globals, rows, () => formatProviders(rows));
        },
        { config: false },
      ),
    );
}

export function formatProviders(rows: readonly ProviderSummary[]): string {
  const proved = rows.filter((r) => r.proof !== 'unproved').length;
  return [
    table(rows, [
      { header: 'PROVIDER', value: (r) => r.name },
      { header: 'SCHEME', value: (r) => r.scheme },
      { header: 'SIGNATURE COVERS', value: (r) => r.signedParts },
      { header: 'EVENT ID', value: (r) => r.eventId },
      { header: 'HANDSHAKE', value: (r) => r.handshake ?? '' },
      { header: 'PROOF', value: (r) => r.proof },
    ]),
    '',
    `${rows.length} providers, ${proved} proved (sdk or vector); the table with each proof: docs/providers.md`,
  ].join('\n');
}
