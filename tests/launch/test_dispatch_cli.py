"""The dispatch and latency sub-commands: text, JSON keys, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import math

import pytest

from explorer import cli

pytestmark = pytest.mark.usefixtures("fake_devices")


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


DISPATCH_KEYS = {
    "makespan",
    "lower_bound",
    "upper_bound",
    "total_work",
    "longest_block",
    "slots",
    "sm_busy",
    "sm_work",
    "waves",
    "tail_start",
    "tail_idle_sm_time",
    "tail_idle_slot_time",
    "idle_slot_time_while_queued",
    "policy",
    "seed",
    "durations",
}


def test_dispatch_uniform_json_makespan_is_the_launch_waves(capsys):
    code, out, err = run(
        capsys,
        "dispatch",
        "--device",
        "1650",
        "--grid",
        "98",
        "--block",
        "1024",
        "--durations",
        "uniform",
        "--json",
    )
    assert code == 0 and err == ""
    data = json.loads(out)
    assert DISPATCH_KEYS <= set(data)
    code, out, _ = run(capsys, "launch", "--device", "1650", "--grid", "98", "--block", "1024", "--json")
    waves = json.loads(out)["waves"]
    assert data["makespan"] == waves == 7 == math.ceil(98 / 16)
    assert data["slots"] == 16 and len(data["sm_busy"]) == 16
    assert data["lower_bound"] == max(98 / 16, 1.0) and data["upper_bound"] == 98 / 16 + 1


def test_dispatch_text_with_heavy_blocks(capsys):
    code, out, err = run(
        capsys,
        "dispatch",
        "--device",
        "h100",
        "--grid",
        "5000",
        "--block",
        "256",
        "--durations",
        "heavy:1.3",
        "--seed",
        "4",
        "--policy",
        "round-robin",
    )
    assert code == 0 and err == ""
    assert (
        "placement: round-robin" in out and "makespan" in out and "tail:" in out and "per-SM busy time" in out
    )


def test_dispatch_seed_reproduces(capsys):
    argv = [
        "dispatch",
        "--device",
        "h100",
        "--grid",
        "3000",
        "--block",
        "128",
        "--durations",
        "jitter:0.5",
        "--json",
    ]
    a = json.loads(run(capsys, *argv, "--seed", "11")[1])
    b = json.loads(run(capsys, *argv, "--seed", "11")[1])
    c = json.loads(run(capsys, *argv, "--seed", "12")[1])
    assert a["makespan"] == b["makespan"] != c["makespan"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            ["--durations", "jitter:2"],
            "P of jitter:P (each block takes 1 +- P) is 2; it must be at least 0 and below 1",
        ),
        (["--durations", "heavy:0.9"], "is 0.9; it must be above 1 and at most 100"),
        (["--durations", "nope"], "is not one of uniform"),
        (["--durations", "uniform", "--policy", "fifo"], "--policy 'fifo' is not one of free, round-robin"),
        (["--durations", "uniform", "--seed", "-1"], "--seed is -1; it must be at least 0"),
        (["--durations", "uniform", "--grid", "3000000"], "dispatch simulates at most 2,097,152"),
        (["--durations", "uniform", "--block", "2048"], "at most 1024"),
    ],
)
def test_dispatch_bad_input_is_one_line(capsys, extra, needle):
    argv = ["dispatch", "--device", "1650", "--grid", "98", "--block", "1024"]
    for i in range(0, len(extra), 2):
        if extra[i] in argv:
            argv[argv.index(extra[i]) + 1] = extra[i + 1]
        else:
            argv += extra[i : i + 2]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err, err


def test_latency_json_keys_and_values(capsys):
    code, out, err = run(
        capsys, "latency", "--warps", "1", "--mem-latency", "100", "--alu", "4", "--schedulers", "1", "--json"
    )
    assert code == 0 and err == ""
    data = json.loads(out)
    assert {"utilization", "model_utilization", "warps_needed"} <= set(data)
    assert data["warps_needed"] == math.ceil(105 / 5) == 21
    assert data["model_utilization"] == pytest.approx(5 / 105)
    assert data["utilization"] == pytest.approx(5 / 105, rel=0.05)


def test_latency_text(capsys):
    code, out, err = run(capsys, "latency", "--warps", "16", "--mem-latency", "3", "--alu", "0")
    assert code == 0 and "16 per SM" in out and "simulated utilization 100.0%" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--warps", "0", "--mem-latency", "10", "--alu", "1"], "--warps is 0; it must be at least 1"),
        (
            ["--warps", "4", "--mem-latency", "1e400", "--alu", "1"],
            "--mem-latency is '1e400'; it must be at most 10000",
        ),
        (["--warps", "4", "--mem-latency", "10", "--alu", "٣"], "--alu is '٣'"),
        (
            ["--warps", "4", "--mem-latency", "10", "--alu", "1", "--schedulers", "9"],
            "--schedulers is 9; it must be at most 8",
        ),
        (
            ["--warps", "4", "--mem-latency", "10", "--alu", "1", "--policy", "rr"],
            "policy 'rr' is not one of gto, lrr",
        ),
        (["--warps", "4", "--mem-latency", "650", "--alu", "0", "--cycles", "1000"], "needs at least"),
    ],
)
def test_latency_bad_input_is_one_line(capsys, argv, needle):
    code, out, err = run(capsys, "latency", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err, err
