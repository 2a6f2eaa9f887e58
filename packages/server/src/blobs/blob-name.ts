/**
 * The one rule for the two parts of a blob ref, `tenant/key`, shared by every blob store so that a ref is valid
 * in any of them: letters, digits, `.`, `_`, `-`, not starting with `.` (so no `.`, `..` or hidden temporary file),
 * 1 to 200 characters. No separator can appear, which rules out path traversal in a file store and a key that
 * leaves its tenant's part of a bucket or a key space.
 */
export const BLOB_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/** Throws the `TypeError` every blob store throws for a tenant id or key that is not a plain name. */
export function checkBlobName(field: 'tenantId' | 'key', value: string): void {
  if (!BLOB_NAME.test(value)) {
    throw new TypeError(
      `Expected \`${field}\` to be 1 to 200 letters, digits, '.', '_' or '-', not starting with '.'; got ${JSON.stringify(value)}.`,
    );
  }
}

/**
 * Splits a ref made by `put()` into its tenant id and key; throws a `TypeError` for anything else.
 *
 * @example
 * ```ts
 * parseBlobRef('default/0190f3c2-…'); // ['default', '0190f3c2-…']
 * ```
 */
export function parseBlobRef(ref: string): [tenantId: string, key: string] {
  const parts = ref.split('/');
  const [tenantId, key] = parts;
  if (parts.length !== 2 || tenantId === undefined || key === undefined || !BLOB_NAME.test(tenantId) || !BLOB_NAME.test(key)) {
    throw new TypeError(`Expected a blob ref of the form \`tenant/key\` made by put(), got ${JSON.stringify(ref)}.`);
  }
  return [tenantId, key];
}
