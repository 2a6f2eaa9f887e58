import type { FastifyRequest } from 'fastify';
import type { TaskService } from '../../tasks/task-service.js';
import type { TargetControl } from '../../protection/target-control.js';
import type { TaskWaiters } from '../../tasks/task-waiters.js';

/** What every route module needs. */
export interface RouteDeps {
  taskService: TaskService;
  /** The tenant a request acts for. */
  tenantOf: (request: FastifyRequest) => string;
  /**
   * Admits `count` new pending tasks for the request's tenant (enqueue, batch, replay), or throws the 429 of its
   * most pending tasks. Absent: no such limit.
   */
  admitTasks?: ((request: FastifyRequest, count: number) => Promise<void>) | undefined;
  /** Per-target protection, to say why a due task waits (`waiting` on `GET /retry-tasks/{taskId}`). Absent: never said. */
  targetControl?: TargetControl | undefined;
  /** Requests waiting for tasks to end (`GET /retry-tasks/{taskId}?waitMs=`). Absent: `waitMs` answers at once. */
  waiters?: TaskWaiters | undefined;
  /** Most bytes of one page of a listing. Default `DEFAULT_MAX_PAGE_BYTES` (4 MiB). */
  maxPageBytes?: number | undefined;
}

/** The page a listing's query asks for. */
export interface PageQuery {
  cursor?: string;
  limit: number;
}

/** The `admitTasks` of a service with no limit of pending tasks: every task is admitted. */
export const admitEveryTask = async (): Promise<void> => {};

/** A page request without an absent cursor (the store's optional field must not be `undefined`). */
export function pageOf(query: PageQuery): { cursor?: string; limit: number } {
  return query.cursor === undefined ? { limit: query.limit } : { cursor: query.cursor, limit: query.limit };
}
