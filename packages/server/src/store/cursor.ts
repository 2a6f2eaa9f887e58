import type { Page } from '../domain/task.js';
import { isTaskId } from '../domain/task-id.js';
import { InvalidCursorError } from './store-errors.js';

type KeyPart = string | number;

/**
 * Encodes a keyset position as an opaque base64url string. `listing` tags the cursor so that one made by
 * the attempt listing is refused by the task listing instead of silently skipping rows.
 */
export function encodeCursor(listing: string, key: readonly KeyPart[]): string {
  return Buffer.from(JSON.stringify([listing, ...key]), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeCursor} for `listing`, checking each key part against `shape`
 * (`'s'` string, `'n'` finite number, `'u'` a task id: see domain/task-id.ts, which the SQL stores could not look up
 * otherwise).
 */
export function decodeCursor(listing: string, cursor: string, shape: string): KeyPart[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (!Array.isArray(parsed) || parsed.length !== shape.length + 1 || parsed[0] !== listing) {
    throw new InvalidCursorError();
  }
  const key = parsed.slice(1) as unknown[];
  key.forEach((part, i) => {
    const kind = shape[i];
    const ok =
      kind === 's'
        ? typeof part === 'string'
        : kind === 'u'
          ? typeof part === 'string' && isTaskId(part)
          : typeof part === 'number' && Number.isFinite(part);
    if (!ok) throw new InvalidCursorError();
  });
  return key as KeyPart[];
}

/**
 * A keyset page from the rows a store read for it: `limit + 1` at most, the extra one only telling that more follow.
 * Cuts that row and, when there was one, points the cursor at the page's last item.
 *
 * @example
 * ```ts
 * pageOf(rows, query.limit, (p) => encodeCursor('policies', [p.policyId]));
 * ```
 */
export function pageOf<T>(items: T[], limit: number, cursorOf: (last: T) => string): Page<T> {
  if (items.length <= limit) return { items };
  const page = items.slice(0, limit);
  const last = page[page.length - 1];
  return last === undefined ? { items: page } : { items: page, nextCursor: cursorOf(last) };
}
