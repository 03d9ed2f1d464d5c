"""Exports never write through another user's link, and never replace another user's file,
with two real local users made for the test and removed after it.

In a shared sticky folder (``/tmp``, a course share) one user (the planter) leaves a symbolic link
named like an export, pointing at a mode-600 file of another user (the victim); the victim then
exports there, as ``bench --csv``, ``screenshot --out``, the window's Export or saving a lesson
would. The app must refuse in one line naming the link and its owner, and the victim's file must
keep its bytes. The kernel's ``fs.protected_symlinks`` cannot help: the app replaces the file
rather than opening the link. Each user's part runs in a child process that has become that user
(``setuid``), with the app's modules already imported (a test user cannot read this venv).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from explorer import cli
from explorer.atomicwrite import UnsafeTarget, write_atomic
from explorer.bench.export import export_csv
from explorer.bench.results import BenchPoint
from explorer.errors import UserError
from explorer.lessons import LessonError, load_lesson, save_lesson
from explorer.lessons.builtin import builtin_paths

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file owners and setuid are POSIX")

POINT = BenchPoint(workload="matmul", variant="cpu", device="cpu", size=16, size_label="n=16", median_s=1e-4)
SECRET = b"the victim's own notes, mode 600\n"
#: the one-line errors a user sees (explorer.errors.UserError and its kin)
USER_ERRORS = {"UserError", "InputError"}


class User:
    def __init__(self, name: str) -> None:
        import pwd

        entry = pwd.getpwnam(name)
        self.name, self.uid, self.gid = name, entry.pw_uid, entry.pw_gid

    def run(self, work: Callable[[], object]) -> dict[str, object]:
        """``work()`` in a child process that is this user; what it returned or raised, as JSON."""
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: become the user, do the work, report, and leave at once
            os.close(read_fd)
            result: dict[str, object]
            try:
                os.setgroups([])
                os.setgid(self.gid)
                os.setuid(self.uid)
                result = {"value": work()}
            except BaseException as exc:  # reported to the test, which asserts on it
                result = {"error": type(exc).__name__, "message": str(exc)}
            with os.fdopen(write_fd, "w") as out:
                out.write(json.dumps(result, default=str))
            os._exit(0)
        os.close(write_fd)
        with os.fdopen(read_fd) as pipe:
            text = pipe.read()
        os.waitpid(pid, 0)
        return json.loads(text)


@pytest.fixture(scope="module")
def users():
    """Two real local users, created for these tests and removed after them."""
    if os.geteuid() != 0:
        pytest.skip("creating two local users and acting as each needs root (CI runs as root)")
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        pytest.skip("useradd/userdel are not installed (passwd package)")
    names = [f"dxvictim{os.getpid() % 100000}", f"dxplanter{os.getpid() % 100000}"]
    made = []
    try:
        for name in names:
            subprocess.run(
                [
                    "useradd",
                    "--no-create-home",
                    "--home-dir",
                    "/nonexistent",
                    "--shell",
                    "/usr/sbin/nologin",
                    name,
                ],
                check=True,
                capture_output=True,
            )
            made.append(name)
        yield User(names[0]), User(names[1])
    finally:
        for name in made:
            subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture
def place(users):
    """A world-readable test area outside root's private temp folders: the victim's own folder
    with a mode-600 file in it, and a shared sticky folder anyone may write (like /tmp)."""
    victim, _planter = users
    root = Path(tempfile.mkdtemp(prefix="dx-links-", dir="/tmp"))
    root.chmod(0o755)
    own = root / "victim"
    own.mkdir()
    precious = own / "precious.txt"
    precious.write_bytes(SECRET)
    precious.chmod(0o600)
    for path in (own, precious):
        os.chown(path, victim.uid, victim.gid)
    shared = root / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    yield own, precious, shared
    shutil.rmtree(root, ignore_errors=True)


def _warm_up(tmp_path: Path) -> None:
    """Import, as root, everything the users' children will run (they cannot read this venv)."""
    for argv in (
        ["bench", "matmul", "--sizes", "16", "--csv", str(tmp_path / "w.csv")],
        ["screenshot", "--out", str(tmp_path / "w.png")],
    ):
        assert cli.main(argv, check_only=True) == 0
    export_csv([POINT], tmp_path / "w.csv")


def _lesson():
    return load_lesson(next(p for p in builtin_paths() if p.stem.startswith("01")))


@pytest.mark.slow
def test_a_link_another_user_planted_is_never_written_through(users, place, tmp_path, capfd):
    victim, planter = users
    own, precious, shared = place
    _warm_up(tmp_path)
    lesson = _lesson()
    links = {
        name: shared / name for name in ("results.csv", "shot.png", "export.csv", "lesson.json", "raw.csv")
    }
    for link in links.values():
        assert planter.run(lambda link=link: os.symlink(precious, link)) == {"value": None}
        assert os.lstat(link).st_uid == planter.uid
    owner = f"owned by user {planter.name} (uid {planter.uid}), not by you"

    def cli_refuses(argv: list[str]) -> dict[str, object]:
        return victim.run(lambda: cli.main(argv, check_only=True))

    # bench --csv and screenshot --out: refused before any work, in one line naming link and owner
    capfd.readouterr()
    assert cli_refuses(["bench", "matmul", "--sizes", "16", "--csv", str(links["results.csv"])]) == {
        "value": 2
    }
    assert cli_refuses(["screenshot", "--out", str(links["shot.png"])]) == {"value": 2}
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 2 and all(str(links["results.csv"].parent) in line and owner in line for line in err)
    assert str(links["results.csv"]) in err[0] and str(links["shot.png"]) in err[1]
    # the window's Export, saving a lesson, and the writer itself: refused at the write
    export = victim.run(lambda: export_csv([POINT], links["export.csv"]))
    assert export["error"] in USER_ERRORS and str(links["export.csv"]) in str(export["message"])
    assert owner in str(export["message"])
    saved = victim.run(lambda: save_lesson(lesson, links["lesson.json"]))
    assert saved["error"] == "LessonError" and owner in str(saved["message"])
    raw = victim.run(lambda: write_atomic(links["raw.csv"], b"x"))
    assert raw["error"] == "UnsafeTarget"
    # root is not fooled either: another user's link is another user's
    with pytest.raises(UnsafeTarget):
        write_atomic(links["raw.csv"], b"x")
    assert precious.read_bytes() == SECRET and precious.stat().st_uid == victim.uid
    assert all(link.is_symlink() for link in links.values())


@pytest.mark.slow
def test_another_user_s_file_is_never_replaced(users, place, tmp_path):
    victim, planter = users
    _own, _precious, shared = place
    _warm_up(tmp_path)
    theirs = shared / "theirs.csv"
    assert planter.run(lambda: (theirs.write_bytes(b"the planter's"), theirs.chmod(0o666))[1]) == {
        "value": None
    }
    result = victim.run(lambda: export_csv([POINT], theirs))
    assert result["error"] in USER_ERRORS
    assert f"belongs to user {planter.name} (uid {planter.uid}), not to you" in str(result["message"])
    with pytest.raises(UserError):  # nor by root
        export_csv([POINT], theirs)
    assert theirs.read_bytes() == b"the planter's" and theirs.stat().st_uid == planter.uid
    # nor is a file of theirs named like the lock an export takes beside its file written into
    lock = shared / ".new.csv.lock"
    assert planter.run(lambda: (lock.write_bytes(b"theirs"), lock.chmod(0o666))[1]) == {"value": None}
    result = victim.run(lambda: export_csv([POINT], shared / "new.csv"))
    assert result["error"] in USER_ERRORS and f"{lock} belongs to user {planter.name}" in str(
        result["message"]
    )
    assert lock.read_bytes() == b"theirs" and not (shared / "new.csv").exists()


@pytest.mark.slow
def test_a_folder_link_planted_in_a_shared_folder_is_not_followed(users, place, tmp_path):
    """As the kernel's protected_symlinks judges a path's folders: another user's link in a sticky,
    world-writable folder is not followed (it would put the victim's export in the victim's home)."""
    victim, planter = users
    own, _precious, shared = place
    _warm_up(tmp_path)
    hop = shared / "course"
    assert planter.run(lambda: os.symlink(own, hop)) == {"value": None}
    result = victim.run(lambda: cli.main(["bench", "matmul", "--csv", str(hop / "new.csv")], check_only=True))
    assert result == {"value": 2}
    assert not (own / "new.csv").exists()


@pytest.mark.slow
def test_the_user_s_own_link_is_still_followed(users, place, tmp_path):
    victim, _planter = users
    own, precious, shared = place
    _warm_up(tmp_path)
    mine = shared / "mine.csv"
    assert victim.run(lambda: os.symlink(precious, mine)) == {"value": None}
    assert victim.run(lambda: str(export_csv([POINT], mine))) == {"value": str(mine)}
    assert (
        mine.is_symlink()
        and precious.read_text().startswith("workload,")
        and precious.stat().st_uid == victim.uid
    )


def test_unowned_links_are_refused_without_other_users_too(tmp_path):
    """The rule itself, where no second user can be made: a link owned by another uid (made by
    root with lchown) is refused; the user's own is followed."""
    if os.geteuid() != 0:
        pytest.skip("giving a link another owner needs root")
    target = tmp_path / "target.txt"
    target.write_bytes(SECRET)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    os.lchown(link, 4242, 4242)
    with pytest.raises(UnsafeTarget, match=r"is a symbolic link owned by uid 4242, not by you"):
        write_atomic(link, b"x")
    assert target.read_bytes() == SECRET
    with pytest.raises(LessonError):
        save_lesson(_lesson(), link)
    os.lchown(link, 0, 0)
    write_atomic(link, b"mine")
    assert target.read_bytes() == b"mine"
