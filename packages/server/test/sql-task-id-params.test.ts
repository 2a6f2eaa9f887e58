import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hyphenatedUuid, taskIdKey, taskIdText, uuidBytes } from '../src/backends/sql/task-id-params.js';
import { checkedTaskId, isTaskId } from '../src/domain/task-id.js';
import { uuidv7 } from '../src/tasks/uuid-v7.js';

const ID = '019abd2e-5f3a-7c41-9e2b-4f0a1c2d3e4f';

/** Every form that is not a task id's: other spellings of a UUID, and text that is none. */
const NOT_TASK_IDS = [
  '',
  'not-a-uuid',
  ID.toUpperCase(),
  ID.replace('e', 'E'),
  ID.replaceAll('-', ''),
  `{${ID}}`,
  `${ID} `,
  ` ${ID}`.slice(0, 36),
  ID.replace('-', 'x'),
  `${ID.slice(0, 8)}5${ID.slice(9, 12)}-${ID.slice(13)}`,
  ID.replace('5', 'g'),
  ID.replace('5', 'é'),
  ID.replace('5', '\u0135'),
  ID.replace('5', '\u{1F600}').slice(0, 36),
];

describe('task ids', () => {
  it('takes a UUID as lower-case hex with hyphens, any version, and nothing else', () => {
    for (const id of [ID, randomUUID(), uuidv7(), '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']) {
      expect(isTaskId(id), id).toBe(true);
      expect(checkedTaskId(id, 'task_id')).toBe(id);
    }
    for (const id of NOT_TASK_IDS) {
      expect(isTaskId(id), JSON.stringify(id)).toBe(false);
      expect(() => checkedTaskId(id, 'task_id'), JSON.stringify(id)).toThrow(/^task_id: expected a UUID in lower-case hex with hyphens/);
    }
  });

  it('binds a task id as its 16 bytes, read back (as hex) to the same text, and in the same order', () => {
    expect(uuidBytes(ID, 'task_id')).toEqual(Buffer.from('019abd2e5f3a7c419e2b4f0a1c2d3e4f', 'hex'));
    const ids = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? randomUUID() : uuidv7()));
    for (const id of ids) {
      const bytes = uuidBytes(id, 'task_id');
      expect(bytes).toHaveLength(16);
      expect(taskIdKey(id)).toEqual(bytes);
      expect(hyphenatedUuid(bytes.toString('hex'))).toBe(id);
    }
    // Bytes compare as the text does: listings and cursors keep their order.
    const byText = [...ids].sort();
    const byBytes = [...ids].sort((a, b) => Buffer.compare(uuidBytes(a, 'task_id'), uuidBytes(b, 'task_id')));
    expect(byBytes).toEqual(byText);
  });

  it('refuses to write another form, naming the column, and binds NULL to look one up, which finds nothing', () => {
    for (const id of NOT_TASK_IDS) {
      expect(() => uuidBytes(id, 'attempts.task_id'), JSON.stringify(id)).toThrow(/^attempts\.task_id: expected a UUID/);
      expect(taskIdKey(id), JSON.stringify(id)).toBeNull();
      expect(taskIdText(id), JSON.stringify(id)).toBeNull();
    }
    expect(taskIdText(ID)).toBe(ID);
  });
});
