"""A hostile agent: it speaks the agent protocol as a lab server under someone else's control could,
and answers every request with what MODE plays (tests/remote/test_hostile_agent.py runs it as the
remote Python over the real loopback sshd).

``python hostile_agent.py MODE`` (the ``-m explorer agent`` ssh appends is ignored). It says a
hello the app accepts (same package, version and protocol), then answers ``bench.prepare``,
``gpu.lock``, ``bench.point``, ``bench.roof``, ``devices.list`` and ``selftest.run`` with made-up
but well-formed answers, spoiled the way MODE says. Lines are written raw, so it can send what the
real encoder never would: a 400-digit integer, NaN, nesting 200,000 deep, a 17 MB line, bytes that
are not JSON.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from explorer import __version__
from explorer.agent.build import build_id
from explorer.agent.protocol import PACKAGE, PROTOCOL_VERSION

#: sets the terminal's title, clears the screen, homes the cursor, then a fake line of our own
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[H\x9b31m\u202e"
FAKE_LINE = "\nall points ok\r"
FORMULAS = ['=HYPERLINK("http://evil.example/","click")', "+1+1", "-2+3", "@SUM(1,2)"]
HUGE = 10**400

#: every mode, and what it spoils (the test plays each one)
MODES = {
    "escapes": "escape sequences and fake lines in every text: hello, names, hostname, points, self-test, waiting",
    "formulas": "spreadsheet formulas in every text field of a point",
    "huge-roof": "a roof whose ceiling and clock are 400-digit integers (once an OverflowError)",
    "huge-repeats": "a point measured 10**400 times",
    "huge-median": "a point whose median is 1e308 s",
    "nan": "a point whose median is NaN",
    "wrong-types": "a point whose size is text and whose throughput is a list",
    "huge-device": "a device with 10**400 bytes of memory and 10**400 cores",
    "deep": "an answer nested 200,000 deep",
    "overlong": "a 17 MB line",
    "garbage": "bytes that are not JSON",
    "stderr-escapes": "escape sequences on stderr, then it dies mid-point",
    "silent": "it takes every point and never answers (the connection stays up)",
}

MODE = sys.argv[1] if len(sys.argv) > 1 else "escapes"
_out = os.fdopen(os.dup(1), "wb", buffering=0)


def send_raw(text: str | bytes) -> None:
    _out.write((text.encode("utf-8") if isinstance(text, str) else text) + b"\n")


def send(obj: dict[str, Any]) -> None:
    send_raw(json.dumps(obj, ensure_ascii=False))  # NaN and 400-digit ints are written as they are


def spoil(text: str) -> str:
    if MODE == "escapes":
        return f"{ESCAPES}{text}{FAKE_LINE}"
    return text


def point(spec: dict[str, Any]) -> dict[str, Any]:
    p: dict[str, Any] = {
        "workload": spec["workload"],
        "variant": spec["variant"],
        "device": spec["device"],
        "size": spec["size"],
        "size_label": spoil(f"n={spec['size']}"),
        "median_s": 0.001,
        "min_s": 0.001,
        "spread_s": 0.0,
        "repeats": 3,
        "throughput": 1.0,
        "throughput_unit": spoil("GFLOP/s"),
        "peak_basis": spoil("a spec sheet"),
        "noise_reason": spoil(""),
        "model": spoil(""),
        "dtype": spoil("float32"),
    }
    if MODE == "formulas":
        for key, formula in zip(("size_label", "peak_basis", "model", "dtype"), FORMULAS, strict=True):
            p[key] = formula
        p["throughput_unit"] = "=1+1"
    elif MODE == "huge-repeats":
        p["repeats"] = HUGE
    elif MODE == "huge-median":
        p["median_s"] = 1e308
    elif MODE == "nan":
        p["median_s"] = float("nan")
    elif MODE == "wrong-types":
        p["size"] = "big"
        p["throughput"] = [1, 2]
    return p


def roof(device: str) -> dict[str, Any]:
    value = HUGE if MODE == "huge-roof" else 100.0
    return {
        "device": device,
        "name": spoil("Hostile CPU"),
        "note": spoil("measured"),
        "measured_clock_ghz": HUGE if MODE == "huge-roof" else 3.0,
        "measured_clock_method": spoil("a guess"),
        "ceilings": [
            {"quantity": "compute", "value": value, "kind": "measured", "name": spoil("sgemm"), "basis": "x"},
            {"quantity": "memory", "value": 10.0, "kind": "measured", "name": spoil("triad"), "basis": "x"},
        ],
    }


def devices() -> dict[str, Any]:
    cpu: dict[str, Any] = {"kind": "cpu", "key": "cpu", "name": spoil("Hostile CPU"), "vendor": spoil("ACME")}
    if MODE == "huge-device":
        cpu["memory_total_bytes"] = HUGE
        cpu["physical_cores"] = HUGE
    return {
        "discovery": {"devices": [cpu], "probes": [{"probe": "cpu", "ok": True, "message": spoil("found")}]},
        "why_no_gpu": spoil("No NVIDIA GPU was found there."),
        "hostname": spoil("hostile-server"),
    }


def answer(request: dict[str, Any]) -> None:
    rid, method, params = request["id"], request["method"], request.get("params", {})
    if method == "bench.point":
        if MODE == "deep":
            send_raw(f'{{"type":"result","id":{rid},"data":{{"point":' + "[" * 200_000 + "]" * 200_000 + "}}")
            return
        if MODE == "overlong":
            send_raw(f'{{"type":"result","id":{rid},"data":{{"x":"' + "a" * (17 * 1024 * 1024) + '"}}')
            return
        if MODE == "garbage":
            send_raw(b"\xff\xfe not json at all \x1b[2J")
            return
        if MODE == "stderr-escapes":
            sys.stderr.write(f"{ESCAPES}Traceback (most recent call last):{FAKE_LINE}\n")
            sys.stderr.flush()
            os._exit(1)
        send({"type": "result", "id": rid, "data": {"point": point(params), "fatal": False}})
    elif method == "bench.roof":
        send({"type": "result", "id": rid, "data": {"roof": roof(params.get("device", "cpu"))}})
    elif method == "gpu.lock":
        send({"type": "event", "id": rid, "data": {"waiting_s": 1, "message": spoil("waiting: another run")}})
        send({"type": "result", "id": rid, "data": {"key": "gpu", "waited_s": 1.0}})
    elif method == "bench.prepare":
        send({"type": "result", "id": rid, "data": {"loaded": [], "missing": []}})
    elif method == "devices.list":
        send({"type": "result", "id": rid, "data": devices()})
    elif method == "selftest.run":
        check = {"name": spoil("import"), "status": "pass", "detail": spoil("fine"), "duration_s": 0.1}
        send({"type": "event", "id": rid, "data": {"line": spoil("PASS  import"), "check": check}})
        send({"type": "result", "id": rid, "data": {"checks": [check]}})
    else:
        send({"type": "error", "id": rid, "kind": "failed", "message": spoil(f"no {method} here")})


def main() -> int:
    send(
        {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "package": PACKAGE,
            "version": __version__,
            "python": spoil("3.11"),
            "pid": os.getpid(),
            "platform": spoil("linux"),
            "build": build_id(),
            "started": {"argv": [spoil("python")], "forced": False, "guard": None},
            "heartbeat_s": 20,
        }
    )
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("type") == "bye":
            return 0
        if MODE == "silent" and message.get("type") == "request" and message.get("method") == "bench.point":
            continue  # it takes the point and never answers, beats or no beats

        if message.get("type") == "request":
            answer(message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
