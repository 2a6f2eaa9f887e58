import type { Page } from '../domain/task.js';
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
 * (`'s'` string, `'n'` finite number).
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
    const ok = shape[i] === 's' ? typeof part === 'string' : typeof part === 'number' && Number.isFinite(part);
    if (!ok) throw new InvalidCursorError();
  });
  return key as KeyPart[];
}

/**
 * A page from `limit + 1` items read in listing order: the extra item only tells that a next page exists, so it is cut
 * and the cursor points at the page's last item; without one, the page is the last (no `nextCursor`).
 */
export function pageOf<T>(items: T[], limit: number, cursorOf: (last: T) => string): Page<T> {
  if (items.length <= limit) return { items };
  const page = items.slice(0, limit);
  const last = page[page.length - 1];
  return last === undefined ? { items: page } : { items: page, nextCursor: cursorOf(last) };
}
