import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SpoolLockedError } from './spool-file-errors.js';

/** Directories whose lock this process holds: a pid is not enough to tell this process's lock from a stale one. */
const heldHere = new Set<string>();

/** Whether a process with this pid runs (EPERM: it does, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * Takes `directory`'s lock, the file `LOCK` holding the owner's pid, so that two spools never write one journal: both
 * would forward the same entries and compact each other's records away. A lock whose process is gone (a crash, a
 * `kill -9`) is stale and taken over; so is one naming this process's own pid that this process does not hold (a
 * container restarted with the same pid). Answers the release.
 * @throws SpoolLockedError when a spool of this process, or a running process, holds it
 */
export async function takeSpoolLock(directory: string): Promise<() => Promise<void>> {
  const path = join(directory, 'LOCK');
  if (heldHere.has(directory)) {
    throw new SpoolLockedError(`the spool directory ${directory} is open in this process already: close that spool first, or give this one another directory`);
  }
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      heldHere.add(directory);
      return async () => {
        heldHere.delete(directory);
        await rm(path, { force: true });
      };
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
    }
    const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && running(owner)) {
      throw new SpoolLockedError(
        `the spool directory ${directory} is held by process ${owner} (its ${path}): one process per spool directory; ` +
          `give this one another directory, or delete that file if process ${owner} is not a retryd spool`,
      );
    }
    await rm(path, { force: true });
  }
  throw new SpoolLockedError(`the spool directory ${directory} was locked again while a stale lock was being taken over: another process opened it`);
}
