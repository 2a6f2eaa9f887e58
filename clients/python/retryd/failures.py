"""Which failures are worth another attempt, and what a failure says about when to make it."""

from __future__ import annotations

import errno
import http.client
import socket
import urllib.error
from collections.abc import Mapping
from typing import Any

from .backoff import DEFAULT_RETRYABLE_STATUS_CODES
from .retry_after import parse_retry_after

_RETRYABLE_ERRNOS = frozenset({errno.ECONNRESET, errno.ECONNREFUSED, errno.ECONNABORTED, errno.ETIMEDOUT, errno.EPIPE,
                               errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ENETDOWN})
# Errors of the requests package (found by name: it is no dependency of this one) that mean no answer came.
_REQUESTS_RETRYABLE = frozenset({"ConnectionError", "Timeout", "ConnectTimeout", "ReadTimeout", "ChunkedEncodingError"})
_MAX_DEPTH = 8


def status_of(value: Any) -> int | None:
    """The HTTP status an error or a response carries: urllib's HTTPError (``code``), a response's ``status`` or
    ``status_code``, requests' HTTPError (``response.status_code``); None when it carries none."""
    if isinstance(value, urllib.error.HTTPError):
        return value.code
    for holder in (value, getattr(value, "response", None)):
        for name in ("status_code", "status"):
            status = getattr(holder, name, None)
            if isinstance(status, int) and not isinstance(status, bool):
                return status
    return None


def is_retryable_error(error: BaseException) -> bool:
    """Whether a failed call is worth another attempt, as @retryd/core's isRetryableError and classifyHttpStatus:
    an error carrying a status among 408, 425, 429, 500, 502, 503 and 504 (urllib's HTTPError, requests' HTTPError
    after raise_for_status()); or no answer at all, through the error's cause chain: the connection refused, reset
    or aborted, a timeout, a broken pipe, an unreachable host or network, a temporary DNS failure, the server closing
    the connection, requests' ConnectionError and Timeout. Not a name that does not resolve (an authoritative no)."""
    status = status_of(error)
    if status is not None:
        return status in DEFAULT_RETRYABLE_STATUS_CODES
    link: BaseException | None = error
    for _ in range(_MAX_DEPTH):
        if link is None:
            return False
        if _no_answer(link):
            return True
        reason = getattr(link, "reason", None) if isinstance(link, urllib.error.URLError) else None
        link = reason if isinstance(reason, BaseException) else (link.__cause__ or link.__context__)
    return False


def _no_answer(error: BaseException) -> bool:
    if isinstance(error, socket.gaierror):
        return error.errno == socket.EAI_AGAIN
    if isinstance(error, (ConnectionError, TimeoutError, http.client.RemoteDisconnected, http.client.IncompleteRead)):
        return True
    if isinstance(error, OSError) and error.errno in _RETRYABLE_ERRNOS:
        return True
    return any(c.__name__ in _REQUESTS_RETRYABLE and c.__module__.startswith("requests") for c in type(error).__mro__)


def retry_after_hint(error: BaseException, now_ms: float) -> float | None:
    """The wait in ms a failure asks for, as @retryd/core's retryAfterHint: a ``retry_after_ms`` attribute (set it on
    your own errors), else a Retry-After header on ``error.headers`` or ``error.response.headers``."""
    own = getattr(error, "retry_after_ms", None)
    if isinstance(own, (int, float)) and not isinstance(own, bool) and own >= 0:
        return float(own)
    for holder in (error, getattr(error, "response", None)):
        headers = getattr(holder, "headers", None)
        if headers is not None and hasattr(headers, "get"):
            value = headers.get("Retry-After")
            if value is None and isinstance(headers, Mapping):
                value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
            if value is not None:
                return parse_retry_after(str(value), now_ms)
    return None
