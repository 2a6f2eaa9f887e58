/**
 * A random id of 128 bits: `crypto.randomUUID()` where it exists, else 32 hex characters from
 * `crypto.getRandomValues`, which browsers also offer outside secure contexts (a page on plain http, where
 * `randomUUID` is missing).
 */
export function randomId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
