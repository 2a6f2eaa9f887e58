import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

// What `npm publish` would upload for each package, read from `npm pack --dry-run --json` on the build that `npm test`
// makes first: every entry point with its types, the README and LICENSE, the service's runtime files; no build
// leftovers, tests or test-only switches; and every source map pointing at a source that ships with it (the packages
// ship `src/` beside `dist/` so that the maps and "go to definition" land on the TypeScript).

const packages = join(import.meta.dirname, '..', '..');

interface Manifest {
  publishConfig?: { access?: string };
  exports: Record<string, { types: string; default: string }>;
  bin?: Record<string, string>;
  main: string;
  types: string;
}

interface Packed {
  dir: string;
  manifest: Manifest;
  files: Set<string>;
}

async function pack(name: string): Promise<Packed> {
  const dir = join(packages, name);
  // --ignore-scripts: the build is npm test's, done before; packing must not rebuild behind the test's back.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, maxBuffer: 64 << 20 });
  const [result] = JSON.parse(stdout) as { files: { path: string }[] }[];
  return {
    dir,
    manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest,
    files: new Set(result!.files.map((file) => file.path)),
  };
}

const strip = (path: string) => posix.normalize(path).replace(/^\.\//, '');

const packed: Record<string, Packed> = {};
beforeAll(async () => {
  for (const name of ['core', 'client', 'server']) packed[name] = await pack(name);
}, 120_000);

describe.each(['core', 'client', 'server'])('the @retryd/%s tarball', (name) => {
  it('has every entry point, the types of every export, package.json, README.md and LICENSE', () => {
    const { manifest, files } = packed[name]!;
    const required = ['package.json', 'README.md', 'LICENSE', strip(manifest.main), strip(manifest.types)];
    for (const entry of Object.values(manifest.exports)) required.push(strip(entry.types), strip(entry.default));
    for (const bin of Object.values(manifest.bin ?? {})) required.push(strip(bin));
    expect(required.filter((file) => !files.has(file))).toEqual([]);
    // A scoped package is published restricted unless it says otherwise.
    expect(manifest.publishConfig?.access).toBe('public');
  });

  it('has no build leftovers, tests or test-only code', () => {
    const forbidden = [...packed[name]!.files].filter(
      (file) =>
        file.endsWith('.tsbuildinfo') ||
        /^(test|tests|chaos|bench|console)\//.test(file) ||
        /\.(test|spec)\.[cm]?[jt]s(\.map)?$/.test(file) ||
        /(^|\/)test-faults/.test(file),
    );
    expect(forbidden).toEqual([]);
  });

  it('ships the source of every source map in it', () => {
    const { dir, files } = packed[name]!;
    const missing: string[] = [];
    for (const map of [...files].filter((file) => file.endsWith('.map'))) {
      const { sources } = JSON.parse(readFileSync(join(dir, map), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const path = posix.join(posix.dirname(map), source);
        if (!files.has(path)) missing.push(`${map} -> ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the @retryd/server tarball', () => {
  it('has every migration, query and Lua script the service reads at run time, beside the built modules', () => {
    const { dir, files } = packed['server']!;
    const assets = readdirSync(join(dir, 'src'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.(sql|lua)$/.test(entry.name))
      .map((entry) => posix.join('dist', relative(join(dir, 'src'), join(entry.parentPath, entry.name)).split('\\').join('/')));
    expect(assets.length).toBeGreaterThan(50);
    expect(assets.filter((file) => !files.has(file))).toEqual([]);
  });

  it('has the built web console: its page and the scripts and styles it loads', () => {
    const { dir, files } = packed['server']!;
    expect(files.has('dist/console/index.html')).toBe(true);
    const page = readFileSync(join(dir, 'dist', 'console', 'index.html'), 'utf8');
    const loaded = [...page.matchAll(/(?:src|href)="\/console\/([^"]+)"/g)].map((match) => `dist/console/${match[1]!}`);
    expect(loaded.some((file) => file.endsWith('.js'))).toBe(true);
    expect(loaded.filter((file) => !files.has(file))).toEqual([]);
  });
});
