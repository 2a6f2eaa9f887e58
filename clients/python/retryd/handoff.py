"""Hands a request handler's failed downstream call to the retryd service, as @retryd/client's handoffFetch does."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .backoff import DEFAULT_RETRYABLE_STATUS_CODES
from .client import Client
from .credentials import strip_credentials
from .errors import HandoffError, IdempotencyKeyError, RetrydError, RetrydQueued
from .failures import is_retryable_error, status_of
from .idempotency import IDEMPOTENCY_KEY_HEADER, canonical_json, derive_idempotency_key, random_key
from .types import EnqueueRequest, RetryPolicy

FORBIDDEN_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive",
                               "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer",
                               "upgrade", "expect"})
"""Headers the service refuses on a task (hop-by-hop, framing, Expect): a handed call leaves them out."""


@dataclass
class Response:
    """What the default ``send`` answers: the status, the headers and the body of the first try."""

    status: int
    headers: Mapping[str, str]
    body: bytes = field(repr=False)


def urllib_send(timeout_s: float = 30.0) -> Callable[..., Response]:
    """A ``send`` on urllib.request: ``send(method, url, headers=..., data=...)`` answers a :class:`Response` for any
    status (urllib raises for 4xx and 5xx; this answers them)."""

    def send(method: str, url: str, *, headers: Mapping[str, str], data: bytes | None) -> Response:
        request = urllib.request.Request(url, data=data, headers=dict(headers), method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as answer:
                return Response(answer.status, answer.headers, answer.read())
        except urllib.error.HTTPError as error:
            with error:
                return Response(error.code, error.headers, error.read())

    return send


def handoff(client: Client, method: str, url: str, *, headers: Mapping[str, str] | None = None, body: Any = None,
            send: Callable[..., Any] | None = None, policy_id: str | None = None, policy: RetryPolicy | None = None,
            secrets: Mapping[str, str] | None = None, also_strip: Iterable[str] = (),
            not_credentials: Iterable[str] = ()) -> Any:
    """Makes the call now, with an Idempotency-Key: the call's own header, else one derived from its method, URL and
    body (:func:`derive_idempotency_key`: the same call made twice is one task). Returns the answer when it succeeds or
    fails for good (a 400 is the caller's to read). When it fails in a way worth retrying (no answer, 408, 425, 429,
    500, 502, 503, 504), hands it to retryd with the same key, its credential headers dropped or sent as
    ``{{secret:NAME}}`` references (``secrets``: header → secret name; see :func:`strip_credentials`), and raises
    :class:`RetrydQueued`, which the caller's framework answers ``202`` with ``error.answer()``
    (``{"status": "queued", "taskId": …}``).

    ``send(method, url, headers=..., data=...)`` makes the first try; its answer's status is read from
    ``status_code`` or ``status``. Default :func:`urllib_send`; ``requests.request`` fits as it is.
    ``body`` is a str, UTF-8 bytes, or JSON data (a dict or list, sent as JSON with keys sorted, and
    ``Content-Type: application/json`` unless given).

    >>> try:
    ...     answer = handoff(client, "POST", "https://orders.example.com/orders", body=order,
    ...                      headers={"Authorization": token}, secrets={"Authorization": "ORDERS_TOKEN"})
    ... except RetrydQueued as queued:
    ...     return JSONResponse(queued.answer(), status_code=202)  # doctest: +SKIP

    :raises RetrydQueued: the call was handed to retryd
    :raises HandoffError: it failed and retryd refused it or could not be reached (``__cause__``)
    :raises IdempotencyKeyError: the method or the URL is not valid
    """
    method = method.upper()
    call_headers = dict(headers or {})
    text = _body_text(body, call_headers)
    key = next((v for k, v in call_headers.items() if k.lower() == IDEMPOTENCY_KEY_HEADER.lower()), None)
    if key is None:
        try:
            key = derive_idempotency_key(method, url, text)
        except IdempotencyKeyError as error:
            if not error.not_derivable:
                raise
            key = random_key()
    call_headers = {k: v for k, v in call_headers.items() if k.lower() != IDEMPOTENCY_KEY_HEADER.lower()}
    call_headers[IDEMPOTENCY_KEY_HEADER] = key
    send = send or urllib_send()
    failure: BaseException | None = None
    status = None
    try:
        answer = send(method, url, headers=call_headers, data=None if text is None else text.encode("utf-8"))
    except Exception as error:
        if not is_retryable_error(error):
            raise
        failure = error
    else:
        status = status_of(answer)
        if status is None:
            raise TypeError(f"send answered a {type(answer).__name__} with no status_code or status")
        if status not in DEFAULT_RETRYABLE_STATUS_CODES:
            return answer
        # The answer is not read: the service makes the next attempt.
        close = getattr(answer, "close", None)
        if callable(close):
            close()
    plain = {k.lower(): v for k, v in call_headers.items()
             if k.lower() != IDEMPOTENCY_KEY_HEADER.lower() and k.lower() not in FORBIDDEN_HEADERS}
    stripped = strip_credentials(plain, secrets=secrets, also_strip=also_strip, not_credentials=not_credentials)
    request = EnqueueRequest(target_url=url, method=method, headers=stripped, body=text, idempotency_key=key,
                             policy_id=policy_id, policy=policy)
    try:
        enqueued = client.enqueue_task(request)
    except RetrydError as error:
        call = f"answered {status}" if failure is None else str(failure)
        raise HandoffError(f"the call failed ({call}) and could not be handed to retryd: {error}", call_error=failure,
                           status=status) from error
    raise RetrydQueued(enqueued.task)


def _body_text(body: Any, headers: dict[str, str]) -> str | None:
    """A body the service can store: text. JSON data is written keys sorted, and marked JSON unless a type is given."""
    if body is None or isinstance(body, str):
        return body
    if isinstance(body, (bytes, bytearray, memoryview)):
        try:
            return bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            raise TypeError("body must be UTF-8 text for a call that may be handed to retryd, which stores bodies "
                            "as text") from None
    if isinstance(body, (dict, list)):
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/json"
        return canonical_json(body)
    raise TypeError(f"body must be a str, bytes, a dict, a list or None, got a {type(body).__name__}")
