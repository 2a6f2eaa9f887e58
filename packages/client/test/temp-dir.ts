import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** A fresh directory for each test of the file calling it (`temp.dir`), deleted after the test. */
export function tempDirPerTest(prefix: string): { dir: string } {
  const temp = { dir: '' };
  beforeEach(async () => {
    temp.dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await rm(temp.dir, { recursive: true, force: true });
  });
  return temp;
}
