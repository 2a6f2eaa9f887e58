import { describe, expect, it } from 'vitest';
import { isoDateTimeMs } from '../src/domain/iso-date-time.js';
import { parseRescheduleBody } from '../src/tasks/reschedule.js';
import { parseFinishedBefore } from '../src/tasks/finished-task-deletion.js';

// One reading of a date-time for notBefore, a reschedule's nextAttemptAt and finishedBefore: a moment the calendar has.

describe('isoDateTimeMs', () => {
  it.each([
    ['2024-02-29T12:00:00Z', Date.UTC(2024, 1, 29, 12)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['2030-12-31T23:59:59.999-12:00', Date.UTC(2031, 0, 1, 11, 59, 59, 999)],
    ['2030-04-30T08:30+05:30', Date.UTC(2030, 3, 30, 3)],
  ])('reads %s', (text, ms) => {
    expect(isoDateTimeMs(text)).toBe(ms);
  });

  it.each([
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2030-04-31T00:00:00Z',
    '2030-13-01T00:00:00Z',
    '2030-00-10T00:00:00Z',
    '2030-01-00T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '2030-01-01T23:60:00Z',
    '2030-01-01T23:59:60Z',
    '2030-01-01T10:00:00+24:00',
    '2030-01-01T10:00:00+05:60',
    '2030-01-01T10:00:00',
    '2030-01-01',
  ])('names no moment in %s', (text) => {
    expect(isoDateTimeMs(text)).toBeNaN();
  });

  it('refuses 30 February in a reschedule and in finishedBefore, naming the field', () => {
    expect(() => parseRescheduleBody({ nextAttemptAt: '2031-02-30T09:00:00Z' })).toThrow('nextAttemptAt must be epoch milliseconds');
    expect(() => parseFinishedBefore('2024-02-30T00:00:00Z')).toThrow('finishedBefore must be epoch milliseconds');
    expect(parseFinishedBefore('2024-02-29T00:00:00Z')).toBe(Date.UTC(2024, 1, 29));
  });
});
