/**
 * `hookledger sources connect | disconnect | remote <source>`: the source's webhook endpoint at its
 * provider, through the provider's API with the gap check's credential (ops/connect/connect.ts).
 * `--stack` (global) takes the webhook URL from a deployed stack's outputs; `--url` puts the local
 * stack's path under a public base URL (a tunnel). The source id is checked against the configuration
 * before the target is opened: an unknown one is a usage error (exit 2) with or without a stack.
 */
import type { Command } from 'commander';
import { describeDrift } from '../../core/endpoint-drift';
import type { ConnectDeps, ConnectResult, RemoteReport } from '../../ops/connect/connect';
import type { RemoteEndpoint } from '../../ops/connect/types';
import { EXIT } from '../../ops/errors';
import type { Target } from '../../ops/target';
import { iso } from '../../ops/time';
import { requireSource } from './args';
import type { CommandContext } from './context';

interface EndpointOptions {
  readonly url?: string;
  readonly hook?: string;
}

const HOOK_HELP = 'github: repos/<owner>/<repo> or orgs/<org> (default: gapCheck.hook without /hooks/<id>)';

/** The `sources` command `sources add` made, or a new one (whichever registers first). */
function sourcesCommand(program: Command): Command {
  return program.commands.find((c) => c.name() === 'sources') ?? program.command('sources').description('the webhook sources');
}

export function register(program: Command, ctx: CommandContext): void {
  const sources = sourcesCommand(program);
  const deps = (target: Target): ConnectDeps => ({
    ops: ctx.opsDeps(target),
    target,
    onRateLimited: (ms) => ctx.warn(`rate limited by the provider: retrying in ${Math.ceil(ms / 1000)} s (Retry-After)`),
  });
  sources
    .command('connect')
    .description(
      "register the source's webhook endpoint with its provider (create, or update the one at its URL), subscribed to its events; store the endpoint's signing secret as the source's current one (the previous keeps verifying for its overlap)",
    )
    .argument('<source>', 'source id')
    .option('--url <base>', 'the public base URL the provider calls (a tunnel to the local stack); the webhook path is kept')
    .option('--hook <scope>', HOOK_HELP)
    .option('--dry-run', 'print what it would do; change nothing')
    .action(
      ctx.withTarget(async (connect, globals, source: string, options: EndpointOptions & { dryRun?: boolean }) => {
        requireSource(ctx.config, source);
        const { connectSource } = await import('../../ops/connect/connect');
        const target = await connect();
        const result = await connectSource(deps(target), { source, ...options, dryRun: options.dryRun === true });
        ctx.print(globals, result, () => formatConnect(result));
      }),
    );
  sources
    .command('disconnect')
    .description("delete the source's webhook endpoint at its provider (the signing secret stays as it is)")
    .argument('<source>', 'source id')
    .option('--url <base>', 'the public base URL the endpoint was connected with')
    .option('--hook <scope>', HOOK_HELP)
    .option('--yes', 'do not ask for confirmation')
    .action(
      ctx.withTarget(async (connect, globals, source: string, options: EndpointOptions & { yes?: boolean }) => {
        requireSource(ctx.config, source);
        const { disconnectSource } = await import('../../ops/connect/connect');
        if (!(await ctx.confirm(options.yes, `Delete the provider's webhook endpoint of source ${source}?`))) return EXIT.found;
        const target = await connect();
        const result = await disconnectSource(deps(target), { source, ...options });
        ctx.print(
          globals,
          result,
          () => `deleted ${result.provider} endpoint ${result.removed.id} (${result.removed.url}) of source ${source}.`,
        );
      }),
    );
  sources
    .command('remote')
    .description(
      "the provider's view of the source's endpoint (URL, enabled, events, delivery status) and every drift from the configuration; exit 1 on drift",
    )
    .argument('<source>', 'source id')
    .option('--url <base>', 'the public base URL the endpoint should be at')
    .option('--hook <scope>', HOOK_HELP)
    .action(
      ctx.withTarget(async (connect, globals, source: string, options: EndpointOptions) => {
        requireSource(ctx.config, source);
        const { remoteSource } = await import('../../ops/connect/connect');
        const target = await connect();
        const report = await remoteSource(deps(target), { source, ...options });
        ctx.print(globals, report, () => formatRemote(report));
        return report.drift.length > 0 ? EXIT.found : EXIT.ok;
      }),
    );
}

function endpointLines(endpoint: RemoteEndpoint): string[] {
  return [
    `  id       ${endpoint.id}`,
    `  url      ${endpoint.url}`,
    `  enabled  ${endpoint.enabled ? 'yes' : 'no'}${endpoint.status ? ` (${endpoint.status})` : ''}`,
    `  events   ${endpoint.events.join(', ')}`,
  ];
}

export function formatRemote(report: RemoteReport): string {
  const lines = [
    `source ${report.source} (${report.provider}): expects ${report.expected.url}`,
    `  events   ${report.expected.events.join(', ')}`,
  ];
  lines.push(report.endpoint ? `${report.provider} endpoint:` : `${report.provider}: no endpoint for this source`);
  if (report.endpoint) lines.push(...endpointLines(report.endpoint));
  lines.push(report.drift.length === 0 ? 'ok: no drift' : 'drift:');
  for (const d of report.drift) lines.push(`  - ${describeDrift(d)}`);
  return lines.join('\n');
}

export function formatConnect(result: ConnectResult): string {
  const id = result.endpoint?.id;
  const head = result.dryRun
    ? result.action === 'created'
      ? `would create a ${result.provider} endpoint at ${result.expected.url} for source ${result.source}`
      : result.action === 'updated'
        ? `would update ${result.provider} endpoint ${id} of source ${result.source}`
        : `${result.provider} endpoint ${id} of source ${result.source} matches: nothing to do`
    : result.action === 'created'
      ? `created ${result.provider} endpoint ${id} at ${result.expected.url} for source ${result.source}`
      : result.action === 'updated'
        ? `updated ${result.provider} endpoint ${id} of source ${result.source}`
        : `${result.provider} endpoint ${id} of source ${result.source} matches the configuration: nothing changed`;
  const lines = [head, `  events   ${result.expected.events.join(', ')}`];
  if (result.action === 'updated')
    for (const d of result.drift) lines.push(`  - ${result.dryRun ? 'would fix' : 'fixed'}: ${describeDrift(d)}`);
  if (result.rotation) {
    lines.push(
      `stored its signing secret as the current secret of ${result.source}; the previous one verifies until ${iso(result.rotation.previousUntil)} ` +
        `(end it sooner with \`hookledger secrets retire ${result.source}\`).`,
    );
  } else if (result.secret === 'kept' && !result.dryRun) {
    lines.push(
      `the endpoint kept its signing secret: if ${result.source}'s current secret is not it, copy it into a file and run \`hookledger secrets rotate ${result.source} --value-file <file>\`.`,
    );
  }
  return lines.join('\n');
}
