import { generatedModule, taskLiteral, type GeneratedFile, type PlacedField } from '../codegen/task-literal.js';

// The source of the API's task views (generated/task-views.ts): the fields with an `api` entry, in row order.

/** How the fields that may hold secrets are shown (see views.ts `TaskView`); every other field is shown as it is. */
const SHOWN: Partial<Record<string, string>> = {
  headers: 'redactHeaders(t.headers)',
  body: 'shownBody(t)',
  targetUrl: 'redactUrlQuery(t.targetUrl)',
  callback: 'shownCallback(t.callback)',
};

const shown = (field: PlacedField) => SHOWN[field.name] ?? `t.${field.name}`;

/** The API's task views: `toTaskView` and `toTaskSummaryView` (without the body). */
export function viewMapperFile(): GeneratedFile {
  return generatedModule(
    'api/generated/task-views.ts',
    [
      "import type { RetryTask } from '../../domain/task.js';",
      "import { redactHeaders, redactUrlQuery } from '../../secrets/redaction.js';",
      "import { shownBody, shownCallback } from '../shown-values.js';",
      "import type { TaskSummaryView, TaskView } from '../views.js';",
    ],
    [
      `/** The API view of a task, secrets redacted: see views.ts. */
export function toTaskView(t: RetryTask): TaskView {
  return ${taskLiteral(shown, (field) => field.api !== undefined)};
}`,
      `/** The listing view of a task (no body), secrets redacted: see views.ts. */
export function toTaskSummaryView(t: RetryTask): TaskSummaryView {
  return ${taskLiteral(shown, (field) => field.api !== undefined && field.name !== 'body')};
}`,
    ],
  );
}
