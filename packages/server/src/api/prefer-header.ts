/**
 * Whether a `Prefer` header (RFC 7240) asks for `return=minimal`: preferences are separated by commas, each may carry
 * parameters after a semicolon, and tokens ignore case. Fastify joins repeated headers with a comma, which this reads
 * the same way.
 */
export function prefersMinimal(prefer: string | string[] | undefined): boolean {
  if (prefer === undefined) return false;
  const text = Array.isArray(prefer) ? prefer.join(',') : prefer;
  // `return = "minimal"; x=y` -> `return=minimal` (BWS around "=", the value a token or a quoted string).
  return text.split(',').some((preference) => /^return\s*=\s*(?:minimal|"minimal")$/i.test((preference.split(';')[0] ?? '').trim()));
}
