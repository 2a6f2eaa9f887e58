import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A child process of the demo and the URL it listens on. */
export interface RunningChild {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code (or null when killed by a signal). */
  exited: Promise<number | null>;
  /** The end of what it wrote to stderr (its last 4,000 characters). */
  stderrTail: () => string;
}

/**
 * Starts `node <script> ...args` and resolves once it prints its start line: a JSON line whose `event` is
 * `listening` (the gateway, the payment worker) or `start` (retryd), carrying `url`. Rejects if it exits first.
 */
export function startChild(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunningChild> {
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise<RunningChild>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { event?: string; url?: string };
      if ((entry.event === 'listening' || entry.event === 'start') && entry.url !== undefined) resolve({ url: entry.url, child, exited, stderrTail: () => stderr });
    });
    void exited.then((code) => reject(new Error(`${script} exited with ${code} before listening: ${stderr}`)));
  });
}

/** Sends `signal` to the child and resolves once it has exited. */
export async function stopChild(running: RunningChild, signal: NodeJS.Signals): Promise<void> {
  if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill(signal);
  await running.exited;
}

/**
 * Starts a child as {@link startChild} does, trying again (up to `attempts` times, a second apart) when it exits
 * before it listens: a process started while the database it needs is restarting stops at once, as a supervisor would
 * see it, and is started again.
 */
export async function startChildAgain(script: string, args: string[], env: NodeJS.ProcessEnv, attempts = 30): Promise<RunningChild> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startChild(script, args, env);
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
