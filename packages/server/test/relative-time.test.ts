import { describe, expect, it } from 'vitest';
import { rateText, relativeTime } from '../src/terminal/relative-time.js';

describe('relativeTime', () => {
  const now = Date.UTC(2026, 0, 1);
  it.each([
    [0, 'now'],
    [-999, 'now'],
    [-3_200, '3 s ago'],
    [3_200, 'in 3 s'],
    [-59_000, '59 s ago'],
    [-59_600, '1 min ago'],
    [150_000, 'in 3 min'],
    [-3_600_000, '1 h ago'],
    [47 * 3_600_000, 'in 47 h'],
    [-3 * 86_400_000, '3 d ago'],
  ])('%d ms from now reads %s', (delta, text) => {
    expect(relativeTime(now + delta, now)).toBe(text);
  });
});

describe('rateText', () => {
  it.each([
    [192.4444, '192.4/s'],
    [50, '50/s'],
    [1, '1/s'],
    [0.2549, '0.25/s'],
    [0.004, '0.004/s'],
    [0, '0/s'],
  ])('%d reads %s', (rate, text) => {
    expect(rateText(rate)).toBe(text);
  });
});
