import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rowMapperFiles } from '../src/codegen/row-mapper-files.js';
import { GENERATED_HEADER } from '../src/codegen/task-literal.js';

// The row mappers are generated from the task fields into checked-in files (src/codegen/row-mapper-files.ts): a field
// or a codec changed without running `npm run generate:row-mappers -w packages/server` fails here.

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Every file under `dir` (relative to src/) whose path passes `keep`. */
async function filesUnder(dir: string, keep: (path: string) => boolean): Promise<string[]> {
  const entries = await readdir(join(SRC, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(SRC.length))
    .filter(keep);
}

describe('the generated row mappers', () => {
  it('are what the task fields give (run npm run generate:row-mappers -w packages/server if not)', async () => {
    for (const { path, source } of rowMapperFiles()) {
      expect(await readFile(join(SRC, path), 'utf8'), path).toBe(source);
    }
  });

  it('leave no generated file behind that the generator no longer writes', async () => {
    const written = new Set(rowMapperFiles().map((file) => file.path));
    const generated = await filesUnder('.', (path) => path.split('/').includes('generated') && path.endsWith('.ts'));
    const left = [];
    for (const path of generated) if (!written.has(path) && (await readFile(join(SRC, path), 'utf8')).startsWith(GENERATED_HEADER)) left.push(path);
    expect(left).toEqual([]);
  });

  it('leave no source compiled at run time', async () => {
    const sources = await filesUnder('.', (path) => path.endsWith('.ts'));
    const compiling = [];
    for (const path of sources) if (/new Function\(/.test(await readFile(join(SRC, path), 'utf8'))) compiling.push(path);
    expect(compiling).toEqual([]);
  });
});
