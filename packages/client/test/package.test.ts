import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The built package's import graph (npm run build): what loading each entry point loads.

const client = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(client, 'package.json'), 'utf8')) as {
  exports: Record<string, { default: string }>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  dependencies: Record<string, string>;
};

/** Every bare module (a package or a builtin) that loading `entry` loads, following the package's own files. */
function bareImports(entry: string): Set<string> {
  const bare = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    // Static imports and re-exports only: `import type` is erased from the built JavaScript.
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)';/gms)) {
      if (spec!.startsWith('.')) visit(resolve(dirname(file), spec!));
      else bare.add(spec!);
    }
  };
  visit(join(client, entry));
  return bare;
}

describe('@retryd/client package', () => {
  it('the main entry loads @retryd/core and nothing else: no axios, no IndexedDB library, no Node builtin', () => {
    expect([...bareImports(pkg.exports['.']!.default)]).toEqual(['@retryd/core']);
  });

  it('axios is loaded only by @retryd/client/axios, and idb-keyval only by @retryd/client/indexeddb', () => {
    expect([...bareImports(pkg.exports['./axios']!.default)].sort()).toEqual(['@retryd/core', 'axios']);
    expect([...bareImports(pkg.exports['./indexeddb']!.default)]).toEqual(['idb-keyval']);
  });

  it('node:fs is loaded only by @retryd/client/file-spool, which loads Node builtins and nothing else', () => {
    expect([...bareImports(pkg.exports['./file-spool']!.default)].sort()).toEqual(['node:fs/promises', 'node:path']);
  });

  it('@grpc/grpc-js is loaded only by @retryd/client/grpc', () => {
    expect([...bareImports(pkg.exports['./grpc']!.default)].sort()).toEqual(['@grpc/grpc-js', '@retryd/core']);
  });

  it('@grpc/grpc-js, axios, express and fastify are optional peer dependencies, and the runtime dependencies are core and idb-keyval', () => {
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(['@grpc/grpc-js', 'axios', 'express', 'fastify']);
    for (const peer of ['@grpc/grpc-js', 'axios', 'express', 'fastify']) expect(pkg.peerDependenciesMeta[peer]?.optional, peer).toBe(true);
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['@retryd/core', 'idb-keyval']);
  });
});
