"""Which headers carry credentials, and how a call handed to retryd leaves them out (as @retryd/client does)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

CREDENTIAL_HEADER_WORDS = ("auth", "token", "key", "secret", "password", "passwd", "session", "cookie", "signature",
                           "credential")
"""Words that make a header name a credential's wherever they stand in it, in any case: @retryd/core's list."""

RETRYD_OWN_HEADERS = frozenset({"idempotency-key", "webhook-id", "webhook-timestamp", "webhook-signature"})
"""retryd's own headers, never a caller's secret although their names hold a credential word."""

_CREDENTIAL_WORD = re.compile("|".join(CREDENTIAL_HEADER_WORDS), re.IGNORECASE)
_SECRET_NAME = re.compile(r"[A-Za-z0-9_]{1,128}")


def is_credential_header(name: str) -> bool:
    """@retryd/core's isCredentialHeader: whether a header carries a credential by its name alone."""
    return _CREDENTIAL_WORD.search(name) is not None and name.lower() not in RETRYD_OWN_HEADERS


def strip_credentials(headers: Mapping[str, str], *, secrets: Mapping[str, str] | None = None,
                      also_strip: Iterable[str] = (), not_credentials: Iterable[str] = ()) -> dict[str, str]:
    """The headers as they may be handed to retryd: a header named in ``secrets`` (header name → the name of a
    secret the service holds) becomes ``{{secret:NAME}}``, which the service resolves at each attempt; any other
    credential header (:func:`is_credential_header`, or named in ``also_strip``) is dropped, unless named in
    ``not_credentials``.

    :raises ValueError: naming the header when a secret name is not 1 to 128 letters, digits or _
    """
    by_header = {}
    for header, secret in (secrets or {}).items():
        if not isinstance(secret, str) or not _SECRET_NAME.fullmatch(secret):
            raise ValueError(f"secrets[{header!r}] must be a secret name of 1 to 128 letters, digits or _, got {secret!r}")
        by_header[header.lower()] = secret
    also = {n.lower() for n in also_strip}
    keep = {n.lower() for n in not_credentials}
    out = {}
    for name, value in headers.items():
        lower = name.lower()
        if lower in by_header:
            out[name] = "{{secret:" + by_header[lower] + "}}"
        elif not (is_credential_header(lower) and lower not in keep) and lower not in also:
            out[name] = value
    return out
