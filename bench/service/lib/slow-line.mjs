// The line of ../downstream.mjs's slow mode (W7 e): a server that serves `concurrency` requests at once, each for
// `latencyMs`, and keeps the rest waiting, first come first served, so that its latency grows with the requests in
// flight beyond `concurrency`.

/**
 * A line of `concurrency` slots, each held `latencyMs` per request. `enter(res, write, i)` serves the response `res`
 * (request `i` of the caller's count): `write()` sends its answer once its slot's time is up. A slot stays taken until
 * then even when the client gave up meanwhile (the server does not know); a request given up while waiting leaves the
 * line. The hooks say when request `i`'s service began (`began(i)`), when it was answered (`answered(i)`), that its
 * client gave up before its answer (`gaveUp(i)`), and how many requests the line holds after one entered
 * (`held(n)`, serving and waiting).
 *
 * @example
 * const enter = slowLine({ concurrency: 200, latencyMs: 200 }, { began, answered, gaveUp, held });
 * enter(res, () => res.writeHead(200).end('{"ok":true}'), 0);
 */
export function slowLine({ concurrency, latencyMs }, { began, answered, gaveUp, held }) {
  if (!(Number.isInteger(concurrency) && concurrency > 0)) throw new Error(`concurrency must be a positive integer, got ${concurrency}`);
  if (!(latencyMs >= 0)) throw new Error(`latencyMs must be ≥ 0, got ${latencyMs}`);
  let serving = 0;
  let waiting = 0;
  /** Requests waiting, oldest at `head`: { res, write, i, state: 'waiting' | 'serving' | 'gone' }. */
  let line = [];
  let head = 0;
  const leave = (entry) => {
    entry.state = 'gone';
    waiting -= 1;
  };
  const begin = (entry) => {
    entry.state = 'serving';
    serving += 1;
    began(entry.i);
    setTimeout(() => {
      serving -= 1;
      if (!entry.res.destroyed) {
        entry.write();
        answered(entry.i);
      }
      while (serving < concurrency && head < line.length) {
        const next = line[head];
        line[head++] = undefined;
        if (next.state !== 'waiting') continue;
        if (next.res.destroyed) leave(next);
        else {
          waiting -= 1;
          begin(next);
        }
      }
      if (head === line.length) {
        line = [];
        head = 0;
      }
    }, latencyMs);
  };
  return (res, write, i) => {
    const entry = { res, write, i, state: 'waiting' };
    res.once('close', () => {
      if (res.writableFinished) return;
      gaveUp(i);
      if (entry.state === 'waiting') leave(entry);
    });
    if (serving < concurrency) begin(entry);
    else {
      waiting += 1;
      line.push(entry);
    }
    held(serving + waiting);
  };
}
