import { isUtf8 } from 'node:buffer';
import { charsetOf, UTF8_CHARSETS } from '../domain/charset.js';
import { RetrydError } from '../domain/errors.js';

/** What a JSON request body's charset must be, for the 415 that refuses another. */
export const JSON_CHARSET_RULE = 'no charset parameter, or charset=utf-8 (JSON is UTF-8, RFC 8259 §8.1)';

/** What a JSON request body's bytes must be, for the 400 that refuses others. */
export const JSON_UTF8_RULE = 'UTF-8 text (RFC 8259 §8.1)';

/**
 * The text of a JSON request body, or the error that refuses it: `415 UNSUPPORTED_MEDIA_TYPE` for a declared charset
 * other than UTF-8 (`application/json; charset=utf-16`), `400 VALIDATION_FAILED` on `body` for bytes that are not
 * valid UTF-8. Decoding either as UTF-8 anyway would replace what it cannot read with U+FFFD and store, and send on,
 * other text than the caller's: a body is taken as the caller wrote it or not at all.
 *
 * @param contentType - the request's `Content-Type` header
 */
export function jsonBodyText(contentType: string | undefined, body: Buffer | string): string | RetrydError {
  const charset = charsetOf(contentType);
  if (charset !== undefined && !UTF8_CHARSETS.has(charset)) {
    const message = `content-type must have ${JSON_CHARSET_RULE}, got charset=${JSON.stringify(charset.slice(0, 40))}`;
    return new RetrydError('UNSUPPORTED_MEDIA_TYPE', message, [{ field: 'content-type', rule: JSON_CHARSET_RULE, message }]);
  }
  // Registered with parseAs: 'buffer', so text never arrives already decoded; a string is taken as it is.
  if (typeof body === 'string') return body;
  // simdutf behind isUtf8: a check at memory speed, before the decode that would hide a bad byte.
  if (!isUtf8(body)) return RetrydError.validation([{ field: 'body', rule: JSON_UTF8_RULE, message: `body must be ${JSON_UTF8_RULE}; its bytes are not valid UTF-8` }]);
  return body.toString('utf8');
}
