import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  IllegalTransitionError,
  TASK_TRANSITIONS,
  TERMINAL_STATUSES,
  LIVE_STATUSES,
  DEAD_LETTER_STATUSES,
  statusesAllowing,
  isLive,
  TaskEvent,
  TaskStatus,
  canTransition,
  isTerminal,
  transition,
} from '../src/lifecycle/index.js';

const STATUSES = Object.values(TaskStatus);
const EVENTS = Object.values(TaskEvent);

/** The legal moves as the design states them, written out independently of the table under test. */
const LEGAL: readonly (readonly [TaskStatus, TaskEvent, TaskStatus])[] = [
  ['PENDING', 'claim', 'IN_FLIGHT'],
  ['PENDING', 'cancel', 'CANCELLED'],
  ['PENDING', 'reschedule', 'PENDING'],
  ['IN_FLIGHT', 'succeed', 'SUCCEEDED'],
  ['IN_FLIGHT', 'retry', 'PENDING'],
  ['IN_FLIGHT', 'fail', 'FAILED'],
  ['IN_FLIGHT', 'exhaust', 'EXHAUSTED'],
  ['IN_FLIGHT', 'cancel', 'CANCELLED'],
  ['IN_FLIGHT', 'lease_expired', 'PENDING'],
  ['FAILED', 'replay', 'PENDING'],
  ['EXHAUSTED', 'replay', 'PENDING'],
];

const isLegal = (status: TaskStatus, event: TaskEvent) => LEGAL.some(([s, e]) => s === status && e === event);
const ILLEGAL = STATUSES.flatMap((status) =>
  EVENTS.filter((event) => !isLegal(status, event)).map((event) => [status, event] as const),
);

describe('TaskStatus and TaskEvent', () => {
  it('statuses are strings equal to their keys', () => {
    for (const [key, value] of Object.entries(TaskStatus)) expect(value).toBe(key);
    expect(STATUSES).toEqual(['PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED']);
  });

  it('events have their wire names', () => {
    expect(TaskEvent).toEqual({
      CLAIM: 'claim',
      SUCCEED: 'succeed',
      RETRY: 'retry',
      FAIL: 'fail',
      EXHAUST: 'exhaust',
      CANCEL: 'cancel',
      LEASE_EXPIRED: 'lease_expired',
      REPLAY: 'replay',
      RESCHEDULE: 'reschedule',
    });
  });
});

describe('legal transitions', () => {
  it.each(LEGAL)('%s --%s--> %s', (from, event, to) => {
    expect(transition(from, event)).toBe(to);
    expect(canTransition(from, event)).toBe(true);
  });

  it('the table holds exactly the legal moves, no more', () => {
    const entries = Object.entries(TASK_TRANSITIONS).flatMap(([from, row]) =>
      Object.entries(row).map(([event, to]) => [from, event, to]),
    );
    expect(entries).toHaveLength(LEGAL.length);
    expect(entries).toEqual(expect.arrayContaining(LEGAL.map((move) => [...move])));
  });

  it('SUCCEEDED and CANCELLED are final: no event leaves them', () => {
    expect(TASK_TRANSITIONS.SUCCEEDED).toEqual({});
    expect(TASK_TRANSITIONS.CANCELLED).toEqual({});
  });
});

describe('illegal transitions', () => {
  it('are every other (status, event) pair', () => {
    expect(ILLEGAL).toHaveLength(STATUSES.length * EVENTS.length - LEGAL.length);
  });

  it.each(ILLEGAL)('%s --%s--> throws IllegalTransitionError naming both', (status, event) => {
    expect(canTransition(status, event)).toBe(false);
    let thrown: unknown;
    try {
      transition(status, event);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(IllegalTransitionError);
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).toMatchObject({
      name: 'IllegalTransitionError',
      code: 'ILLEGAL_TRANSITION',
      status,
      event,
      message: `cannot apply event "${event}" to a task in status ${status}`,
    });
  });

  it('a status or event from untrusted data cannot reach Object.prototype', () => {
    const bogusEvents = ['constructor', 'toString', '__proto__', 'hasOwnProperty'] as unknown as TaskEvent[];
    for (const event of bogusEvents) {
      expect(() => transition('PENDING', event)).toThrow(IllegalTransitionError);
      expect(canTransition('IN_FLIGHT', event)).toBe(false);
    }
    const bogusStatuses = ['constructor', '__proto__', 'DONE', 'pending'] as unknown as TaskStatus[];
    for (const status of bogusStatuses) {
      expect(() => transition(status, 'claim')).toThrow(`cannot apply event "claim" to a task in status ${status}`);
      expect(canTransition(status, 'claim')).toBe(false);
    }
  });
});

describe('status sets', () => {
  it('live statuses are exactly the non-terminal ones, and isLive agrees', () => {
    expect([...LIVE_STATUSES]).toEqual(['PENDING', 'IN_FLIGHT']);
    expect(STATUSES.filter(isLive)).toEqual([...LIVE_STATUSES]);
    expect(STATUSES.filter((s) => !isTerminal(s))).toEqual([...LIVE_STATUSES]);
  });

  it('dead letters are the statuses a replay may start from', () => {
    expect([...DEAD_LETTER_STATUSES]).toEqual(['FAILED', 'EXHAUSTED']);
    expect(statusesAllowing('replay')).toEqual([...DEAD_LETTER_STATUSES]);
  });

  it('statusesAllowing reads the transition table', () => {
    expect(statusesAllowing('claim')).toEqual(['PENDING']);
    expect(statusesAllowing('cancel')).toEqual(['PENDING', 'IN_FLIGHT']);
    expect(statusesAllowing('reschedule')).toEqual(['PENDING']);
    for (const event of EVENTS) {
      expect(statusesAllowing(event)).toEqual(STATUSES.filter((s) => canTransition(s, event)));
    }
  });
});

describe('terminal statuses', () => {
  it('are SUCCEEDED, FAILED, EXHAUSTED and CANCELLED', () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual(['CANCELLED', 'EXHAUSTED', 'FAILED', 'SUCCEEDED']);
    expect(STATUSES.filter(isTerminal)).toEqual(['SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED']);
    expect(isTerminal('PENDING')).toBe(false);
    expect(isTerminal('IN_FLIGHT')).toBe(false);
  });

  it('no worker event (claim, outcome, lease expiry) applies to a terminal status; only replay does', () => {
    const workerEvents = EVENTS.filter((e) => e !== 'replay' && e !== 'cancel' && e !== 'reschedule');
    for (const status of TERMINAL_STATUSES) {
      for (const event of workerEvents) expect(canTransition(status, event)).toBe(false);
    }
  });
});

it('the table and the terminal list are frozen', () => {
  expect(Object.isFrozen(TASK_TRANSITIONS)).toBe(true);
  for (const status of STATUSES) expect(Object.isFrozen(TASK_TRANSITIONS[status])).toBe(true);
  expect(Object.isFrozen(TERMINAL_STATUSES)).toBe(true);
});

it('property: any sequence of events keeps a task in a known status, and final statuses absorb', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...EVENTS), { maxLength: 40 }), (events) => {
      let status: TaskStatus = 'PENDING';
      for (const event of events) {
        const legal = canTransition(status, event);
        if (!legal) {
          expect(() => transition(status, event)).toThrow(IllegalTransitionError);
          continue;
        }
        const next = transition(status, event);
        expect(STATUSES).toContain(next);
        expect(status === 'SUCCEEDED' || status === 'CANCELLED').toBe(false);
        // Only a worker holding the task (IN_FLIGHT) or an operator's replay moves it back to PENDING; a reschedule
        // leaves a PENDING task where it is.
        if (next === 'PENDING') expect(event === 'reschedule' ? ['PENDING'] : ['IN_FLIGHT', 'FAILED', 'EXHAUSTED']).toContain(status);
        status = next;
      }
    }),
  );
});
