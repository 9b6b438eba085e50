/**
 * Source-mapped stack traces on the error path, not at every cold start. The stack ships each bundle
 * with its linked source maps (`index.mjs.map`, `chunks/*.mjs.map`) but does not set
 * `--enable-source-maps`: with it, Node reads and parses every loaded file's map while loading the
 * module graph, at every cold start and more the larger the bundle (docs/deploy.md, "Stack traces
 * in the logs"). The frames of an error that escapes a handler are mapped here instead,
 * once it happens: `flushingLogs` (./lambda-logger.ts) loads this module with `import()`, rewrites the
 * error's `stack`, and rethrows it, so the line the Lambda runtime logs names the sources
 * (`lambdas/ingest/app.ts:42:7`) as Node's own mapping would. Errors thrown while the module graph
 * loads (a missing environment variable) keep the bundle's positions; the function names in them are
 * kept by the build (`keepNames`).
 *
 * Each map is read once per execution environment, when a frame first points into its file. A frame
 * whose file has no readable map, or a position the map does not cover, is left as it was; mapping
 * never throws.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Reads a map file's text; undefined when there is none. Injected by tests. */
export type ReadMap = (mapFile: string) => string | undefined;

const readMapFile: ReadMap = (mapFile) => {
  try {
    return readFileSync(mapFile, 'utf8');
  } catch {
    return undefined;
  }
};

/** `at name (location)` or `at location`; the location is `file:line:column`. */
const FRAME = /^(\s+at (?:.+? \()?)((?:file:\/\/)?\/[^():]+?\.m?js):(\d+):(\d+)(\)?)$/;

/** A path given as itself or as a file: URL. */
const asPath = (location: string): string => (location.startsWith('file://') ? fileURLToPath(location) : location);

/** The source a map names, as the repository spells it: `../../lambdas/ingest/app.ts` → `lambdas/ingest/app.ts`. */
function sourceName(source: string): string {
  const file = asPath(source);
  const inPackages = file.lastIndexOf('node_modules/');
  if (inPackages >= 0) return file.slice(inPackages);
  return file.replace(/^(?:\.\.?\/)+/, '').replace(/^\/+/, '');
}

export class StackMapper {
  private readonly maps = new Map<string, SourceMap | undefined>();

  constructor(private readonly readMap: ReadMap = readMapFile) {}

  /** `stack` with every frame that points into a mapped bundle file rewritten to its source position. */
  map(stack: string): string {
    return stack
      .split('\n')
      .map((line) => this.mapFrame(line))
      .join('\n');
  }

  private mapFrame(line: string): string {
    const frame = FRAME.exec(line);
    if (!frame) return line;
    const [, head, location, lineText, columnText, tail] = frame as unknown as [string, string, string, string, string, string];
    const map = this.mapOf(asPath(location));
    if (!map) return line;
    // Stack positions count from 1; SourceMap.findEntry takes offsets from 0.
    const entry = map.findEntry(Number(lineText) - 1, Number(columnText) - 1) as Partial<{
      originalSource: string;
      originalLine: number;
      originalColumn: number;
    }>;
    if (entry.originalSource === undefined || entry.originalLine === undefined || entry.originalColumn === undefined) return line;
    return `${head}${sourceName(entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}${tail}`;
  }

  private mapOf(file: string): SourceMap | undefined {
    if (this.maps.has(file)) return this.maps.get(file);
    let map: SourceMap | undefined;
    try {
      const text = this.readMap(`${file}.map`);
      // Its sources stay relative to the map's folder; sourceName strips the climb.
      if (text !== undefined) map = new SourceMap(JSON.parse(text) as SourceMapPayload);
    } catch {
      map = undefined;
    }
    this.maps.set(file, map);
    return map;
  }
}

/** The execution environment's mapper: each map is read once for all the errors that need it. */
const shared = new StackMapper();

/**
 * Rewrites the `stack` of `error` and of its causes (five deep at most) to source positions, in place;
 * anything that is not an Error with a string stack is left alone.
 */
export function mapErrorStack(error: unknown, using: StackMapper = shared): void {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    try {
      if (typeof current.stack === 'string') current.stack = using.map(current.stack);
    } catch {
      // A stack that cannot be rewritten (a frozen error) stays as it was.
    }
    current = current.cause;
  }
}
