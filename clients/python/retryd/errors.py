"""The errors of the retryd client, each named where it arises."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .types import FieldError, Task


class RetrydError(Exception):
    """Base of the errors about the retryd service."""


class RetrydApiError(RetrydError):
    """The service answered with an error: its status and its application/problem+json body (one made from the
    status when the body is not a problem, such as a proxy's HTML page).

    ``code`` is the stable error code (``VALIDATION_FAILED``, ``NOT_FOUND``, …), ``detail`` one sentence naming the
    field and the rule, ``errors`` each broken rule (for ``VALIDATION_FAILED``)."""

    def __init__(self, status: int, problem: dict[str, Any]):
        from .types import FieldError

        super().__init__(f"retryd answered {status} {problem.get('code')}: {problem.get('detail')}")
        self.status = status
        self.problem = problem
        self.code: str = problem["code"]
        self.detail: str = problem["detail"]
        self.errors: list[FieldError] = [FieldError.from_wire(e) for e in problem.get("errors") or []]


class RetrydUnreachableError(RetrydError):
    """No answer at all: the connection was refused or reset, the name did not resolve, or the request timed out."""


class TaskWaitTimeoutError(RetrydError):
    """``Client.wait_for_task``'s time ran out before the task ended: ``task`` is the task as last read."""

    def __init__(self, task: Task, timeout_s: float):
        super().__init__(f"task {task.task_id} had not ended after {timeout_s} s: it is {task.status}")
        self.task = task
        self.timeout_s = timeout_s


class IdempotencyKeyError(ValueError):
    """No idempotency key was derived: the method or the URL breaks a rule @retryd/core enforces too, or
    (``not_derivable``) the URL is valid but holds what this client's normaliser leaves out (user information, a host
    in Unicode or percent-encoded), where core would derive a key. Never a different key from core's."""

    def __init__(self, field: str, value: str, rule: str, *, not_derivable: bool = False):
        super().__init__(f"{field} {rule}, got {value!r}")
        self.field = field
        self.value = value
        self.rule = rule
        self.not_derivable = not_derivable


class RetryExhausted(Exception):
    """``retry()`` gave up on a call that failed every time: ``reason`` is ``max_attempts``, ``budget`` (the deadline
    left no room for another attempt) or ``retry_after_beyond_budget`` (the server asked for a wait past the deadline
    or past ``max_delay``); ``last_error`` (also ``__cause__``) is the last attempt's error."""

    def __init__(self, reason: str, attempts: int, last_error: BaseException):
        super().__init__(f"gave up after {attempts} attempts ({reason}): {last_error}")
        self.reason = reason
        self.attempts = attempts
        self.last_error = last_error


class RetrydQueued(Exception):
    """The call failed in a way worth retrying and was handed to retryd: the handler's work ends here, and its answer
    is ``202`` with :meth:`answer` as the body."""

    code = "RETRYD_QUEUED"

    def __init__(self, task: Task):
        super().__init__(f"the call to {task.target_key} failed and was handed to retryd as task {task.task_id}")
        self.task = task
        self.task_id = task.task_id

    def answer(self) -> dict[str, str]:
        """The body of the 202 answer: ``{"status": "queued", "taskId": …}``."""
        return {"status": "queued", "taskId": self.task_id}


class HandoffError(RetrydError):
    """The call failed and could not be handed to retryd: ``__cause__`` is retryd's error (or why the call cannot be
    handed over), ``call_error`` the call's own error (None when it answered ``status``)."""

    def __init__(self, message: str, *, call_error: BaseException | None, status: int | None):
        super().__init__(message)
        self.call_error = call_error
        self.status = status
