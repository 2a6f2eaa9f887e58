import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SERVICE_TESTS, STORE_TESTS } from '../../../vitest.config.js';

// The tiers of vitest.config.ts stay true as tests are added: a test file is in the unit tier unless listed, so one
// that reaches a store's server or starts a process (through any chain of its relative imports) and is not listed
// fails here, with the list it belongs in.

const ROOT = resolve(import.meta.dirname, '..', '..', '..');

/** Test modules that open a store on its own server or files. */
const STORE_HARNESSES = new Set([
  'blob-store-conformance',
  'postgres-harness',
  'redis-cluster-harness',
  'redis-harness',
  'redis-store-harness',
  's3-blob-harness',
  'shared-stores',
  'sqlite-harness',
  'store-conformance',
]);

/** Modules whose import means the test starts a process (the built CLI, npm, PostgreSQL, Chromium). */
const PROCESS_MODULES = new Set(['node:child_process', 'child_process', 'playwright-core']);

/** Every `*.test.ts` of the repository, relative to its root. */
function testFiles(): string[] {
  const dirs = ['packages', 'examples'].flatMap((top) =>
    readdirSync(join(ROOT, top)).flatMap((pkg) => ['test', 'src'].map((sub) => join(top, pkg, sub))),
  );
  return dirs
    .filter((dir) => existsSync(join(ROOT, dir)))
    .flatMap((dir) => (readdirSync(join(ROOT, dir), { recursive: true }) as string[]).map((file) => join(dir, file)))
    .filter((file) => file.endsWith('.test.ts') && !file.includes('node_modules'))
    .sort();
}

/** The specifiers each module imports, read once. */
const importsOf = new Map<string, string[]>();

function importedBy(path: string): string[] {
  let found = importsOf.get(path);
  if (found === undefined) {
    found = ts.preProcessFile(readFileSync(path, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
    importsOf.set(path, found);
  }
  return found;
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the sources), or undefined when none is found. */
function resolveLocal(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => existsSync(candidate) && candidate.match(/\.[cm]?[jt]s$/) !== null);
}

/**
 * Why `file` cannot be a unit test: the first store harness or process module it reaches through its imports, with
 * the chain that leads there; undefined when it reaches neither.
 */
function serverReach(file: string): { tier: 'stores' | 'service'; chain: string[] } | undefined {
  const seen = new Set<string>();
  let store: string[] | undefined;
  const walk = (path: string, chain: string[]): string[] | undefined => {
    if (seen.has(path)) return undefined;
    seen.add(path);
    for (const fileName of importedBy(path)) {
      if (PROCESS_MODULES.has(fileName)) return [...chain, fileName];
      if (!fileName.startsWith('.')) continue;
      const next = resolveLocal(path, fileName);
      if (next === undefined) continue;
      const nextChain = [...chain, relative(ROOT, next)];
      if (STORE_HARNESSES.has(basename(next).replace(/\.[cm]?[jt]s$/, ''))) store ??= nextChain;
      const found = walk(next, nextChain);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const spawns = walk(resolve(ROOT, file), []);
  if (spawns !== undefined) return { tier: 'service', chain: spawns };
  return store === undefined ? undefined : { tier: 'stores', chain: store };
}

describe('test tiers (vitest.config.ts)', () => {
  const files = testFiles();
  const listed = [...STORE_TESTS, ...SERVICE_TESTS];

  it('lists only test files that exist, each in one tier', () => {
    expect(listed.filter((file) => !files.includes(file))).toEqual([]);
    expect(STORE_TESTS.filter((file) => SERVICE_TESTS.includes(file))).toEqual([]);
  });

  it('finds a store harness or a process however deep it is imported', () => {
    expect(serverReach('packages/server/test/postgres-store.test.ts')?.tier).toBe('stores');
    expect(serverReach('packages/server/test/cli.test.ts')).toEqual({
      tier: 'service',
      chain: ['packages/server/test/service-harness.ts', 'node:child_process'],
    });
    expect(serverReach('examples/payments/test/payments-demo.test.ts')?.tier).toBe('service');
    expect(serverReach('packages/core/test/compute-delay.test.ts')).toBeUndefined();
  });

  it('keeps every test that reaches a store server or starts a process out of the unit tier', () => {
    const misplaced = files
      .filter((file) => !listed.includes(file))
      .flatMap((file) => {
        const reach = serverReach(file);
        const list = reach?.tier === 'service' ? 'SERVICE_TESTS' : 'STORE_TESTS';
        return reach === undefined ? [] : [`${file} reaches ${reach.chain.join(' -> ')}: add it to ${list} in vitest.config.ts`];
      });
    expect(misplaced).toEqual([]);
  });
});
