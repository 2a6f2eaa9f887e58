#!/usr/bin/env node
// Writes the row mappers generated from the task fields (src/codegen/row-mapper-files.ts) into src/: the stores' row
// mappers, Redis's task codec and the API's task views. The files are committed, so the build compiles them as any
// other source. `--check` writes nothing and exits 1 when a committed file differs from what the fields give.
// Needs the server built (dist/): after changing a field, `npm run build` emits dist/ even when the stale mappers fail to
// type-check, then this script writes them again.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rowMapperFiles } from '../dist/codegen/row-mapper-files.js';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const check = process.argv.includes('--check');
let stale = 0;
for (const { path, source } of rowMapperFiles()) {
  const target = src + path;
  let committed = null;
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // Missing: differs.
  }
  if (committed === source) continue;
  if (check) {
    console.error(`${target} is not what the task fields give: run npm run generate:row-mappers -w packages/server`);
    stale++;
  } else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, source);
    console.log(`wrote ${target}`);
  }
}
if (stale > 0) process.exit(1);
if (check) console.log('row mappers match the task fields');
