import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../src/retry-after/parse-retry-after.js';

const CAP_MS = 2 ** 31 * 1000;
/** Sun, 06 Nov 1994 08:49:37 GMT, the example date of RFC 9110 §5.6.7. */
const RFC_EXAMPLE_MS = Date.UTC(1994, 10, 6, 8, 49, 37);
const THIRTY_SECONDS_BEFORE = RFC_EXAMPLE_MS - 30_000;

describe('parseRetryAfter: delay-seconds', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    ['1', 1_000],
    ['007', 7_000],
    ['  5  ', 5_000],
    ['\t7\t', 7_000],
    ['2147483647', 2_147_483_647_000],
  ])('%j is %d ms', (value, expected) => {
    expect(parseRetryAfter(value, 0)).toBe(expected);
  });

  it.each(['', '   ', '-1', '+3', '1.5', '1.', '.5', '12abc', 'abc', '1e3', '0x10', '1_000', '12 34', '１２', 'Infinity', 'NaN'])(
    '%j is not a delay',
    (value) => {
      expect(parseRetryAfter(value, 0)).toBeUndefined();
    },
  );

  it('an absent header is undefined', () => {
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter(null, 0)).toBeUndefined();
  });

  it('caps absurdly large values at 2^31 s instead of overflowing', () => {
    expect(parseRetryAfter('2147483648', 0)).toBe(CAP_MS);
    expect(parseRetryAfter('99999999999999999999', 0)).toBe(CAP_MS);
    // 400 digits: Number() of this is Infinity.
    expect(parseRetryAfter('9'.repeat(400), 0)).toBe(CAP_MS);
  });

  it('property: every run of digits up to the cap is read exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.nat(3), (seconds, zeros) => {
        expect(parseRetryAfter('0'.repeat(zeros) + String(seconds), 123)).toBe(seconds * 1000);
      }),
    );
  });
});

describe('parseRetryAfter: HTTP-date', () => {
  it('reads IMF-fixdate', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', THIRTY_SECONDS_BEFORE)).toBe(30_000);
  });

  it('reads the obsolete RFC 850 form', () => {
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', THIRTY_SECONDS_BEFORE)).toBe(30_000);
  });

  it('reads the obsolete asctime form, with a space-padded or two-digit day', () => {
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', THIRTY_SECONDS_BEFORE)).toBe(30_000);
    expect(parseRetryAfter('Sun Nov 06 08:49:37 1994', THIRTY_SECONDS_BEFORE)).toBe(30_000);
  });

  it('trims surrounding whitespace', () => {
    expect(parseRetryAfter('  Sun, 06 Nov 1994 08:49:37 GMT\t', THIRTY_SECONDS_BEFORE)).toBe(30_000);
  });

  it('a date in the past, or now, is 0', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', RFC_EXAMPLE_MS)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', RFC_EXAMPLE_MS + 86_400_000)).toBe(0);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', Date.UTC(2030, 0, 1))).toBe(0);
  });

  it('rounds a delay measured on a sub-millisecond clock up, never down', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', RFC_EXAMPLE_MS - 1000.25)).toBe(1001);
  });

  it('takes a four-digit year literally (year 94 is not 1994)', () => {
    expect(parseRetryAfter('Mon, 01 Jan 0094 00:00:00 GMT', Date.UTC(1990, 0, 1))).toBe(0);
  });

  it('caps a date far in the future', () => {
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', 0)).toBe(CAP_MS);
  });

  it('counts a leap second as the first second of the next minute', () => {
    const now = Date.UTC(2016, 11, 31, 23, 59, 0);
    expect(parseRetryAfter('Sat, 31 Dec 2016 23:59:60 GMT', now)).toBe(60_000);
  });

  it('does not check the redundant day name against the date', () => {
    expect(parseRetryAfter('Mon, 06 Nov 1994 08:49:37 GMT', THIRTY_SECONDS_BEFORE)).toBe(30_000);
  });

  describe('RFC 850 two-digit years (RFC 9110 §5.6.7)', () => {
    const now = Date.UTC(2090, 0, 1);

    it('a year up to 50 years ahead is in the future', () => {
      expect(parseRetryAfter('Saturday, 01-Jan-35 00:00:00 GMT', now)).toBe(Date.UTC(2135, 0, 1) - now);
      expect(parseRetryAfter('Saturday, 01-Jan-95 00:00:30 GMT', now)).toBe(Date.UTC(2095, 0, 1, 0, 0, 30) - now);
    });

    it('a year more than 50 years ahead is the most recent past year with those digits', () => {
      // 2141 is 51 years ahead, so "41" means 2041, which is past.
      expect(parseRetryAfter('Saturday, 01-Jan-41 00:00:00 GMT', now)).toBe(0);
      // 1 Feb 2140 is just over 50 years ahead of 1 Jan 2090: 2040 again.
      expect(parseRetryAfter('Saturday, 01-Feb-40 00:00:00 GMT', now)).toBe(0);
    });

    it('the same digits mean this century when "now" is early in it', () => {
      const early = Date.UTC(2026, 0, 1);
      expect(parseRetryAfter('Thursday, 01-Jan-26 00:00:30 GMT', early)).toBe(30_000);
      expect(parseRetryAfter('Thursday, 01-Jan-80 00:00:30 GMT', early)).toBe(0);
    });
  });

  it.each([
    ['lower-case names (HTTP-date is case sensitive)', 'sun, 06 nov 1994 08:49:37 gmt'],
    ['no zone', 'Sun, 06 Nov 1994 08:49:37'],
    ['a zone other than GMT', 'Sun, 06 Nov 1994 08:49:37 UTC'],
    ['a numeric offset', 'Sun, 06 Nov 1994 08:49:37 +0000'],
    ['a one-digit day in IMF-fixdate', 'Sun, 6 Nov 1994 08:49:37 GMT'],
    ['a two-digit year in IMF-fixdate', 'Sun, 06 Nov 94 08:49:37 GMT'],
    ['a four-digit year in RFC 850', 'Sunday, 06-Nov-1994 08:49:37 GMT'],
    ['a short day name in RFC 850', 'Sun, 06-Nov-94 08:49:37 GMT'],
    ['a one-digit day after one space in asctime', 'Sun Nov 6 08:49:37 1994'],
    ['a misspelt month', 'Sun, 06 Noe 1994 08:49:37 GMT'],
    ['a misspelt day name', 'Sunday, 06 Nov 1994 08:49:37 GMT'],
    ['30 February', 'Wed, 30 Feb 1994 08:49:37 GMT'],
    ['day 00', 'Sun, 00 Nov 1994 08:49:37 GMT'],
    ['hour 24', 'Sun, 06 Nov 1994 24:00:00 GMT'],
    ['minute 60', 'Sun, 06 Nov 1994 08:60:00 GMT'],
    ['second 61', 'Sun, 06 Nov 1994 08:49:61 GMT'],
    ['trailing junk', 'Sun, 06 Nov 1994 08:49:37 GMT junk'],
    ['ISO 8601', '1994-11-06T08:49:37Z'],
    ['a word Date.parse might guess at', 'tomorrow'],
    ['a bare date', 'Nov 6 1994'],
  ])('rejects %s', (_why, value) => {
    expect(parseRetryAfter(value, THIRTY_SECONDS_BEFORE)).toBeUndefined();
  });

  it('property: every IMF-fixdate that toUTCString writes reads back to its delay', () => {
    const dates = fc.date({ min: new Date(Date.UTC(1970, 0, 1)), max: new Date(Date.UTC(9999, 0, 1)), noInvalidDate: true });
    fc.assert(
      fc.property(dates, fc.integer({ min: -1e9, max: 1e9 }), (date, offset) => {
        const at = Math.floor(date.getTime() / 1000) * 1000;
        const now = at - offset;
        expect(parseRetryAfter(date.toUTCString(), now)).toBe(Math.min(Math.max(0, offset), CAP_MS));
      }),
    );
  });

  it('property: any string gives undefined or a finite, non-negative integer', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 4e12 }), (value, now) => {
        const result = parseRetryAfter(value, now);
        if (result !== undefined) {
          expect(Number.isSafeInteger(result)).toBe(true);
          expect(result).toBeGreaterThanOrEqual(0);
          expect(result).toBeLessThanOrEqual(CAP_MS);
        }
      }),
    );
  });
});

it('parseRetryAfter refuses a "now" that is not a finite number', () => {
  expect(() => parseRetryAfter('5', Number.NaN)).toThrow(new RangeError('nowMs must be a finite number, got NaN'));
});
