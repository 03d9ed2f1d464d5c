"""Check a JSON object against a dataclass's declared field types, before building the record.

The checks come from the annotations themselves (``typing.get_type_hints``), so a field added to
a record is checked the day it is added, with no second list to keep in step. A value that does
not fit raises ``SchemaError`` naming the field, the value and what was expected, in words
("median_s is 'fast', not a number"): a damaged file is reported, never half-loaded into a
record that later raises deep inside a view.

Supported annotations: ``str``, ``int`` (within a signed 64-bit integer: a 400-digit number is
refused by name, never carried into arithmetic), ``float`` (finite; an int is taken and made a
float, one too large for a float is refused, never an OverflowError), ``bool``, ``None``, unions
of these (``float | None``), ``dict[str, T]``, ``list[T]``, ``tuple[T, ...]``, ``Literal[...]``
and another dataclass (a nested record, checked the same way). Anything else is a programming
error (``TypeError``), so a new field of an unsupported type fails the tests rather than going
unchecked.

Ranges beyond the type (a size is never negative, a clock is at most 100 GHz) are declared once
per record, as a ``RANGES`` class variable mapping field names to ``(low, high)``, or passed to
``check_fields``; every record read from a file or from another machine is checked through here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

#: a string longer than this in a state file is not one the app wrote
MAX_TEXT_CHARS = 100_000
#: the largest whole number any record holds (a signed 64-bit integer, what sizes and counts fit in)
MAX_INT = 2**63 - 1
#: a field's allowed range beyond its type: (low, high), either end ``None`` for unbounded
Ranges = Mapping[str, tuple[float | None, float | None]]

R = TypeVar("R")


class SchemaError(ValueError):
    """A value does not fit the declared type or range; the message is for the user."""


def show(value: Any) -> str:
    """A value as the file spells it (JSON: "fast", true, null), cut to 40 characters; a whole
    number of more than 40 digits is named by its length ("a 400-digit number")."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 130:
        return f"a {_digits(abs(value)):,}-digit number"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    # a lone surrogate ("\ud800" in a JSON string) is no character a log, a terminal or Qt can hold
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= 40 else text[:37] + "..."


def _digits(n: int) -> int:
    """How many decimal digits ``n`` (> 0) has, without making its text (beyond Python's limit of
    4,300 digits that raises)."""
    digits = int((n.bit_length() - 1) * math.log10(2)) + 1
    if n >= 10**digits:
        digits += 1
    elif n < 10 ** (digits - 1):
        digits -= 1
    return digits


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
    if dataclasses.is_dataclass(tp):
        return "an object of named values"
    return _NAMES.get(tp, getattr(tp, "__name__", str(tp)))


def check_value(value: Any, tp: Any, name: str) -> Any:
    """``value`` converted to ``tp`` (an int to a float, a JSON list to a tuple), or
    ``SchemaError`` naming ``name``."""
    # the common cases first, with no typing introspection: 20,000 points are read at a time
    kind = type(value)
    if tp is kind and (
        (kind is str and len(value) <= MAX_TEXT_CHARS)
        or (kind is float and math.isfinite(value))
        or (kind is int and -MAX_INT <= value <= MAX_INT)
    ):
        return value
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        options = get_args(tp)
        if value is None and type(None) in options:
            return None
        for option in options:
            try:
                return check_value(value, option, name)
            except SchemaError:
                continue
        if _is_number(value) and (float in options or int in options):
            # the number's own fault, in its words: "is NaN, not a finite number", not "not a number"
            return check_value(value, float if float in options else int, name)
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
            if abs(value) > MAX_INT:
                raise SchemaError(
                    f"{name} is {show(value)}, beyond the largest whole number kept, {MAX_INT:,}"
                )
            return value
        raise SchemaError(f"{name} is {show(value)}, not a whole number")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:  # an int beyond any float: refused by name, never an exception
                number = math.inf
            if math.isfinite(number):
                return number
        raise SchemaError(f"{name} is {show(value)}, not a {'finite ' if _is_number(value) else ''}number")
    if tp is str:
        if isinstance(value, str):
            if len(value) > MAX_TEXT_CHARS:
                raise SchemaError(f"{name} is {len(value):,} characters long, more than {MAX_TEXT_CHARS:,}")
            return value
        raise SchemaError(f"{name} is {show(value)}, not text")
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return build(tp, value, name)
    raise TypeError(f"{name}: the type {tp!r} is not supported by explorer.schema")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_field_types: dict[type, dict[str, Any]] = {}
#: per class, each field the constructor takes: (name, resolved type, whether it must be given)
_init_fields: dict[type, tuple[tuple[str, Any, bool], ...]] = {}


def field_types(cls: type) -> dict[str, Any]:
    """Each dataclass field's resolved type (string annotations evaluated once per class)."""
    if cls not in _field_types:
        hints = typing.get_type_hints(cls)
        _field_types[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    return _field_types[cls]


def _fields_to_check(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """Worked out once per class: a lesson with 20,000 recorded points checks 20,000 of them."""
    if cls not in _init_fields:
        declared = field_types(cls)
        _init_fields[cls] = tuple(
            (
                f.name,
                declared[f.name],
                f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            )
            for f in dataclasses.fields(cls)
            if f.init
        )
    return _init_fields[cls]


def check_fields(cls: type, data: Any, where: str = "", ranges: Ranges | None = None) -> dict[str, Any]:
    """The constructor arguments for dataclass ``cls`` from the JSON object ``data``: each known
    key checked against its field's type and range, unknown keys ignored (a newer version's), a
    missing field without a default a ``SchemaError``. ``where`` names the record in messages
    ("point 3" gives "point 3's size is -64, ..."). ``ranges`` defaults to the class's own
    ``RANGES``."""
    if not isinstance(data, Mapping):
        raise SchemaError(f"{where or 'the record'} is {show(data)}, not an object of named values")
    kwargs: dict[str, Any] = {}
    limits: Ranges = ranges if ranges is not None else getattr(cls, "RANGES", {})
    for field_name, tp, required in _fields_to_check(cls):
        if field_name in data:
            name = field_label(where, field_name)
            kwargs[field_name] = value = check_value(data[field_name], tp, name)
            if field_name in limits:
                check_range(value, name, *limits[field_name])
        elif required:
            raise SchemaError(f"{field_label(where, field_name)} is missing")
    return kwargs


def build(cls: type[R], data: Any, where: str = "", ranges: Ranges | None = None) -> R:
    """The record of dataclass ``cls`` that ``data`` describes, every field checked
    (``check_fields``); ``SchemaError`` naming the first that does not fit."""
    return cls(**check_fields(cls, data, where, ranges))


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
        raise SchemaError(f"{name} is {show(value)}, less than {_limit_text(low)}")
    if high is not None and value > high:
        raise SchemaError(f"{name} is {show(value)}, more than {_limit_text(high)}")


def _limit_text(limit: float) -> str:
    """A limit as people write it: 100,000 and 0.5, not 1e+05."""
    if float(limit).is_integer() and abs(limit) < 1e16:
        return f"{int(limit):,}"
    return f"{limit:g}"


__all__ = [
    "MAX_INT",
    "Ranges",
    "SchemaError",
    "build",
    "check_fields",
    "check_range",
    "check_value",
    "describe",
    "field_label",
    "field_types",
]
