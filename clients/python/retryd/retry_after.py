"""@retryd/core's parseRetryAfter, ported."""

from __future__ import annotations

import calendar
import datetime
import math
import re

MAX_RETRY_AFTER_MS = 2**31 * 1000
"""The most any Retry-After asks for: 2^31 s (RFC 9111 §1.2.2), in ms."""

_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_MONTH = "(" + "|".join(_MONTHS) + ")"
_CLOCK = r"(\d{2}):(\d{2}):(\d{2})"
# The three grammars of RFC 9110 §5.6.7, matched exactly (case and single spaces), as core matches them.
_IMF_FIXDATE = re.compile(rf"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{{2}}) {_MONTH} (\d{{4}}) {_CLOCK} GMT", re.ASCII)
_RFC850_DATE = re.compile(
    rf"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{{2}})-{_MONTH}-(\d{{2}}) {_CLOCK} GMT", re.ASCII)
_ASCTIME_DATE = re.compile(rf"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) {_MONTH} (\d{{2}}| \d) {_CLOCK} (\d{{4}})", re.ASCII)
_DELAY_SECONDS = re.compile(r"\d+", re.ASCII)
# What JavaScript's String.prototype.trim() removes (str.strip() would also take \x1c-\x1f and \x85).
_JS_WHITESPACE = " \t\n\v\f\r\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(map(chr, range(0x2000, 0x200b)))


def parse_retry_after(value: str | None, now_ms: float) -> int | None:
    """The delay in ms a Retry-After value asks for, or None when absent or malformed: delay-seconds (digits only,
    after trimming) or an HTTP-date (IMF-fixdate, RFC 850, asctime; one in the past is 0; one that does not exist, such
    as Feb 30, is malformed), capped at 2^31 s."""
    if value is None:
        return None
    trimmed = value.strip(_JS_WHITESPACE)
    if _DELAY_SECONDS.fullmatch(trimmed):
        return min(int(trimmed) * 1000, MAX_RETRY_AFTER_MS)
    at = _parse_http_date(trimmed, now_ms)
    if at is None:
        return None
    return min(max(0, math.ceil(at - now_ms)), MAX_RETRY_AFTER_MS)


def _epoch_ms(year: int, month: int, day: int, hour: int, minute: int, second: int) -> int | None:
    """The instant the parts name, or None (Feb 30, 24:00:00); second 60 (a leap second) is the next minute's first."""
    if month < 0 or hour > 23 or minute > 59 or second > 60:
        return None
    if not 1 <= year <= 9999 or not 1 <= day <= calendar.monthrange(year, month + 1)[1]:
        return None
    midnight = calendar.timegm((year, month + 1, day, 0, 0, 0))
    return (midnight + (hour * 60 + minute) * 60 + second) * 1000


def _parse_http_date(value: str, now_ms: float) -> int | None:
    m = _IMF_FIXDATE.fullmatch(value)
    if m:
        day, month, year, hour, minute, second = m.groups()
        return _epoch_ms(int(year), _MONTHS.index(month), int(day), int(hour), int(minute), int(second))
    m = _RFC850_DATE.fullmatch(value)
    if m:
        day, month, yy, hour, minute, second = m.groups()
        parts = (_MONTHS.index(month), int(day), int(hour), int(minute), int(second))
        # RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is the most recent past year with those digits.
        now = datetime.datetime.fromtimestamp(now_ms / 1000, datetime.timezone.utc)
        latest = now.year + 51
        year = latest - (((latest - int(yy)) % 100) + 100) % 100
        ms = _epoch_ms(year, *parts)
        if ms is not None and ms <= _years_later(now, 50):
            return ms
        return _epoch_ms(year - 100, *parts)
    m = _ASCTIME_DATE.fullmatch(value)
    if m:
        month, day, hour, minute, second, year = m.groups()
        return _epoch_ms(int(year), _MONTHS.index(month), int(day), int(hour), int(minute), int(second))
    return None


def _years_later(now: datetime.datetime, years: int) -> float:
    """Epoch ms of ``now`` that many years on; Feb 29 into a common year is Mar 1, as JavaScript's setUTCFullYear."""
    try:
        later = now.replace(year=now.year + years)
    except ValueError:
        later = now.replace(year=now.year + years, month=3, day=1)
    return later.timestamp() * 1000
