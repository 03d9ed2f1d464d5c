"""The agent protocol's messages: how they are written, read and checked, on both sides of the pipe.

Every message is one JSON object on one line (UTF-8, ``\\n``-terminated). The parent reads what a
child sends as untrusted input (a remote agent is another machine): each line is bounded in
length, parsed with the standard JSON parser only, and checked against the shapes below before
any field is used. Nothing received is ever executed or evaluated.

Messages (``type`` names the kind; see ``explorer.agent`` for the conversation):

=========  =========  ==========================================================================
type       from       fields
=========  =========  ==========================================================================
hello      agent      protocol (int), package (str), version (str), python (str), pid (int),
                      platform (str), build (str: a hash of the package's source files),
                      started (object: how it was started), heartbeat_s (number: how long it
                      goes without a word from the parent, once beats came, before it ends)
request    parent     id (int), method (str), params (object)
event      agent      id (int), data (object): a streamed part of the answer to request ``id``
result     agent      id (int), data (object): the answer; the request is finished
error      agent      id (int), kind (str), message (str, one line): the request failed
bye        parent     (none): finish and exit (closing stdin does the same, at once)
beat       parent     (none): the parent is still there (sent every few seconds by a remote
                      parent, whether or not a request is under way); no answer
=========  =========  ==========================================================================
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from explorer.cleantext import clean_json
from explorer.schema import SchemaError, loads

#: Bumped whenever a message's shape or a method's params/answer change incompatibly. A parent talks
#: only to an agent of the same protocol (and the same package version, see ``explorer.agent.child``).
PROTOCOL_VERSION = 2
PACKAGE = "device-explorer"
#: The longest line either side accepts (a benchmark point is a few KB; 16 MiB leaves room for a
#: device listing or a real run's arrays while bounding what a broken or hostile agent can make us hold).
MAX_LINE_BYTES = 16 * 1024 * 1024
#: Error kinds an agent sends: the request was malformed, named no known method, or the method failed.
ERROR_KINDS = ("bad-request", "unknown-method", "failed")
#: a line without a backslash (JSON's escapes), DEL or a byte beyond ASCII holds no control
#: character and no bidirectional override: its strings need no cleaning
_MAY_HOLD_CONTROLS = re.compile(rb"[\\\x7f\x80-\xff]")


class AgentError(Exception):
    """Something went wrong talking to an agent; ``str()`` is one line for the user."""


class ProtocolError(AgentError):
    """A line that is not a valid message of this protocol; the message is one line for the user."""


@dataclass(frozen=True)
class Hello:
    """The agent's first line. ``build`` (a hash of the package's source files, ""
    where unknown), ``started`` (how the agent was started: ``argv``, ``forced`` when sshd ran an
    account's ForceCommand instead of what the parent asked for, ``guard`` the launcher guard's
    job name) and ``heartbeat_s`` (0: none) are read leniently, so an agent of an older protocol
    still gets as far as the version check and its one clear line."""

    protocol: int
    package: str
    version: str
    python: str
    pid: int
    platform: str
    build: str = ""
    started: dict[str, Any] = field(default_factory=dict)
    heartbeat_s: float = 0.0


@dataclass(frozen=True)
class Request:
    id: int
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class AgentEvent:
    """An ``event`` line: what a running request (``id``) reports before its result, or, with id 0,
    what the agent or its guard says unasked. A line on the wire, not a model's ``explorer.events.Event``."""

    id: int
    data: dict[str, Any]


@dataclass(frozen=True)
class Result:
    id: int
    data: dict[str, Any]


@dataclass(frozen=True)
class Error:
    id: int
    kind: str
    message: str


@dataclass(frozen=True)
class Bye:
    pass


@dataclass(frozen=True)
class Beat:
    pass


Message = Hello | Request | AgentEvent | Result | Error | Bye | Beat


def encode(message: Message) -> bytes:
    """One line of JSON for ``message``."""
    if isinstance(message, Hello):
        obj: dict[str, Any] = {"type": "hello", **message.__dict__}
    elif isinstance(message, Request):
        obj = {"type": "request", "id": message.id, "method": message.method, "params": message.params}
    elif isinstance(message, AgentEvent):
        obj = {"type": "event", "id": message.id, "data": message.data}
    elif isinstance(message, Result):
        obj = {"type": "result", "id": message.id, "data": message.data}
    elif isinstance(message, Error):
        obj = {"type": "error", "id": message.id, "kind": message.kind, "message": message.message}
    elif isinstance(message, Bye):
        obj = {"type": "bye"}
    elif isinstance(message, Beat):
        obj = {"type": "beat"}
    else:  # pragma: no cover - the union is closed
        raise TypeError(f"not a protocol message: {message!r}")
    # NaN and infinities are written as JSON's common extension (Python reads them back): a timing
    # that measured nothing may carry one, and refusing the whole point for it would lose the row.
    return json.dumps(obj, separators=(",", ":")).encode("utf-8") + b"\n"


def _shown(line: bytes, limit: int = 80) -> str:
    text = line.decode("utf-8", errors="replace").strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _field(obj: dict[str, Any], name: str, kind: type | tuple[type, ...], line: bytes) -> Any:
    value = obj.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        want = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ProtocolError(f"a {obj.get('type')} message has no valid '{name}' ({want}): {_shown(line)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ProtocolError(f"a {obj.get('type')} message has a non-finite '{name}': {_shown(line)}")
    return value


def _id(obj: dict[str, Any], line: bytes) -> int:
    value = _field(obj, "id", int, line)
    if not 0 <= value < 2**53:
        raise ProtocolError(f"a {obj.get('type')} message has an out-of-range id {value}")
    return value


def _lenient(obj: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    value = obj.get(name)
    return value if isinstance(value, kind) else default


def _heartbeat(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(min(max(value, 0.0), 86400.0))


def decode(line: bytes) -> Message:
    """The message on ``line``; ProtocolError (one line, quoting the start of the line) otherwise."""
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"a line of {len(line):,} bytes is longer than the limit of {MAX_LINE_BYTES:,}")
    try:  # the app's one decoder: bounded, strict UTF-8, nesting limited; NaN allowed (see encode)
        obj = loads(line, max_bytes=MAX_LINE_BYTES, allow_nan=True)
    except SchemaError:
        raise ProtocolError(f"not a JSON message: {_shown(line)}") from None
    if _MAY_HOLD_CONTROLS.search(line):
        # the other side's words are data: no escape sequence or control character in any string
        # reaches a terminal, a CSV file or the window (a device name that clears the screen)
        obj = clean_json(obj)
    if not isinstance(obj, dict):
        raise ProtocolError(f"not a JSON object: {_shown(line)}")
    kind = obj.get("type")
    if kind == "hello":
        return Hello(
            protocol=_field(obj, "protocol", int, line),
            package=_field(obj, "package", str, line),
            version=_field(obj, "version", str, line),
            python=_field(obj, "python", str, line),
            pid=_field(obj, "pid", int, line),
            platform=_field(obj, "platform", str, line),
            build=_lenient(obj, "build", str, "")[:128],
            started=_lenient(obj, "started", dict, {}),
            heartbeat_s=_heartbeat(obj.get("heartbeat_s")),
        )
    if kind == "request":
        return Request(_id(obj, line), _field(obj, "method", str, line), _field(obj, "params", dict, line))
    if kind == "event":
        return AgentEvent(_id(obj, line), _field(obj, "data", dict, line))
    if kind == "result":
        return Result(_id(obj, line), _field(obj, "data", dict, line))
    if kind == "error":
        err_kind = _field(obj, "kind", str, line)
        if err_kind not in ERROR_KINDS:
            raise ProtocolError(f"an error message has an unknown kind {err_kind!r}")
        message = _field(obj, "message", str, line).strip().splitlines()
        return Error(_id(obj, line), err_kind, (message[0] if message else "no message")[:500])
    if kind == "bye":
        return Bye()
    if kind == "beat":
        return Beat()
    raise ProtocolError(f"unknown message type {kind!r}: {_shown(line)}")
