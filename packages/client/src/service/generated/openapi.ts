// Generated from the retryd service's OpenAPI document by packages/server/scripts/generate-client-types.mjs
// (openapi-typescript). Do not edit: run `npm run generate:client-types -w packages/server` after changing a route.
export type paths = {
    "/retry-tasks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List tasks, newest first */
        get: operations["listTasks"];
        put?: never;
        /**
         * Enqueue a task
         * @description Idempotent by idempotencyKey: the same key with the same request answers 200 with the existing task and `Idempotent-Replayed: true`; with a different request, 422.
         */
        post: operations["enqueueTask"];
        /**
         * Delete one page of finished tasks by hand (a tenant admin)
         * @description Lists a page of the tenant's tasks in the finished statuses asked for (newest first) and deletes those that ended before finishedBefore, each with its attempts, its idempotency key (free for a new task from then on) and its body, as retention does. A live task (PENDING, IN_FLIGHT) is never deleted, nor one replayed after it was listed. A page may delete fewer than limit tasks, even none: repeat with nextCursor until there is none.
         */
        delete: operations["deleteTasks"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-tasks/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Enqueue up to 1,000 tasks in one transaction
         * @description One result per task, in order; an invalid entry gets its own problem and the others are still enqueued.
         */
        post: operations["enqueueTasks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-tasks/{taskId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a task: status, attempts made, next attempt, last error, dead-letter reason, why a due task waits
         * @description A PENDING task whose next attempt is due also carries `waiting`: why it is not running (its target held by the breaker or a Retry-After until a time, probing, paced, at its in-flight limit, or queued for a worker). With `waitMs` (long polling, at most 30000 ms), a task that has not ended is answered when it ends or when the wait passes, whichever comes first: read its `status` to tell which. Waiting costs the service a connection and no store read per waiter per millisecond (a task ended elsewhere is noticed within a second).
         */
        get: operations["getTask"];
        put?: never;
        post?: never;
        /**
         * Cancel a task
         * @description PENDING: cancelled (200). IN_FLIGHT: cancelled when its attempt ends and never retried (202). Final: 409.
         */
        delete: operations["cancelTask"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-tasks/{taskId}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A task's attempt log, oldest first */
        get: operations["listAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-tasks/{taskId}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Re-drive a FAILED or EXHAUSTED task
         * @description Same idempotency key, a fresh attempt budget, history kept. A task already running again is returned as is, so replaying twice runs it once. SUCCEEDED and CANCELLED: 409.
         */
        post: operations["replayTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/dead-letters": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** FAILED and EXHAUSTED tasks with their deadLetterReason, newest first */
        get: operations["listDeadLetters"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/dead-letters/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Re-drive one page of the dead letters matching a filter
         * @description Each listed task is replayed as POST /retry-tasks/{taskId}/replay would (same idempotency key, a fresh attempt budget), with one result each. Replayed tasks leave the dead letters: repeat with nextCursor until there is none to replay every task that matched, each once. A task that changed meanwhile gets its own problem; the others go on.
         */
        post: operations["replayDeadLetters"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-tasks/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel one page of the live tasks matching a filter
         * @description Each listed task is cancelled as DELETE /retry-tasks/{taskId} would: a PENDING one at once, an IN_FLIGHT one when its attempt ends (never retried), with one result each. Repeat with nextCursor until there is none to cancel every task that matched. A task that ended meanwhile gets its own problem (409); the others go on.
         */
        post: operations["cancelTasks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-tasks/{taskId}/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a PENDING task now
         * @description Makes the task due now (a task already due keeps its place). Only a PENDING task: IN_FLIGHT answers 409 TASK_RUNNING (its attempt decides what comes next), a finished one 409 TASK_NOT_PENDING. The attempt count and the time budget stay as they were: no attempt is spent, none is given back. The task becomes due; its target's protections still apply (an open breaker, a Retry-After, a rate or in-flight limit keep it waiting, and `waiting` in the answer says why).
         */
        post: operations["runTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-tasks/{taskId}/reschedule": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Make a PENDING task due at a given time
         * @description Moves the task's next attempt to nextAttemptAt, earlier or later; a time already past means now. Only a PENDING task: IN_FLIGHT answers 409 TASK_RUNNING (its attempt decides what comes next), a finished one 409 TASK_NOT_PENDING. The attempt count and the time budget stay as they were: no attempt is spent, none is given back. The task becomes due; its target's protections still apply (an open breaker, a Retry-After, a rate or in-flight limit keep it waiting, and `waiting` in the answer says why).
         */
        post: operations["rescheduleTask"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-policies": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List registered policies */
        get: operations["listPolicies"];
        put?: never;
        /**
         * Register a named policy
         * @description Idempotent by policyId: the same definition again answers 200; a different one, 409.
         */
        post: operations["createPolicy"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-policies/{policyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a registered policy */
        get: operations["getPolicy"];
        /**
         * Change a registered policy for future scheduling decisions
         * @description Only an existing policy (404 otherwise; register one with POST). The body may leave policyId out.
         */
        put: operations["replacePolicy"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retention": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** How long the tenant's finished tasks are kept */
        get: operations["getRetention"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/retry-policies/{policyId}/retention": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** How long a registered policy's finished tasks are kept */
        get: operations["getPolicyRetention"];
        /**
         * Set a registered policy's own retention
         * @description Replaces the policy's own periods (each one left out is inherited from the tenant, or the service). Tasks that end from then on are kept that long; a task already ended keeps its expiresAt.
         */
        put: operations["setPolicyRetention"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/targets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List targets with their breaker, limits, allowed rate, calls in flight and waiting tasks
         * @description Every target the tenant's tasks named, held or configured, in targetKey order (byte order).
         */
        get: operations["listTargets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/targets/{targetKey}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a target
         * @description 404 for a target the tenant never named, held or configured.
         */
        get: operations["getTarget"];
        /**
         * Change a target's protection settings
         * @description A partial settings object: the fields given replace the current ones (the service defaults until the target has its own), the rest keep their value. Limits reach the claims of every instance at once. A target not seen before gets its settings (200 as well).
         */
        put: operations["putTargetSettings"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/targets/{targetKey}/breaker": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Open, close or reset a target's circuit breaker by hand
         * @description open: holds the target for durationMs (by default its maxOpenDurationMs; at most 7 days), then probes, as after any opening; close: closed at once, every hold of the target ended (a Retry-After hold too), its held tasks due again; reset: as close, and its failure counts and re-open backoff cleared.
         */
        post: operations["setTargetBreaker"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/targets/{targetKey}/release": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * End a target's holds now
         * @description Ends the target's holds at once, on every instance's claims: a Retry-After hold (whichever instance made it) and any other, except an open breaker's, which holds it until its open period ends (its breaker's close ends that too). Its held tasks are due again. A target not held is left as it is.
         */
        post: operations["releaseTarget"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List this tenant's API keys, revoked ones included */
        get: operations["listApiKeys"];
        put?: never;
        /**
         * Create an API key for this tenant
         * @description The answer holds the key itself (`key`); it is stored only as a hash and can never be shown again.
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api-keys/{keyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an API key
         * @description For good: at once on this instance, within 5 s on the others. Revoking a revoked key answers it as it is.
         */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process answers */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: the store answers a ping */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The web console's overview numbers: the /metrics counters as JSON
         * @description Totals since the service started (attempts by outcome, dead letters, schedule lag count and sum) and the tasks in each status now, every tenant: it needs an admin key of the default tenant, as /metrics does.
         */
        get: operations["getConsoleStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/console/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The web console's charts: this instance's last hour of attempts, breakers and allowed rates
         * @description Kept in memory by each instance (another instance of the same deployment keeps its own; a restart starts it again): every 10 s the attempts per second by outcome and each known target's breaker and allowed rate, for an hour. Every tenant: it needs an admin key of the default tenant, as /metrics does.
         */
        get: operations["getConsoleHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
};
export type webhooks = Record<string, never>;
export type components = {
    schemas: {
        /** @description RFC 9457 problem details (application/problem+json). */
        Problem: {
            type: string;
            title: string;
            status: number;
            detail: string;
            /** @description Stable error code, e.g. VALIDATION_FAILED. */
            code: string;
            instance?: string;
            errors?: {
                field: string;
                rule: string;
                message: string;
            }[];
        };
        /** @description A retry policy (the @retryd/core shape). */
        RetryPolicy: {
            /** @description Attempts in all, the first included. */
            maxAttempts: number;
            /** @enum {string} */
            backoffType: "EXPONENTIAL" | "LINEAR" | "FIXED";
            /** @description Delay before the first retry. */
            initialDelayMs: number;
            /** @description Growth factor of EXPONENTIAL backoff. */
            multiplier: number;
            /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
            maxDelayMs: number;
            /** @enum {string} */
            jitterType: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
            /** @description Budget of a task's run, from its creation (or replay): time queued, held and waiting counts too. */
            totalBudgetMs?: number;
            /** @description Headroom kept in the budget for a call; < totalBudgetMs when both are given. */
            estimatedCallMs?: number;
            /** @description The statuses worth retrying. For http and https targets, HTTP statuses instead of the default 408, 425, 429, 500, 502, 503, 504; never a 2xx (a success). For grpc and grpcs targets, gRPC status code names instead of the default UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED; never OK. One kind per list; a task is refused at enqueue when its policy names the other kind than its target's. */
            retryableStatusCodes?: (number | ("CANCELLED" | "UNKNOWN" | "INVALID_ARGUMENT" | "DEADLINE_EXCEEDED" | "NOT_FOUND" | "ALREADY_EXISTS" | "PERMISSION_DENIED" | "RESOURCE_EXHAUSTED" | "FAILED_PRECONDITION" | "ABORTED" | "OUT_OF_RANGE" | "UNIMPLEMENTED" | "INTERNAL" | "UNAVAILABLE" | "DATA_LOSS" | "UNAUTHENTICATED"))[];
            /** @description Statuses besides 2xx that end the task as SUCCEEDED, e.g. a 409 from a downstream that already processed the key; never a 2xx, never one the policy retries. */
            successStatusCodes?: number[];
            /** @description Own schedules for some failures, each over the main schedule; a class not named follows the main schedule. The retry number counts every retry of the run, and DECORRELATED jitter reads the last delay, whatever its class. */
            backoffByClass?: {
                /** @description The schedule of retries after a 429: the fields given replace the main schedule's. */
                rateLimited?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a 5xx: the fields given replace the main schedule's. */
                serverError?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a timeout: the fields given replace the main schedule's. */
                timeout?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a refused connection (ECONNREFUSED): the fields given replace the main schedule's. */
                connectionRefused?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
            };
        };
        /** @description Who is told when a task ends: a POST of a task.ended event to url, made as a task of its own (durable, retried under policyId, signed when url's target signs, the same webhook-id on every attempt). A callback has no callback. */
        TaskCallback: {
            /**
             * Format: uri
             * @description http or https, checked like targetUrl (private addresses refused unless --allow-targets covers them).
             */
            url: string;
            /** @description Which ends are told: succeeded, failed (FAILED or EXHAUSTED), cancelled. Default: all three. */
            on?: ("succeeded" | "failed" | "cancelled")[];
            /** @description The registered policy of the callback's own task; absent or null: "default". */
            policyId?: string | null;
        };
        /** @description The body of a callback (a task's callback.url is POSTed this when the task ends). The same on every attempt of the callback, whose Idempotency-Key and webhook-id are retryd-callback:<taskId>:<n>: treat a repeat as the same event. */
        TaskEndedEvent: {
            /** @enum {string} */
            type: "task.ended";
            /** Format: uuid */
            taskId: string;
            /** @description The ended task's own key. */
            idempotencyKey: string;
            /** @enum {string} */
            status: "SUCCEEDED" | "FAILED" | "EXHAUSTED" | "CANCELLED";
            /** @description Why a dead letter died (deadLetterReason), or null. */
            reason: string | null;
            /** @description Attempts made over the task's life. */
            attempts: number;
            /** @description When it ended (epoch ms). */
            endedAt: number;
            /** @description The last attempt's answer, or null when the task made no attempt. */
            lastResponse: {
                status: number | null;
                /** @description The first 1,024 characters of its body. */
                excerpt: string | null;
            } | null;
            /** @description The task's last error (HTTP 503, a timeout, a refused connection), or null after a success. */
            lastError: string | null;
        };
        /** @description A registered policy: the policy fields plus its id and times (epoch ms). */
        NamedPolicy: {
            policyId: string;
            /** @description Attempts in all, the first included. */
            maxAttempts: number;
            /** @enum {string} */
            backoffType: "EXPONENTIAL" | "LINEAR" | "FIXED";
            /** @description Delay before the first retry. */
            initialDelayMs: number;
            /** @description Growth factor of EXPONENTIAL backoff. */
            multiplier: number;
            /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
            maxDelayMs: number;
            /** @enum {string} */
            jitterType: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
            /** @description Budget of a task's run, from its creation (or replay): time queued, held and waiting counts too. */
            totalBudgetMs?: number;
            /** @description Headroom kept in the budget for a call; < totalBudgetMs when both are given. */
            estimatedCallMs?: number;
            /** @description The statuses worth retrying. For http and https targets, HTTP statuses instead of the default 408, 425, 429, 500, 502, 503, 504; never a 2xx (a success). For grpc and grpcs targets, gRPC status code names instead of the default UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED; never OK. One kind per list; a task is refused at enqueue when its policy names the other kind than its target's. */
            retryableStatusCodes?: (number | ("CANCELLED" | "UNKNOWN" | "INVALID_ARGUMENT" | "DEADLINE_EXCEEDED" | "NOT_FOUND" | "ALREADY_EXISTS" | "PERMISSION_DENIED" | "RESOURCE_EXHAUSTED" | "FAILED_PRECONDITION" | "ABORTED" | "OUT_OF_RANGE" | "UNIMPLEMENTED" | "INTERNAL" | "UNAVAILABLE" | "DATA_LOSS" | "UNAUTHENTICATED"))[];
            /** @description Statuses besides 2xx that end the task as SUCCEEDED, e.g. a 409 from a downstream that already processed the key; never a 2xx, never one the policy retries. */
            successStatusCodes?: number[];
            /** @description Own schedules for some failures, each over the main schedule; a class not named follows the main schedule. The retry number counts every retry of the run, and DECORRELATED jitter reads the last delay, whatever its class. */
            backoffByClass?: {
                /** @description The schedule of retries after a 429: the fields given replace the main schedule's. */
                rateLimited?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a 5xx: the fields given replace the main schedule's. */
                serverError?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a timeout: the fields given replace the main schedule's. */
                timeout?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a refused connection (ECONNREFUSED): the fields given replace the main schedule's. */
                connectionRefused?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
            };
            /** @description The callback given to the policy's tasks that name none (copied at enqueue), or null. */
            callback: components["schemas"]["TaskCallback"] | null;
            createdAt: number;
            updatedAt: number;
        };
        /** @description A policy to register (POST): the policy fields plus its policyId. */
        PolicyRequest: {
            policyId: string;
            /** @description Attempts in all, the first included. */
            maxAttempts: number;
            /** @enum {string} */
            backoffType: "EXPONENTIAL" | "LINEAR" | "FIXED";
            /** @description Delay before the first retry. */
            initialDelayMs: number;
            /** @description Growth factor of EXPONENTIAL backoff. */
            multiplier: number;
            /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
            maxDelayMs: number;
            /** @enum {string} */
            jitterType: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
            /** @description Budget of a task's run, from its creation (or replay): time queued, held and waiting counts too. */
            totalBudgetMs?: number;
            /** @description Headroom kept in the budget for a call; < totalBudgetMs when both are given. */
            estimatedCallMs?: number;
            /** @description The statuses worth retrying. For http and https targets, HTTP statuses instead of the default 408, 425, 429, 500, 502, 503, 504; never a 2xx (a success). For grpc and grpcs targets, gRPC status code names instead of the default UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED; never OK. One kind per list; a task is refused at enqueue when its policy names the other kind than its target's. */
            retryableStatusCodes?: (number | ("CANCELLED" | "UNKNOWN" | "INVALID_ARGUMENT" | "DEADLINE_EXCEEDED" | "NOT_FOUND" | "ALREADY_EXISTS" | "PERMISSION_DENIED" | "RESOURCE_EXHAUSTED" | "FAILED_PRECONDITION" | "ABORTED" | "OUT_OF_RANGE" | "UNIMPLEMENTED" | "INTERNAL" | "UNAVAILABLE" | "DATA_LOSS" | "UNAUTHENTICATED"))[];
            /** @description Statuses besides 2xx that end the task as SUCCEEDED, e.g. a 409 from a downstream that already processed the key; never a 2xx, never one the policy retries. */
            successStatusCodes?: number[];
            /** @description Own schedules for some failures, each over the main schedule; a class not named follows the main schedule. The retry number counts every retry of the run, and DECORRELATED jitter reads the last delay, whatever its class. */
            backoffByClass?: {
                /** @description The schedule of retries after a 429: the fields given replace the main schedule's. */
                rateLimited?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a 5xx: the fields given replace the main schedule's. */
                serverError?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a timeout: the fields given replace the main schedule's. */
                timeout?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a refused connection (ECONNREFUSED): the fields given replace the main schedule's. */
                connectionRefused?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
            };
            callback?: components["schemas"]["TaskCallback"];
        };
        /** @description The new definition of a registered policy (PUT): the policy fields; policyId may be left out, the path names it. */
        PolicyReplaceRequest: {
            /** @description Absent, or equal to the policyId of the path. */
            policyId?: string;
            /** @description Attempts in all, the first included. */
            maxAttempts: number;
            /** @enum {string} */
            backoffType: "EXPONENTIAL" | "LINEAR" | "FIXED";
            /** @description Delay before the first retry. */
            initialDelayMs: number;
            /** @description Growth factor of EXPONENTIAL backoff. */
            multiplier: number;
            /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
            maxDelayMs: number;
            /** @enum {string} */
            jitterType: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
            /** @description Budget of a task's run, from its creation (or replay): time queued, held and waiting counts too. */
            totalBudgetMs?: number;
            /** @description Headroom kept in the budget for a call; < totalBudgetMs when both are given. */
            estimatedCallMs?: number;
            /** @description The statuses worth retrying. For http and https targets, HTTP statuses instead of the default 408, 425, 429, 500, 502, 503, 504; never a 2xx (a success). For grpc and grpcs targets, gRPC status code names instead of the default UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED; never OK. One kind per list; a task is refused at enqueue when its policy names the other kind than its target's. */
            retryableStatusCodes?: (number | ("CANCELLED" | "UNKNOWN" | "INVALID_ARGUMENT" | "DEADLINE_EXCEEDED" | "NOT_FOUND" | "ALREADY_EXISTS" | "PERMISSION_DENIED" | "RESOURCE_EXHAUSTED" | "FAILED_PRECONDITION" | "ABORTED" | "OUT_OF_RANGE" | "UNIMPLEMENTED" | "INTERNAL" | "UNAVAILABLE" | "DATA_LOSS" | "UNAUTHENTICATED"))[];
            /** @description Statuses besides 2xx that end the task as SUCCEEDED, e.g. a 409 from a downstream that already processed the key; never a 2xx, never one the policy retries. */
            successStatusCodes?: number[];
            /** @description Own schedules for some failures, each over the main schedule; a class not named follows the main schedule. The retry number counts every retry of the run, and DECORRELATED jitter reads the last delay, whatever its class. */
            backoffByClass?: {
                /** @description The schedule of retries after a 429: the fields given replace the main schedule's. */
                rateLimited?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a 5xx: the fields given replace the main schedule's. */
                serverError?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a timeout: the fields given replace the main schedule's. */
                timeout?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
                /** @description The schedule of retries after a refused connection (ECONNREFUSED): the fields given replace the main schedule's. */
                connectionRefused?: {
                    /** @enum {string} */
                    backoffType?: "EXPONENTIAL" | "LINEAR" | "FIXED";
                    /** @description Delay before the first retry. */
                    initialDelayMs?: number;
                    /** @description Growth factor of EXPONENTIAL backoff. */
                    multiplier?: number;
                    /** @description No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs). */
                    maxDelayMs?: number;
                    /** @enum {string} */
                    jitterType?: "NONE" | "FULL" | "EQUAL" | "DECORRELATED";
                };
            };
            callback?: components["schemas"]["TaskCallback"];
        };
        /** @description A call for retryd to make until it succeeds or its policy gives up. */
        EnqueueRequest: {
            /**
             * Format: uri
             * @description http or https; or a unary gRPC method, grpc://host:port/package.Service/Method (grpcs:// for TLS), the port required. Private addresses are refused unless --allow-targets covers them.
             */
            targetUrl: string;
            /**
             * @description POST for a gRPC target (a gRPC call is an HTTP/2 POST; the service also takes it absent there).
             * @enum {string}
             */
            method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";
            /** @description Sent on every attempt (as metadata to a gRPC target: a name ending in -bin takes a base64 value, sent as bytes; grpc-* and content-type are refused). Hop-by-hop and framing headers (Host, Content-Length, Connection, ...) are refused; an Idempotency-Key entry is taken as the key. At most 100 headers, names of at most 256 bytes, values of at most 8192 bytes, 32768 bytes in all. */
            headers?: {
                [key: string]: string;
            };
            /** @description A string, sent as is; or any other JSON value, sent as JSON (content-type application/json unless given), nested at most 64 levels deep. For a gRPC target: the request message, already serialised, in standard base64 (with = padding); the reply is kept as base64 in the attempt log. Not with bodyRef. */
            body?: unknown;
            /** @description Instead of body: s3://<bucket>/<key> of an object the caller put in the bucket --blobs names, under <prefix>/<tenant>/; checked to exist at enqueue, read at each attempt, never deleted by retryd. Set content-type in headers. For a gRPC target the object holds the raw bytes of the request message. */
            bodyRef?: string;
            /** @description A registered policy; default "default". Not with policy. */
            policyId?: string;
            policy?: components["schemas"]["RetryPolicy"];
            /** @description Visible ASCII characters only. Sent as Idempotency-Key on every attempt; generated when absent. The same key answers the existing task for as long as that task is kept: until its retention ends after it finished (7 days for a success, 30 for a dead letter by default; GET /retention). After that, the same key makes a new task. */
            idempotencyKey?: string;
            /** @description First attempt this long after enqueue. Not with notBefore. */
            delayMs?: number;
            /** @description First attempt not before this time (epoch ms or ISO 8601 with a time zone). Not with delayMs. */
            notBefore?: number | string;
            /** @description Names of headers in headers to keep secret like credential headers: stored encrypted (or as {{secret:NAME}}), shown as [REDACTED]. */
            secretHeaders?: string[];
            /** @description Store the body encrypted and show it as [REDACTED]; needs RETRYD_ENCRYPTION_KEY. Not with bodyRef. */
            sensitiveBody?: boolean;
            /** @description Most time each attempt may take, from sending the request to the end of the response snippet (Cloud Tasks' dispatchDeadline), at most 30 minutes. Default: the target's attemptTimeoutMs, else the service's --attempt-timeout (30 s). */
            attemptTimeoutMs?: number;
            /** @description Most time each attempt may spend opening its connection (name resolution, TCP, TLS); <= attemptTimeoutMs when both are given. Default: the target's connectTimeoutMs, else the service's --connect-timeout (5 s). */
            connectTimeoutMs?: number;
            callback?: components["schemas"]["TaskCallback"];
        } & (unknown & unknown & unknown & unknown);
        /** @description A task as the API shows it. Internal fields are left out on purpose: the request hash, the lease owner, fencing token and version (concurrency internals), the run bookkeeping and the tenant. Secrets are shown as [REDACTED] (credential and marked headers, a sensitive body); query values of targetUrl as REDACTED. */
        Task: {
            /** Format: uuid */
            taskId: string;
            idempotencyKey: string;
            targetUrl: string;
            /** @description The origin of targetUrl: claims are shared fairly among targets. */
            targetKey: string;
            method: string;
            /** @description Values of credential headers (names holding auth, token, key, secret, password, session, cookie, signature or credential, but Idempotency-Key and webhook-*; and those listed in --credential-headers) and of headers the task marked secret are shown as [REDACTED]. */
            headers: {
                [key: string]: string;
            };
            /** @description Shown as [REDACTED] when sensitiveBody. */
            body: string | null;
            /** @description Set when the body is kept in object storage (body is then null). */
            bodyRef: string | null;
            policyId: string | null;
            policy: components["schemas"]["RetryPolicy"] | null;
            /** @enum {string} */
            status: "PENDING" | "IN_FLIGHT" | "SUCCEEDED" | "FAILED" | "EXHAUSTED" | "CANCELLED";
            /** @description Attempts made so far, replays included. */
            attemptNumber: number;
            /** @description When a PENDING task is due (epoch ms). */
            nextAttemptAt: number | null;
            createdAt: number;
            updatedAt: number;
            /** @description When an IN_FLIGHT task is due again if its worker dies. */
            leaseExpiresAt: number | null;
            cancelRequested: boolean;
            lastError: string | null;
            lastResponseStatus: number | null;
            deadLetterReason: string | null;
            /** @description The body is stored encrypted and shown as [REDACTED]. */
            sensitiveBody: boolean;
            /** @description When a finished task is deleted with its attempts and its idempotency key (epoch ms): the same key enqueued after that makes a new task. Null while the task is live. */
            expiresAt: number | null;
            /** @description The task's own attempt timeout in ms, or null: its target's, else the service's (--attempt-timeout). */
            attemptTimeoutMs: number | null;
            /** @description The task's own connect timeout in ms, or null: its target's, else the service's (--connect-timeout). */
            connectTimeoutMs: number | null;
            /** @description Who is told when the task ends (a POST of a task.ended event, as a task of its own), or null. */
            callback: components["schemas"]["TaskCallback"] | null;
            waiting?: components["schemas"]["TaskWait"];
        };
        /** @description A task as listings show it: every field of Task but body, which only the task itself shows (GET /retry-tasks/{taskId}), so that a page of large tasks stays small. */
        TaskSummary: {
            /** Format: uuid */
            taskId: string;
            idempotencyKey: string;
            targetUrl: string;
            /** @description The origin of targetUrl: claims are shared fairly among targets. */
            targetKey: string;
            method: string;
            /** @description Values of credential headers (names holding auth, token, key, secret, password, session, cookie, signature or credential, but Idempotency-Key and webhook-*; and those listed in --credential-headers) and of headers the task marked secret are shown as [REDACTED]. */
            headers: {
                [key: string]: string;
            };
            /** @description Set when the body is kept in object storage (body is then null). */
            bodyRef: string | null;
            policyId: string | null;
            policy: components["schemas"]["RetryPolicy"] | null;
            /** @enum {string} */
            status: "PENDING" | "IN_FLIGHT" | "SUCCEEDED" | "FAILED" | "EXHAUSTED" | "CANCELLED";
            /** @description Attempts made so far, replays included. */
            attemptNumber: number;
            /** @description When a PENDING task is due (epoch ms). */
            nextAttemptAt: number | null;
            createdAt: number;
            updatedAt: number;
            /** @description When an IN_FLIGHT task is due again if its worker dies. */
            leaseExpiresAt: number | null;
            cancelRequested: boolean;
            lastError: string | null;
            lastResponseStatus: number | null;
            deadLetterReason: string | null;
            /** @description The body is stored encrypted and shown as [REDACTED]. */
            sensitiveBody: boolean;
            /** @description When a finished task is deleted with its attempts and its idempotency key (epoch ms): the same key enqueued after that makes a new task. Null while the task is live. */
            expiresAt: number | null;
            /** @description The task's own attempt timeout in ms, or null: its target's, else the service's (--attempt-timeout). */
            attemptTimeoutMs: number | null;
            /** @description The task's own connect timeout in ms, or null: its target's, else the service's (--connect-timeout). */
            connectTimeoutMs: number | null;
            /** @description Who is told when the task ends (a POST of a task.ended event, as a task of its own), or null. */
            callback: components["schemas"]["TaskCallback"] | null;
        };
        /** @description Why a PENDING task that is due is not running; only on GET /retry-tasks/{taskId}. breaker_open and retry_after: its target is held until `until`; breaker_probing: only probes go until one succeeds; rate_limit: the target is paced, its next attempt allowed at `until`; max_in_flight: the target is at its in-flight limit; slow_start: no success of the target is known yet, and it gets 10 attempts in flight until one; queued: nothing holds the target, the task waits for a free worker. */
        TaskWait: {
            /** @enum {string} */
            reason: "breaker_open" | "breaker_probing" | "retry_after" | "rate_limit" | "max_in_flight" | "slow_start" | "queued";
            until: number | null;
            detail: string;
        };
        TaskPage: {
            items: components["schemas"]["TaskSummary"][];
            /** @description Present while there are more items: pass it as cursor to read the next page. Opaque: never parse or build one. A page may hold fewer than limit items with a nextCursor: it ends before an item that would take the answer past the service's page size (4 MiB by default). Read on while there is a nextCursor, not until a page is short. */
            nextCursor?: string;
        };
        Attempt: {
            attemptNumber: number;
            startedAt: number;
            durationMs: number;
            responseStatus: number | null;
            errorMessage: string | null;
            /** @enum {string} */
            outcome: "succeeded" | "retry_scheduled" | "failed" | "exhausted" | "cancelled" | "lease_expired";
            /** @description The first 4 KiB of the response body, with every secret the attempt sent (revealed headers, references, a sensitive body) replaced by [REDACTED]. */
            responseBodySnippet: string | null;
            nextAttemptAt: number | null;
            /**
             * @description Why nextAttemptAt is later than the retry's backoff said, or null (it is not, or no retry follows). retry_budget: the target's retry budget was spent, and the retry took the next slot of its pacer (minRetriesPerSecond).
             * @enum {string|null}
             */
            delayedBy: "retry_budget" | null;
            /** @description When the backoff alone would have run the retry, when delayedBy is set; else null. */
            backoffAt: number | null;
        };
        AttemptPage: {
            items: components["schemas"]["Attempt"][];
            /** @description Present while there are more items: pass it as cursor to read the next page. Opaque: never parse or build one. A page may hold fewer than limit items with a nextCursor: it ends before an item that would take the answer past the service's page size (4 MiB by default). Read on while there is a nextCursor, not until a page is short. */
            nextCursor?: string;
        };
        PolicyPage: {
            items: components["schemas"]["NamedPolicy"][];
            /** @description Present while there are more items: pass it as cursor to read the next page. Opaque: never parse or build one. A page may hold fewer than limit items with a nextCursor: it ends before an item that would take the answer past the service's page size (4 MiB by default). Read on while there is a nextCursor, not until a page is short. */
            nextCursor?: string;
        };
        BatchRequest: {
            tasks: components["schemas"]["EnqueueRequest"][];
        };
        BatchResult: {
            /** @description One entry per task, in order: 201 created, 200 replayed, or the error that entry got. */
            results: {
                /** @description The status this entry would have had alone: 201, 200 (an identical earlier request's task), or the error's. */
                status: number;
                task?: components["schemas"]["Task"];
                /** @description The id of the task created or replayed, in place of task when the request sent Prefer: return=minimal. */
                taskId?: string;
                error?: components["schemas"]["Problem"];
            }[];
        };
        BulkReplayResult: {
            /** @description One entry per dead letter of the page, newest first: replayed; already_live (replayed meanwhile by someone else, left as it is); or error, with the problem that task got (it changed meanwhile). */
            results: {
                taskId: string;
                /** @enum {string} */
                result: "replayed" | "already_live" | "error";
                error?: components["schemas"]["Problem"];
            }[];
            /** @description How many entries are replayed. */
            replayed: number;
            /** @description Where the next page starts: send it back as cursor, with the same filter. */
            nextCursor?: string;
        };
        /** @description How retryd protects one target: every field, the service defaults filled in where the target has none of its own. */
        TargetSettings: {
            /** @description The circuit breaker: opens on consecutive failures or a failure rate; while open, due tasks are held (no attempt burned). */
            breaker: {
                /** @default true */
                enabled: boolean;
                /** @default 100 */
                consecutiveFailures: number;
                /** @default 1 */
                failureRateThreshold: number;
                /** @default 10 */
                minimumCalls: number;
                /** @default 10000 */
                windowMs: number;
                /** @default 20 */
                openDurationMs: number;
                /** @default 1.2 */
                openBackoffMultiplier: number;
                /** @default 300000 */
                maxOpenDurationMs: number;
                /** @default 1 */
                halfOpenProbes: number;
            };
            /** @description Most dispatches per second over every instance, with a burst (default a hundredth of a second of the rate, at least 1); null: no limit. */
            rateLimit: {
                ratePerSecond: number | null;
                burst: number | null;
            };
            /** @description Most attempts in flight over every instance; null: no limit. */
            maxInFlight: number | null;
            /** @description Adaptive throttling: a 429, or a 503 with Retry-After, lowers the allowed rate; successes raise it again. */
            adaptive: {
                /** @default true */
                enabled: boolean;
                /** @default 0.5 */
                decreaseFactor: number;
                /** @default 500 */
                decreaseIntervalMs: number;
                increasePerSecond: number | null;
                /** @default 1 */
                minRatePerSecond: number;
            };
            /** @description Retries at most retryRatio of first attempts over windowMs, plus a floor per second; first attempts always go. */
            retryBudget: {
                /** @default false */
                enabled: boolean;
                /** @default 1 */
                retryRatio: number;
                /** @default 10 */
                minRetriesPerSecond: number;
                /** @default 10000 */
                windowMs: number;
            };
            /** @description A sharp rise of retries with few successes opens the breaker and logs retry_storm. */
            stormDetection: {
                /** @default true */
                enabled: boolean;
                /** @default 5 */
                riseFactor: number;
                /** @default 20 */
                minRetriesPerSecond: number;
                /** @default 0.05 */
                maxSuccessRatio: number;
                /** @default 60000 */
                baselineMs: number;
            };
            /**
             * @description Whether a Retry-After on a 429 or 503 holds the whole target until then.
             * @default true
             */
            retryAfterHoldsTarget: boolean;
            /** @description Standard Webhooks signatures on every attempt (webhook-id, webhook-timestamp, webhook-signature); secrets are {{secret:NAME}} references to whsec_ secrets, one signature each (several during a rotation). */
            signing: {
                /** @default false */
                enabled: boolean;
                /** @default [] */
                secrets: string[];
            };
            /** @description The attempt timeout of the target's tasks that set none, in ms (1 to 1800000: 30 minutes); null: the service's (--attempt-timeout). */
            attemptTimeoutMs: number | null;
            /** @description The connect timeout of the target's tasks that set none, in ms (1 to 1800000, <= attemptTimeoutMs when both are set); null: the service's (--connect-timeout). */
            connectTimeoutMs: number | null;
        };
        /** @description A partial TargetSettings: the fields given replace the current ones (the service defaults until the target has its own), the others keep their value. Unknown fields are refused; every broken rule is named. */
        TargetSettingsPatch: {
            /** @description The circuit breaker: opens on consecutive failures or a failure rate; while open, due tasks are held (no attempt burned). */
            breaker?: {
                enabled?: boolean;
                consecutiveFailures?: number;
                failureRateThreshold?: number;
                minimumCalls?: number;
                windowMs?: number;
                openDurationMs?: number;
                openBackoffMultiplier?: number;
                maxOpenDurationMs?: number;
                halfOpenProbes?: number;
            };
            /** @description Most dispatches per second over every instance, with a burst (default a hundredth of a second of the rate, at least 1); null: no limit. */
            rateLimit?: {
                ratePerSecond?: number | null;
                burst?: number | null;
            };
            /** @description Most attempts in flight over every instance; null: no limit. */
            maxInFlight?: number | null;
            /** @description Adaptive throttling: a 429, or a 503 with Retry-After, lowers the allowed rate; successes raise it again. */
            adaptive?: {
                enabled?: boolean;
                decreaseFactor?: number;
                decreaseIntervalMs?: number;
                increasePerSecond?: number | null;
                minRatePerSecond?: number;
            };
            /** @description Retries at most retryRatio of first attempts over windowMs, plus a floor per second; first attempts always go. */
            retryBudget?: {
                enabled?: boolean;
                retryRatio?: number;
                minRetriesPerSecond?: number;
                windowMs?: number;
            };
            /** @description A sharp rise of retries with few successes opens the breaker and logs retry_storm. */
            stormDetection?: {
                enabled?: boolean;
                riseFactor?: number;
                minRetriesPerSecond?: number;
                maxSuccessRatio?: number;
                baselineMs?: number;
            };
            /** @description Whether a Retry-After on a 429 or 503 holds the whole target until then. */
            retryAfterHoldsTarget?: boolean;
            /** @description Standard Webhooks signatures on every attempt (webhook-id, webhook-timestamp, webhook-signature); secrets are {{secret:NAME}} references to whsec_ secrets, one signature each (several during a rotation). */
            signing?: {
                enabled?: boolean;
                secrets?: string[];
            };
            /** @description The attempt timeout of the target's tasks that set none, in ms (1 to 1800000: 30 minutes); null: the service's (--attempt-timeout). */
            attemptTimeoutMs?: number | null;
            /** @description The connect timeout of the target's tasks that set none, in ms (1 to 1800000, <= attemptTimeoutMs when both are set); null: the service's (--connect-timeout). */
            connectTimeoutMs?: number | null;
        };
        /** @description A target (a URL origin) of the tenant: where its gate stands in the store, its breaker, the rate adaptive throttling allows, and its settings. Times are epoch ms. */
        Target: {
            /** @description The origin, e.g. https://api.example.com:8443. */
            targetKey: string;
            /** @description Until when claims skip the target (an open breaker, a Retry-After), or null. */
            heldUntil: number | null;
            /** @description Until when its rate or concurrency limit keeps claims off it, or null. */
            throttledUntil: number | null;
            /** @description The earliest due time of its pending tasks as the store knows it, or null. */
            nextDueAt: number | null;
            /** @description Its attempts in flight now, over every instance. */
            inFlight: number;
            /** @description Its pending tasks due now (held or throttled ones included), counted up to 1000. */
            dueTasks: number;
            /** @description The limits the store's gate applies to claims now, over every instance (null: none). */
            limits: {
                ratePerSecond: number | null;
                burst: number | null;
                maxInFlight: number | null;
            };
            breaker: {
                /** @enum {string} */
                state: "CLOSED" | "OPEN" | "HALF_OPEN";
                /** @description When an OPEN breaker lets its probes through, or null. */
                openUntil: number | null;
                /** @description Re-openings in a row since it last closed (each opens it for longer). */
                reopenCount: number;
            };
            /** @description The rate adaptive throttling allows now (dispatches per second), or null when it does not limit the target. */
            allowedRatePerSecond: number | null;
            settings: components["schemas"]["TargetSettings"];
        };
        TargetPage: {
            items: components["schemas"]["Target"][];
            /** @description Present while there are more items: pass it as cursor to read the next page. Opaque: never parse or build one. A page may hold fewer than limit items with a nextCursor: it ends before an item that would take the answer past the service's page size (4 MiB by default). Read on while there is a nextCursor, not until a page is short. */
            nextCursor?: string;
        };
        /** @description open: held for durationMs (by default the breaker settings' maxOpenDurationMs), then probed; close: closed at once; reset: closed, its counters cleared. */
        BreakerRequest: {
            /** @enum {string} */
            action: "open" | "close" | "reset";
            /** @description With open only: how long the target is held before probes start. Default: maxOpenDurationMs. */
            durationMs?: number;
        };
        ApiKeyRequest: {
            /** @description What the key is for. */
            name: string;
            /**
             * @description read: reads; write: also tasks and policies; admin: also targets and keys; metrics: GET /metrics alone (default tenant only).
             * @enum {string}
             */
            scope: "admin" | "write" | "read" | "metrics";
        };
        ApiKey: {
            /** @description The public part of the key (rtd_<keyId>_…): its id in lists and logs. */
            keyId: string;
            tenantId: string;
            /** @enum {string} */
            scope: "admin" | "write" | "read" | "metrics";
            name: string;
            createdAt: number;
            /** @description When it was revoked; null while it is active. */
            revokedAt: number | null;
        };
        CreatedApiKey: {
            /** @description The public part of the key (rtd_<keyId>_…): its id in lists and logs. */
            keyId: string;
            tenantId: string;
            /** @enum {string} */
            scope: "admin" | "write" | "read" | "metrics";
            name: string;
            createdAt: number;
            /** @description When it was revoked; null while it is active. */
            revokedAt: number | null;
            /** @description The key itself (rtd_…): shown in this answer only, never again. */
            key: string;
        };
        ApiKeyPage: {
            items: components["schemas"]["ApiKey"][];
            /** @description Present while there are more items: pass it as cursor to read the next page. Opaque: never parse or build one. A page may hold fewer than limit items with a nextCursor: it ends before an item that would take the answer past the service's page size (4 MiB by default). Read on while there is a nextCursor, not until a page is short. */
            nextCursor?: string;
        };
        /** @description How long finished tasks are kept: then each is deleted with its attempts and its idempotency key (the same key enqueued later makes a new task). The periods in force, what this level sets itself (own), and where each period comes from: the service (retryd serve --retention-*), the tenant (retryd tenants retention) or the policy. A change applies to tasks that end from then on. */
        Retention: {
            /** @description How long a SUCCEEDED task is kept once it ended, in ms (a minute to ten years). */
            succeededMs: number;
            /** @description How long a FAILED or EXHAUSTED (a dead letter, replayable until then) task is kept once it ended, in ms (a minute to ten years). */
            deadLettersMs: number;
            /** @description How long a CANCELLED task is kept once it ended, in ms (a minute to ten years). */
            cancelledMs: number;
            own: {
                /** @description How long a SUCCEEDED task is kept once it ended, in ms (a minute to ten years). */
                succeededMs?: number;
                /** @description How long a FAILED or EXHAUSTED (a dead letter, replayable until then) task is kept once it ended, in ms (a minute to ten years). */
                deadLettersMs?: number;
                /** @description How long a CANCELLED task is kept once it ended, in ms (a minute to ten years). */
                cancelledMs?: number;
            };
            from: {
                /** @enum {string} */
                succeededMs: "service" | "tenant" | "policy";
                /** @enum {string} */
                deadLettersMs: "service" | "tenant" | "policy";
                /** @enum {string} */
                cancelledMs: "service" | "tenant" | "policy";
            };
        };
        /** @description A policy's own periods: each one given replaces the tenant's (or the service's) for its tasks; {} removes them all. */
        RetentionRequest: {
            /** @description How long a SUCCEEDED task is kept once it ended, in ms (a minute to ten years). */
            succeededMs?: number;
            /** @description How long a FAILED or EXHAUSTED (a dead letter, replayable until then) task is kept once it ended, in ms (a minute to ten years). */
            deadLettersMs?: number;
            /** @description How long a CANCELLED task is kept once it ended, in ms (a minute to ten years). */
            cancelledMs?: number;
        };
        /** @description When a PENDING task is next due. A time already past means now. At most the end of the task's time budget (runStartedAt + policy.totalBudgetMs − policy.estimatedCallMs, when its policy has a budget) and at most 315360000000 ms (10 years) after now: a later time answers 422 RESCHEDULE_OUT_OF_RANGE. */
        RescheduleRequest: {
            /** @description Epoch milliseconds, or an ISO 8601 date-time with a time zone (2030-01-01T09:00:00Z). */
            nextAttemptAt: number | string;
        };
        BulkCancelResult: {
            /** @description One entry per live task of the page, newest first: cancelled (it was PENDING); cancel_requested (IN_FLIGHT: cancelled when its attempt ends, never retried); or error, with the problem that task got (it ended meanwhile). */
            results: {
                taskId: string;
                /** @enum {string} */
                result: "cancelled" | "cancel_requested" | "error";
                error?: components["schemas"]["Problem"];
            }[];
            /** @description How many entries are cancelled. */
            cancelled: number;
            /** @description How many entries are cancel_requested. */
            cancelRequested: number;
            /** @description Where the next page starts: send it back as cursor, with the same filter. */
            nextCursor?: string;
        };
        DeletedTasks: {
            /** @description How many tasks this page deleted (maybe none: tasks that ended later are listed too). */
            deleted: number;
            /** @description The tasks deleted. */
            taskIds: string[];
            /** @description Present while more tasks may match: send it back as cursor, with the same filter. */
            nextCursor?: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
};
export type $defs = Record<string, never>;
export interface operations {
    listTasks: {
        parameters: {
            query?: {
                status?: "PENDING" | "IN_FLIGHT" | "SUCCEEDED" | "FAILED" | "EXHAUSTED" | "CANCELLED";
                /** @description Only the tasks of this named policy. On a Redis store pages may be shorter than limit, even empty, with a nextCursor (no index leads by policy there: a page examines a bounded number of tasks). */
                policyId?: string;
                /** @description Only the tasks of this target: an origin exactly as tasks record it, e.g. https://api.example.com. Pages may be shorter than limit, even empty, with a nextCursor (no index leads by target: a page examines a bounded number of tasks). */
                targetKey?: string;
                /** @description Only the task holding this idempotency key (at most one: keys are unique in a tenant). */
                idempotencyKey?: string;
                /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of tasks */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskPage"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    enqueueTask: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EnqueueRequest"];
            };
        };
        responses: {
            /** @description An identical earlier request created this task (Idempotent-Replayed: true) */
            200: {
                headers: {
                    /** @description This answer is the task an earlier identical request created. */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            /** @description Created */
            201: {
                headers: {
                    /** @description The path of what was created, e.g. /retry-tasks/{taskId}. */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    deleteTasks: {
        parameters: {
            query: {
                /** @description Finished statuses only (repeat the parameter for several); all four when absent. */
                status?: ("SUCCEEDED" | "FAILED" | "EXHAUSTED" | "CANCELLED")[];
                /** @description Only tasks that ended (their last change) before this time: epoch ms or ISO 8601 with a time zone. */
                finishedBefore: string;
                /** @description Only the tasks of this target: an origin exactly as tasks record it, e.g. https://api.example.com. Pages may be shorter than limit, even empty, with a nextCursor (no index leads by target: a page examines a bounded number of tasks). */
                targetKey?: string;
                /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tasks this page deleted */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletedTasks"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    enqueueTasks: {
        parameters: {
            query?: never;
            header?: {
                /** @description RFC 7240. `return=minimal`: each created or replayed entry carries its `taskId` instead of the whole task (about a tenth of the bytes, for callers that load a backlog and keep only the ids). */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BatchRequest"];
            };
        };
        responses: {
            /** @description One result per task */
            200: {
                headers: {
                    /** @description Present when the answer honours Prefer: return=minimal. */
                    "Preference-Applied"?: "return=minimal";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchResult"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTask: {
        parameters: {
            query?: {
                /** @description Wait up to this many ms for the task to end (SUCCEEDED, FAILED, EXHAUSTED or CANCELLED) before answering. Default 0: answer at once. */
                waitMs?: number;
            };
            header?: never;
            path: {
                taskId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The task */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    cancelTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                taskId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Cancelled */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            /** @description Will be cancelled when the attempt in flight ends */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            /** @description A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listAttempts: {
        parameters: {
            query?: {
                /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path: {
                taskId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of attempts */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AttemptPage"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    replayTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                taskId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The re-driven task */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            /** @description A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listDeadLetters: {
        parameters: {
            query?: {
                /** @description One of the two dead statuses; both when absent. */
                status?: "FAILED" | "EXHAUSTED";
                /** @description Only the tasks of this named policy. On a Redis store pages may be shorter than limit, even empty, with a nextCursor (no index leads by policy there: a page examines a bounded number of tasks). */
                policyId?: string;
                /** @description Only the tasks of this target: an origin exactly as tasks record it, e.g. https://api.example.com. Pages may be shorter than limit, even empty, with a nextCursor (no index leads by target: a page examines a bounded number of tasks). */
                targetKey?: string;
                /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of dead tasks */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TaskPage"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    replayDeadLetters: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description One of the two dead statuses; both when absent.
                     * @enum {string}
                     */
                    status?: "FAILED" | "EXHAUSTED";
                    /** @description Only the tasks of this named policy. On a Redis store pages may be shorter than limit, even empty, with a nextCursor (no index leads by policy there: a page examines a bounded number of tasks). */
                    policyId?: string;
                    /** @description Only the tasks of this target: an origin exactly as tasks record it, e.g. https://api.example.com. Pages may be shorter than limit, even empty, with a nextCursor (no index leads by target: a page examines a bounded number of tasks). */
                    targetKey?: string;
                    /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                    cursor?: string;
                    /** @default 100 */
                    limit?: number;
                };
            };
        };
        responses: {
            /** @description One result per dead letter replayed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BulkReplayResult"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    cancelTasks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description One of the two live statuses; both when absent.
                     * @enum {string}
                     */
                    status?: "PENDING" | "IN_FLIGHT";
                    /** @description Only the tasks of this named policy. On a Redis store pages may be shorter than limit, even empty, with a nextCursor (no index leads by policy there: a page examines a bounded number of tasks). */
                    policyId?: string;
                    /** @description Only the tasks of this target: an origin exactly as tasks record it, e.g. https://api.example.com. Pages may be shorter than limit, even empty, with a nextCursor (no index leads by target: a page examines a bounded number of tasks). */
                    targetKey?: string;
                    /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                    cursor?: string;
                    /** @default 100 */
                    limit?: number;
                };
            };
        };
        responses: {
            /** @description One result per live task listed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BulkCancelResult"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    runTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                taskId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The task, due now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            /** @description A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    rescheduleTask: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                taskId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RescheduleRequest"];
            };
        };
        responses: {
            /** @description The task, due at its new time */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listPolicies: {
        parameters: {
            query?: {
                /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of policies */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PolicyPage"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createPolicy: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicyRequest"];
            };
        };
        responses: {
            /** @description The same definition was already registered */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamedPolicy"];
                };
            };
            /** @description Registered */
            201: {
                headers: {
                    /** @description The path of what was created, e.g. /retry-tasks/{taskId}. */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamedPolicy"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getPolicy: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                policyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The policy */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamedPolicy"];
                };
            };
            /** @description A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    replacePolicy: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                policyId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PolicyReplaceRequest"];
            };
        };
        responses: {
            /** @description Replaced */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NamedPolicy"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getRetention: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tenant's retention */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Retention"];
                };
            };
            /** @description A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getPolicyRetention: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                policyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The policy's retention */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Retention"];
                };
            };
            /** @description A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    setPolicyRetention: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                policyId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RetentionRequest"];
            };
        };
        responses: {
            /** @description The policy's retention */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Retention"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listTargets: {
        parameters: {
            query?: {
                /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of targets */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TargetPage"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getTarget: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The target: an origin, URL-encoded as one path segment (https%3A%2F%2Fapi.example.com%3A8443). */
                targetKey: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The target */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Target"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    putTargetSettings: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The target: an origin, URL-encoded as one path segment (https%3A%2F%2Fapi.example.com%3A8443). */
                targetKey: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TargetSettingsPatch"];
            };
        };
        responses: {
            /** @description The target with its new settings */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Target"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    setTargetBreaker: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The target: an origin, URL-encoded as one path segment (https%3A%2F%2Fapi.example.com%3A8443). */
                targetKey: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["BreakerRequest"];
            };
        };
        responses: {
            /** @description The target with its breaker changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Target"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    releaseTarget: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The target: an origin, URL-encoded as one path segment (https%3A%2F%2Fapi.example.com%3A8443). */
                targetKey: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The target with its holds ended */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Target"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    listApiKeys: {
        parameters: {
            query?: {
                /** @description The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client. */
                cursor?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of keys, in keyId order */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyPage"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApiKeyRequest"];
            };
        };
        responses: {
            /** @description Created: the key is in `key`, shown this once */
            201: {
                headers: {
                    /** @description The path of what was created, e.g. /retry-tasks/{taskId}. */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedApiKey"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key, revoked */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKey"];
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: string;
                        /** @description The store kind (on /readyz). */
                        store?: string;
                    };
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        status: string;
                        /** @description The store kind (on /readyz). */
                        store?: string;
                    };
                };
            };
            /** @description Problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Problem details */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getConsoleStats: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Totals since start, and tasks by status now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description When read (epoch ms) */
                        at: number;
                        /** @description Attempts recorded by outcome, as retry_attempts_total */
                        attempts: {
                            [key: string]: number;
                        };
                        /** @description Tasks in each status, as retry_tasks (empty when the store could not count) */
                        tasks: {
                            [key: string]: number;
                        };
                        /** @description Tasks that ended FAILED or EXHAUSTED, as retry_dead_letters_total */
                        deadLetters: number;
                        /** @description retry_schedule_lag_seconds: attempts observed and their summed lag */
                        scheduleLag: {
                            count: number;
                            sumSeconds: number;
                        };
                        /** @description Attempts this instance has in flight, as retry_in_flight */
                        inFlight: number;
                    };
                };
            };
            /** @description A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
    getConsoleHistory: {
        parameters: {
            query?: {
                /** @description A target's key (its origin): its series are in `targets` */
                targetKey?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description This instance's last hour, sampled every intervalMs, oldest first; the last point is the moment of the read */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Time between samples, in ms */
                        intervalMs: number;
                        /** @description When each point was taken (epoch ms) */
                        at: number[];
                        /** @description Attempts recorded per second, by outcome, over the interval ending at each point */
                        attemptsPerSecond: {
                            [key: string]: (number | null)[];
                        };
                        /** @description The targets of the key asked for (targetKey), each tenant its own; empty without targetKey */
                        targets: {
                            tenantId: string;
                            targetKey: string;
                            /** @description Its breaker at each point; null where this instance did not know the target */
                            breaker: ("CLOSED" | "OPEN" | "HALF_OPEN" | null)[];
                            /** @description The rate it allowed at each point; null where it had no limit or was not known */
                            allowedRatePerSecond: (number | null)[];
                        }[];
                    };
                };
            };
            /** @description A malformed request: a path or query parameter that breaks its rule, a bad percent-encoding */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description No API key, or one that is unknown or revoked (once the service has a key) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The key's scope does not cover this route */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description A path segment longer than the router matches */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description The service has no API key yet and the Host header is not localhost, a loopback address or a name given to --allowed-hosts (HOST_NOT_ALLOWED) */
            421: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description Over the tenant's request rate or pending-task limit */
            429: {
                headers: {
                    /** @description Seconds to wait before sending again. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            /** @description An unexpected error: logged by the service, its message never shown (INTERNAL) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
        };
    };
}
