"""``device-explorer admin queue [--clean] [--dir FOLDER] [--json]``: the lab admin's view of a GPU
server's queue folder, and its clean-up.

Why a command: in the sticky folder the queue lives in, nobody but root (and the folder's owner)
may remove another user's files, so an ended place (a run killed with SIGKILL, a crashed laptop's
agent) stays until its owner's next run, and files a student planted there stay for good. Readers
already ignore both; this removes them, and never a place whose run still holds it. The work is
``explorer.gpuqueue.tickets.clean``; this module only reads the request and words the outcome.
"""

from __future__ import annotations

import json
import os
import time
from argparse import Namespace
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.errors import UserError
from explorer.gpuqueue.tickets import (
    PREFIX,
    TICKET,
    Cleaned,
    QueuePolicy,
    clean,
    folder_problem,
    order,
    queue_dir,
    read_policy,
    survey,
    user_name,
)
from explorer.inputs import shown


@dataclass(frozen=True)
class AdminRequest:
    folder: Path
    clean: bool
    as_json: bool


def parse_admin(args: Namespace) -> AdminRequest:
    """The folder (``--dir``, else ``$DEVICE_EXPLORER_LOCK_DIR``, else /tmp), checked as every run
    checks it: UserError (one line, with the command that fixes it) when it cannot hold a queue."""
    folder = _folder(args.dir) if args.dir is not None else queue_dir()
    problem = folder_problem(folder)
    if problem:
        raise UserError(problem)
    return AdminRequest(folder, bool(args.clean), bool(args.json))


def _folder(text: str) -> Path:
    if not text.strip() or "\0" in text:
        raise UserError(f"--dir {shown(text)} is not a folder's path; name the GPU queue folder")
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        raise UserError(f"--dir {shown(text)}: there is no user whose home '~' could mean")
    if len(os.fsencode(expanded)) > 4095:
        raise UserError(f"--dir is {len(os.fsencode(expanded))} bytes long; paths are at most 4095")
    return Path(expanded)


def run_admin(args: Namespace) -> int:
    req = parse_admin(args)
    policy = read_policy(req.folder)
    if req.clean:
        try:
            done = clean(req.folder, stall_s=policy.stall_s)
        except OSError as exc:
            raise UserError(
                f"cannot clean the GPU queue folder {str(req.folder)!r} ({exc.strerror or exc})"
            ) from None
        if req.as_json:
            print(json.dumps({"folder": str(req.folder), "cleaned": done.to_dict()}))
        else:
            print("\n".join(cleaned_words(done, req.folder, policy.stall_s)))
        return 1 if done.not_allowed or done.left else 0
    gpus = [_line_of(req.folder, key, policy) for key in _keys(req.folder)]
    if req.as_json:
        print(json.dumps({"folder": str(req.folder), "stall_s": policy.stall_s, "gpus": gpus}))
        return 0
    print(f"the GPU queue in {req.folder} (stall_s {policy.stall_s:g}, turn_s {policy.turn_s:g})")
    if policy.note:
        print(policy.note)
    if not gpus:
        print("no run waits for or holds a GPU")
    for gpu in gpus:
        holder = gpu["holder"]
        said = f"{gpu['key']}: " + (f"{holder} holds it" if holder else "free")
        if gpu["waiting"]:
            said += f"; waiting: {', '.join(gpu['waiting'])}"
        if gpu["ignored_words"]:
            said += f"; {gpu['ignored_words']}"
        print(said)
    return 0


def _keys(folder: Path) -> list[str]:
    """The GPUs that have tickets in ``folder`` (from the names: ``PREFIX<key>.<uid>.<pid>.<nonce>.ticket``)."""
    keys: set[str] = set()
    try:
        names = [n for n in (p.name for p in folder.iterdir()) if n.startswith(PREFIX) and n.endswith(TICKET)]
    except OSError as exc:
        raise UserError(f"cannot list the GPU queue folder {str(folder)!r} ({exc.strerror or exc})") from None
    for name in names:
        parts = name[len(PREFIX) : -len(TICKET)].split(".")
        if len(parts) == 4 and parts[0]:
            keys.add(parts[0][:120])
    return sorted(keys)


def _line_of(folder: Path, key: str, policy: QueuePolicy) -> dict[str, Any]:
    seen = survey(folder, key, stall_s=policy.stall_s, clean=False)
    line = order(seen.tickets, me=None, now_mono=time.monotonic(), policy=policy, seen_holding={})
    holder = line.holder
    return {
        "key": key,
        "holder": holder.user if holder is not None else "",
        "holder_workload": holder.workload if holder is not None else "",
        "waiting": [t.user for t in line.valid[1:]],
        "ignored": {user_name(uid): n for uid, n in sorted(seen.ignored.items())},
        "ignored_words": seen.ignored_words(),
    }


def _by_user(counts: dict[str, int]) -> str:
    return ", ".join(
        f"{user} {n}" for user, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )


def _n(count: int, thing: str) -> str:
    return f"{count} {thing}" + ("" if count == 1 else "s")


def cleaned_words(done: Cleaned, folder: Path, stall_s: float) -> list[str]:
    """What the clean-up did, a line per kind, each naming the users: e.g. "removed 10000 planted
    files, named like the queue's but written by no run (mallory 10000)"."""
    ended, planted = sum(done.ended.values()), sum(done.planted.values())
    said = [
        f"removed {_n(ended, 'ended place')}" + (f" ({_by_user(done.ended)})" if ended else ""),
        f"removed {_n(planted, 'planted file')}, named like the queue's but written by no run"
        + (f" ({_by_user(done.planted)})" if planted else ""),
    ]
    live = sum(done.live.values())
    if live:
        whose = "whose run still holds it" if live == 1 else "whose runs still hold them"
        said.append(f"kept {_n(live, 'live place')}, {whose} ({_by_user(done.live)})")
    stalled = sum(done.stalled.values())
    if stalled:
        said.append(
            f"of them {stalled} without a heartbeat for over {stall_s:g} s, which the others already pass "
            f"by (a stopped run, or a place held open): {_by_user(done.stalled)}"
        )
    refused = sum(done.not_allowed.values())
    if refused:
        owner = "root"
        try:
            owner = user_name(folder.lstat().st_uid)
        except OSError:
            pass
        said.append(
            f"left {_n(refused, 'file')} of other users ({_by_user(done.not_allowed)}): only root or the "
            f"folder's owner ({owner}) may remove them; run 'sudo device-explorer admin queue --clean'"
        )
    said += [f"left {what}" for what in done.left[:20]]
    return said
