"""Idempotency keys derived exactly as @retryd/core's deriveIdempotencyKey derives them, byte for byte."""

from __future__ import annotations

import decimal
import hashlib
import json
import math
import re
import uuid
from typing import Any

from .errors import IdempotencyKeyError
from .normalise_url import normalise_url

IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"

_METHOD_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_MAX_SAFE_INTEGER = 2**53 - 1


def derive_idempotency_key(method: str, url: str, body: Any = None) -> str:
    """A stable key for a request: the first 32 hex characters of SHA-256 over the upper-case method, the normalised
    URL and the body, separated by line feeds, as @retryd/core computes it.

    The URL is normalised as core's WHATWG parser writes it (scheme and host lower-cased, default port dropped,
    trailing slashes trimmed, query sorted by name then value, fragment dropped). The body is a ``str`` (hashed as
    UTF-8), ``bytes``-like, or JSON data (a ``dict`` or ``list``, written by :func:`canonical_json`, keys sorted);
    ``None`` or empty is no body.

    >>> derive_idempotency_key("post", "https://API.example.com:443/orders/?b=2&a=1", {"sku": "A", "n": 1}) == \\
    ...     derive_idempotency_key("POST", "https://api.example.com/orders?a=1&b=2", '{"n":1,"sku":"A"}')
    True

    :raises IdempotencyKeyError: naming the method or the URL and the rule
    """
    if not isinstance(method, str) or not _METHOD_TOKEN.fullmatch(method):
        raise IdempotencyKeyError("method", repr(method), "must be an HTTP token (RFC 9110 §9.1)")
    head = f"{method.upper()}\n{normalise_url(url)}\n".encode("utf-8")
    return hashlib.sha256(head + _body_bytes(body)).hexdigest()[:32]


def random_key() -> str:
    """A random key (a version 4 UUID), for a call whose key cannot be derived: its attempts still share it."""
    return str(uuid.uuid4())


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    return canonical_json(body).encode("utf-8")


def canonical_json(value: Any) -> str:
    """JSON with the keys of every object sorted by UTF-16 code units and no whitespace, written as @retryd/core's
    canonicalJson (JavaScript's JSON.stringify) writes it: numbers as JavaScript writes them (``1.0`` is ``1``,
    ``1e21`` is ``1e+21``), NaN and infinities as ``null``.

    :raises TypeError: naming the path (``$.items[2]``) of a value JSON cannot hold as it is: a key that is not a
        string, an integer a JavaScript number would round (past 2^53), a set, an object, a circular reference
    """
    return _write(value, "$", [])


def _write(value: Any, path: str, ancestors: list[int]) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        # Python escapes exactly what JSON.stringify escapes: " \ and the C0 controls (\b \f \n \r \t by name).
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        if abs(value) <= _MAX_SAFE_INTEGER:
            return str(value)
        # JSON.parse gives JavaScript this number as a double: written as core writes that double, when it is exact.
        if float(value) != value:
            raise TypeError(f"canonical_json cannot represent {value} at {path}: a JavaScript number would round it")
        return _js_number(float(value))
    if isinstance(value, float):
        return _js_number(value)
    if not isinstance(value, (list, tuple, dict)):
        raise TypeError(f"canonical_json cannot represent a {type(value).__name__} at {path}: only dicts, lists, "
                        "strings, numbers, booleans and None are allowed")
    if id(value) in ancestors:
        raise TypeError(f"canonical_json cannot represent a circular reference at {path}")
    ancestors.append(id(value))
    if isinstance(value, dict):
        for name in value:
            if not isinstance(name, str):
                raise TypeError(f"canonical_json cannot represent a key that is not a string ({name!r}) at {path}")
        names = sorted(value, key=lambda n: n.encode("utf-16-be", "surrogatepass"))
        members = (f"{json.dumps(n, ensure_ascii=False)}:{_write(value[n], f'{path}.{n}', ancestors)}" for n in names)
        text = "{" + ",".join(members) + "}"
    else:
        text = "[" + ",".join(_write(item, f"{path}[{i}]", ancestors) for i, item in enumerate(value)) + "]"
    ancestors.pop()
    return text


def _js_number(x: float) -> str:
    """Number.prototype.toString(): the shortest digits that read back as x (Python's repr finds the same ones),
    laid out as ECMAScript lays them out."""
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    digits_tuple, exponent = decimal.Decimal(repr(abs(x))).as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    k, n = len(digits), len(digits) + exponent
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text
