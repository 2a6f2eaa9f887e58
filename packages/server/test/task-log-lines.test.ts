import { describe, expect, it } from 'vitest';
import { CompletionAbandonedError, FencedOutError, taskContext } from '../src/engine/engine-errors.js';
import { logEngineError } from '../src/service/task-log-lines.js';
import { capturedLogger as capture } from './captured-logger.js';
import { makeTask } from './fixtures/tasks.js';

// Every line about a task names its taskId, the attempt and its target (the origin, never the path or query).

const task = makeTask({ targetUrl: 'https://hooks.example.com/services/SECRETPATH?token=s3cr3t', targetKey: 'https://hooks.example.com', attemptNumber: 2 });

describe('engine failure lines', () => {
  it('fenced_out names the task, its attempt and its target', () => {
    const { lines, logger } = capture();
    logEngineError(logger, new FencedOutError(task.taskId, 7), taskContext('complete', task));
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, event: 'fenced_out', taskId: task.taskId, attempt: 3, target: 'https://hooks.example.com', fencingToken: 7 }),
    ]);
  });

  it('engine_error about a task names it at the top, with the operation in its context', () => {
    const { lines, logger } = capture();
    logEngineError(logger, new CompletionAbandonedError(task.taskId, 'the store kept failing'), taskContext('complete', task));
    expect(lines[0]).toMatchObject({ level: 50, event: 'engine_error', taskId: task.taskId, attempt: 3, target: 'https://hooks.example.com', context: { operation: 'complete', taskId: task.taskId } });
    expect(JSON.stringify(lines)).not.toContain('s3cr3t');
    expect(JSON.stringify(lines)).not.toContain('SECRETPATH');
  });

  it('engine_error about no task has no task fields', () => {
    const { lines, logger } = capture();
    logEngineError(logger, new Error('claim failed'), { operation: 'claim' });
    expect(lines[0]).toMatchObject({ event: 'engine_error', context: { operation: 'claim' } });
    expect(lines[0]).not.toHaveProperty('taskId');
  });
});
