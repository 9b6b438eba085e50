/** `hookledger sources add --provider <name>`: a source entry for hookledger.config.ts, printed or written into it. */
import path from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from './context';

const CONFIG_FILE = 'hookledger.config.ts';

interface AddOptions {
  readonly provider: string;
  readonly id?: string;
  readonly write?: boolean;
  readonly configFile?: string;
}

export function register(program: Command, ctx: CommandContext): void {
  program
    .command('sources')
    .description(`the webhook sources of ${CONFIG_FILE}`)
    .command('add')
    .description(
      "a source entry for a provider preset, its attribution read from fields of the provider's sample event (a comment per field saying what it reads); printed, or inserted into the config with --write",
    )
    .requiredOption('--provider <name>', 'the preset (see `hookledger providers`)')
    .option('--id <id>', "the source's id (default: the provider's name)")
    .option('--write', `insert it into ${CONFIG_FILE}'s sources (refused when the id is there already)`)
    .option('--config-file <path>', `the config file (default: ${CONFIG_FILE} in the repository)`)
    .action(
      ctx.action(
        async (globals, options: AddOptions) => {
          const { addSourceEntry, sourceEntry } = await import('../../ops/source-entry');
          const file = options.configFile ? path.resolve(options.configFile) : path.join(ctx.root, CONFIG_FILE);
          // Named as the command line names it: the repository's own file needs no absolute path.
          const named = options.configFile ?? CONFIG_FILE;
          const entry = sourceEntry({ provider: options.provider, ...(options.id !== undefined ? { id: options.id } : {}) });
          if (options.write) {
            await addSourceEntry(file, entry);
            ctx.print(globals, { ...entry, written: file }, () => formatWritten(entry, named));
            return;
          }
          ctx.print(globals, entry, () => entry.text);
          if (!globals.json)
            ctx.warn(`paste it into sources: [...] in ${named}, or run again with --write; then restart \`npm start\` (or deploy)`);
        },
        { config: false },
      ),
    );
}

export function formatWritten(entry: { readonly id: string; readonly provider: string }, file: string): string {
  return `added source "${entry.id}" (provider ${entry.provider}) to ${file}; restart \`npm start\` (or deploy) so intake has it`;
}
