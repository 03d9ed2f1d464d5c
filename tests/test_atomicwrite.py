"""Every write is all or nothing: the old file survives a full disk, no temporary file is left."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from explorer import atomicwrite
from explorer.atomicwrite import write_atomic


def _litter(folder):
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_writes_the_bytes_and_leaves_nothing_else(tmp_path):
    path = tmp_path / "out.csv"
    write_atomic(path, b"a,b\n1,2\n")
    assert path.read_bytes() == b"a,b\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_full_disk_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "results.csv"
    path.write_bytes(b"the good results\n")
    real_write = os.write

    def write_half_then_fail(fd, data):
        if len(data) > 4:
            real_write(fd, bytes(data[:4]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(atomicwrite.os, "write", write_half_then_fail)
    with pytest.raises(OSError) as caught:
        write_atomic(path, b"new results that do not fit\n")
    assert caught.value.errno == errno.ENOSPC
    assert path.read_bytes() == b"the good results\n"
    assert _litter(tmp_path) == []


def test_a_failed_fsync_also_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "x.json"
    path.write_text("{}")

    def fail(fd):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(atomicwrite.os, "fsync", fail)
    with pytest.raises(OSError):
        write_atomic(path, b'{"new": 1}')
    assert path.read_text() == "{}" and _litter(tmp_path) == []


def test_a_missing_folder_is_not_created_unless_asked(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "such" / "x.csv", b"x")
    assert not (tmp_path / "no").exists()
    write_atomic(tmp_path / "app-data" / "x.json", b"{}", create_folder=True)
    assert (tmp_path / "app-data" / "x.json").read_bytes() == b"{}"


def test_the_new_file_gets_the_usual_permissions_and_keeps_an_old_files(tmp_path):
    if not hasattr(os, "fchmod"):
        pytest.skip("POSIX permissions")
    old = os.umask(0o022)
    try:
        fresh = write_atomic(tmp_path / "fresh.csv", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # not mkstemp's 0o600
    kept = tmp_path / "kept.csv"
    kept.write_bytes(b"x")
    kept.chmod(0o640)
    write_atomic(kept, b"y")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_a_symlink_stays_a_link_to_the_new_content(tmp_path):
    real = tmp_path / "real.csv"
    real.write_bytes(b"old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_atomic(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"


def test_a_long_name_still_fits_its_temporary_file(tmp_path):
    path = tmp_path / ("r" * 250 + ".csv")
    write_atomic(path, b"x")
    assert path.read_bytes() == b"x"
