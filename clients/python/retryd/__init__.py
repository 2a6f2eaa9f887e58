"""The Python client of the retryd retry service, with the standard library only.

- :class:`Client` speaks the service's HTTP API (enqueue one or a batch, get, wait, cancel, replay, dead letters).
- :func:`retry` retries a call in process with backoff, jitter and a deadline.
- :func:`handoff` makes a call once and hands it to retryd when it fails in a way worth retrying.

Idempotency keys (:func:`derive_idempotency_key`) and delays (:func:`compute_delay`) are @retryd/core's, checked
against clients/shared/client-vectors.json, which core generates.
"""

from .backoff import (DEFAULT_POLICY, DEFAULT_RETRYABLE_STATUS_CODES, GIVE_UP_BUDGET, GIVE_UP_MAX_ATTEMPTS,
                      GIVE_UP_RETRY_AFTER_BEYOND_BUDGET, base_delay, compute_delay, plan_retry)
from .client import API_KEY_ENV, CLIENT_RETRY, DEFAULT_SERVICE_URL, Client
from .credentials import CREDENTIAL_HEADER_WORDS, is_credential_header, strip_credentials
from .errors import (HandoffError, IdempotencyKeyError, RetrydApiError, RetrydError, RetrydQueued,
                     RetrydUnreachableError, RetryExhausted, TaskWaitTimeoutError)
from .failures import is_retryable_error, retry_after_hint, status_of
from .handoff import Response, handoff, urllib_send
from .idempotency import IDEMPOTENCY_KEY_HEADER, canonical_json, derive_idempotency_key
from .retry import retry
from .retry_after import parse_retry_after
from .types import (BatchEntryResult, CancelAnswer, EnqueueAnswer, EnqueueRequest, FieldError, Problem, RetryPolicy,
                    Task, TaskPage, TaskSummary, TaskWait)

__all__ = [
    "API_KEY_ENV", "CLIENT_RETRY", "CREDENTIAL_HEADER_WORDS", "DEFAULT_POLICY", "DEFAULT_RETRYABLE_STATUS_CODES",
    "DEFAULT_SERVICE_URL", "GIVE_UP_BUDGET", "GIVE_UP_MAX_ATTEMPTS", "GIVE_UP_RETRY_AFTER_BEYOND_BUDGET",
    "IDEMPOTENCY_KEY_HEADER", "BatchEntryResult", "CancelAnswer", "Client", "EnqueueAnswer", "EnqueueRequest",
    "FieldError", "HandoffError", "IdempotencyKeyError", "Problem", "Response", "RetrydApiError", "RetrydError",
    "RetrydQueued", "RetrydUnreachableError", "RetryExhausted", "RetryPolicy", "Task", "TaskPage", "TaskSummary",
    "TaskWait", "TaskWaitTimeoutError", "base_delay", "canonical_json", "compute_delay", "derive_idempotency_key",
    "handoff", "is_credential_header", "is_retryable_error", "parse_retry_after", "plan_retry", "retry",
    "retry_after_hint", "status_of", "strip_credentials", "urllib_send",
]
