"""The line for one GPU of a shared machine: files in a sticky folder, read the same way by every run.

Why not one ``flock`` per GPU (the first design): whoever created the lock file owned it, so one
student could delete it (two runs then shared the GPU), plant a FIFO in its place (every run hung)
or simply hold it (``flock FILE sleep 1d``, a suspended laptop) and nobody could take it back.
Here no file is shared: each run waiting for or holding a GPU owns two small files of its own,

* ``device-explorer-gpu.<GPU>.<uid>.<pid>.<nonce>.ticket``: its place in the line. Written once and
  never touched again, so its *ctime* (which no user can set: ``touch`` moves it to now, never
  back) is when the run arrived. It holds who asked, for which workload (JSON, 0644), and the
  run keeps an ``flock`` on it for its whole life: a reader whose own lock on it succeeds knows
  the run is gone, however it ended.
* ``...<nonce>.beat``: its heartbeat. The run rewrites it while it makes progress (while it
  waits, and while it measures); the beat's ctime is the last sign of life.

In a sticky folder (``/tmp``, or one the admin made) no user can delete, rename or replace
another's files, and only the owner of the folder can change the folder. Every reader lists
the folder, keeps the files that are what the app writes (regular files, owned by the user the
name says, one link, a beat beside them) and orders them by arrival: the first *valid* ticket
holds the GPU. A ticket is valid while its run lives, its beat is younger than the admin's
``stall_s`` (a run suspended with Ctrl-Z or SIGSTOP, a laptop that froze between two points, a
planted file with no heartbeat all stop counting after that long) and, as its holder, for at
most ``turn_s`` + ``grace_s`` from when the reader saw it take the GPU (a run that fakes its
heartbeat still hands over). Each user counts once: a user's later tickets wait behind their
first (and are counted among those ahead of anyone who came after them). A holder itself gives
the GPU up after ``turn_s`` when someone waits (between two points), and goes to the back of the
line.

Nobody can block the line by planting files: every file is checked (owner, links, a fresh beat
beside it; then its run's lock) before any bound applies, and the bounds are per user (the
file's owner, which a name cannot fake), so one user's flood costs only their own places; a run
always looks at its own place. A place whose run has ended and that has not beaten for
``stall_s`` is removed by any reader allowed to remove it (its owner's runs, root, the folder's
owner); the rest wait for ``clean`` (``device-explorer admin queue --clean``, as root). Times are
ctimes, which no user can move (``touch -d`` and ``os.utime`` move mtimes, never read here); a
beat whose ctime is ahead of the reader's clock (the clock stepped back) counts as fresh until
the clock reaches it, bounded for a holder by ``turn_s`` + ``grace_s`` on the monotonic clock.

Nothing here follows a link or opens a FIFO: every file is looked at with ``lstat`` and opened
with ``O_NOFOLLOW | O_NONBLOCK``, and only regular files are read (at most ``MAX_INFO_BYTES``).

``order`` is the decision, a pure function of what one look saw (tested with plain values);
``survey`` reads the folder (``look``: its places); ``Place`` is one run's own place (create,
beat, leave); ``clean`` is the admin's clean-up.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.schema import SchemaError, loads

LOCK_DIR_ENV = "DEVICE_EXPLORER_LOCK_DIR"
#: where the line lives when the admin named no folder: the system's own sticky /tmp
DEFAULT_DIR = "/tmp"
PREFIX = "device-explorer-gpu."
TICKET = ".ticket"
BEAT = ".beat"
#: the admin's settings, read only from a file root owns that nobody else may write
POLICY_FILE = "device-explorer-gpu-queue.json"
MAX_INFO_BYTES = 4096
#: what a place may say it runs (shown to the others who wait): a workload's name, nothing else
_WORKLOAD = re.compile(r"[A-Za-z0-9_.-]{1,60}")
#: one user's places that count per look (only the earliest holds; the rest wait behind it), and
#: one user's ticket files opened per look: a user who floods the folder spends their own share
MAX_PLACES_PER_USER = 32
MAX_OPENED_PER_USER = 256
#: a user who leaves this many files in a GPU's line that do not count is named to those who wait
FLOOD_NAMED_AT = 10

DEFAULT_STALL_S = 30.0
DEFAULT_TURN_S = 600.0
DEFAULT_GRACE_S = 120.0
#: how long a remote agent (and its Slurm launcher guard) goes on without a word from the app
#: that started it (``explorer.agent.serve``; the app says one every ``BEAT_EVERY_S``) before it
#: takes the app for gone (a frozen laptop, a dead link), cancels its job and leaves the line
DEFAULT_HEARTBEAT_S = 20.0
#: what the admin may set (seconds): a bound under 2 s would take the GPU from a run between two
#: of its own points; one over a week is no bound; a heartbeat bound under 6 s is three missed
#: beats of the app's
POLICY_LIMITS = {
    "stall_s": (2.0, 3600.0),
    "turn_s": (10.0, 604800.0),
    "grace_s": (0.0, 3600.0),
    "heartbeat_s": (6.0, 3600.0),
}


@dataclass(frozen=True)
class QueuePolicy:
    """How long a run may go without progress (``stall_s``) or hold the GPU while others wait
    (``turn_s``; a point already running gets ``grace_s`` more) before the next run takes it;
    and how long a remote agent waits for a word from its app (``heartbeat_s``) before it ends.

    ``source`` is the admin's file these came from ("" for the defaults); ``note`` says why a
    policy file that is there was not used (not root's, writable by others, not valid)."""

    stall_s: float = DEFAULT_STALL_S
    turn_s: float = DEFAULT_TURN_S
    grace_s: float = DEFAULT_GRACE_S
    heartbeat_s: float = DEFAULT_HEARTBEAT_S
    source: str = ""
    note: str = ""

    @property
    def beat_every_s(self) -> float:
        """How often a run renews its heartbeat: well inside ``stall_s``."""
        return max(0.25, self.stall_s / 4)


def queue_dir(env: dict[str, str] | None = None) -> Path:
    """The folder of the line: ``$DEVICE_EXPLORER_LOCK_DIR`` (set for every login by the admin,
    e.g. in /etc/environment), else ``/tmp``."""
    environ = os.environ if env is None else env
    value = environ.get(LOCK_DIR_ENV)
    # /tmp is a link to /private/tmp on macOS: the system's own link, followed once here
    return Path(value) if value else Path(os.path.realpath(DEFAULT_DIR))


def folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot hold a line other users cannot break (one line), None when it can.

    It must be a real directory (not a link), owned by root or by this user (its owner can
    empty it), and sticky where others may write in it (or they could delete each other's
    places)."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return (
            f"the GPU queue folder {str(folder)!r} does not exist; the lab admin makes it with "
            f"'sudo install -d -o root -g root -m 1777 {folder}'"
        )
    except OSError as exc:
        return f"the GPU queue folder {str(folder)!r} cannot be read ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        return f"the GPU queue folder {str(folder)!r} is not a folder (a link or a file)"
    me = os.getuid()
    if st.st_uid not in (0, me):
        return (
            f"the GPU queue folder {str(folder)!r} belongs to {user_name(st.st_uid)}, who could empty "
            f"or block it; the lab admin makes one root owns ('sudo install -d -o root -g root -m 1777 "
            f"{folder}') or unsets {LOCK_DIR_ENV}"
        )
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return (
            f"the GPU queue folder {str(folder)!r} lets other users delete each other's places "
            f"(mode {stat.S_IMODE(st.st_mode):04o}, not sticky); the lab admin runs 'sudo chmod 1777 {folder}'"
        )
    if st.st_uid != me and not os.access(folder, os.W_OK | os.X_OK):
        return (
            f"the GPU queue folder {str(folder)!r} is not writable by {user_name(me)} "
            f"(mode {stat.S_IMODE(st.st_mode):04o}); the lab admin runs 'sudo chmod 1777 {folder}'"
        )
    return None


def read_policy(folder: Path) -> QueuePolicy:
    """The admin's settings from ``folder/device-explorer-gpu-queue.json``, or the defaults.

    Only a regular file root owns and nobody else may write is read: a student cannot shorten
    the bounds to take the GPU sooner, nor lengthen them to keep it."""
    path = folder / POLICY_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return QueuePolicy()
    except OSError as exc:
        return QueuePolicy(note=f"{path} cannot be read ({exc.strerror}): the defaults apply")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return QueuePolicy(note=f"{path} is not a regular file: the defaults apply")
        if st.st_uid != 0 or st.st_mode & 0o022:
            return QueuePolicy(
                note=f"{path} belongs to {user_name(st.st_uid)} or others may write it (only a file root "
                "owns and alone may write is used): the defaults apply"
            )
        data = os.read(fd, MAX_INFO_BYTES + 1)
    finally:
        os.close(fd)
    try:
        values = parse_policy(data)
    except ValueError as exc:
        return QueuePolicy(note=f"{path}: {exc}; the defaults apply")
    return QueuePolicy(
        stall_s=values.get("stall_s", DEFAULT_STALL_S),
        turn_s=values.get("turn_s", DEFAULT_TURN_S),
        grace_s=values.get("grace_s", DEFAULT_GRACE_S),
        heartbeat_s=values.get("heartbeat_s", DEFAULT_HEARTBEAT_S),
        source=str(path),
    )


def parse_policy(data: bytes) -> dict[str, float]:
    """The settings in a policy file's bytes; ValueError naming the value and its limits."""
    if len(data) > MAX_INFO_BYTES:
        raise ValueError(f"it is longer than {MAX_INFO_BYTES} bytes")
    try:
        obj = loads(data, max_bytes=MAX_INFO_BYTES)
    except SchemaError:
        raise ValueError('it is not JSON such as {"stall_s": 30, "turn_s": 600}') from None
    if not isinstance(obj, dict):
        raise ValueError('it is not a JSON object such as {"stall_s": 30, "turn_s": 600}')
    values: dict[str, float] = {}
    for name, value in obj.items():
        if name not in POLICY_LIMITS:
            raise ValueError(f"{name!r:.40} is not a setting (stall_s, turn_s, grace_s, heartbeat_s)")
        low, high = POLICY_LIMITS[name]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not low <= value <= high
        ):
            raise ValueError(
                f"{name} is {str(value)[:40]}; it must be a number of seconds from {low:g} to {high:g}"
            )
        values[name] = float(value)
    return values


def user_name(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


# --- what one look at the folder saw -----------------------------------------------------------


@dataclass(frozen=True)
class Ticket:
    """One place in the line as a look saw it.

    ``ident`` (owner, inode, arrival) tells this place from a later one that reused its name; ``arrived_ns``
    is the ticket's ctime; ``beat_age_s`` how long since its run last showed progress (None: no
    beat, which is never valid); ``alive``: its run still holds the lock on it. ``user``, the
    owner's name, comes from the file's owner; ``workload`` and ``holding_since`` (a wall-clock
    time, None while waiting) are what the run wrote, for the waiting line only."""

    name: str
    uid: int
    user: str
    arrived_ns: int
    beat_age_s: float | None
    alive: bool
    ident: tuple[int, int, int]
    workload: str = ""
    holding_since: float | None = None


@dataclass(frozen=True)
class Line:
    """The line for one GPU, as ``order`` decided it from one look.

    ``valid`` in order, the holder first, each user once; ``mine`` this run's own place when it is
    valid; ``ahead`` how many places take their turn before it (0: it holds the GPU), a user's
    second run queued behind their first included (it goes before later arrivals); ``own_first``: this
    user's earlier run holds a place, so this one waits behind it; ``holder_idle_s`` how long
    the holder has not shown progress."""

    valid: list[Ticket]
    mine: Ticket | None = None
    ahead: int = 0
    own_first: bool = False

    @property
    def holder(self) -> Ticket | None:
        return self.valid[0] if self.valid else None

    @property
    def holds(self) -> bool:
        """This run holds the GPU."""
        return self.mine is not None and self.holder is self.mine

    @property
    def others_waiting(self) -> int:
        return len([t for t in self.valid if t is not self.mine])


def order(
    tickets: Iterable[Ticket],
    *,
    me: str | None,
    now_mono: float,
    policy: QueuePolicy,
    seen_holding: dict[tuple[int, int, int], tuple[float, float]],
    now_wall: float | None = None,
) -> Line:
    """Who holds the GPU and who waits, from one look; the same for every reader.

    ``me`` is this run's ticket name (None for a look from outside the line); ``seen_holding``
    (kept by the caller across looks) records when this reader first saw each place hold the GPU
    (monotonic, wall-clock). A place counts when its run lives, its beat is younger than
    ``stall_s``, and it is its user's earliest such place; ties in arrival are broken by name, so
    every reader orders alike. A holder this reader has seen hold the GPU for over ``turn_s`` +
    ``grace_s`` stops counting, however it fakes its heartbeat, and so does every place its user
    made before that turn ended: a user who queued many places in advance gets one turn, then
    goes to the back of the line."""
    wall = time.time() if now_wall is None else now_wall
    limit = policy.turn_s + policy.grace_s
    over_until: dict[int, int] = {}  # uid -> places it made before this (ns) are past their turn

    def over(ident: tuple[int, int, int], first_wall: float) -> None:
        uid = ident[0]
        over_until[uid] = max(over_until.get(uid, -1), int((first_wall + limit) * 1e9))

    for ident, (first_mono, first_wall) in seen_holding.items():
        if now_mono - first_mono > limit:
            over(ident, first_wall)
    users_seen: set[int] = set()
    valid: list[Ticket] = []
    queued: list[Ticket] = []  # every place that takes a turn, in the order turns are taken
    own_first = False
    for ticket in sorted(tickets, key=lambda t: (t.arrived_ns, t.name)):
        fresh = ticket.beat_age_s is not None and ticket.beat_age_s <= policy.stall_s
        if not (ticket.alive and fresh):
            continue
        if ticket.name != me and ticket.arrived_ns < over_until.get(ticket.uid, -1):
            continue
        if ticket.uid in users_seen:
            own_first = own_first or ticket.name == me
            queued.append(ticket)  # behind its user's earlier place, still before later arrivals
            continue
        if not valid and ticket.name != me:
            first_mono, first_wall = seen_holding.setdefault(ticket.ident, (now_mono, wall))
            if now_mono - first_mono > limit:
                over(ticket.ident, first_wall)
                continue  # its turn is over, as this reader saw it begin
        users_seen.add(ticket.uid)
        valid.append(ticket)
        queued.append(ticket)
    mine = next((t for t in valid if t.name == me), None)
    own = next((i for i, t in enumerate(queued) if t.name == me), None)
    ahead = own if own is not None else len(queued)
    return Line(valid, mine, ahead, own_first)


@dataclass(frozen=True)
class Survey:
    """What one look at a GPU's line found.

    ``tickets``: the places that may count (their run lives, their beat is fresh), each user's
    earliest in arrival order, and always this run's own place when its file is there (even when
    it no longer counts: the caller then takes a new one). ``ignored``: per user, the files named
    like places of this GPU that do not count (ended runs, planted files, a flood past the per-user
    bounds), owned by that user, which a name cannot fake. ``removed``: ended places this look
    removed (its own user's, or anyone's where this user may: root, the folder's owner)."""

    tickets: list[Ticket]
    ignored: dict[int, int] = field(default_factory=dict)
    removed: int = 0

    def mine(self, name: str) -> Ticket | None:
        return next((t for t in self.tickets if t.name == name), None)

    def ignored_words(self) -> str:
        """The flood, named: "10000 tickets of user mallory look dead and are ignored" ("" when
        no user left as many as ``FLOOD_NAMED_AT``)."""
        floods = sorted(((n, uid) for uid, n in self.ignored.items() if n >= FLOOD_NAMED_AT), reverse=True)
        return "; ".join(
            f"{n} tickets of user {user_name(uid)} look dead and are ignored" for n, uid in floods
        )


def look(
    folder: Path, key: str, *, now_wall: float | None = None, stall_s: float = DEFAULT_STALL_S
) -> list[Ticket]:
    """The places in ``folder``'s line for GPU ``key`` that may count (``survey``'s tickets)."""
    return survey(folder, key, now_wall=now_wall, stall_s=stall_s).tickets


def survey(
    folder: Path,
    key: str,
    *,
    mine: str = "",
    stall_s: float = DEFAULT_STALL_S,
    now_wall: float | None = None,
    clean: bool = True,
) -> Survey:
    """Look at ``folder``'s line for GPU ``key``: every file is filtered before any bound applies.

    Skipped without being opened: links, FIFOs and other non-regular files, a file with more than
    one link (someone else's ticket linked in under another name), a ticket whose owner is not the
    user its name says, one without a heartbeat beside it or whose heartbeat is older than
    ``stall_s``. The rest are opened (no-follow, non-blocking; at most ``MAX_INFO_BYTES`` read) in
    arrival order per user, at most ``MAX_OPENED_PER_USER`` and ``MAX_PLACES_PER_USER`` counted
    per user: a user who floods the folder spends only their own share, never another's. This
    run's own place (``mine``) is always looked at. With ``clean``, an ended place (nobody holds its
    lock) without a beat for ``stall_s`` is removed where this user may remove it."""
    now = time.time() if now_wall is None else now_wall
    head = f"{PREFIX}{key}."
    me = os.getuid()
    try:
        may_clean_all = clean and (me == 0 or os.lstat(folder).st_uid == me)
    except OSError:
        may_clean_all = False
    stats: dict[str, os.stat_result] = {}
    candidates: dict[int, list[tuple[int, str]]] = {}  # uid -> (arrival, name) of tickets worth opening
    ignored: dict[int, int] = {}
    tickets_found: list[tuple[str, os.stat_result]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith(head) and (name.endswith(TICKET) or name.endswith(BEAT)):
                    try:
                        st = stats[name] = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if name.endswith(TICKET):
                        tickets_found.append((name, st))
    except OSError:
        return Survey([])
    removed = 0
    oldest_fresh_ns = (now - stall_s) * 1e9
    for name, st in tickets_found:
        if name == mine:
            continue
        uid = st.st_uid
        beat_st = stats.get(name[: -len(TICKET)] + BEAT)
        if (
            beat_st is not None
            and beat_st.st_ctime_ns >= oldest_fresh_ns
            and beat_st.st_uid == uid
            and stat.S_ISREG(beat_st.st_mode)
            and beat_st.st_nlink == 1
            and stat.S_ISREG(st.st_mode)
            and st.st_nlink == 1
            and _owner_in_name(name) == uid
        ):
            candidates.setdefault(uid, []).append((st.st_ctime_ns, name))
            continue
        ignored[uid] = ignored.get(uid, 0) + 1
        if (
            (may_clean_all or (clean and uid == me))
            and max(st.st_ctime_ns, beat_st.st_ctime_ns if beat_st else 0) < oldest_fresh_ns
            and stat.S_ISREG(st.st_mode)
            and st.st_nlink == 1
            and _owner_in_name(name) == uid
        ):
            removed += _remove_if_ended(folder, name, st)
    tickets: list[Ticket] = []
    for uid, found in candidates.items():
        found.sort()
        counted = opened = 0
        for _, name in found:
            if counted >= MAX_PLACES_PER_USER or opened >= MAX_OPENED_PER_USER:
                ignored[uid] = ignored.get(uid, 0) + 1
                continue
            opened += 1
            ticket = _read_ticket(folder, name, stats[name], now)
            if ticket is not None and ticket.alive:
                counted += 1
                tickets.append(ticket)
            else:
                ignored[uid] = ignored.get(uid, 0) + 1
    if mine and mine in stats:
        own = _read_ticket(folder, mine, stats[mine], now)
        if own is not None:
            tickets.append(own)
    tickets.sort(key=lambda t: (t.arrived_ns, t.name))
    return Survey(tickets, ignored, removed)


def full_words(folder: Path) -> str:
    """Who fills ``folder`` when no place can be written there: "9990 of its 10002 files belong to
    mallory" (the user with the most files), "" when it cannot be listed."""
    counts: dict[int, int] = {}
    total = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    uid = entry.stat(follow_symlinks=False).st_uid
                except OSError:
                    continue
                total += 1
                counts[uid] = counts.get(uid, 0) + 1
    except OSError:
        return ""
    if not counts:
        return ""
    uid, most = max(counts.items(), key=lambda item: item[1])
    return f"{most} of its {total} files belong to {user_name(uid)}"


def _remove_if_ended(folder: Path, name: str, st: os.stat_result) -> int:
    """Remove the place ``name`` (ticket and beat) when its run has ended: 1 when removed.

    Proof that it ended: an exclusive lock on the very file listed is granted (its run held one
    for its whole life; a process that ends, however it ends, lets go)."""
    import fcntl

    fd = _open_regular(folder / name)
    if fd is None:
        return 0
    try:
        now = os.fstat(fd)
        if (now.st_ino, now.st_uid) != (st.st_ino, st.st_uid):
            return 0
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # its run still holds it (or someone looks at it right now): left alone
    finally:
        os.close(fd)
    try:
        os.unlink(folder / name)
    except OSError:
        return 0
    _unlink(folder / (name[: -len(TICKET)] + BEAT))
    return 1


def _owner_in_name(name: str) -> int | None:
    parts = name[len(PREFIX) : -len(TICKET)].split(".")
    if len(parts) != 4 or not parts[1].isdigit():  # key, uid, pid, nonce
        return None
    return int(parts[1])


def _read_ticket(folder: Path, name: str, st: os.stat_result, now: float) -> Ticket | None:
    if _owner_in_name(name) != st.st_uid:
        return None
    beat_age: float | None = None
    holding_since: float | None = None
    beat = folder / (name[: -len(TICKET)] + BEAT)
    try:
        bst = os.lstat(beat)
        if stat.S_ISREG(bst.st_mode) and bst.st_uid == st.st_uid and bst.st_nlink == 1:
            beat_age = max(0.0, now - bst.st_ctime_ns / 1e9)
            since = _read_json(beat, bst.st_uid).get("holding_since")
            if isinstance(since, (int, float)) and not isinstance(since, bool) and math.isfinite(since):
                holding_since = float(since)
    except OSError:
        pass
    alive, info = _alive_and_info(folder / name, st)
    if alive is None:
        return None
    workload = info.get("workload")
    if not isinstance(workload, str) or not _WORKLOAD.fullmatch(workload):
        workload = ""  # another user wrote this file: only a workload's name is shown to others
    return Ticket(
        name=name,
        uid=st.st_uid,
        user=user_name(st.st_uid),
        arrived_ns=st.st_ctime_ns,
        beat_age_s=beat_age,
        alive=alive,
        ident=(st.st_uid, st.st_ino, st.st_ctime_ns),
        workload=workload,
        holding_since=holding_since,
    )


def _open_regular(path: Path) -> int | None:
    """A read-only descriptor of ``path`` when it is a regular file (never a link, FIFO or device)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _read_json(path: Path, uid: int) -> dict[str, Any]:
    fd = _open_regular(path)
    if fd is None:
        return {}
    try:
        if os.fstat(fd).st_uid != uid:
            return {}
        data = os.read(fd, MAX_INFO_BYTES + 1)
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        obj = loads(data, max_bytes=MAX_INFO_BYTES)
    except SchemaError:
        return {}
    return obj if isinstance(obj, dict) else {}


def _alive_and_info(path: Path, st: os.stat_result) -> tuple[bool | None, dict[str, Any]]:
    """Whether the ticket's run still lives (it holds an flock on it), and what it wrote; (None, {})
    when the file is no longer the one listed."""
    import fcntl

    fd = _open_regular(path)
    if fd is None:
        return None, {}
    try:
        now = os.fstat(fd)
        if (now.st_ino, now.st_uid) != (st.st_ino, st.st_uid):
            return None, {}
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            alive = True
        except OSError:
            return None, {}
        else:
            alive = False  # nobody holds it: the run that wrote it has ended
            fcntl.flock(fd, fcntl.LOCK_UN)
        data = os.read(fd, MAX_INFO_BYTES + 1)
    except OSError:
        return None, {}
    finally:
        os.close(fd)
    try:
        info = loads(data, max_bytes=MAX_INFO_BYTES)
    except SchemaError:
        info = {}
    return alive, info if isinstance(info, dict) else {}


# --- one run's own place ------------------------------------------------------------------------


@dataclass
class Place:
    """This run's place in one GPU's line: its two files, the lock on its ticket, its heartbeat.

    ``join`` writes them (the ticket last, under its final name only once it is locked and
    written, so no reader ever sees a place without its lock); ``beat`` renews the heartbeat and
    says how long the previous beat was ago (a run that was suspended longer than ``stall_s`` has
    lost its place as others saw it); ``leave`` removes both files."""

    folder: Path
    key: str
    workload: str
    name: str = ""
    ticket_fd: int | None = None
    beat_fd: int | None = None
    holding_since: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def join(self) -> None:
        import fcntl

        self.leave()
        uid, pid = os.getuid(), os.getpid()
        for _ in range(20):
            stem = f"{PREFIX}{self.key}.{uid}.{pid}.{secrets.token_hex(6)}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK
            try:
                beat_fd = os.open(self.folder / (stem + BEAT), flags, 0o644)
            except FileExistsError:
                continue
            try:
                temp = self.folder / (stem + ".new")
                ticket_fd = os.open(temp, flags, 0o644)
            except OSError:
                os.close(beat_fd)
                _unlink(self.folder / (stem + BEAT))
                raise
            try:
                fcntl.flock(ticket_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                info = {"workload": self.workload, "pid": pid, "asked": time.time(), **self.extra}
                os.write(ticket_fd, json.dumps(info).encode()[:MAX_INFO_BYTES])
                os.fchmod(ticket_fd, 0o644)  # whatever the umask: readable, writable by no one else
                os.fchmod(beat_fd, 0o644)
                self.beat_fd, self.ticket_fd, self.name = beat_fd, ticket_fd, stem + TICKET
                self._write_beat()
                os.rename(temp, self.folder / self.name)  # sticky folder: nobody else can replace it
            except BaseException:
                os.close(ticket_fd)
                _unlink(temp)
                self.ticket_fd = None
                self.leave()
                raise
            return
        raise FileExistsError("no free name for a place in the GPU queue")

    @property
    def joined(self) -> bool:
        return self.ticket_fd is not None

    def beat_age_s(self) -> float:
        """Seconds since this run's last beat, as every other reader sees it (the file's ctime)."""
        if self.beat_fd is None:
            return math.inf
        try:
            return max(0.0, time.time() - os.fstat(self.beat_fd).st_ctime_ns / 1e9)
        except OSError:
            return math.inf

    def beat(self) -> float:
        """Renew the heartbeat; the seconds since the previous one."""
        age = self.beat_age_s()
        self._write_beat()
        return age

    def hold(self) -> None:
        """Mark the place as holding the GPU from now (shown to those who wait)."""
        self.holding_since = time.time()
        self._write_beat()

    def _write_beat(self) -> None:
        if self.beat_fd is None:
            return
        data = json.dumps({"holding_since": self.holding_since}).encode()
        try:
            os.ftruncate(self.beat_fd, 0)
            os.pwrite(self.beat_fd, data, 0)
        except OSError:
            pass  # a full disk: the beat's ctime still moved with the truncate, or the place lapses

    def leave(self) -> None:
        if self.name:
            _unlink(self.folder / self.name)
            _unlink(self.folder / (self.name[: -len(TICKET)] + BEAT))
        for fd in (self.ticket_fd, self.beat_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.ticket_fd = self.beat_fd = None
        self.name = ""
        self.holding_since = None


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def sweep_own(folder: Path, key: str) -> int:
    """Remove this user's places for GPU ``key`` whose runs have ended (a crash leaves its two
    files: nobody else may delete them in a sticky folder, so the owner's next run does)."""
    import fcntl

    uid = os.getuid()
    head = f"{PREFIX}{key}.{uid}."
    removed = 0
    try:
        names = [n for n in os.listdir(folder) if n.startswith(head)]
    except OSError:
        return 0
    now = time.time()
    for name in names:
        path = folder / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if st.st_uid != uid:
            continue
        if name.endswith(TICKET):
            fd = _open_regular(path)
            if fd is None:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a run of this user that still lives
            finally:
                os.close(fd)
            _unlink(path)
            _unlink(folder / (name[: -len(TICKET)] + BEAT))
            removed += 1
        elif (name.endswith(BEAT) or name.endswith(".new")) and now - st.st_ctime > DEFAULT_STALL_S * 4:
            stem = name.rsplit(".", 1)[0]
            if not (folder / (stem + TICKET)).exists():
                _unlink(path)
    return removed


# --- the waiting line in words -----------------------------------------------------------------


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _duration(seconds: float) -> str:
    s = int(max(0.0, seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def waiting_words(
    line: Line,
    device: str,
    waited_s: float,
    policy: QueuePolicy,
    *,
    now_wall: float | None = None,
    note: str = "",
) -> str:
    """The waiting run's line: who holds the GPU (user, since when, which workload), whether it
    still makes progress, and where this run is in the line; ``note`` (a flood of files that do
    not count, ``Survey.ignored_words``) after it.

    e.g. "waiting for cuda:0: bob has held it since 14:02:11 (matmul, 3 min 5 s); you are next
    (waited 12 s)"."""
    now = time.time() if now_wall is None else now_wall
    holder = line.holder
    if holder is None:
        who = "the GPU is free again"
    else:
        what = f"{holder.workload}, " if holder.workload else ""
        if holder.holding_since is not None and holder.holding_since <= now:
            since = time.strftime("%H:%M:%S", time.localtime(holder.holding_since))
            who = f"{holder.user} has held it since {since} ({what}{_duration(now - holder.holding_since)})"
        else:
            who = f"{holder.user} holds it" + (f" ({holder.workload})" if holder.workload else "")
        idle = holder.beat_age_s or 0.0
        if holder_stalled(line, policy):
            who += (
                f", but has not made progress for {_duration(idle)} (it loses the GPU after "
                f"{_duration(policy.stall_s)})"
            )
    words = f"waiting for {device}: {who}; {_place(line, short=False)} (waited {_duration(waited_s)})"
    return f"{words}; {note}" if note else words


def _place(line: Line, *, short: bool) -> str:
    """Where this run stands: "you are next", "you are 3rd in line", and whether this user's own
    earlier run goes first (with how many are ahead in all, when others are too)."""
    if line.own_first:
        first = "your other run goes first" if short else "your own earlier run on this GPU goes first"
        if line.ahead <= 1:
            return first
        return f"{first}; you are {_ordinal(line.ahead)}" + ("" if short else " in line")
    if line.ahead <= 1:
        return "you are next"
    return f"you are {_ordinal(line.ahead)}" + ("" if short else " in line")


def holder_stalled(line: Line, policy: QueuePolicy) -> bool:
    """The holder has shown no progress for longer than a couple of its heartbeats."""
    holder = line.holder
    return holder is not None and (holder.beat_age_s or 0.0) > 2 * policy.beat_every_s


def waiting_short(line: Line, device: str, policy: QueuePolicy) -> str:
    """The same in a few words, for a progress bar: "waiting for cuda:0: bob has it; you are next"."""
    holder = line.holder
    if holder is None:
        who = "it is free again"
    elif holder_stalled(line, policy):
        who = f"{holder.user} has it but has stopped"
    else:
        who = f"{holder.user} has it"
    return f"waiting for {device}: {who}; {_place(line, short=True)}"


Clock = Callable[[], float]


# --- the admin's clean-up ----------------------------------------------------------------------


@dataclass
class Cleaned:
    """What ``clean`` did in a queue folder, per user (the files' owners).

    ``ended``: places whose runs had ended (their two files); ``planted``: files named like the
    queue's that the app never writes so (links, FIFOs, forged tickets or ones with no beat, leftover beats
    and half-made places); ``live``: places whose runs still hold them (left alone), ``stalled``
    those of them without a fresh heartbeat (a stopped run, or a planted place held open);
    ``not_allowed``: files this user may not remove (another user's, in a sticky folder);
    ``left``: anything else left, in words."""

    ended: dict[str, int] = field(default_factory=dict)
    planted: dict[str, int] = field(default_factory=dict)
    live: dict[str, int] = field(default_factory=dict)
    stalled: dict[str, int] = field(default_factory=dict)
    not_allowed: dict[str, int] = field(default_factory=dict)
    left: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ended": self.ended,
            "planted": self.planted,
            "live": self.live,
            "stalled": self.stalled,
            "not_allowed": self.not_allowed,
            "left": self.left,
        }


def _bump(counts: dict[str, int], uid: int, by: int = 1) -> None:
    user = user_name(uid)
    counts[user] = counts.get(user, 0) + by


def clean(folder: Path, *, stall_s: float = DEFAULT_STALL_S, now_wall: float | None = None) -> Cleaned:
    """Remove from ``folder`` every queue file that no run holds: ended places, planted files,
    leftover beats and half-made places older than ``stall_s``. Only names the queue uses
    (``device-explorer-gpu.*``) are touched, never another program's file; a place whose run
    still holds its lock stays, however long it has not beaten. Folders are never entered.

    Root, or the folder's owner, may remove every user's files; anyone else only their own (the
    rest are counted in ``not_allowed``). Every file is named relative to the folder opened once
    (no link in the path is followed after the check)."""
    import fcntl

    now = time.time() if now_wall is None else now_wall
    done = Cleaned()
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        names = sorted(n for n in os.listdir(dir_fd) if n.startswith(PREFIX))
        present = set(names)

        def remove(name: str, uid: int, counts: dict[str, int]) -> bool:
            try:
                os.unlink(name, dir_fd=dir_fd)
            except FileNotFoundError:
                return False
            except PermissionError:
                _bump(done.not_allowed, uid)
                return False
            except OSError as exc:
                done.left.append(f"{name}: {exc.strerror or exc}")
                return False
            _bump(counts, uid)
            return True

        for name in names:
            try:
                st = os.lstat(name, dir_fd=dir_fd)
            except FileNotFoundError:
                continue  # removed with its ticket
            if stat.S_ISDIR(st.st_mode):
                done.left.append(f"{name}: a folder of {user_name(st.st_uid)} (not entered)")
                continue
            if name.endswith(TICKET) and _owner_in_name(name) == st.st_uid and stat.S_ISREG(st.st_mode):
                state = _place_state(dir_fd, name, st, fcntl)
                beat = name[: -len(TICKET)] + BEAT
                if state == "live":
                    _bump(done.live, st.st_uid)
                    try:
                        bst = os.lstat(beat, dir_fd=dir_fd)
                        fresh = bst.st_uid == st.st_uid and now - bst.st_ctime_ns / 1e9 <= stall_s
                    except OSError:
                        fresh = False
                    if not fresh:
                        _bump(done.stalled, st.st_uid)
                    continue
                # the app writes a place's beat before its ticket: a ticket never beside one is planted
                kind = done.ended if beat in present else done.planted
                if state == "ended" and remove(name, st.st_uid, kind) and beat in present:
                    try:
                        os.unlink(beat, dir_fd=dir_fd)
                    except OSError:
                        pass
                continue  # "other": it changed while looked at; the next clean-up sees it again
            stem = name.rsplit(".", 1)[0]
            own_part = (name.endswith(BEAT) or name.endswith(".new")) and stat.S_ISREG(st.st_mode)
            if own_part and (stem + TICKET) in present:
                continue  # the beat of a place that is still there, or its ticket being made
            if own_part and now - st.st_ctime_ns / 1e9 <= stall_s:
                continue  # a place being made right now (its beat comes first)
            remove(name, st.st_uid, done.planted)
    finally:
        os.close(dir_fd)
    return done


def _place_state(dir_fd: int, name: str, st: os.stat_result, fcntl: Any) -> str:
    """The place's state: "live" (its run holds the lock), "ended" (nobody does) or "other" (not the file listed)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=dir_fd)
    except OSError:
        return "other"
    try:
        now = os.fstat(fd)
        if (now.st_ino, now.st_uid) != (st.st_ino, st.st_uid) or not stat.S_ISREG(now.st_mode):
            return "other"
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return "live"
        except OSError:
            return "other"
        return "ended"
    finally:
        os.close(fd)
