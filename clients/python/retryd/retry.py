"""In-process retries: a call repeated with backoff and jitter, within a deadline, as @retryd/core's retry() does."""

from __future__ import annotations

import random as random_module
import time
from collections.abc import Callable
from typing import TypeVar

from .backoff import plan_retry
from .errors import RetryExhausted
from .failures import is_retryable_error, retry_after_hint
from .types import RetryPolicy

T = TypeVar("T")

JITTERS = ("none", "full", "equal", "decorrelated")


def retry(fn: Callable[[], T], *, max_attempts: int = 3, base_delay: float = 0.1, max_delay: float = 10.0,
          deadline_s: float | None = None, is_retryable: Callable[[BaseException], bool] = is_retryable_error,
          jitter: str = "full", multiplier: float = 2.0, sleep: Callable[[float], None] = time.sleep,
          random: Callable[[], float] = random_module.random, clock: Callable[[], float] = time.monotonic) -> T:
    """Calls ``fn`` until it returns, retrying the exceptions ``is_retryable`` accepts; returns what ``fn`` returned.

    Delays grow exponentially from ``base_delay`` by ``multiplier`` up to ``max_delay`` (seconds), spread by
    ``jitter`` (``"full"``: uniform in [0, delay]; ``"equal"``, ``"decorrelated"``, ``"none"``), exactly as
    @retryd/core's computeDelay spreads them. A Retry-After on the failure (``retry_after_ms``, or a header on
    ``error.headers`` / ``error.response.headers``) replaces the delay; one longer than ``max_delay`` or past the
    deadline ends the retries at once. ``deadline_s`` bounds the whole call: no attempt starts after it (an attempt
    already running is not interrupted: give ``fn`` a timeout of its own).

    The default ``is_retryable`` retries no answer at all (refused, reset, timeout) and the statuses 408, 425, 429,
    500, 502, 503, 504 carried by the error (urllib's HTTPError, requests' after ``raise_for_status()``).

    >>> retry(lambda: urllib.request.urlopen("https://api.example.com/orders/42", timeout=5).read(),
    ...       max_attempts=5, deadline_s=20)  # doctest: +SKIP

    :raises RetryExhausted: when the retries end (``reason``, ``attempts``, ``last_error``; its ``__cause__``)
    :raises ValueError: naming the parameter that breaks its rule
    """
    policy = _policy(max_attempts, base_delay, max_delay, deadline_s, jitter, multiplier)
    start = clock()
    previous_delay_ms = 0.0
    attempt = 0
    while True:
        attempt += 1
        try:
            return fn()
        except Exception as error:
            if not is_retryable(error):
                raise
            hint = retry_after_hint(error, time.time() * 1000)
            plan = plan_retry(policy, attempt, (clock() - start) * 1000, previous_delay_ms, hint, random())
            if not plan.retry:
                raise RetryExhausted(plan.reason or "", attempt, error) from error
            previous_delay_ms = plan.previous_delay_ms
        sleep(plan.delay_ms / 1000)


def _policy(max_attempts: int, base_delay: float, max_delay: float, deadline_s: float | None, jitter: str,
            multiplier: float) -> RetryPolicy:
    if not isinstance(max_attempts, int) or isinstance(max_attempts, bool) or max_attempts < 1:
        raise ValueError(f"max_attempts must be an integer >= 1, got {max_attempts!r}")
    if not isinstance(base_delay, (int, float)) or not base_delay > 0:
        raise ValueError(f"base_delay must be a number of seconds > 0, got {base_delay!r}")
    if not isinstance(max_delay, (int, float)) or not max_delay >= base_delay:
        raise ValueError(f"max_delay must be a number of seconds >= base_delay ({base_delay}), got {max_delay!r}")
    if deadline_s is not None and (not isinstance(deadline_s, (int, float)) or not deadline_s > 0):
        raise ValueError(f"deadline_s must be a number of seconds > 0 or None, got {deadline_s!r}")
    if not isinstance(jitter, str) or jitter.lower() not in JITTERS:
        raise ValueError(f"jitter must be one of {', '.join(JITTERS)}, got {jitter!r}")
    if not isinstance(multiplier, (int, float)) or not multiplier >= 1:
        raise ValueError(f"multiplier must be a number >= 1, got {multiplier!r}")
    return RetryPolicy(max_attempts=max_attempts, backoff_type="EXPONENTIAL", initial_delay_ms=base_delay * 1000,
                       multiplier=multiplier, max_delay_ms=max_delay * 1000, jitter_type=jitter.upper(),
                       total_budget_ms=None if deadline_s is None else deadline_s * 1000)
