import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const core = join(root, 'packages', 'core');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('@retryd/core package', () => {
  it('declares no runtime dependencies', () => {
    const pkg = JSON.parse(readFileSync(join(core, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.peerDependencies ?? {}).toEqual({});
    expect(pkg.optionalDependencies ?? {}).toEqual({});
  });

  it('imports nothing but its own files and node: builtins', () => {
    const bare: string[] = [];
    for (const file of sourceFiles(join(core, 'src'))) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
        if (!spec!.startsWith('.') && !spec!.startsWith('node:')) bare.push(`${file}: ${spec}`);
      }
    }
    expect(bare).toEqual([]);
  });

  it('imports no node: builtin as a value, so that browser bundles of it build', () => {
    const imports: string[] = [];
    for (const file of sourceFiles(join(core, 'src'))) {
      for (const [line] of readFileSync(file, 'utf8').matchAll(/^import (?!type ).*'node:[^']+';$/gm)) imports.push(`${file}: ${line}`);
    }
    expect(imports).toEqual([]);
  });

  it('the README example is examples/quickstart.mjs, and it runs as written', async () => {
    const example = readFileSync(join(root, 'examples', 'quickstart.mjs'), 'utf8');
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(example.trim());
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'examples', 'quickstart.mjs')], { timeout: 20_000 });
    expect(stdout).toContain('attempt 1: retry_scheduled, next in 0 ms');
    expect(stdout).toContain('attempt 3: success_after_retry');
    expect(stdout).toContain("200 { ok: true, key: 'order-1042' }");
  });
});
