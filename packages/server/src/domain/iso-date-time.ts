/** An ISO 8601 date-time with a time zone (`2025-03-01T12:00:00Z`, `…+01:00`), as times in requests are given. */
export const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

/** Days in `month` (1–12) of `year`, in the proleptic Gregorian calendar that `Date` uses. */
function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * The epoch ms of an ISO 8601 date-time with a time zone ({@link ISO_DATE_TIME}), or NaN when `text` is not one or
 * names no moment: a month past 12, a day past its month's last (`2024-02-30`, `2023-02-29`), an hour past 23, a
 * minute or second past 59, an offset past 23:59. `Date.parse` alone rolls `2024-02-30` over to 1 March and reads
 * `T24:00` as the next day, so a caller's typo would become another time.
 *
 * @example
 * ```ts
 * isoDateTimeMs('2024-02-29T12:00:00Z'); // 1709208000000
 * isoDateTimeMs('2024-02-30T12:00:00Z'); // NaN
 * ```
 */
export function isoDateTimeMs(text: string): number {
  const parts = ISO_DATE_TIME.exec(text);
  if (parts === null) return Number.NaN;
  // Absent seconds and the `Z` zone read as 0.
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = parts.slice(1).map((part) => Number(part ?? 0));
  const date = month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month);
  const time = hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 23 && offsetMinutes <= 59;
  return date && time ? Date.parse(text) : Number.NaN;
}
