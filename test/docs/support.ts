/**
 * What the examples test reads from the documentation: the commands each page shows, in page order,
 * with what the page says about them, plus the configuration and files the page shows first.
 *
 *   - Commands: `npx hookledger ...` and `npm ...`, in fenced blocks (a `$ ` line of a `console`
 *     block; any line of a `bash`/`sh` block) and in inline code. A trailing `# comment` is not part of
 *     the command; `# exits N` at its start is the exit code the page documents (default 0). Forms
 *     written without npx (`hookledger trace <event_id>`) are syntax, not examples, and are not read.
 *   - Shown output: the lines under a `$ ` line of a `console` block, up to the next `$ ` line or the
 *     end of the block (comment-only lines and lines with an ellipsis are commentary).
 *   - ```ts page-config: an object `{ sources?, consumers? }` added to the shipped configuration for
 *     every command of that page.
 *   - ```<lang> file=<name>: a file the page's commands read by that name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface Example {
  /** Repository-relative page, e.g. `docs/operations.md`. */
  readonly page: string;
  /** 1-based line of the command in the page. */
  readonly line: number;
  /** The command as shown, comment removed and spaces collapsed: the skip table's key. */
  readonly command: string;
  readonly expectedExit: number;
  /** Lines the page shows the command printing. */
  readonly shownOutput: readonly string[];
}

export interface Page {
  readonly page: string;
  readonly examples: readonly Example[];
  /** The page's `ts page-config` block, as written. */
  readonly config?: string;
  /** The page's `file=<name>` blocks: name -> content. */
  readonly files: ReadonlyMap<string, string>;
}

const COMMAND = /^(npx hookledger\b|npm\b)/;
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^`]*)$/;
const EXITS = /^#\s*exits (\d+)\b/;

/** README.md, then docs/*.md in name order. */
export function documentationPages(root: string): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export function readPage(root: string, page: string): Page {
  const lines = readFileSync(path.join(root, page), 'utf8').split('\n');
  const examples: Example[] = [];
  const files = new Map<string, string>();
  let config: string | undefined;
  let prose: { text: string; line: number }[] = [];

  const flushProse = () => {
    // Inline code may wrap across lines within a paragraph: read the prose run as one text.
    const text = prose.map((p) => p.text).join('\n');
    for (const match of text.matchAll(/`([^`]+)`/g)) {
      const code = match[1]!.replace(/\s+/g, ' ').trim();
      if (!COMMAND.test(code)) continue;
      const before = text.slice(0, match.index).split('\n').length - 1;
      examples.push(example(page, prose[before]!.line, code, []));
    }
    prose = [];
  };

  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) {
      prose.push({ text: lines[i]!, line: i + 1 });
      continue;
    }
    flushProse();
    const [, indent = '', marker = '```', info = ''] = open;
    const body: { text: string; line: number }[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j]!;
      if (line.trim().startsWith(marker) && line.trim().replace(/[`~]/g, '') === '') break;
      body.push({ text: line.startsWith(indent) ? line.slice(indent.length) : line.trimStart(), line: j + 1 });
    }
    const [lang = '', ...attributes] = info.trim().split(/\s+/);
    const file = attributes.find((a) => a.startsWith('file='))?.slice('file='.length);
    if (file) files.set(file, `${body.map((b) => b.text).join('\n')}\n`);
    else if (attributes.includes('page-config')) config = body.map((b) => b.text).join('\n');
    else if (lang === 'console') examples.push(...consoleExamples(page, body));
    else if (['bash', 'sh', 'shell'].includes(lang)) {
      for (const b of body) if (COMMAND.test(b.text.trim())) examples.push(example(page, b.line, b.text.trim(), []));
    }
    i = j;
  }
  flushProse();
  return { page, examples, files, ...(config !== undefined ? { config } : {}) };
}

function consoleExamples(page: string, body: readonly { text: string; line: number }[]): Example[] {
  const out: Example[] = [];
  let current: { line: number; text: string; output: string[] } | undefined;
  const flush = () => {
    if (current && COMMAND.test(current.text)) out.push(example(page, current.line, current.text, current.output));
    current = undefined;
  };
  for (const b of body) {
    if (b.text.startsWith('$ ')) {
      flush();
      current = { line: b.line, text: b.text.slice(2).trim(), output: [] };
    } else if (current && b.text.trim() !== '' && !b.text.trim().startsWith('#') && !/\.\.\.|…/.test(b.text)) {
      current.output.push(b.text);
    }
  }
  flush();
  return out;
}

function example(page: string, line: number, shown: string, shownOutput: string[]): Example {
  const comment = shown.search(/\s#/);
  const note = comment >= 0 ? shown.slice(comment).trim() : '';
  const command = (comment >= 0 ? shown.slice(0, comment) : shown).replace(/\s+/g, ' ').trim();
  const exits = EXITS.exec(note);
  return { page, line, command, expectedExit: exits ? Number(exits[1]) : 0, shownOutput };
}

/** The words of a command line (no shell: quotes group, nothing expands), and a trailing `> file`. */
export function commandWords(command: string): { words: string[]; stdoutTo?: string } {
  const words = [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  const redirect = words.indexOf('>');
  if (redirect < 0) return { words };
  if (redirect !== words.length - 2) throw new Error(`only a trailing "> file" is understood: ${command}`);
  return { words: words.slice(0, redirect), stdoutTo: words[redirect + 1]! };
}

/**
 * A line of output with what differs between runs made equal: times, generated ids, ports, paths of
 * the state file, hashes, the operator's name, and runs of spaces (column widths).
 */
export function normalizeOutput(line: string): string {
  return line
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/\b(evt|rpl|rep|aud|msg)_[0-9A-HJKMNP-TV-Z]{26}\b/g, '$1_<ulid>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/local stack \([^)]*\)/g, 'local stack (<state file>)')
    .replace(/\b[0-9a-f]{64}\b/g, '<sha256>')
    .replace(/\(operator [^)]*\)/g, '(operator <you>)')
    .replace(/\s+/g, ' ')
    .trim();
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens (`-1`, `-2` for repeats). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (FENCE.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** Every relative link of a page (outside code), as `[target file, anchor]` resolved from the page's folder. */
export function relativeLinks(root: string, page: string): { line: number; file: string; anchor?: string; raw: string }[] {
  const out: { line: number; file: string; anchor?: string; raw: string }[] = [];
  let fenced = false;
  const lines = readFileSync(path.join(root, page), 'utf8').split('\n');
  for (const [i, line] of lines.entries()) {
    if (FENCE.test(line)) fenced = !fenced;
    if (fenced) continue;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      const raw = m[1]!;
      if (/^[a-z]+:/.test(raw)) continue;
      const [target = '', anchor] = raw.split('#');
      const file = target === '' ? page : path.normalize(path.join(path.dirname(page), target));
      out.push({ line: i + 1, file, raw, ...(anchor !== undefined ? { anchor } : {}) });
    }
  }
  return out;
}
