import { isTaskId, taskIdError } from '../../domain/task-id.js';

// A task id (codec `uuid`, see domain/task-fields.ts and domain/task-id.ts) as the SQL stores bind it: SQLite keeps its
// 16 bytes (a BLOB), PostgreSQL a uuid. SQLite's reads select the bytes as hex (`TASK_READ_COLUMNS` in
// backends/sqlite/task-row.ts) and put the hyphens back here (`hyphenatedUuid`); pg reads a uuid as its canonical text.
//
// Every insert converts a task id, and every completion, on the hot paths: a pass over the text with a table of digit
// values validates and converts at once, where a regular expression, `replaceAll` and `Buffer.from(…, 'hex')` took
// about eight times as long (0.48 µs a task id).

/** The value of each lower-case hex digit by character code, -1 for every other character. */
const DIGIT = new Int8Array(128).fill(-1);
for (let d = 0; d < 16; d++) DIGIT[d.toString(16).charCodeAt(0)] = d;

/** Where each of a UUID's 16 bytes starts in its canonical text (the hyphens at 8, 13, 18 and 23 skipped). */
const BYTE_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const HYPHEN = 45;

/** The 16 bytes of a task id in canonical form, or null when `id` has another form. */
function bytesOf(id: string): Buffer | null {
  if (id.length !== 36) return null;
  if (id.charCodeAt(8) !== HYPHEN || id.charCodeAt(13) !== HYPHEN || id.charCodeAt(18) !== HYPHEN || id.charCodeAt(23) !== HYPHEN) return null;
  const bytes = Buffer.allocUnsafe(16);
  for (let k = 0; k < 16; k++) {
    const at = BYTE_AT[k] as number;
    const high = id.charCodeAt(at);
    const low = id.charCodeAt(at + 1);
    // A code of 128 or more reads as undefined, which is not >= 0: refused with the other characters.
    const h = DIGIT[high] as number;
    const l = DIGIT[low] as number;
    if (!(h >= 0 && l >= 0)) return null;
    bytes[k] = (h << 4) | l;
  }
  return bytes;
}

/**
 * A task id's 16 bytes, as SQLite stores it (a BLOB; codec `uuid`).
 *
 * @example
 * ```ts
 * uuidBytes('019abd2e-5f3a-7c41-9e2b-4f0a1c2d3e4f', 'task_id'); // <Buffer 01 9a bd 2e 5f 3a 7c 41 9e 2b 4f 0a 1c 2d 3e 4f>
 * ```
 * @throws Error naming the column when `id` is not a UUID in canonical lower-case text
 */
export function uuidBytes(id: string, column: string): Buffer {
  const bytes = bytesOf(id);
  if (bytes === null) throw taskIdError(id, column);
  return bytes;
}

/**
 * A task id given by a caller to look a task up by, as the value to bind: its bytes, or NULL for an id of another
 * form, which no stored task has (a comparison with NULL matches no row). For SQLite.
 */
export function taskIdKey(id: string): Buffer | null {
  return bytesOf(id);
}

/**
 * A task id's 32 lower-case hex digits (`lower(hex(task_id))`, as SQLite's reads select it) as its canonical text,
 * the hyphens put back.
 *
 * @example
 * ```ts
 * hyphenatedUuid('019abd2e5f3a7c419e2b4f0a1c2d3e4f'); // '019abd2e-5f3a-7c41-9e2b-4f0a1c2d3e4f'
 * ```
 */
export function hyphenatedUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A task id given by a caller to look a task up by, as PostgreSQL's statements bind it (`$n::uuid`): the id itself,
 * or NULL for an id of another form, which no stored task has and which the uuid type would refuse with an error.
 */
export function taskIdText(id: string): string | null {
  return isTaskId(id) ? id : null;
}
