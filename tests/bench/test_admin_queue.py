"""``device-explorer admin queue [--clean] [--dir FOLDER] [--json]`` in this process: each GPU's line
as the admin sees it, the clean-up's report, and a folder that cannot hold a queue refused in one
line (between real users and as root: tests/remote/test_gpu_queue_flood.py)."""

from __future__ import annotations

import json
import os

import pytest

from explorer import cli
from explorer.gpuqueue.tickets import Place, user_name

pytest.importorskip("fcntl")


def test_the_admin_sees_each_gpus_line_and_cleans_what_no_run_holds(tmp_path, capsys):
    me = user_name(os.getuid())
    assert cli.main(["admin", "queue", "--dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "no run waits for or holds a GPU"
    first, second = Place(tmp_path, "gpu-a", "matmul"), Place(tmp_path, "gpu-a", "copy")
    first.join()
    second.join()
    for i in range(12):
        (tmp_path / f"device-explorer-gpu.gpu-a.{os.getuid()}.1.{i}.ticket").touch()
    try:
        assert cli.main(["admin", "queue", "--dir", str(tmp_path), "--json"]) == 0
        (gpu,) = json.loads(capsys.readouterr().out)["gpus"]
        assert gpu["key"] == "gpu-a" and gpu["holder"] == me and gpu["waiting"] == []  # one user, once
        assert gpu["ignored"] == {me: 12}
        assert gpu["ignored_words"] == f"12 tickets of user {me} look dead and are ignored"
        assert cli.main(["admin", "queue", "--dir", str(tmp_path), "--clean"]) == 0
        said = capsys.readouterr().out.splitlines()
        assert said == [
            "removed 0 ended places",
            f"removed 12 planted files, named like the queue's but written by no run ({me} 12)",
            f"kept 2 live places, whose runs still hold them ({me} 2)",
        ]
        assert sorted(p.name for p in tmp_path.glob("*.ticket")) == sorted([first.name, second.name])
    finally:
        first.leave()
        second.leave()


@pytest.mark.parametrize(
    "folder, said",
    [
        ("", "--dir '' is not a folder's path; name the GPU queue folder"),
        ("~nosuchuser-dx/q", "--dir '~nosuchuser-dx/q': there is no user whose home '~' could mean"),
        (
            "/nonexistent-dx-queue",
            "the GPU queue folder '/nonexistent-dx-queue' does not exist; the lab admin",
        ),
    ],
)
def test_a_folder_that_cannot_hold_a_queue_is_one_line(folder, said, capsys):
    assert cli.main(["admin", "queue", "--clean", "--dir", folder]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"device-explorer: error: {said}") and err.count("\n") == 1
