import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_PAGE_BYTES, readBoundedPage, type BoundedListing } from '../src/api/bounded-page.js';
import type { Page } from '../src/domain/task.js';
import type { PageRequest } from '../src/store/store.js';
import { startApi, type ApiHarness } from './api-harness.js';

// A listing answers at most a page's worth of bytes (4 MiB by default) however large its items, and leaves task bodies
// out; paging on with nextCursor still returns every item once.

/** Tasks of about 94 KiB each, as stored: a 60 KiB body (kept inline) and 30 KiB of headers. */
const LARGE_TASKS = 200;
const pad = (n: number, c: string) => c.repeat(n);
const largeTask = (i: number) => ({
  targetUrl: `https://api.example.com/orders/${i}`,
  method: 'POST',
  idempotencyKey: `large-${i}`,
  headers: Object.fromEntries([1, 2, 3, 4].map((h) => [`X-Pad-${h}`, pad(7_600, String.fromCharCode(96 + h))])),
  body: { order: i, note: pad(60 * 1024, 'n') },
});

describe('pages bounded by bytes', () => {
  let api: ApiHarness;
  const ids = new Set<string>();

  beforeAll(async () => {
    api = await startApi();
    for (let from = 0; from < LARGE_TASKS; from += 40) {
      const batch = await api.call('POST', '/retry-tasks/batch', { tasks: Array.from({ length: 40 }, (_, k) => largeTask(from + k)) });
      expect(batch.status).toBe(200);
      for (const result of batch.body.results as { status: number; task: { taskId: string } }[]) {
        expect(result.status).toBe(201);
        ids.add(result.task.taskId);
      }
    }
  }, 120_000);
  afterAll(async () => api.close());

  it('answers limit=1000 within 4 MiB, without bodies, and pages on to every task once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api.call('GET', `/retry-tasks?limit=1000${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(res.status).toBe(200);
      expect(Buffer.byteLength(res.text)).toBeLessThanOrEqual(DEFAULT_MAX_PAGE_BYTES);
      expect(res.body.items.length).toBeGreaterThan(0);
      for (const item of res.body.items as Record<string, unknown>[]) {
        expect(item).not.toHaveProperty('body');
        expect(item.headers).toMatchObject({ 'X-Pad-1': pad(7_600, 'a') });
        seen.push(item.taskId as string);
      }
      cursor = res.body.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    // About 31 KiB a task without its body: 200 of them take two pages of 4 MiB.
    expect(pages).toBe(2);
    expect(seen).toHaveLength(LARGE_TASKS);
    expect(new Set(seen)).toEqual(ids);

    const one = await api.call('GET', `/retry-tasks/${seen[0]!}`);
    expect(JSON.parse(one.body.body as string)).toMatchObject({ note: pad(60 * 1024, 'n') });
  });

  it('bounds pages by a smaller page size the same way', async () => {
    const small = await startApi({ app: { maxPageBytes: 100 * 1024 } });
    try {
      for (let i = 0; i < 12; i += 1) expect((await small.call('POST', '/retry-tasks', largeTask(i))).status).toBe(201);
      const seen = new Set<string>();
      let cursor: string | undefined;
      do {
        const res = await small.call('GET', `/retry-tasks?limit=1000${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
        expect(Buffer.byteLength(res.text)).toBeLessThanOrEqual(100 * 1024);
        expect(res.body.items.length).toBeGreaterThan(0);
        for (const item of res.body.items as { taskId: string }[]) {
          expect(seen.has(item.taskId)).toBe(false);
          seen.add(item.taskId);
        }
        cursor = res.body.nextCursor;
      } while (cursor !== undefined);
      expect(seen.size).toBe(12);
      expect((await small.call('GET', '/dead-letters?limit=1000')).body).toEqual({ items: [] });
    } finally {
      await small.close();
    }
  });
});

/** A listing of numbered items of `sizes[i]` bytes each, recording the page requests it was read with. */
function listingOf(sizes: readonly number[], options: { unsent?: number; shortAfter?: number } = {}) {
  const reads: PageRequest[] = [];
  const listing: BoundedListing<number> = {
    read: async (page): Promise<Page<number>> => {
      reads.push(page);
      const start = page.cursor === undefined ? 0 : Number(page.cursor);
      // `shortAfter`: a store whose filter examined its bound of items answers fewer than asked, with a cursor.
      const end = Math.min(sizes.length, start + page.limit, options.shortAfter !== undefined && start < options.shortAfter ? options.shortAfter : Infinity);
      const items = Array.from({ length: end - start }, (_, k) => start + k);
      return end < sizes.length ? { items, nextCursor: String(end) } : { items };
    },
    serialize: (i) => JSON.stringify({ i, pad: 'p'.repeat(sizes[i]!) }),
    unsentBytes: () => options.unsent ?? 0,
  };
  return { listing, reads };
}

describe('readBoundedPage', () => {
  it('ends a page before the item that would pass the budget, reading that part again for the store’s own cursor', async () => {
    const { listing, reads } = listingOf(Array.from({ length: 50 }, () => 1_000));
    const page = JSON.parse(await readBoundedPage(listing, { limit: 1000 }, 10_000)) as { items: { i: number }[]; nextCursor?: string };
    expect(page.items.map((item) => item.i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(page.nextCursor).toBe('8');
    expect(reads).toEqual([{ limit: 100 }, { limit: 8 }]);
    const next = JSON.parse(await readBoundedPage(listing, { cursor: page.nextCursor!, limit: 1000 }, 10_000)) as { items: { i: number }[] };
    expect(next.items[0]!.i).toBe(8);
  });

  it('always holds one item, however large', async () => {
    const { listing } = listingOf([50_000, 10, 10]);
    const page = JSON.parse(await readBoundedPage(listing, { limit: 10 }, 1_000)) as { items: { i: number }[]; nextCursor?: string };
    expect(page.items.map((item) => item.i)).toEqual([0]);
    expect(page.nextCursor).toBe('1');
  });

  it('reads a large page in parts sized by what the store returned, bodies left out of the answer included', async () => {
    // 1,000 items of ~100 bytes sent, each with 64 KiB the store read and the answer leaves out.
    const { listing, reads } = listingOf(Array.from({ length: 1_000 }, () => 100), { unsent: 64 * 1024 });
    const page = JSON.parse(await readBoundedPage(listing, { limit: 1000 }, DEFAULT_MAX_PAGE_BYTES)) as { items: unknown[]; nextCursor?: string };
    expect(page.items).toHaveLength(1_000);
    expect(page.nextCursor).toBeUndefined();
    expect(reads[0]).toEqual({ limit: 100 });
    // About 8 MiB a part: 127 items of 64 KiB and a little.
    for (const read of reads.slice(1, -1)) expect(read.limit).toBeGreaterThanOrEqual(120);
    for (const read of reads) expect(read.limit).toBeLessThanOrEqual(127);
  });

  it('reads small items in two parts at most, and keeps a short part’s cursor', async () => {
    const { listing, reads } = listingOf(Array.from({ length: 1_000 }, () => 10));
    await readBoundedPage(listing, { limit: 1000 }, DEFAULT_MAX_PAGE_BYTES);
    expect(reads).toEqual([{ limit: 100 }, { cursor: '100', limit: 900 }]);

    const short = listingOf(Array.from({ length: 1_000 }, () => 10), { shortAfter: 30 });
    const page = JSON.parse(await readBoundedPage(short.listing, { limit: 1000 }, DEFAULT_MAX_PAGE_BYTES)) as { items: unknown[]; nextCursor?: string };
    expect(page.items).toHaveLength(30);
    expect(page.nextCursor).toBe('30');
  });
});
