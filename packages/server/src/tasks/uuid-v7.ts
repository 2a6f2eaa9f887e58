import { randomFillSync } from 'node:crypto';

/**
 * Random bytes drawn ahead, 8 KiB at a time (as Node's own `randomUUID` does): one call into the CSPRNG per 512 ids
 * instead of one per id, which was a visible share of the enqueue path.
 */
const POOL = Buffer.alloc(8192);
let poolOffset = POOL.length;

function takeRandom(bytes: Buffer, from: number, count: number): void {
  if (poolOffset + count > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  POOL.copy(bytes, from, poolOffset, poolOffset + count);
  poolOffset += count;
}

/** The id being built: reused, since only its hex text leaves `uuidv7`. */
const scratch = Buffer.alloc(16);

/**
 * Its text being built, hyphens in place: read out as one flat string. The hex text cut into five slices and joined
 * made a string of six parts, which every later reader (the task id check's regular expression, the insert's JSON)
 * first copied into one: together more than making the id.
 */
const text = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** Where each of the 16 bytes' two digits go in the text (the hyphens at 8, 13, 18 and 23 skipped). */
const DIGITS_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

let lastMs = 0;
let sequence = 0;

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits, so ids made later sort later.
 * Task ids are the key of every task and attempt index; time-ordered ids keep the pages a batch of claims or
 * completions touches together, where random (v4) ids scatter each write across the whole index.
 * Within one millisecond a 12-bit counter (RFC 9562 §6.2, method 1) keeps ids from one process increasing.
 *
 * @example
 * ```ts
 * uuidv7(); // '019abd2e-5f3a-7c41-9e2b-4f0a1c2d3e4f'
 * ```
 */
export function uuidv7(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    takeRandom(scratch, 6, 2);
    sequence = scratch.readUInt16BE(6) & 0x7ff;
  } else {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1; // 4,096 ids in one millisecond: borrow the next one rather than repeat.
  }
  const bytes = scratch;
  takeRandom(bytes, 8, 8);
  const ms = lastMs;
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff;
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff;
  bytes[2] = (ms >>> 24) & 0xff;
  bytes[3] = (ms >>> 16) & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | ((sequence >>> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  for (let i = 0; i < 16; i++) {
    const byte = bytes[i] as number;
    const at = DIGITS_AT[i] as number;
    text[at] = HEX_DIGITS[byte >> 4] as number;
    text[at + 1] = HEX_DIGITS[byte & 0x0f] as number;
  }
  return text.toString('latin1');
}
