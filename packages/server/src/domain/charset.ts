/** The `charset` values that name UTF-8, lower case: what retryd reads in a request and sends as a task's body. */
export const UTF8_CHARSETS: ReadonlySet<string> = new Set(['utf-8', 'utf8']);

const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;

/**
 * The `charset` parameter of a `Content-Type` value, lower case and unquoted; undefined when it has none.
 *
 * @example
 * ```ts
 * charsetOf('application/json; charset="UTF-16"'); // 'utf-16'
 * charsetOf('application/json'); // undefined
 * ```
 */
export function charsetOf(contentType: string | undefined): string | undefined {
  const match = contentType === undefined ? null : CHARSET.exec(contentType);
  return match === null ? undefined : (match[1] ?? match[2] ?? '').toLowerCase();
}
