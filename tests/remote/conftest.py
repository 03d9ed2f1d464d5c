"""Fixtures: a real sshd on 127.0.0.1 (module-wide: starting one takes under a second but the
tests share it) and a real single-node Slurm; each skips with the reason when its packages are
missing, and stops every daemon it started."""

from __future__ import annotations

import pytest

from tests.remote.servers import LoopbackSlurm, LoopbackSshd


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    missing = LoopbackSshd.missing()
    if missing:
        pytest.skip(missing)
    with LoopbackSshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    missing = LoopbackSlurm.missing()
    if missing:
        pytest.skip(missing)
    with LoopbackSlurm(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster
