import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/**
 * Imports `specifier` in a fresh Node process whose module resolution refuses express and fastify: answers the
 * refused specifier, or 'none' when nothing tried to load them.
 */
async function frameworksLoadedBy(specifier: string): Promise<string> {
  const hooks = `export async function resolve(specifier, context, next) {
    if (/^(express|fastify)(\\/|$)/.test(specifier)) throw new Error('LOADED ' + specifier);
    return next(specifier, context);
  }`;
  const script = `import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));
    try { await import(${JSON.stringify(specifier)}); console.log('none'); }
    catch (error) { const m = /LOADED (\\S+)/.exec(String(error)); if (!m) throw error; console.log(m[1]); }`;
  // Run from the package, so that @retryd/client resolves as an installed package does (its exports, its dist).
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: join(import.meta.dirname, '..') });
  return stdout.trim();
}

describe('entry points', () => {
  it('@retryd/client loads neither express nor fastify', async () => {
    expect(await frameworksLoadedBy('@retryd/client')).toBe('none');
  }, 30_000);

  it('the check can tell: importing the frameworks themselves is caught', async () => {
    expect(await frameworksLoadedBy('express')).toBe('express');
    expect(await frameworksLoadedBy('fastify')).toBe('fastify');
  }, 30_000);

  it('the subpaths import (they need their framework only for its types)', async () => {
    expect(await frameworksLoadedBy('@retryd/client/express')).toBe('none');
    expect(await frameworksLoadedBy('@retryd/client/fastify')).toBe('none');
  }, 30_000);
});
