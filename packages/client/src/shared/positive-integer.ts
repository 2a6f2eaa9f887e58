/**
 * `value` when it is an integer >= 1.
 * @throws RangeError naming `field` otherwise
 */
export function positiveInteger(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${field} must be an integer >= 1, got ${String(value)}`);
  return value;
}
