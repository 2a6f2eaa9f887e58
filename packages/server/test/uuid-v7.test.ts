import { describe, expect, it } from 'vitest';
import { uuidv7 } from '../src/tasks/uuid-v7.js';

describe('uuidv7', () => {
  it('is an RFC 9562 version 7 UUID carrying the millisecond', () => {
    const id = uuidv7(0x0123_4567_89ab);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id.replace(/-/g, '').slice(0, 12)).toBe('0123456789ab');
  });

  it('ids made later sort later, also within one millisecond', () => {
    const ids = Array.from({ length: 10_000 }, () => uuidv7());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
