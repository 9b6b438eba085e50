/**
 * Every example the documentation shows runs. Each `npx hookledger ...` and `npm ...` command in
 * README.md and docs/*.md (test/docs/support.ts says how they are read) is run in page order, in
 * process (bin/cli.ts, as `npx hookledger` runs it), against a local stack started here:
 *
 *   - one stack on the shipped configuration (hookledger.config.ts), shared by every page that shows
 *     no configuration of its own (README.md first, then docs/ in name order: a page's examples may
 *     rely on its own earlier ones, never on another page's);
 *   - one stack per page that shows a `ts page-config` block first: the shipped configuration plus
 *     what the block adds, started for that page and stopped after it.
 *
 * A command must exit as its page says (0, or `# exits N`), and every line the page shows it printing
 * must appear in what it prints (times, generated ids, ports, hashes and column widths aside). A
 * command that cannot run in a test is in SKIPPED with the reason; any other fails the test, and so
 * does a SKIPPED entry no page shows any more.
 *
 * What the test provides that a reader provides by hand: the files a page shows (`file=` blocks),
 * written to a scratch folder and named by it in the command; the receiver an HTTP consumer's `url`
 * names (a local server answering 200); the provider API a `gapCheck` calls (a Stripe stand-in on
 * loopback, test/support/provider-apis.ts) and its key in the secrets file; `<event_id>`, replaced by
 * the id the page's last `send` printed. `send` and every command that queues deliveries are followed
 * by a drain, so what the next command reads is settled, as it is a moment later on `npm start`.
 *
 * HOOKLEDGER_DOCS_PRINT=1 prints every command and its output: what to paste into a page.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { PROJECT_ROOT } from '../../core/paths';
import shipped from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { runCli } from '../support/cli';
import { type StandIn, stripeApi, stripeEvent } from '../support/provider-apis';
import { startTestStack } from '../support/stack';
import { commandWords, documentationPages, headingAnchors, normalizeOutput, type Page, readPage, relativeLinks } from './support';

/** Commands no test can run, each with why. Keys are the command as shown, comment removed. */
const SKIPPED: Readonly<Record<string, string>> = {
  'npm ci': 'installs the repository: the test runs inside it',
  'npm start': 'starts the pipeline until Ctrl-C; this test starts the same stack in process (startLocalStack)',
  'npm test': 'runs every suite, this one included',
  'npm run bench': 'the benchmark takes minutes and writes bench/results.json',
  'npm run bench -- --only bundles,large-bodies,wildcard': 'benchmark sections: minutes, and writes bench/results.partial.json',
  'npm run bench:http': 'a benchmark of 400 deliveries',
  'npm start -- --assembly': 'synthesizes the CDK app and runs it until Ctrl-C (test/assembly covers it)',
  'npm start -- --assembly <dir>': 'runs a synthesized assembly until Ctrl-C (test/assembly covers it)',
  'npm install --prefix test/providers --save-exact <package>': "adds a provider's package: changes test/providers' lock file",
  'npx hookledger console': 'serves the console until Ctrl-C (test/console covers it)',
  'npx hookledger console --stack <name>': 'a deployed stack on AWS, served until Ctrl-C',
  'npx hookledger doctor --stack Hookledger': 'a deployed stack on AWS (test/ops/doctor.test.ts mocks it)',
  'npx hookledger send --stack Hookledger --source platform': 'a deployed stack on AWS',
  'npx hookledger trace --stack Hookledger <event_id>': 'a deployed stack on AWS',
  'npx hookledger status --stack Hookledger': 'a deployed stack on AWS',
};

/** Commands after which deliveries are queued: the stack drains before the next command. */
const QUEUES_WORK = /^(send|replay|backfill|resume|redrive|gaps|reconcile)$/;
const DRY = /--dry-run|^reconcile(?!.*--repair)|^gaps(?!.*--recover)/;

/** The one event a page's Stripe gap check finds missing (docs/configuration.md, "Provider gap check"). */
const STRIPE_MISSING = 'evt_1QGapRecoveredDemo01';
const STRIPE_KEY = 'rk_test_51DocsExamplesStandInKey00';

const pages: Page[] = documentationPages(PROJECT_ROOT).map((page) => readPage(PROJECT_ROOT, page));
const ran: string[] = [];
const skipped: string[] = [];
const started = Date.now();

interface Target {
  readonly stack: LocalStack;
  readonly config: HookledgerConfig;
  readonly statePath: string;
  stop(): Promise<void>;
}

let receiver: Server;
let receiverUrl = '';
let stripe: StandIn;
let shippedTarget: Target | undefined;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/deals`;
  const now = Date.now();
  stripe = await stripeApi(STRIPE_KEY, () => [
    stripeEvent(STRIPE_MISSING, 'invoice.paid', now - 3_600_000, 'acct_1Nv0FGQ9RKHgCVdK', 'in_1QGap01'),
  ]);
});

afterAll(async () => {
  await shippedTarget?.stop();
  await stripe?.close();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  console.log(
    `documentation examples: ${ran.length} commands run, ${skipped.length} skipped (${new Set(skipped).size} distinct, SKIPPED), ` +
      `in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
});

/** The shipped configuration plus a page's `page-config` block, with the test's receiver and stand-in in. */
function pageConfig(page: Page): HookledgerConfig {
  if (page.config === undefined) return shipped;
  const added = new Function(`return (${page.config});`)() as { sources?: object[]; consumers?: object[] };
  const sources = (added.sources ?? []).map((s) => {
    const gapCheck = (s as { gapCheck?: { api: string } }).gapCheck;
    if (!gapCheck) return s;
    if (gapCheck.api !== 'stripe') throw new Error(`${page.page}: no stand-in for the ${gapCheck.api} API`);
    return { ...s, gapCheck: { ...gapCheck, baseUrl: stripe.url } };
  });
  const consumers = (added.consumers ?? []).map((c) => ((c as { kind?: string }).kind === 'http' ? { ...c, url: receiverUrl } : c));
  return defineConfig({
    ...shipped,
    sources: [...shipped.sources, ...sources],
    consumers: [...shipped.consumers, ...consumers],
  } as HookledgerConfigInput);
}

async function startTarget(config: HookledgerConfig): Promise<Target> {
  const stack = await startTestStack({ config });
  const statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-docs-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  // By hand on a real machine: the provider API key a gap check reads (docs/configuration.md).
  const gapSources = config.sources.filter((s) => s.gapCheck);
  if (gapSources.length > 0) {
    for (const s of gapSources) await stack.secrets.get(s.id);
    const file = JSON.parse(readFileSync(stack.secretsFile, 'utf8'));
    for (const s of gapSources) file.sources[s.id].apiKey = STRIPE_KEY;
    writeFileSync(stack.secretsFile, JSON.stringify(file), { mode: 0o600 });
  }
  return { stack, config, statePath, stop: () => stack.stop() };
}

/** Runs one page's examples in order; returns what went wrong, one line each. */
async function runPage(page: Page, target: () => Promise<Target>): Promise<string[]> {
  const failures: string[] = [];
  const scratch = mkdtempSync(path.join(tmpdir(), 'hookledger-docs-files-'));
  for (const [name, content] of page.files) writeFileSync(path.join(scratch, name), content);
  let lastEventId: string | undefined;
  for (const example of page.examples) {
    const where = `${example.page}:${example.line} \`${example.command}\``;
    if (example.command in SKIPPED) {
      skipped.push(example.command);
      continue;
    }
    if (!example.command.startsWith('npx hookledger ')) {
      failures.push(`${where}: not runnable here; run it in the test or add it to SKIPPED with the reason`);
      continue;
    }
    let line = example.command;
    if (line.includes('<event_id>')) {
      if (!lastEventId) {
        failures.push(`${where}: <event_id> before any send printed one`);
        continue;
      }
      line = line.replaceAll('<event_id>', lastEventId);
    }
    if (/[<[]/.test(line)) {
      failures.push(`${where}: a placeholder or an optional part; show a command that runs, or write it as syntax (without npx)`);
      continue;
    }
    const { words, stdoutTo } = commandWords(line);
    const argv = words.slice(2).map((w) => (page.files.has(w) ? path.join(scratch, w) : w));
    const { stack, config, statePath } = await target();
    const result = await runCli(argv, config, { USER: 'you', HOOKLEDGER_STATE: statePath });
    ran.push(example.command);
    if (process.env.HOOKLEDGER_DOCS_PRINT) console.log(`$ ${line}   [exit ${result.code}]\n${result.stdout}${result.stderr}`);
    if (stdoutTo) writeFileSync(path.join(scratch, stdoutTo), result.stdout);
    if (result.code !== example.expectedExit) {
      failures.push(`${where}: exit ${result.code}, the page says ${example.expectedExit}\n${result.stderr}${result.stdout}`.trimEnd());
      continue;
    }
    // The reader names the page's files relative to where they run the command; so does the page.
    const output = `${result.stdout}\n${result.stderr}`.replaceAll(`${scratch}${path.sep}`, '');
    const printed = new Set(output.split('\n').map(normalizeOutput));
    for (const shown of example.shownOutput) {
      if (!printed.has(normalizeOutput(shown)))
        failures.push(`${where}: shows "${shown.trim()}", which it does not print\n${result.stdout}`);
    }
    const sent = /\(event (\S+?)[,)]|"event_id":"([^"]+)"/.exec(result.stdout);
    if (argv[0] === 'send' && sent) lastEventId = sent[1] ?? sent[2];
    if (QUEUES_WORK.test(argv[0] ?? '') && !DRY.test(argv.join(' '))) await stack.drain();
  }
  return failures;
}

describe('the documentation examples', () => {
  for (const page of pages) {
    const skips = page.examples.filter((e) => e.command in SKIPPED).length;
    const title =
      `${page.page}: ${page.examples.length - skips} examples run and print as shown` +
      `${page.config ? ' on the configuration the page shows' : ''}, ${skips} skipped with a reason`;
    it(title, async () => {
      let own: Target | undefined;
      const target = async () => {
        if (page.config !== undefined) {
          own ??= await startTarget(pageConfig(page));
          return own;
        }
        shippedTarget ??= await startTarget(shipped);
        return shippedTarget;
      };
      try {
        expect(await runPage(page, target)).toEqual([]);
      } finally {
        await own?.stop();
      }
    }, 120_000);
  }

  it('links between README.md, ARCHITECTURE.md and docs/ reach a file, and a heading where they name one', () => {
    const broken: string[] = [];
    for (const page of [...documentationPages(PROJECT_ROOT), 'ARCHITECTURE.md']) {
      for (const link of relativeLinks(PROJECT_ROOT, page)) {
        const target = path.join(PROJECT_ROOT, link.file);
        if (!existsSync(target)) broken.push(`${page}:${link.line} ${link.raw}: no such file`);
        else if (link.anchor !== undefined && link.file.endsWith('.md') && !headingAnchors(readFileSync(target, 'utf8')).has(link.anchor)) {
          broken.push(`${page}:${link.line} ${link.raw}: no such heading`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('skips only what a page still shows', () => {
    const shown = new Set(pages.flatMap((p) => p.examples.map((e) => e.command)));
    expect(Object.keys(SKIPPED).filter((command) => !shown.has(command))).toEqual([]);
  });
});
