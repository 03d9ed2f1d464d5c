"""The GPU line's decision (``order``, plain values) and what a look at the folder accepts: the admin's
policy only from root's own file, no link or FIFO followed, a folder another user could break refused."""

from __future__ import annotations

import json
import os
import stat
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.gpuqueue.tickets import (
    MAX_PLACES_PER_USER,
    POLICY_FILE,
    Place,
    QueuePolicy,
    Ticket,
    folder_problem,
    look,
    order,
    parse_policy,
    read_policy,
    survey,
    user_name,
    waiting_words,
)

pytest.importorskip("fcntl")
POLICY = QueuePolicy(stall_s=30, turn_s=600, grace_s=120)


def ticket(
    name: str, uid: int = 1000, arrived: int = 0, beat: float | None = 1.0, alive: bool = True
) -> Ticket:
    """A place that arrived ``arrived`` s after the test's clock began (1e9 s of wall time)."""
    return Ticket(
        name=name,
        uid=uid,
        user=f"u{uid}",
        arrived_ns=int((1e9 + arrived) * 1e9),
        beat_age_s=beat,
        alive=alive,
        ident=(uid, hash(name) % 10**6, arrived),
        workload="matmul",
    )


def decide(tickets, me=None, now=0.0, seen=None, policy=POLICY):
    """``order`` at ``now`` s (monotonic; the wall clock reads 1e9 + now s, arrivals count from 1e9 s)."""
    seen = {} if seen is None else seen
    return order(tickets, me=me, now_mono=now, now_wall=1e9 + now, policy=policy, seen_holding=seen)


def test_the_first_to_arrive_holds_and_the_rest_wait_in_arrival_order():
    line = decide([ticket("c", 3, 30), ticket("a", 1, 10), ticket("b", 2, 20)], me="c")
    assert [t.name for t in line.valid] == ["a", "b", "c"]
    assert line.holder.name == "a" and line.ahead == 2 and not line.holds


def test_ended_silent_and_heartbeatless_places_do_not_count():
    tickets = [
        ticket("dead", 1, 1, alive=False),  # its run ended (nobody holds its lock)
        ticket("stopped", 2, 2, beat=31.0),  # no progress for longer than stall_s
        ticket("planted", 3, 3, beat=None),  # a file with no heartbeat beside it
        ticket("me", 4, 4),
    ]
    line = decide(tickets, me="me")
    assert line.holds and [t.name for t in line.valid] == ["me"]


def test_a_user_counts_once_among_the_holders_but_every_run_ahead_is_counted():
    tickets = [ticket("x1", 1, 1), ticket("x2", 1, 2), ticket("x3", 1, 3), ticket("y", 2, 4)]
    line = decide(tickets, me="y")
    # x2 and x3 wait behind x1, and arrived before y: they take their turns first, and y is told so
    assert [t.name for t in line.valid] == ["x1", "y"] and line.ahead == 3
    assert "you are 3rd in line" in waiting_words(line, "cuda:0", 0.0, POLICY, now_wall=1e9)
    second = decide(tickets, me="x2")
    assert second.own_first and second.mine is None and second.ahead == 1
    words = waiting_words(second, "cuda:0", 0.0, POLICY, now_wall=1e9)
    assert "; your own earlier run on this GPU goes first (waited 0 s)" in words
    third = decide([ticket("z", 3, 0), *tickets], me="x2")  # another user's run holds, then x1
    words = waiting_words(third, "cuda:0", 0.0, POLICY, now_wall=1e9)
    assert "; your own earlier run on this GPU goes first; you are 2nd in line (waited 0 s)" in words
    # a run that arrived after the second one of the holder's user is not "next"
    line = decide([ticket("h1", 1, 1), ticket("h2", 1, 2), ticket("me", 2, 3)], me="me")
    assert line.ahead == 2 and "you are next" not in waiting_words(line, "cuda:0", 0.0, POLICY)
    # once the holder's first run ends, its second one holds, and this run is next
    line = decide([ticket("h1", 1, 1, alive=False), ticket("h2", 1, 2), ticket("me", 2, 3)], me="me")
    assert line.holder.name == "h2" and line.ahead == 1
    assert "you are next" in waiting_words(line, "cuda:0", 0.0, POLICY)


def test_a_holder_past_its_turn_hands_over_and_its_users_older_places_go_too():
    seen: dict = {}
    tickets = [ticket("hog", 1, 1), ticket("hog-spare", 1, 2), ticket("me", 2, 3)]
    assert decide(tickets, me="me", now=0.0, seen=seen).holder.name == "hog"
    assert decide(tickets, me="me", now=720.0, seen=seen).holder.name == "hog"  # turn 600 + grace 120
    line = decide(tickets, me="me", now=720.5, seen=seen)
    assert line.holds  # the hog's turn is over here, and its spare place queued beforehand with it
    later = ticket("hog-again", 1, 721)  # the hog joins again: at the back of the line
    assert [t.name for t in decide([*tickets, later], me="me", now=722.0, seen=seen).valid] == [
        "me",
        "hog-again",
    ]


def test_a_run_never_expires_its_own_turn_it_hands_it_over_itself():
    mine = ticket("me", 1, 1)
    seen = {mine.ident: (-10_000.0, 1e9 - 10_000)}  # seen holding for hours
    line = decide([mine, ticket("other", 2, 2)], me="me", now=0.0, seen=seen)
    assert line.holds


_tickets = st.lists(
    st.builds(
        ticket,
        name=st.text("abcdef", min_size=1, max_size=3),
        uid=st.integers(1, 4),
        arrived=st.integers(0, 5),
        beat=st.one_of(st.none(), st.floats(0, 60)),
        alive=st.booleans(),
    ),
    max_size=12,
    unique_by=lambda t: t.name,
)


@settings(max_examples=1000, deadline=None)
@given(_tickets, st.data())
def test_every_reader_orders_the_same_whatever_order_the_folder_lists(tickets, data):
    """The decision depends on the places, never on the listing's order; at most one place holds,
    it is valid, and it is the earliest valid place (by arrival, then name) of the first user."""
    shuffled = data.draw(st.permutations(tickets))
    a, b = decide(tickets), decide(shuffled)
    assert [t.name for t in a.valid] == [t.name for t in b.valid]
    good = [t for t in tickets if t.alive and t.beat_age_s is not None and t.beat_age_s <= POLICY.stall_s]
    firsts: dict[int, Ticket] = {}
    for t in sorted(good, key=lambda t: (t.arrived_ns, t.name)):  # brute force: each user's earliest
        firsts.setdefault(t.uid, t)
    assert [t.name for t in a.valid] == [
        t.name for t in sorted(firsts.values(), key=lambda t: (t.arrived_ns, t.name))
    ]
    # where a run stands: every good place that arrived before it takes its turn first
    if tickets:
        me = data.draw(st.sampled_from(tickets))
        line = decide(shuffled, me=me.name)
        before = [t for t in good if (t.arrived_ns, t.name) < (me.arrived_ns, me.name)]
        assert line.ahead == (len(before) if me in good else len(good))
        assert line.own_first == (me in good and any(t.uid == me.uid for t in before))


def test_the_waiting_line_says_who_since_when_what_and_where():
    holder = Ticket("h", 7, "bob", 0, 1.0, True, (7, 1, 0), "matmul", holding_since=1000.0)  # arrived first
    me = ticket("me", 1, 5)
    line = decide([holder, ticket("other", 2, 3), me], me="me")
    words = waiting_words(line, "cuda:0", 12.0, POLICY, now_wall=1185.0)
    assert words.startswith("waiting for cuda:0: bob has held it since ")
    assert words.endswith("(matmul, 3 min 5 s); you are 2nd in line (waited 12 s)")
    stuck = Ticket("h", 7, "bob", 0, 20.0, True, (7, 1, 0), "matmul", holding_since=1000.0)
    words = waiting_words(decide([stuck, me], me="me"), "cuda:0", 1.0, POLICY, now_wall=1010.0)
    assert "has not made progress for 20 s (it loses the GPU after 30 s); you are next" in words


@pytest.mark.parametrize(
    "text, problem",
    [
        (b'{"stall_s": 1}', "stall_s is 1; it must be a number of seconds from 2 to 3600"),
        (b'{"turn_s": 1e400}', "turn_s is inf"),
        (b'{"turn_s": true}', "turn_s is True"),
        (b'{"stall_s": "30"}', "stall_s is 30"),
        (b'{"nap_s": 3}', "'nap_s' is not a setting"),
        (b"[1]", "not a JSON object"),
        (b"\xff", "not JSON"),
        (b"[" * 100_000, "longer than 4096 bytes"),
    ],
)
def test_a_policy_file_out_of_bounds_is_named_with_its_limits(text, problem):
    with pytest.raises(ValueError) as info:
        parse_policy(text)
    assert problem in str(info.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a file root owns (as CI runs)")
def test_only_a_policy_file_root_alone_may_write_is_used(tmp_path):
    path = tmp_path / POLICY_FILE
    path.write_text(json.dumps({"stall_s": 5, "turn_s": 60}))
    path.chmod(0o644)
    policy = read_policy(tmp_path)
    assert (policy.stall_s, policy.turn_s, policy.source) == (5, 60, str(path))
    path.chmod(0o666)
    assert read_policy(tmp_path).stall_s == 30 and "others may write it" in read_policy(tmp_path).note
    path.chmod(0o644)
    os.chown(path, 65534, 65534)  # a student's file of the same name
    assert read_policy(tmp_path).source == "" and "the defaults apply" in read_policy(tmp_path).note
    path.unlink()
    os.mkfifo(path)  # a FIFO in its place is not read (and does not hang the reader)
    assert read_policy(tmp_path).note.endswith("is not a regular file: the defaults apply")


def test_a_folder_others_could_break_is_refused_with_the_admins_command(tmp_path):
    assert "does not exist" in folder_problem(tmp_path / "nope") and "install -d" in folder_problem(
        tmp_path / "nope"
    )
    (tmp_path / "open").mkdir()
    (tmp_path / "open").chmod(0o777)
    assert "not sticky" in folder_problem(tmp_path / "open")
    (tmp_path / "open").chmod(0o1777)
    assert folder_problem(tmp_path / "open") is None
    (tmp_path / "link").symlink_to(tmp_path / "open")
    assert "not a folder" in folder_problem(tmp_path / "link")
    if os.geteuid() == 0:
        os.chown(tmp_path / "open", 65534, 65534)
        assert "who could empty or block it" in folder_problem(tmp_path / "open")


def test_a_look_never_follows_a_link_nor_opens_a_fifo(tmp_path):
    place = Place(tmp_path, "gpu-k", "matmul")
    place.join()
    try:
        uid = os.getuid()
        stem = f"device-explorer-gpu.gpu-k.{uid}.1"
        os.mkfifo(tmp_path / f"{stem}.fifo.ticket")
        (tmp_path / f"{stem}.link.ticket").symlink_to(tmp_path / place.name)
        os.link(tmp_path / place.name, tmp_path / f"{stem}.hard.ticket")  # a second name for it
        seen: list = []
        reader = threading.Thread(target=lambda: seen.append(look(tmp_path, "gpu-k")), daemon=True)
        reader.start()
        reader.join(10)
        assert not reader.is_alive(), "a look hung on a planted FIFO"
        assert seen[0] == []  # even the real place: it now has two names, so nobody trusts it
        os.unlink(tmp_path / f"{stem}.hard.ticket")
        (found,) = look(tmp_path, "gpu-k")
        assert found.name == place.name and found.alive and found.workload == "matmul"
        other = Place(tmp_path, "gpu-k", "\x1b]0;pwned\x07\x1b[2J")  # a user's own words for the others
        other.join()
        try:
            assert [t.workload for t in look(tmp_path, "gpu-k")] == ["matmul", ""]  # only a workload's name
        finally:
            other.leave()
        mode = stat.S_IMODE(os.stat(tmp_path / place.name).st_mode)
        assert mode == 0o644
    finally:
        place.leave()
    assert os.listdir(tmp_path).count(place.name) == 0


def _plant(folder, key: str, count: int, uid: int | None = None) -> list:
    """``count`` empty files named like places of GPU ``key`` (no heartbeat, nobody's lock)."""
    uid = os.getuid() if uid is None else uid
    paths = [folder / f"device-explorer-gpu.{key}.{uid}.1.{i}.ticket" for i in range(count)]
    for path in paths:
        path.touch()
    return paths


def test_ten_thousand_planted_files_never_push_a_real_place_out(tmp_path):
    """Filtered before any bound: the planted files (earlier arrivals, some with mtimes years
    ahead, which nothing reads) do not count, a real place that came after them does, and the
    flood is named."""
    planted = _plant(tmp_path, "gpu-k", 10_000)
    future = time.time() + 10 * 365 * 86400
    for path in planted[::2]:
        os.utime(path, (future, future))  # touch -d: moves mtime; ctime (what is read) stays
    place = Place(tmp_path, "gpu-k", "matmul")
    place.join()
    try:
        seen = survey(tmp_path, "gpu-k", mine=place.name, clean=False)
        assert [t.name for t in seen.tickets] == [place.name]
        assert seen.ignored == {os.getuid(): 10_000}
        assert (
            seen.ignored_words()
            == f"10000 tickets of user {user_name(os.getuid())} look dead and are ignored"
        )
        assert [t.name for t in look(tmp_path, "gpu-k")] == [place.name]
        line = order(seen.tickets, me=place.name, now_mono=0.0, policy=POLICY, seen_holding={})
        assert line.holds
    finally:
        place.leave()


def test_one_users_flood_of_live_looking_places_never_hides_another_users(tmp_path):
    """Beyond a user's own bound their later places go unseen; another user's never do (a place of
    another user, made as root, arrives after the whole flood and is still seen)."""
    import fcntl

    key = "gpu-k"
    places = [Place(tmp_path, key, "flood") for _ in range(MAX_PLACES_PER_USER + 5)]
    for place in places:
        place.join()
    other_fd = None
    try:
        other = None
        if os.geteuid() == 0:
            other = f"device-explorer-gpu.{key}.65534.1.other.ticket"
            (tmp_path / other.replace(".ticket", ".beat")).write_text("{}")
            (tmp_path / other).write_text("{}")
            for name in (other, other.replace(".ticket", ".beat")):
                os.chown(tmp_path / name, 65534, 65534)
            other_fd = os.open(tmp_path / other, os.O_RDONLY)
            fcntl.flock(other_fd, fcntl.LOCK_EX)  # its run lives
        seen = survey(tmp_path, key, clean=False)
        mine = [t for t in seen.tickets if t.uid == os.getuid()]
        assert len(mine) == MAX_PLACES_PER_USER  # one user's share, the earliest first
        assert seen.ignored == {os.getuid(): 5}
        if other is not None:
            assert seen.tickets[-1].name == other and seen.tickets[-1].alive
        own = survey(tmp_path, key, mine=places[-1].name, clean=False)
        assert places[-1].name in {t.name for t in own.tickets}  # always sees its own
    finally:
        if other_fd is not None:
            os.close(other_fd)
        for place in places:
            place.leave()


def test_a_reader_whose_clock_is_behind_the_files_orders_them_the_same(tmp_path):
    """ctimes in the reader's future (a clock stepped back; no user can set a ctime): arrival is
    still the ctime order, a live place still counts, a planted one still does not."""
    _plant(tmp_path, "gpu-k", 3)
    first, second = Place(tmp_path, "gpu-k", "a"), Place(tmp_path, "gpu-k", "b")
    first.join()
    second.join()
    try:
        behind = time.time() - 3600
        seen = survey(tmp_path, "gpu-k", now_wall=behind, clean=False)
        arrival = sorted((os.stat(tmp_path / p.name).st_ctime_ns, p.name) for p in (first, second))
        assert [t.name for t in seen.tickets] == [name for _, name in arrival]
        assert all(t.beat_age_s == 0.0 and t.alive for t in seen.tickets)
        line = order(seen.tickets, me=arrival[1][1], now_mono=0.0, policy=POLICY, seen_holding={})
        assert line.holder.name == arrival[0][1] and line.ahead == 1
    finally:
        first.leave()
        second.leave()


def test_a_reader_that_may_removes_ended_places_once_they_went_without_a_beat(tmp_path):
    """The folder's owner (or root, or the place's own user) removes a place whose run ended and
    whose beat is older than stall_s; a live place and a fresh ended one stay."""
    ended = Place(tmp_path, "gpu-k", "a")
    ended.join()
    name = ended.name
    os.close(ended.ticket_fd)  # the run ends without leaving (a hard kill): its lock goes
    os.close(ended.beat_fd)
    live = Place(tmp_path, "gpu-k", "b")
    live.join()
    _plant(tmp_path, "gpu-k", 4)
    try:
        assert survey(tmp_path, "gpu-k").removed == 0  # ended, but its beat is fresh
        assert (tmp_path / name).exists()
        later = time.time() + POLICY.stall_s + 1
        seen = survey(tmp_path, "gpu-k", now_wall=later, clean=False)
        assert seen.removed == 0 and (tmp_path / name).exists()  # a look that may not clean, does not
        seen = survey(tmp_path, "gpu-k", now_wall=later)
        assert seen.removed == 5 and not (tmp_path / name).exists()
        assert not (tmp_path / (name[: -len(".ticket")] + ".beat")).exists()
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".ticket")] == [live.name]
    finally:
        live.leave()


def test_a_full_folder_is_one_line_naming_who_fills_it(tmp_path, monkeypatch):
    """The error path of a folder at its inode limit (the slow test fills a real tmpfs): one line
    with the system's reason, the user who owns most of the folder's files, and the admin's fix."""
    import errno

    from explorer.errors import UserError
    from explorer.gpuqueue import share as gpushare

    for i in range(7):  # any names: whatever fills the folder is counted by its owner
        (tmp_path / f"filler-{i}").touch()

    def full(place: Place) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Place, "join", full)
    with pytest.raises(UserError) as info:
        gpushare.hold_gpu_lock("gpu-k", lambda w: None, directory=tmp_path)
    assert str(info.value) == (
        f"cannot take a place in the GPU queue in {str(tmp_path)!r} (No space left on device); 7 of its 7 "
        f"files belong to {user_name(os.getuid())}; the lab admin can remove ended and planted places with "
        "'sudo device-explorer admin queue --clean'"
    )


def test_a_run_whose_place_was_removed_says_so_sleeps_and_takes_a_new_one(tmp_path, monkeypatch):
    """An admin's clean-up (or anything) takes the waiting run's files: it says why, waits a poll,
    and joins again once per loss (never a hot loop of re-joins), then gets the GPU when it is free."""
    from explorer.gpuqueue import share as gpushare

    holder = Place(tmp_path, "gpu-k", "train")
    holder.join()
    joins: list[str] = []
    real_join = Place.join

    def counting_join(place: Place) -> None:
        real_join(place)
        joins.append(place.name)

    monkeypatch.setattr(Place, "join", counting_join)
    messages: list[str] = []

    def on_wait(wait) -> None:
        messages.append(wait.message)
        if len(messages) == 1:  # the clean-up: this run's two files go
            for path in tmp_path.iterdir():
                if path.name.startswith(joins[-1][: -len(".ticket")]):
                    path.unlink()
        if len(messages) == 4:
            holder.leave()

    try:
        gpushare.hold_gpu_lock("gpu-k", on_wait, directory=tmp_path, poll_s=0.01)
        assert len(joins) == 2, joins  # the first place, and one new place after it was removed
        assert "your own earlier run on this GPU goes first" in messages[0]
        assert messages[1].startswith("waiting for cuda:0: this run's place in the GPU queue was removed; ")
        assert "taking a new place" in messages[1]
        assert "your own earlier run on this GPU goes first" in messages[2]
    finally:
        gpushare.release_gpu_locks()
        holder.leave()


def test_the_admins_clean_up_removes_only_what_no_run_holds(tmp_path):
    """Ended places and planted files go, counted per owner; a live place (even one that stopped
    beating), a place being made, another program's file, the policy file and folders stay."""
    from explorer.commands.admin import cleaned_words
    from explorer.gpuqueue.tickets import clean

    me = user_name(os.getuid())
    stem = f"device-explorer-gpu.gpu-k.{os.getuid()}.1"
    live = Place(tmp_path, "gpu-k", "a")
    live.join()
    ended = Place(tmp_path, "gpu-k", "b")
    ended.join()
    ended_name = ended.name
    os.close(ended.ticket_fd)  # killed: its files stay, nobody holds its lock
    os.close(ended.beat_fd)
    (tmp_path / f"{stem}.nobeat.ticket").touch()
    os.mkfifo(tmp_path / f"{stem}.fifo.ticket")
    (tmp_path / f"{stem}.link.ticket").symlink_to(tmp_path / live.name)
    (tmp_path / f"{stem}.orphan.beat").touch()
    (tmp_path / "device-explorer-gpu.gpu-k.dir.ticket").mkdir()
    (tmp_path / "another-programs-file").touch()
    (tmp_path / POLICY_FILE).write_text("{}")
    try:
        soon = clean(tmp_path, stall_s=30)  # the orphan beat may be a place being made: kept
        assert soon.ended == {me: 1} and soon.planted == {me: 3} and soon.live == {me: 1}
        later = clean(tmp_path, stall_s=30, now_wall=time.time() + 31)
        assert later.planted == {me: 1} and later.ended == {} and later.stalled == {me: 1}
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [
                live.name,
                live.name[: -len(".ticket")] + ".beat",
                "device-explorer-gpu.gpu-k.dir.ticket",
                "another-programs-file",
                POLICY_FILE,
            ]
        )
        assert not (tmp_path / ended_name).exists()
        assert "a folder of" in soon.left[0] and "(not entered)" in soon.left[0]
        words = cleaned_words(soon, tmp_path, 30)
        assert words[:3] == [
            f"removed 1 ended place ({me} 1)",
            f"removed 3 planted files, named like the queue's but written by no run ({me} 3)",
            f"kept 1 live place, whose run still holds it ({me} 1)",
        ]
    finally:
        live.leave()
