// The request hash (codec `hex`, see domain/task-fields.ts) is SHA-256 as 64 lower-case hex characters in the domain
// and its 32 bytes in the SQL stores. The bytes read back as lower-case hex, so only lower-case hex text survives the
// round trip unchanged: anything else is refused at the write, where a silent change would make the idempotency
// compare (same key, same request) tell a replay for a conflict. Buffer.from(text, 'hex') alone would not refuse it:
// it stops at the first character that is not hex.
const LOWER_HEX = /^(?:[0-9a-f]{2})+$/;

/**
 * `hex` as the exact lower-case hex text that its bytes read back as.
 *
 * @param column - the column being written, for the error
 * @throws Error naming the column when `hex` is not an even number of lower-case hex digits
 */
export function checkedHex(hex: string, column: string): string {
  if (!LOWER_HEX.test(hex)) throw new Error(`${column}: expected lower-case hex digits in pairs, got ${JSON.stringify(hex)}.`);
  return hex;
}

/**
 * The bytes of lower-case hex text, as SQLite stores them (a BLOB).
 *
 * @example
 * ```ts
 * hexBytes('00ff', 'request_hash'); // <Buffer 00 ff>
 * ```
 * @throws Error naming the column when `hex` is not an even number of lower-case hex digits
 */
export function hexBytes(hex: string, column: string): Buffer {
  return Buffer.from(checkedHex(hex, column), 'hex');
}
