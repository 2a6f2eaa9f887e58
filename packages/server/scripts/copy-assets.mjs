#!/usr/bin/env node
// Copies the files tsc does not emit (src/**/*.sql migrations, src/**/*.lua scripts) into dist/, keeping their
// paths, so `new URL('./migrations/', import.meta.url)` finds them from the built modules too.
// Run after `tsc -b`, from anywhere: paths are relative to this package.
import { cpSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(packageDir, 'src');
const dist = join(packageDir, 'dist');
const ASSET = /\.(sql|lua)$/;

let copied = 0;
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !ASSET.test(entry.name)) continue;
  const from = join(entry.parentPath, entry.name);
  const to = join(dist, relative(src, from));
  cpSync(from, to);
  copied++;
}
console.log(`copy-assets: ${copied} file(s) from src/ to dist/`);
