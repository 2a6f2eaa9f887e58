/**
 * `text` with each lone surrogate replaced by U+FFFD (ES2024's `String.prototype.toWellFormed`, in Node 20, which the
 * ES2023 lib does not declare). A string without lone surrogates is returned as it is.
 */
export function wellFormed(text: string): string {
  return (text as string & { toWellFormed(): string }).toWellFormed();
}
