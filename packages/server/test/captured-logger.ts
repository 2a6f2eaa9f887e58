import { Writable } from 'node:stream';
import { createLogger } from '../src/service/logger.js';

/** A service logger whose JSON lines the test reads, parsed, in `lines`. */
export function capturedLogger(level = 'info'): { lines: Record<string, unknown>[]; logger: ReturnType<typeof createLogger> } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger(level, sink) };
}

/** A service logger that writes nowhere. */
export const quietLogger = () => createLogger('info', new Writable({ write: (_chunk, _encoding, done) => done() }));
