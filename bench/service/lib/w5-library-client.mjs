// Starts ./w5-library-process.mjs (W5's tenants variant: one build's library, in its own process) and drives it
// over IPC: `call(cmd, args)` resolves with the command's result (see that file for the commands).

import { fork } from 'node:child_process';
import { join } from 'node:path';

/** The library process for the build whose dist/ is `dist`. */
export async function libraryProcess(dist) {
  const child = fork(join(import.meta.dirname, 'w5-library-process.mjs'), [dist], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map();
  let nextId = 1;
  const exited = new Promise((res) => child.once('exit', res));
  child.on('message', (/** @type {any} */ m) => {
    if (m.id === undefined) return;
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error !== undefined) p?.reject(new Error(m.error));
    else p?.resolve(m.result);
  });
  void exited.then((code) => {
    for (const p of pending.values()) p.reject(new Error(`library process exited with ${code}`));
    pending.clear();
  });
  await new Promise((res, rej) => {
    child.once('message', (/** @type {any} */ m) => (m.event === 'ready' ? res(undefined) : rej(new Error(`unexpected ${JSON.stringify(m)}`))));
    void exited.then((code) => rej(new Error(`library process exited with ${code} before it was ready`)));
  });
  const call = (cmd, a = {}) =>
    new Promise((res, rej) => {
      const id = nextId++;
      pending.set(id, { resolve: res, reject: rej });
      child.send({ id, cmd, ...a });
    });
  return {
    call,
    async close() {
      if (child.exitCode !== null) return;
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await call('close').catch(() => undefined);
      await exited;
      clearTimeout(killer);
    },
  };
}
