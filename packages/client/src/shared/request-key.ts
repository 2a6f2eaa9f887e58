import { deriveIdempotencyKey, type IdempotencyKeyInput } from '@retryd/core';
import { randomId } from './random-id.js';

/**
 * The `Idempotency-Key` for a request that came without one, made once per call: derived from the method, URL and
 * body (`deriveIdempotencyKey`: the same request always gets the same key) where that can be done, else a random
 * UUID, which still makes every attempt of the call one request to the server. The fallback covers browsers (no
 * `node:crypto`), relative URLs and bodies without stable bytes (`FormData` in axios).
 */
export function requestKey(input: IdempotencyKeyInput | undefined): string {
  if (input !== undefined) {
    try {
      return deriveIdempotencyKey(input);
    } catch {
      // Not derivable here: a key per call is what retries need.
    }
  }
  return randomId();
}
