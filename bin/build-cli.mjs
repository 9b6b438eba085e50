/**
 * The prebuilt CLI: bin/cli.ts and what it imports (the packages too, but for EXTERNAL_PACKAGES),
 * bundled by esbuild into ES modules under node_modules/.cache/hookledger/cli/, one chunk per
 * command's operation, built on first use and again whenever one of its inputs changed.
 * bin/hookledger.mjs runs it, so a command compiles no TypeScript and loads only what it runs.
 *
 * Why node_modules/.cache: it is where JavaScript tools keep derived build output (babel, eslint, vite),
 * git ignores it already, `npm ci` empties it (a fresh install builds afresh), and the bundle's package
 * imports resolve from there as from the repository. `.hookledger/` is the local stack's private data
 * (state, secrets, emulator data), which a user may delete to reset the stack.
 *
 * Staleness is checked with one stat per input, no hashing: manifest.json lists every input (the
 * esbuild metafile's, plus this file, tsconfig.json and package.json; a bundled package by its
 * package.json) with the mtime and size it had when the build read it. Each file is stat'ed before it
 * is read, so a file edited during a build differs from its recorded stat and the next call builds
 * again: the CLI never runs stale code.
 *
 * Plain JavaScript, as bin/hookledger.mjs: it runs before anything can compile TypeScript.
 */
import { readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository this CLI belongs to: bin/'s parent. */
export const REPOSITORY = fileURLToPath(new URL('../', import.meta.url));
/** The CLI's composition root, relative to the repository. */
export const CLI_ENTRY = 'bin/cli.ts';
/** Bumped when the build's output or manifest changes shape, so an older cache is rebuilt. */
const FORMAT = 1;
/** Inputs that shape the build without being in its metafile: the build itself, TypeScript's and the package's settings. */
const BUILD_SETTINGS = [path.relative(REPOSITORY, fileURLToPath(import.meta.url)), 'tsconfig.json', 'package.json'];
/**
 * A build folder replaced longer ago than this is deleted by a later build. A process started from it
 * may still load one of its chunks (a command's action loads its operation on first use); none runs
 * this long before doing so.
 */
const OLD_BUILD_MS = 10 * 60_000;
/** What a source file may read of `import.meta`: in the bundle, the source file's own values replace it. */
const IMPORT_META = /\bimport\.meta\.(url|dirname|filename)\b/g;
/**
 * Packages left to node_modules at run time; every other one is bundled in. Node resolves, reads and
 * (for CommonJS imported from ESM) lexes each file of a package separately: the AWS SDK a `status`
 * loads is hundreds of them. These stay out: esbuild (runs its own binary, beside its package: the
 * console bundles its page with it), tsx (registers its loader from its own files), and the provider
 * SDKs a gap check alone loads.
 */
const EXTERNAL_PACKAGES = new Set(['esbuild', 'tsx', 'stripe', '@octokit/rest']);
const LOADERS = { '.ts': 'ts', '.tsx': 'tsx', '.mts': 'ts', '.cts': 'ts', '.js': 'js', '.mjs': 'js', '.cjs': 'js', '.json': 'json' };

/** Where the builds and their manifest live for the repository at `root`. */
export function cacheDir(root = REPOSITORY) {
  return path.join(root, 'node_modules', '.cache', 'hookledger', 'cli');
}

/**
 * The prebuilt CLI's entry file, built first when there is none or any input changed since.
 * `onBuild(reason)` is told before a build starts ('first run' or 'sources changed').
 */
export async function cliEntry({ root = REPOSITORY, onBuild = () => {} } = {}) {
  const manifest = readManifest(root);
  const entry = manifest && freshEntry(root, manifest);
  if (entry) return entry;
  onBuild(manifest ? 'sources changed' : 'first run');
  return (await buildCli(root)).entry;
}

/** The manifest of the last build, or undefined when there is none (or it is of another format or place). */
export function readManifest(root = REPOSITORY) {
  try {
    const manifest = JSON.parse(readFileSync(path.join(cacheDir(root), 'manifest.json'), 'utf8'));
    return manifest.format === FORMAT && manifest.root === root ? manifest : undefined;
  } catch {
    return undefined;
  }
}

/** The built entry when every input still has the mtime and size the build read it with; otherwise undefined. */
function freshEntry(root, manifest) {
  for (const [file, [mtimeMs, size]] of Object.entries(manifest.inputs)) {
    const now = statSync(path.join(root, file), { throwIfNoEntry: false });
    if (!now || now.mtimeMs !== mtimeMs || now.size !== size) return undefined;
  }
  const entry = path.join(cacheDir(root), manifest.build, 'cli.mjs');
  return statSync(entry, { throwIfNoEntry: false }) ? entry : undefined;
}

/**
 * Bundles the CLI into a new build folder, then points the manifest at it (a rename: a process
 * reading it meanwhile sees the old build or the new one, whole). Concurrent builds each finish;
 * the last rename wins, and both builds are of the same sources.
 */
export async function buildCli(root = REPOSITORY) {
  const { build } = await import('esbuild');
  const dir = cacheDir(root);
  const name = `build-${Date.now().toString(36)}-${process.pid}`;
  const stats = new Map(BUILD_SETTINGS.map((file) => [file, statOf(statSync(path.join(root, file)))]));
  const result = await build({
    entryPoints: { cli: path.join(root, CLI_ENTRY) },
    absWorkingDir: root,
    outdir: path.join(dir, name),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // Each command's operation, loaded by `import()` in its action, becomes a chunk of its own.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Packages' ES builds where they ship one (the AWS SDK's dist-es): what a chunk does not use is left out.
    mainFields: ['module', 'main'],
    // bin/cli.ts lends a consumer's transform (TypeScript the bundle does not hold) tsx's loader.
    define: { 'process.env.HOOKLEDGER_PREBUILT_CLI': '"true"' },
    // The CommonJS packages bundled in require Node's own modules: an ES module has no `require` of its own.
    banner: {
      js: "import { createRequire as __hookledgerRequire } from 'node:module'; const require = __hookledgerRequire(import.meta.url);",
    },
    plugins: [externalPackages, sourceFiles(root, stats)],
    metafile: true,
    logLevel: 'error',
  });
  const inputs = {};
  for (const input of [...BUILD_SETTINGS, ...Object.keys(result.metafile.inputs)]) {
    // A package changes only by being installed again, which writes its package.json: one stat per package.
    const file = packageManifestOf(input) ?? input;
    // The repository's files were stat'ed by sourceFiles as they were read; packages are stat'ed now.
    inputs[file] ??= stats.get(file) ?? statOf(statSync(path.join(root, file)));
  }
  const manifest = { format: FORMAT, root, entry: CLI_ENTRY, build: name, builtAt: new Date().toISOString(), inputs };
  const previous = readManifest(root)?.build;
  const temporary = path.join(dir, `manifest.${process.pid}.json`);
  writeFileSync(temporary, `${JSON.stringify(manifest, null, 1)}\n`);
  renameSync(temporary, path.join(dir, 'manifest.json'));
  removeOldBuilds(dir, name, previous);
  return { entry: path.join(dir, name, 'cli.mjs'), manifest };
}

const statOf = (s) => [s.mtimeMs, s.size];

/** `node_modules/<package>/package.json` for a file of that package (the innermost node_modules); undefined for ours. */
function packageManifestOf(file) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file);
  return match ? `${match[1]}/package.json` : undefined;
}

/** EXTERNAL_PACKAGES' imports are left to node_modules. */
const externalPackages = {
  name: 'hookledger-external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = args.path.split('/', args.path.startsWith('@') ? 2 : 1).join('/');
      return EXTERNAL_PACKAGES.has(name) ? { path: args.path, external: true } : undefined;
    });
  },
};

/**
 * Loads the repository's own files for esbuild: stat first, then read (the stat recorded is never newer
 * than the text bundled), with `import.meta.url`, `.dirname` and `.filename` replaced by the source
 * file's own, since PROJECT_ROOT and the console's client folder are resolved from them.
 */
function sourceFiles(root, stats) {
  return {
    name: 'hookledger-sources',
    setup(build) {
      build.onLoad({ filter: /.*/ }, async (args) => {
        const loader = LOADERS[path.extname(args.path)];
        if (args.namespace !== 'file' || !loader || args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const before = await stat(args.path);
        const text = await readFile(args.path, 'utf8');
        stats.set(path.relative(root, args.path).split(path.sep).join('/'), statOf(before));
        const meta = {
          url: pathToFileURL(args.path).href,
          dirname: path.dirname(args.path),
          filename: args.path,
        };
        return { contents: text.replace(IMPORT_META, (_m, key) => JSON.stringify(meta[key])), loader };
      });
    },
  };
}

/**
 * The build `previous` is stamped with the time it was replaced (its folder's mtime); builds replaced
 * more than OLD_BUILD_MS ago go, and so do manifests left by a build that died before its rename.
 */
function removeOldBuilds(dir, current, previous) {
  const now = new Date();
  // A concurrent build may be removing the same folders: a folder gone already is no error.
  if (previous && previous !== current && statSync(path.join(dir, previous), { throwIfNoEntry: false })) {
    utimesSync(path.join(dir, previous), now, now);
  }
  for (const entry of readdirSync(dir)) {
    if (entry === current || entry === 'manifest.json') continue;
    const full = path.join(dir, entry);
    const replaced = statSync(full, { throwIfNoEntry: false })?.mtimeMs ?? now.getTime();
    if (now.getTime() - replaced > OLD_BUILD_MS) rmSync(full, { recursive: true, force: true });
  }
}
