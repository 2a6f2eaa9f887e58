import { deriveIdempotencyKey } from '@retryd/core';

/**
 * The idempotency key of a call handed to retryd that came without one: derived from its method, URL and body, never
 * random, so that the same call made twice (a double submit, the caller's own retry of a request that timed out)
 * makes one task, and a call spooled and forwarded later still finds the task an earlier forward made.
 *
 * Where `node:crypto` is (Node, Deno, Bun) it is core's `deriveIdempotencyKey`: 32 hex characters of SHA-256 over the
 * upper-case method, the normalised URL (query sorted, fragment and trailing slashes dropped) and the body, one per
 * line. Elsewhere (a browser, an edge runtime) it is the same SHA-256 by WebCrypto over the URL as the platform writes
 * it (made absolute against the page, fragment dropped), so two spellings of one URL may get two keys there.
 *
 * @throws TypeError naming `method` or `url` when one breaks its rule; Error where neither `node:crypto` nor WebCrypto
 *   is available (a page served over plain http): give the call an `Idempotency-Key` header of its own
 */
export async function handoffKey(method: string, url: string, body: string | undefined): Promise<string> {
  try {
    return deriveIdempotencyKey({ method, url, ...(body === undefined ? {} : { body }) });
  } catch (error) {
    // A TypeError names a bad method, URL or body; anything else says node:crypto is missing here.
    if (error instanceof TypeError) throw error;
  }
  const subtle = (globalThis.crypto as Partial<typeof globalThis.crypto> | undefined)?.subtle;
  if (subtle === undefined) {
    throw new Error('a call handed to retryd without an Idempotency-Key needs node:crypto or WebCrypto (a secure context) to derive one: send the header');
  }
  const absolute = new URL(url, (globalThis as { location?: { href: string } }).location?.href);
  absolute.hash = '';
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(`${method.toUpperCase()}\n${absolute.href}\n${body ?? ''}`));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0'))
    .join('')
    .slice(0, 32);
}
