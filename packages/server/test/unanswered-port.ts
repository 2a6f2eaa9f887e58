import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';

// A port on loopback that never answers a SYN, for tests of connect timeouts: nothing on 127.0.0.1 refuses slowly,
// but a listener whose accept queue is full has its new SYNs dropped by the kernel, so a connect to it ends only by
// timing out (as one to an address that does not answer would).

/** A port whose listen queue is full; `close()` ends the listener and the connections that filled it. */
export interface UnansweredPort {
  port: number;
  close(): void;
}

/**
 * Starts a child process that listens on 127.0.0.1 with a backlog of 1 and blocks its event loop before it accepts
 * anything, then opens connections to it until one no longer completes (each waited for up to a second).
 */
export async function unansweredPort(): Promise<UnansweredPort> {
  const script = `
    const server = require('node:net').createServer();
    server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
      require('node:fs').writeSync(1, server.address().port + '\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const sockets: Socket[] = [];
  const close = () => {
    for (const socket of sockets) socket.destroy();
    child.kill('SIGKILL');
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      child.once('exit', (code) => reject(new Error(`the listener exited with ${String(code)}`)));
    });
    for (let opened = 0; opened < 64; opened++) {
      const socket = connect({ port, host: '127.0.0.1' });
      sockets.push(socket);
      const connected = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 1_000);
        socket.once('connect', () => {
          clearTimeout(timer);
          resolve(true);
        });
        socket.once('error', () => {
          clearTimeout(timer);
          resolve(false);
        });
      });
      if (!connected) return { port, close };
    }
    throw new Error('the listen queue of the unanswered port never filled up');
  } catch (error) {
    close();
    throw error;
  }
}
