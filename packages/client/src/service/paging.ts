import type { Page, PageRequest } from './api-types.js';

/** The page size the iterators read with by default: 1,000, the most a page holds. */
export const ITERATOR_PAGE_SIZE = 1000;

/** Every item of a listing, page after page through the opaque `nextCursor`, each page of `pageSize` items. */
export async function* allItems<T>(listPage: (page: PageRequest) => Promise<Page<T>>, pageSize = ITERATOR_PAGE_SIZE): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const page = await listPage(cursor === undefined ? { limit: pageSize } : { cursor, limit: pageSize });
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}

/**
 * Every page of a bulk action (replay, cancel, delete), each sent with the previous answer's `nextCursor` until one
 * has none: yields each page's answer as it lands (for progress).
 */
export async function* allPages<A extends { nextCursor?: string }>(sendPage: (cursor: string | undefined) => Promise<A>): AsyncGenerator<A> {
  let cursor: string | undefined;
  do {
    const answer = await sendPage(cursor);
    yield answer;
    cursor = answer.nextCursor;
  } while (cursor !== undefined);
}
