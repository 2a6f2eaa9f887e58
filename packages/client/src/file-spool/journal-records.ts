import type { DeadSpoolEntry, SpoolContents, SpoolEntry } from '../spool/spool-entry.js';
import { SpoolJournalError } from './spool-file-errors.js';

/**
 * One line of a spool's journal (JSON, then a line feed). Appended, never changed in place; replayed in order they
 * give the spool's contents:
 * - `add`: an entry was spooled;
 * - `done`: the service took entry `seq`;
 * - `dead`: entry `entry.seq` was set aside (the whole entry, so that a compacted journal needs no `add` for it);
 * - `drop`: the set-aside entry `seq` was discarded.
 */
export type JournalRecord =
  | { op: 'add'; entry: SpoolEntry }
  | { op: 'done'; seq: number }
  | { op: 'dead'; entry: DeadSpoolEntry }
  | { op: 'drop'; seq: number };

/** A record as the journal holds it. */
export function journalLine(record: JournalRecord): string {
  return `${JSON.stringify(record)}\n`;
}

/**
 * Replays the whole lines of a journal (its text up to its last line feed: a last line without one is a write that
 * was never acknowledged, which the caller cuts off). A line that is not a record throws, naming the file and the line.
 * @throws SpoolJournalError
 */
export function replayJournal(text: string, file: string): SpoolContents {
  const live = new Map<number, SpoolEntry>();
  const dead = new Map<number, DeadSpoolEntry>();
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((line, index) => {
    const record = parseRecord(line);
    if (record === undefined) throw new SpoolJournalError(`${file} line ${index + 1} is not a spool journal record: ${JSON.stringify(line.slice(0, 80))}`);
    switch (record.op) {
      case 'add':
        live.set(record.entry.seq, record.entry);
        break;
      case 'done':
        live.delete(record.seq);
        break;
      case 'dead':
        live.delete(record.entry.seq);
        dead.set(record.entry.seq, record.entry);
        break;
      case 'drop':
        dead.delete(record.seq);
        break;
    }
  });
  const bySeq = (a: SpoolEntry, b: SpoolEntry) => a.seq - b.seq;
  return { entries: [...live.values()].sort(bySeq), dead: [...dead.values()].sort(bySeq) };
}

function parseRecord(line: string): JournalRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as { op?: unknown; seq?: unknown; entry?: { seq?: unknown; request?: unknown } };
  if (record.op === 'done' || record.op === 'drop') return Number.isInteger(record.seq) ? (value as JournalRecord) : undefined;
  if (record.op === 'add' || record.op === 'dead') {
    return Number.isInteger(record.entry?.seq) && typeof record.entry?.request === 'object' ? (value as JournalRecord) : undefined;
  }
  return undefined;
}
