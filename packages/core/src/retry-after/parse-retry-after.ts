/**
 * The longest delay a Retry-After value can ask for: 2^31 seconds (about 68 years), in ms. RFC 9111 §1.2.2
 * tells caches to treat a delta-seconds value they cannot represent as 2^31; doing the same here keeps a
 * hostile `Retry-After: 99999…` finite and exact. This is no limit on the wait: the caller decides how much of a
 * hint to honour (`planRetry`: never past `totalBudgetMs`, and in process, through `retry()`, never past the
 * schedule's `maxDelayMs`; a hint beyond gives up with `retry_after_beyond_budget` rather than being cut short).
 */
const MAX_RETRY_AFTER_MS = 2 ** 31 * 1000;

const DELAY_SECONDS = /^\d+$/;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;
const MONTH = `(${MONTHS.join('|')})`;
const DAY_NAME = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const DAY_NAME_LONG = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// The three grammars of RFC 9110 §5.6.7, matched exactly: HTTP-date is case sensitive and its spaces are
// single SP (asctime's extra SP before a one-digit day is part of its grammar). The day name is checked
// for spelling but not against the date: it is redundant, and senders that get it wrong exist.
/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** `Sunday, 06-Nov-94 08:49:37 GMT` (obsolete) */
const RFC850_DATE = new RegExp(`^${DAY_NAME_LONG}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
/** `Sun Nov  6 08:49:37 1994` (obsolete, ANSI C asctime) */
const ASCTIME_DATE = new RegExp(`^${DAY_NAME} ${MONTH} (\\d{2}| \\d) ${TIME} (\\d{4})$`);

interface DateParts {
  year: number;
  /** 0-based, as `Date` wants it. */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const monthIndex = (name: string | undefined): number => MONTHS.indexOf(name as (typeof MONTHS)[number]);
const int = (digits: string | undefined): number => Number.parseInt(digits ?? '', 10);

/** Epoch ms of the parts, or undefined when they name no real instant (Feb 30, 24:00:00, 12:60:00). */
function toEpochMs(parts: DateParts): number | undefined {
  const { year, month, day, hour, minute, second } = parts;
  // second 60 is legal: RFC 9110 allows a leap second, which `Date` cannot hold, so it counts as :59 + 1 s.
  if (month < 0 || hour > 23 || minute > 59 || second > 60) return undefined;
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999, which "0094" must not become.
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  return date.getTime() + ((hour * 60 + minute) * 60 + second) * 1000;
}

/**
 * RFC 9110 §5.6.7: a two-digit year that "appears to be more than 50 years in the future" means the most
 * recent past year with the same last two digits.
 */
function resolveTwoDigitYear(parts: Omit<DateParts, 'year'>, twoDigitYear: number, nowMs: number): number | undefined {
  const now = new Date(nowMs);
  const latest = now.getUTCFullYear() + 51;
  // The largest year ending in these digits that is at most 51 years ahead; one century back if too far.
  const year = latest - ((((latest - twoDigitYear) % 100) + 100) % 100);
  const horizon = new Date(nowMs);
  horizon.setUTCFullYear(now.getUTCFullYear() + 50);
  const ms = toEpochMs({ ...parts, year });
  if (ms !== undefined && ms <= horizon.getTime()) return ms;
  return toEpochMs({ ...parts, year: year - 100 });
}

const timeOf = (hour?: string, minute?: string, second?: string) => ({
  hour: int(hour),
  minute: int(minute),
  second: int(second),
});

function parseHttpDate(value: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m) {
    const [, day, month, year, hour, minute, second] = m;
    return toEpochMs({ year: int(year), month: monthIndex(month), day: int(day), ...timeOf(hour, minute, second) });
  }
  m = RFC850_DATE.exec(value);
  if (m) {
    const [, day, month, year, hour, minute, second] = m;
    const parts = { month: monthIndex(month), day: int(day), ...timeOf(hour, minute, second) };
    return resolveTwoDigitYear(parts, int(year), nowMs);
  }
  m = ASCTIME_DATE.exec(value);
  if (m) {
    const [, month, day, hour, minute, second, year] = m;
    // parseInt skips the leading SP of a one-digit day (" 6").
    return toEpochMs({ year: int(year), month: monthIndex(month), day: int(day), ...timeOf(hour, minute, second) });
  }
  return undefined;
}

/**
 * The delay in ms that a `Retry-After` header value asks for (RFC 9110 §10.2.3), or `undefined` when the
 * value is absent or malformed. Pure: "now" is an argument.
 *
 * - delay-seconds: `1*DIGIT` after trimming surrounding whitespace. Signs, decimals, units, empty values and
 *   any other junk give `undefined` (`"12abc"`, `"-1"`, `"1.5"`, `"+3"`, `""`).
 * - HTTP-date: IMF-fixdate, and the obsolete RFC 850 and asctime forms that recipients must accept.
 *   A date in the past (or now) gives `0`; a date that does not exist (Feb 30) gives `undefined`.
 *   RFC 850 two-digit years are resolved against `nowMs` as RFC 9110 §5.6.7 says. `Date.parse` is not
 *   used: it accepts strings like `"tomorrow 12"` or `"12abc"` differently on every engine.
 *
 * Both forms are capped at 2^31 seconds (in ms), so the result is always a finite, non-negative integer
 * (a date's delay is rounded up to the next whole ms). That is what the server asked for, not what to wait: see
 * `planRetry` for how much of it a retry honours.
 *
 * @param value - the header value; `null` and `undefined` (header absent) give `undefined`
 * @param nowMs - the current time in epoch ms, e.g. `clock.now()`
 * @throws RangeError when `nowMs` is not a finite number
 * @example
 * ```ts
 * parseRetryAfter('120', now); // 120000
 * parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', Date.parse('1994-11-06T08:49:07Z')); // 30000
 * parseRetryAfter('soon', now); // undefined
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (!Number.isFinite(nowMs)) throw new RangeError(`nowMs must be a finite number, got ${nowMs}`);
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (DELAY_SECONDS.test(trimmed)) {
    // Beyond ~300 digits Number() gives Infinity; min() turns that, too, into the cap.
    return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  }
  const at = parseHttpDate(trimmed, nowMs);
  if (at === undefined) return undefined;
  // ceil: a clock with sub-ms precision must not make the caller retry a fraction of a ms too early.
  return Math.min(Math.max(0, Math.ceil(at - nowMs)), MAX_RETRY_AFTER_MS);
}
