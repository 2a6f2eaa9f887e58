"""Dataclasses as the API's JSON writes them: each snake_case field is the camelCase property of the same name."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T", bound="Wire")


def wire_name(field_name: str) -> str:
    """``target_url`` → ``targetUrl``."""
    first, *rest = field_name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def _optional_inner(hint: Any) -> Any | None:
    """X for ``X | None`` (or Optional[X]), else None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(hint)) == 2:
            return args[0]
    return None


def _convert(hint: Any, value: Any, where: str) -> Any:
    inner = _optional_inner(hint)
    if inner is not None:
        return None if value is None else _convert(inner, value, where)
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and issubclass(hint, Wire):
        if not isinstance(value, Mapping):
            raise ValueError(f"{where} must be an object, got {value!r}")
        return hint.from_wire(value)
    if origin is list:
        (item,) = typing.get_args(hint)
        return [_convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict or hint is dict:
        return dict(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


class Wire:
    """A dataclass that reads itself from, and writes itself as, the API's JSON."""

    @classmethod
    def from_wire(cls: type[T], data: Mapping[str, Any]) -> T:
        """Reads an answer of the service; properties the class does not name are ignored (the service may add some).

        :raises ValueError: naming the property when one the class requires is missing
        """
        hints = typing.get_type_hints(cls)
        values = {}
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]
            name = wire_name(field.name)
            if name in data:
                values[field.name] = _convert(hints[field.name], data[name], f"{cls.__name__}.{name}")
            elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise ValueError(f"the service's {cls.__name__} has no {name}, which this client reads")
        return cls(**values)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object of a request, fields that are None left out."""
        out = {}
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if value is not None:
                out[wire_name(field.name)] = _to_json(value)
        return out


def _to_json(value: Any) -> Any:
    if isinstance(value, Wire):
        return value.to_wire()
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    return value
