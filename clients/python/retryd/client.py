"""A client of the retryd HTTP API on urllib.request, synchronous, with the standard library only."""

from __future__ import annotations

import http.client
import json
import os
import random as random_module
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .backoff import compute_delay
from .errors import RetrydApiError, RetrydUnreachableError, TaskWaitTimeoutError
from .idempotency import IDEMPOTENCY_KEY_HEADER, random_key
from .retry_after import parse_retry_after
from .types import BatchEntryResult, CancelAnswer, EnqueueAnswer, EnqueueRequest, RetryPolicy, Task, TaskPage, TaskSummary

DEFAULT_SERVICE_URL = "http://127.0.0.1:8080"
"""Where ``retryd serve`` listens by default."""

API_KEY_ENV = "RETRYD_API_KEY"
"""The environment variable the API key is read from when none is given."""

REQUEST_TIMEOUT_S = 30.0
"""The most time one API request may take (a long poll: beyond its wait)."""

MAX_WAIT_PER_REQUEST_S = 30.0
"""The longest one long poll asks the service to wait (the waitMs maximum)."""

DEFAULT_WAIT_TIMEOUT_S = 60.0
"""How long :meth:`Client.wait_for_task` waits when not told."""

CLIENT_RETRY = RetryPolicy(max_attempts=3, backoff_type="EXPONENTIAL", initial_delay_ms=200, multiplier=2,
                           max_delay_ms=5_000, jitter_type="FULL")
"""How the client retries its own requests when the service is unreachable or answers 429 or 503 (a restart, a store
outage): 3 attempts, up to 200 ms then up to 400 ms with full jitter, as @retryd/client does. A Retry-After asking for
longer wins, up to ``max_delay_ms``. Only requests that are safe to repeat are retried: enqueues carry a key."""

_CODE_OF_STATUS = {401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED",
                   413: "PAYLOAD_TOO_LARGE", 429: "RATE_LIMITED", 503: "STORE_UNAVAILABLE"}


def problem_of(status: int, text: bytes) -> dict[str, Any]:
    """The problem the service sent, or one made from the status when the body is not one."""
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict) and isinstance(parsed.get("detail"), str) and isinstance(parsed.get("code"), str):
            return parsed
    except ValueError:
        pass
    code = _CODE_OF_STATUS.get(status, "INTERNAL" if status >= 500 else "VALIDATION_FAILED")
    return {"type": "about:blank", "title": f"HTTP {status}", "status": status,
            "detail": f"the service answered HTTP {status}", "code": code}


class Client:
    """A client of the retryd HTTP API: one method per operation of ``/openapi.json`` it covers (enqueue one or a
    batch, get, wait, cancel, replay, list dead letters). Errors are a :class:`RetrydApiError` (the service answered
    a problem: ``status``, ``code``, ``detail``, ``errors``) or a :class:`RetrydUnreachableError`. Requests that are
    safe to repeat are retried with jitter when the service is unreachable or answers 429 or 503 (``CLIENT_RETRY``).

    >>> client = Client("http://127.0.0.1:8080")  # API key from RETRYD_API_KEY
    >>> answer = client.enqueue_task(EnqueueRequest(target_url="https://api.example.com/charge", method="POST",
    ...                                             body={"amount": 5}))  # doctest: +SKIP
    """

    def __init__(self, url: str | None = None, *, api_key: str | None = None, timeout_s: float = REQUEST_TIMEOUT_S,
                 retry_policy: RetryPolicy = CLIENT_RETRY, opener: urllib.request.OpenerDirector | None = None,
                 sleep: Callable[[float], None] = time.sleep, random: Callable[[], float] = random_module.random):
        self.url = (url or DEFAULT_SERVICE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        self._api_key = key or None
        self._timeout_s = timeout_s
        self._retry = retry_policy
        self._opener = opener or urllib.request.build_opener()
        self._sleep = sleep
        self._random = random

    # ---- tasks

    def enqueue_task(self, request: EnqueueRequest) -> EnqueueAnswer:
        """POST /retry-tasks (enqueueTask). A request without an idempotency key (field or header) is given a random
        one, so that a retry of this request after a lost answer finds the same task."""
        status, body = self._send("POST", "/retry-tasks", _with_key(request).to_wire(), repeatable=True)
        return EnqueueAnswer("created" if status == 201 else "replayed", Task.from_wire(body))

    def enqueue_tasks(self, requests: Sequence[EnqueueRequest], *, return_minimal: bool = False) -> list[BatchEntryResult]:
        """POST /retry-tasks/batch (enqueueTasks): up to 1,000 tasks, one result per task in order, each keyed as
        :meth:`enqueue_task` keys it. With ``return_minimal``, a created or replayed entry has ``task_id``, no task."""
        headers = {"Prefer": "return=minimal"} if return_minimal else {}
        payload = {"tasks": [_with_key(r).to_wire() for r in requests]}
        _, body = self._send("POST", "/retry-tasks/batch", payload, repeatable=True, headers=headers)
        return [BatchEntryResult.from_wire(r) for r in body["results"]]

    def get_task(self, task_id: str) -> Task:
        """GET /retry-tasks/{taskId} (getTask)."""
        return Task.from_wire(self._send("GET", f"/retry-tasks/{_segment(task_id)}", repeatable=True)[1])

    def wait_for_task(self, task_id: str, *, timeout_s: float = DEFAULT_WAIT_TIMEOUT_S) -> Task:
        """Waits until the task ends (SUCCEEDED, FAILED, EXHAUSTED or CANCELLED) and returns it as it ended, by long
        polls of GET /retry-tasks/{taskId}?waitMs= (each at most 30 s): the service answers the moment it ends.

        :raises TaskWaitTimeoutError: holding the task as last read, once ``timeout_s`` passes
        :raises RetrydApiError: 404 when there is no such task
        """
        if not timeout_s >= 0:
            raise ValueError(f"timeout_s must be a number of seconds, 0 or more, got {timeout_s!r}")
        deadline = time.monotonic() + timeout_s
        while True:
            wait_s = max(0.0, min(MAX_WAIT_PER_REQUEST_S, deadline - time.monotonic()))
            asked = time.monotonic()
            path = f"/retry-tasks/{_segment(task_id)}?waitMs={int(wait_s * 1000)}"
            task = Task.from_wire(self._send("GET", path, repeatable=True, timeout_s=self._timeout_s + wait_s)[1])
            if task.ended:
                return task
            if time.monotonic() >= deadline:
                raise TaskWaitTimeoutError(task, timeout_s)
            # A service that answered before the wait it was asked for (an older one, or one with too many waiting):
            # a pause, so that this loop is never a stream of reads.
            early = min(1.0, wait_s) - (time.monotonic() - asked)
            if early > 0:
                self._sleep(min(early, max(0.0, deadline - time.monotonic())))

    def cancel_task(self, task_id: str) -> CancelAnswer:
        """DELETE /retry-tasks/{taskId} (cancelTask): cancelled now, or when the attempt in flight ends. A finished
        task answers 409 (:class:`RetrydApiError`)."""
        status, body = self._send("DELETE", f"/retry-tasks/{_segment(task_id)}", repeatable=False)
        return CancelAnswer("cancel_requested" if status == 202 else "cancelled", Task.from_wire(body))

    # ---- dead letters

    def replay_task(self, task_id: str) -> Task:
        """POST /retry-tasks/{taskId}/replay (replayTask): re-drives a FAILED or EXHAUSTED task; twice runs it once."""
        return Task.from_wire(self._send("POST", f"/retry-tasks/{_segment(task_id)}/replay", repeatable=True)[1])

    def list_dead_letters(self, *, status: str | None = None, policy_id: str | None = None,
                          target_key: str | None = None, cursor: str | None = None, limit: int | None = None) -> TaskPage:
        """GET /dead-letters (listDeadLetters): a page of FAILED and EXHAUSTED tasks, newest first. Read on with the
        page's ``next_cursor`` while it is not None: a page may be short, even empty, and still have one."""
        query = {"status": status, "policyId": policy_id, "targetKey": target_key, "cursor": cursor, "limit": limit}
        search = urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        return TaskPage.from_wire(self._send("GET", "/dead-letters" + (f"?{search}" if search else ""), repeatable=True)[1])

    def dead_letters(self, *, status: str | None = None, policy_id: str | None = None, target_key: str | None = None,
                     page_size: int = 1000) -> Iterator[TaskSummary]:
        """Every dead letter that matches, newest first, page after page."""
        cursor = None
        while True:
            page = self.list_dead_letters(status=status, policy_id=policy_id, target_key=target_key, cursor=cursor,
                                          limit=page_size)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    # ---- transport

    def _send(self, method: str, path: str, body: Any = None, *, repeatable: bool,
              headers: Mapping[str, str] | None = None, timeout_s: float | None = None) -> tuple[int, Any]:
        payload = None if body is None else json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        previous_delay_ms = 0.0
        attempt = 1
        while True:
            last = not repeatable or attempt >= self._retry.max_attempts
            retry_after = None
            try:
                status, answer_headers, text = self._send_once(method, path, payload, headers or {}, timeout_s)
            except (OSError, http.client.HTTPException) as error:
                if last:
                    raise RetrydUnreachableError(f"cannot reach {self.url}: {_reason(error)}") from error
            else:
                if 200 <= status <= 299:
                    return status, (json.loads(text) if text else None)
                if last or status not in (429, 503):
                    raise RetrydApiError(status, problem_of(status, text))
                retry_after = answer_headers.get("Retry-After")
            computed = compute_delay(self._retry, attempt, previous_delay_ms, self._random())
            previous_delay_ms = computed
            asked = parse_retry_after(retry_after, time.time() * 1000) or 0
            self._sleep(min(self._retry.max_delay_ms, max(computed, asked)) / 1000)
            attempt += 1

    def _send_once(self, method: str, path: str, payload: bytes | None, headers: Mapping[str, str],
                   timeout_s: float | None) -> tuple[int, Any, bytes]:
        request = urllib.request.Request(self.url + path, data=payload, method=method)
        request.add_header("Accept", "application/json, application/problem+json")
        if payload is not None:
            request.add_header("Content-Type", "application/json")
        if self._api_key is not None:
            request.add_header("Authorization", f"Bearer {self._api_key}")
        for name, value in headers.items():
            request.add_header(name, value)
        try:
            with self._opener.open(request, timeout=timeout_s or self._timeout_s) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.headers, error.read()


def _segment(value: str) -> str:
    """One path segment: every id is sent percent-encoded."""
    return urllib.parse.quote(value, safe="")


def _with_key(request: EnqueueRequest) -> EnqueueRequest:
    """The request with an idempotency key: its own, the one of its Idempotency-Key header, or a new random one."""
    if request.idempotency_key is not None:
        return request
    if any(name.lower() == IDEMPOTENCY_KEY_HEADER.lower() for name in request.headers or {}):
        return request
    return replace(request, idempotency_key=random_key())


def _reason(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    return str(reason if reason is not None else error)
