/**
 * A plain-text table for the terminal: a header row, a rule, then the rows; the first `textColumns` columns are
 * aligned left and the others right (they hold numbers).
 *
 * @example
 * ```ts
 * textTable(['clients', 'full'], [['10', '38.7']]);
 * // clients  full
 * // -------  ----
 * // 10       38.7
 * ```
 */
export function textTable(headers: readonly string[], rows: readonly (readonly string[])[], textColumns = 1): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i < textColumns ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** `1,234.5`: thousands separators and `digits` decimals. */
export function formatFixed(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `93.8%` */
export function formatPercent(share: number, digits = 1): string {
  return `${formatFixed(share * 100, digits)}%`;
}
