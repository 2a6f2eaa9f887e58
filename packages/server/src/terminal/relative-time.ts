/**
 * A time as people read it in a table, relative to `now`: `now` within a second, then `3 s ago` / `in 3 s`, `2 min`,
 * `5 h` (under two days) and `3 d`, each rounded to the nearest whole unit.
 *
 * @example
 * ```ts
 * relativeTime(now - 3_200, now);   // '3 s ago'
 * relativeTime(now + 150_000, now); // 'in 3 min'
 * ```
 */
export function relativeTime(at: number, now: number): string {
  const delta = at - now;
  const ms = Math.abs(delta);
  if (ms < 1_000) return 'now';
  const amount =
    ms < 59_500 ? `${Math.round(ms / 1_000)} s` : ms < 3_570_000 ? `${Math.round(ms / 60_000)} min` : ms < 172_800_000 ? `${Math.round(ms / 3_600_000)} h` : `${Math.round(ms / 86_400_000)} d`;
  return delta < 0 ? `${amount} ago` : `in ${amount}`;
}

/**
 * A rate per second for a table: one decimal from 1/s up (`192.4/s`, `50/s`), two significant digits below
 * (`0.25/s`), `0/s` for none.
 */
export function rateText(perSecond: number): string {
  if (perSecond === 0) return '0/s';
  const rounded = Math.abs(perSecond) < 1 ? Number(perSecond.toPrecision(2)) : Number(perSecond.toFixed(1));
  return `${rounded}/s`;
}
