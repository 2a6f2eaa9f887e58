// The console's few shared pieces: loading data, polling, a confirmation dialog, and how times and numbers read.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/** What a load holds: its data once it arrived, the last error, and how to load again. */
export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  reload: () => void;
}

/**
 * Runs `load` now, again when `deps` change, and every `everyMs` while the page shows (the overview polls every 2 s).
 * A slow answer never overwrites a newer one.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], everyMs?: number): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    load().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
      },
      (failure: unknown) => {
        if (mine === generation.current) setError(failure instanceof Error ? failure : new Error(String(failure)));
      },
    );
  }, deps);
  useEffect(() => {
    run();
    if (everyMs === undefined) return () => generation.current++;
    const timer = setInterval(run, everyMs);
    return () => {
      clearInterval(timer);
      generation.current++;
    };
  }, [run, everyMs]);
  return { data, error, reload: run };
}

/** An error from the API, as a line the user can read; nothing when there is none. */
export function ErrorLine({ error }: { error: Error | undefined }) {
  if (error === undefined) return null;
  const code = error instanceof ApiError ? ` (${error.status} ${error.problem.code})` : '';
  return (
    <p class="error" role="alert">
      {error.message}
      {code}
    </p>
  );
}

/** A modal question (the browser's `<dialog>`: focus is kept inside, Escape cancels). */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element === null) return;
    if (props.open && !element.open) element.showModal();
    if (!props.open && element.open) element.close();
  }, [props.open]);
  return (
    <dialog
      ref={dialog}
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        // Escape: closed by the state, like the Cancel button, so the two cannot disagree.
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="primary" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/** The API's message about the field `name` or something inside it (`backoffByClass.http429.initialDelayMs`). */
export function messageFor(errors: Record<string, string>, name: string): string | undefined {
  for (const [field, message] of Object.entries(errors)) {
    if (field === name || field.startsWith(`${name}.`) || field.startsWith(`${name}[`)) return message;
  }
  return undefined;
}

/** An epoch-ms time as local date and time, or a dash. */
export function time(epochMs: number | null | undefined): string {
  if (epochMs === null || epochMs === undefined) return '–';
  return new Date(epochMs).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

/** A duration in ms as `850 ms`, `2.5 s`, `3.0 min`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** The page's main heading, which takes focus when the page changes (screen readers hear where they are). */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  );
}

/** A status as a badge whose colour says good, waiting or bad. */
/** A task's id as its row's header, linking to the task's page. */
export function TaskIdHeader({ taskId }: { taskId: string }) {
  return (
    <th scope="row">
      <a class="mono" href={`#/tasks/${encodeURIComponent(taskId)}`}>
        {taskId}
      </a>
    </th>
  );
}

export function StatusBadge({ status }: { status: string }) {
  const tone = /SUCCEEDED|CLOSED|succeeded/.test(status)
    ? 'good'
    : /FAILED|EXHAUSTED|OPEN|failed|exhausted/.test(status) && !/HALF/.test(status)
      ? 'bad'
      : 'wait';
  return <span class={`badge ${tone}`}>{status}</span>;
}

/** A filter in words, for a confirmation: `status PENDING, targetKey https://…` (the fields set). */
export function describeFilter(filter: Record<string, string>): string {
  return Object.entries(filter)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
}

/** What a bulk action (replay, cancel) is doing or did: its progress line, then one line per failure. */
export function ActionReport({ progress, errors }: { progress: string | undefined; errors: Error[] }) {
  return (
    <>
      {progress !== undefined && (
        <p role="status" class="hint">
          {progress}
        </p>
      )}
      {errors.map((error, i) => (
        <ErrorLine key={i} error={error} />
      ))}
    </>
  );
}
