import type { FastifyInstance } from 'fastify';
import { registerDeadLetterRoutes } from './dead-letter-routes.js';
import { registerEnqueueRoutes } from './enqueue-routes.js';
import type { RouteDeps } from './route-deps.js';
import { registerGetTaskRoute } from './task-get-route.js';
import { registerCancelTaskRoute, registerReplayTaskRoute } from './task-lifecycle-routes.js';
import { registerAttemptListRoute, registerTaskListRoute } from './task-read-routes.js';

export { pageOf, type PageQuery, type RouteDeps } from './route-deps.js';
export { json, LOCATION_HEADER } from './route-responses.js';
export { POLICY_ID_FILTER, TARGET_KEY_FILTER, taskFilterOf } from './task-filters.js';
export { bulkResultsView } from './bulk-results-view.js';

/**
 * Tasks: enqueue (single and batch), read, list, cancel, attempts, replay, and dead letters. The order of the
 * registrations is the order of the paths and methods in the OpenAPI document.
 */
export function registerTaskRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerEnqueueRoutes(app, deps);
  registerTaskListRoute(app, deps);
  registerGetTaskRoute(app, deps);
  registerCancelTaskRoute(app, deps);
  registerAttemptListRoute(app, deps);
  registerReplayTaskRoute(app, deps);
  registerDeadLetterRoutes(app, deps);
}
