"""The API's shapes this client reads and sends, named as the schemas of the service's OpenAPI document.

Each field must be a property of its schema: tests/test_drift.py checks them against the document the service
publishes (GET /openapi.json), so a renamed or retyped field fails a test before it fails a caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .wire import Wire

ENDED_STATUSES = frozenset({"SUCCEEDED", "FAILED", "EXHAUSTED", "CANCELLED"})
"""The statuses a task ends in."""

TASK_STATUSES = frozenset({"PENDING", "IN_FLIGHT"}) | ENDED_STATUSES
"""Every status a task can be in."""


@dataclass(frozen=True)
class RetryPolicy(Wire):
    """@retryd/core's retry policy (schema RetryPolicy): plain data, times in ms."""

    max_attempts: int
    backoff_type: str
    """EXPONENTIAL, LINEAR or FIXED."""
    initial_delay_ms: float
    multiplier: float
    max_delay_ms: float
    jitter_type: str
    """NONE, FULL, EQUAL or DECORRELATED."""
    total_budget_ms: float | None = None
    estimated_call_ms: float | None = None
    retryable_status_codes: list[int] | None = None
    success_status_codes: list[int] | None = None


@dataclass(frozen=True)
class FieldError(Wire):
    """One broken rule of a VALIDATION_FAILED problem."""

    field: str
    rule: str
    message: str


@dataclass(frozen=True)
class Problem(Wire):
    """An application/problem+json answer (schema Problem)."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    instance: str | None = None
    errors: list[FieldError] | None = None


@dataclass(frozen=True)
class TaskWait(Wire):
    """Why a due task waits: its target is held, paced or full (schema TaskWait)."""

    reason: str
    until: int | None
    detail: str


@dataclass(frozen=True)
class TaskSummary(Wire):
    """A task as listings show it, without its body (schema TaskSummary)."""

    task_id: str
    idempotency_key: str
    target_url: str
    target_key: str
    method: str
    headers: dict[str, str]
    body_ref: str | None
    policy_id: str | None
    policy: RetryPolicy | None
    status: str
    attempt_number: int
    next_attempt_at: int | None
    created_at: int
    updated_at: int
    lease_expires_at: int | None
    cancel_requested: bool
    last_error: str | None
    last_response_status: int | None
    dead_letter_reason: str | None
    sensitive_body: bool
    expires_at: int | None
    attempt_timeout_ms: int | None
    connect_timeout_ms: int | None

    @property
    def ended(self) -> bool:
        """Whether the task will not run again (unless replayed)."""
        return self.status in ENDED_STATUSES


@dataclass(frozen=True)
class Task(TaskSummary):
    """One task as GET /retry-tasks/{taskId} shows it (schema Task)."""

    body: str | None = None
    waiting: TaskWait | None = None


@dataclass(frozen=True)
class TaskPage(Wire):
    """One page of a listing (schema TaskPage): read on with ``next_cursor`` while it is not None."""

    items: list[TaskSummary]
    next_cursor: str | None = None


@dataclass(frozen=True)
class EnqueueRequest(Wire):
    """A call for retryd to make until it succeeds or its policy gives up (schema EnqueueRequest)."""

    target_url: str
    method: str
    headers: dict[str, str] | None = None
    body: Any = None
    """A str, sent as is, or any other JSON value, sent as JSON. None: no body."""
    policy_id: str | None = None
    policy: RetryPolicy | None = None
    idempotency_key: str | None = None
    delay_ms: int | None = None
    secret_headers: list[str] | None = None
    sensitive_body: bool | None = None
    attempt_timeout_ms: int | None = None
    connect_timeout_ms: int | None = None


@dataclass(frozen=True)
class BatchEntryResult(Wire):
    """One task's outcome in a batch: status 201 or 200 with ``task`` (or only ``task_id`` with return_minimal), any
    other status with ``error``."""

    status: int
    task: Task | None = None
    task_id: str | None = None
    error: Problem | None = None


@dataclass(frozen=True)
class EnqueueAnswer:
    """``outcome`` is ``created``, or ``replayed`` when the idempotency key already had a task."""

    outcome: str
    task: Task


@dataclass(frozen=True)
class CancelAnswer:
    """``outcome`` is ``cancelled`` now, or ``cancel_requested`` when the attempt in flight ends."""

    outcome: str
    task: Task
