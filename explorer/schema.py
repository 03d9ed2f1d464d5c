"""Check a JSON object against a dataclass's declared field types, before building the record.

The checks come from the annotations themselves (``typing.get_type_hints``), so a field added to
a record is checked the day it is added, with no second list to keep in step. A value that does
not fit raises ``SchemaError`` naming the field, the value and what was expected, in words
("median_s is 'fast', not a number"): a damaged file is reported, never half-loaded into a
record that later raises deep inside a view.

Supported annotations: ``str``, ``int``, ``float`` (finite; an int is taken and made a float),
``bool``, ``None``, unions of these (``float | None``), ``dict[str, T]``, ``list[T]``,
``tuple[T, ...]`` and ``Literal[...]``. Anything else is a programming error (``TypeError``), so a
new field of an unsupported type fails the tests rather than going unchecked.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

#: a string longer than this in a state file is not one the app wrote
MAX_TEXT_CHARS = 100_000


class SchemaError(ValueError):
    """A value does not fit the declared type or range; the message is for the user."""


def show(value: Any) -> str:
    """A value as the file spells it (JSON: "fast", true, null), cut to 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_NAMES = {str: "text", int: "a whole number", float: "a number", bool: "true or false", type(None): "null"}


def describe(tp: Any) -> str:
    """Words for a type: 'a number', 'a number or null', 'a mapping of text to text'."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(describe(a) for a in get_args(tp))
    if origin is dict:
        return f"a mapping of text to {describe(get_args(tp)[1])}"
    if origin in (list, tuple):
        return f"a list of {describe(get_args(tp)[0])}"
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(tp))
    return _NAMES.get(tp, getattr(tp, "__name__", str(tp)))


def check_value(value: Any, tp: Any, name: str) -> Any:
    """``value`` converted to ``tp`` (an int to a float, a JSON list to a tuple), or
    ``SchemaError`` naming ``name``."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        for option in get_args(tp):
            try:
                return check_value(value, option, name)
            except SchemaError:
                continue
        raise SchemaError(f"{name} is {show(value)}, not {describe(tp)}")
    if origin is Literal:
        if value in get_args(tp) and type(value) in {type(a) for a in get_args(tp)}:
            return value
        raise SchemaError(f"{name} is {show(value)}, not {describe(tp)}")
    if origin is dict:
        key_tp, value_tp = get_args(tp)
        if key_tp is not str:
            raise TypeError(f"{name}: only dict[str, ...] is supported, not {tp}")
        if not isinstance(value, dict):
            raise SchemaError(f"{name} is {show(value)}, not {describe(tp)}")
        return {
            check_value(k, str, f"a key of {name}"): check_value(v, value_tp, f"{name}[{k!r}]")
            for k, v in value.items()
        }
    if origin in (list, tuple):
        args = get_args(tp)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise TypeError(f"{name}: only tuple[T, ...] is supported, not {tp}")
        if not isinstance(value, list):
            raise SchemaError(f"{name} is {show(value)}, not {describe(tp)}")
        items = [check_value(v, args[0], f"{name}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if tp is type(None) or tp is None:
        if value is None:
            return None
        raise SchemaError(f"{name} is {show(value)}, not null")
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise SchemaError(f"{name} is {show(value)}, not true or false")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise SchemaError(f"{name} is {show(value)}, not a whole number")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value) if abs(value) <= 2**1023 else math.inf
            if math.isfinite(number):
                return number
        raise SchemaError(f"{name} is {show(value)}, not a {'finite ' if _is_number(value) else ''}number")
    if tp is str:
        if isinstance(value, str):
            if len(value) > MAX_TEXT_CHARS:
                raise SchemaError(f"{name} is {len(value):,} characters long, more than {MAX_TEXT_CHARS:,}")
            return value
        raise SchemaError(f"{name} is {show(value)}, not text")
    raise TypeError(f"{name}: the type {tp!r} is not supported by explorer.schema")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_field_types: dict[type, dict[str, Any]] = {}


def field_types(cls: type) -> dict[str, Any]:
    """Each dataclass field's resolved type (string annotations evaluated once per class)."""
    if cls not in _field_types:
        hints = typing.get_type_hints(cls)
        _field_types[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    return _field_types[cls]


def check_fields(cls: type, data: Any, where: str = "") -> dict[str, Any]:
    """The constructor arguments for dataclass ``cls`` from the JSON object ``data``: each known
    key checked against its field's type, unknown keys ignored (a newer version's), a missing
    field without a default a ``SchemaError``. ``where`` names the record in messages
    ("point 3" gives "point 3's size is -64, ...")."""
    if not isinstance(data, Mapping):
        raise SchemaError(f"{where or 'the record'} is {show(data)}, not an object of named values")
    kwargs: dict[str, Any] = {}
    declared = field_types(cls)
    for f in dataclasses.fields(cls):
        name = field_label(where, f.name)
        if f.name in data:
            kwargs[f.name] = check_value(data[f.name], declared[f.name], name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise SchemaError(f"{name} is missing")
    return kwargs


def field_label(where: str, name: str) -> str:
    """How a message names a field: "size", or "point 3's size"."""
    return f"{where}'s {name}" if where else name


def check_range(
    value: float | int | None, name: str, low: float | None = None, high: float | None = None
) -> None:
    """``SchemaError`` when a number is outside [low, high]; ``None`` passes."""
    if value is None:
        return
    if low is not None and value < low:
        raise SchemaError(f"{name} is {show(value)}, less than {low:g}")
    if high is not None and value > high:
        raise SchemaError(f"{name} is {show(value)}, more than {high:g}")


__all__ = [
    "SchemaError",
    "check_fields",
    "check_range",
    "check_value",
    "describe",
    "field_label",
    "field_types",
]
