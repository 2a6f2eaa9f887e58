"""The URL as @retryd/core's deriveIdempotencyKey writes it before hashing it.

Parsed as the WHATWG URL Standard parses an http(s) URL (scheme and host lower-cased, default port dropped, dot
segments resolved, the path percent-encoded, IPv4 and IPv6 addresses in their canonical form), then fragment dropped,
trailing slashes trimmed from the path and the query re-serialised as application/x-www-form-urlencoded, sorted by
name then value in UTF-16 code unit order.

Only what http(s) URLs need is ported. A URL holding user information, a host in Unicode (IDNA) or a percent-encoded
host raises :class:`IdempotencyKeyError` with ``not_derivable`` set: core would derive a key for it, this port does
not, and it never derives a different one.
"""

from __future__ import annotations

import ipaddress
import re

from .errors import IdempotencyKeyError

_ABSOLUTE = "must be an absolute URL (WHATWG URL syntax)"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_FORBIDDEN_HOST = set("#/:<>?@[\\]^|")
_PATH_ENCODED = set('"#<>?`{}')
_FORM_KEPT = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789*-._")
_HEX = "0123456789abcdef"


def _invalid(raw: str, rule: str = _ABSOLUTE) -> IdempotencyKeyError:
    return IdempotencyKeyError("url", raw, rule)


def _not_derivable(raw: str, why: str) -> IdempotencyKeyError:
    rule = f"{why}: no key is derived for it here, send an Idempotency-Key header of your own"
    return IdempotencyKeyError("url", raw, rule, not_derivable=True)


def normalise_url(raw: str) -> str:
    """The URL as core hashes it; raises :class:`IdempotencyKeyError` naming the rule it breaks."""
    if not isinstance(raw, str):
        raise IdempotencyKeyError("url", repr(raw), "must be a string")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise _not_derivable(raw, "holds a lone surrogate") from None
    s = raw.strip("".join(chr(c) for c in range(0x21))).replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME.match(s)
    if match is None:
        raise _invalid(raw)
    scheme = match.group()[:-1].lower()
    if scheme not in ("http", "https"):
        raise _invalid(raw, "must use the http: or https: scheme")
    rest = s[match.end():].split("#", 1)[0]
    # A special scheme skips every slash and backslash before the authority ("https:a.com", "https:///a.com").
    rest = rest.lstrip("/\\")
    end = min((i for i in (rest.find(c) for c in "/\\?") if i >= 0), default=len(rest))
    authority, rest = rest[:end], rest[end:]
    query = None
    if "?" in rest:
        rest, query = rest.split("?", 1)
    if "@" in authority:
        raise _not_derivable(raw, "holds user information")
    host, port = _parse_authority(raw, scheme, authority)
    out = f"{scheme}://{host}" + (f":{port}" if port else "") + _trim_trailing_slashes(_normalise_path(rest))
    if query is not None:
        sorted_query = _sorted_query(query)
        if sorted_query:
            out += "?" + sorted_query
    return out


def _parse_authority(raw: str, scheme: str, authority: str) -> tuple[str, str]:
    host_part, port_part = authority, None
    if authority.startswith("["):
        closing = authority.find("]")
        if closing < 0:
            raise _invalid(raw)
        host_part, after = authority[: closing + 1], authority[closing + 1:]
        if after:
            if after[0] != ":":
                raise _invalid(raw)
            port_part = after[1:]
    elif ":" in authority:
        host_part, port_part = authority.split(":", 1)
    host = _parse_host(raw, host_part)
    port = "" if port_part is None else _parse_port(raw, scheme, port_part)
    return host, port


def _parse_port(raw: str, scheme: str, digits: str) -> str:
    if not all("0" <= c <= "9" for c in digits):
        raise _invalid(raw)
    if digits == "":
        return ""
    trimmed = digits.lstrip("0")
    if len(trimmed) > 5 or int("0" + trimmed) > 65535:
        raise _invalid(raw)
    n = int("0" + trimmed)
    if (scheme, n) in (("http", 80), ("https", 443)):
        return ""
    return str(n)


def _parse_host(raw: str, host: str) -> str:
    if host == "":
        raise _invalid(raw)
    if host.startswith("["):
        inner = host[1:-1]
        if ":" not in inner or "%" in inner:
            raise _invalid(raw)
        try:
            packed = ipaddress.IPv6Address(inner).packed
        except ValueError:
            raise _invalid(raw) from None
        return "[" + _serialise_ipv6(packed) + "]"
    for c in host:
        if c == "%":
            raise _not_derivable(raw, "has a percent-encoded host")
        if ord(c) >= 0x80:
            raise _not_derivable(raw, "has a host in Unicode (IDNA)")
        if ord(c) <= 0x20 or ord(c) == 0x7F or c in _FORBIDDEN_HOST:
            raise _invalid(raw)
    host = host.lower()
    if not _ends_in_a_number(host):
        return host
    address = _parse_ipv4(host)
    if address is None:
        raise _invalid(raw)
    return address


def _ipv4_parts(host: str) -> list[str]:
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _ends_in_a_number(host: str) -> bool:
    last = _ipv4_parts(host)[-1]
    if last != "" and all("0" <= c <= "9" for c in last):
        return True
    return _parse_ipv4_number(last) is not None


def _parse_ipv4_number(s: str) -> int | None:
    """One part of an IPv4 address: decimal, octal with a leading 0, hex with 0x."""
    if s == "":
        return None
    radix = 10
    if s[:2] in ("0x", "0X"):
        s, radix = s[2:], 16
    elif len(s) >= 2 and s[0] == "0":
        s, radix = s[1:], 8
    if s == "":
        return 0
    n = 0
    for c in s.lower():
        d = _HEX.find(c)
        if d < 0 or d >= radix:
            return None
        n = n * radix + d
    return n


def _parse_ipv4(host: str) -> str | None:
    parts = _ipv4_parts(host)
    if len(parts) > 4:
        return None
    numbers = []
    for i, part in enumerate(parts):
        n = _parse_ipv4_number(part)
        if n is None or (i < len(parts) - 1 and n > 255):
            return None
        numbers.append(n)
    if numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    address = numbers[-1] + sum(n << (8 * (3 - i)) for i, n in enumerate(numbers[:-1]))
    return ".".join(str(address >> shift & 255) for shift in (24, 16, 8, 0))


def _serialise_ipv6(packed: bytes) -> str:
    """As WHATWG writes it: lower-case hex pieces, the first longest run of two or more zero pieces as "::", and no
    dotted IPv4 part (ipaddress writes ::ffff:1.2.3.4 on some versions)."""
    pieces = [packed[i] << 8 | packed[i + 1] for i in range(0, 16, 2)]
    start, length, i = -1, 1, 0
    while i < 8:
        if pieces[i] != 0:
            i += 1
            continue
        j = i
        while j < 8 and pieces[j] == 0:
            j += 1
        if j - i > length:
            start, length = i, j - i
        i = j
    out, i = "", 0
    while i < 8:
        if i == start:
            out += "::"
            i += length
            continue
        if i > 0 and i != start + length:
            out += ":"
        out += format(pieces[i], "x")
        i += 1
    return out


def _normalise_path(path: str) -> str:
    segments = re.split(r"[/\\]", path[1:] if path else "")
    out: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        lower = segment.lower()
        if lower in ("..", ".%2e", "%2e.", "%2e%2e"):
            if out:
                out.pop()
            if last:
                out.append("")
        elif lower in (".", "%2e"):
            if last:
                out.append("")
        else:
            out.append(_percent_encode_path(segment))
    return "/" + "/".join(out)


def _percent_encode_path(segment: str) -> str:
    return "".join(
        f"%{b:02X}" if b <= 0x20 or b >= 0x7F or chr(b) in _PATH_ENCODED else chr(b) for b in segment.encode("utf-8")
    )


def _trim_trailing_slashes(path: str) -> str:
    return path.rstrip("/") or "/"


def _utf16_key(s: str) -> bytes:
    """Orders strings as JavaScript's < does: by UTF-16 code units (big-endian bytes compare the same), not code points."""
    return s.encode("utf-16-be", "surrogatepass")


def _sorted_query(query: str) -> str:
    """Parses as URLSearchParams does (split on &, + is a space, percent-decoded, UTF-8 with replacement characters),
    sorts by name then value, and writes it back."""
    pairs = []
    for field in query.split("&"):
        if field == "":
            continue
        name, _, value = field.partition("=")
        pairs.append((_form_decode(name), _form_decode(value)))
    pairs.sort(key=lambda p: (_utf16_key(p[0]), _utf16_key(p[1])))
    return "&".join(f"{_form_encode(name)}={_form_encode(value)}" for name, value in pairs)


def _form_decode(s: str) -> str:
    data = s.replace("+", " ").encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == 0x25 and _is_hex(data[i + 1 : i + 3]):
            out.append(int(data[i + 1 : i + 3], 16))
            i += 3
        else:
            out.append(data[i])
            i += 1
    # Python replaces each maximal invalid subsequence with one U+FFFD, as the WHATWG decoder does.
    return out.decode("utf-8", "replace")


def _is_hex(pair: bytes) -> bool:
    return len(pair) == 2 and all(chr(b).lower() in _HEX for b in pair)


def _form_encode(s: str) -> str:
    return "".join(
        "+" if b == 0x20 else chr(b) if chr(b) in _FORM_KEPT else f"%{b:02X}" for b in s.encode("utf-8")
    )
