import type { FastifyReply } from 'fastify';
import type { Page } from '../domain/task.js';
import type { PageRequest } from '../store/store.js';

/** Most bytes of one page of a listing by default: 4 MiB. */
export const DEFAULT_MAX_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * Items of the first read of a page: a page is read in parts, so that a page of large items (tasks with headers
 * and bodies of tens of KiB) never has a thousand of them in memory at once.
 */
const FIRST_READ = 100;

/** About how many bytes each read after the first brings from the store, judged by what the reads before weighed. */
const READ_BYTES = 8 * 1024 * 1024;

/** Room for `{"items":[` … `],"nextCursor":"…"}` around the items (a cursor is at most 1,024 characters). */
const FRAME_BYTES = 1_100;

/** A listing as {@link sendBoundedPage} reads it. */
export interface BoundedListing<T> {
  /** One page from the store (or the service), as the route would read it whole. */
  read(page: PageRequest): Promise<Page<T>>;
  /** The item as the answer holds it, as JSON text. */
  serialize(item: T): string;
  /** Bytes the store read for the item that the answer leaves out (a task's body). Default none. */
  unsentBytes?(item: T): number;
}

const requestOf = (cursor: string | undefined, limit: number): PageRequest => (cursor === undefined ? { limit } : { cursor, limit });

/**
 * A page of `listing` bounded by count (`page.limit`) and by bytes (`maxBytes`), as the JSON text of a
 * `{ items, nextCursor? }` answer. The page ends early, with a `nextCursor`, before the item that would take the
 * answer past `maxBytes` (it always holds at least one item, so paging always moves on).
 *
 * The page is read in parts (100 items, then as many as about 8 MiB of what the store returned), so what a page holds
 * in memory is bounded however large its items are. A page that ends early inside a part is read again up to its
 * last item, so that its `nextCursor` is the store's own (whatever a cursor means to that store). A part shorter than
 * asked with a `nextCursor` (a filter that examined its bound of tasks) ends the page there, as the store's page would.
 */
export async function readBoundedPage<T>(listing: BoundedListing<T>, page: PageRequest, maxBytes: number): Promise<string> {
  const parts: string[] = [];
  let bytes = FRAME_BYTES;
  let cursor = page.cursor;
  let want = Math.min(page.limit, FIRST_READ);
  for (;;) {
    const from = cursor;
    const read = await listing.read(requestOf(from, want));
    let readBytes = 0;
    for (const [i, item] of read.items.entries()) {
      const text = listing.serialize(item);
      const size = Buffer.byteLength(text) + 1;
      if (parts.length > 0 && bytes + size > maxBytes) {
        // `from` continues after the last item kept: the part began with this item.
        if (i === 0) return pageText(parts, from);
        const cut = await listing.read(requestOf(from, i));
        return pageText([...parts.slice(0, parts.length - i), ...cut.items.map((kept) => listing.serialize(kept))], cut.nextCursor);
      }
      parts.push(text);
      bytes += size;
      readBytes += size + (listing.unsentBytes?.(item) ?? 0);
    }
    cursor = read.nextCursor;
    if (cursor === undefined || parts.length >= page.limit || read.items.length < want) return pageText(parts, cursor);
    want = Math.max(1, Math.min(page.limit - parts.length, Math.floor((READ_BYTES * read.items.length) / Math.max(1, readBytes))));
  }
}

function pageText(items: readonly string[], nextCursor: string | undefined): string {
  return `{"items":[${items.join(',')}]${nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(nextCursor)}`}}`;
}

/** Sends {@link readBoundedPage}'s answer as is (it is JSON already: the response schema documents it, nothing re-serialises it). */
export async function sendBoundedPage<T>(reply: FastifyReply, listing: BoundedListing<T>, page: PageRequest, maxBytes: number): Promise<FastifyReply> {
  const text = await readBoundedPage(listing, page, maxBytes);
  return reply.type('application/json; charset=utf-8').send(text);
}
