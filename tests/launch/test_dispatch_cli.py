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
        "placement round-robin: the next SM in turn" in out
        and "makespan" in out
        and "tail:" in out
        and "per-SM busy time" in out
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
    assert code == 0 and "16 per SM" in out and "simulated utilization 100%" in out


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
        (
            ["--warps", "1024", "--mem-latency", "10000", "--alu", "1000", "--cycles", "700000"],
            "cycles is 700,000; it must be from 100 to 644,524 (what 1024 warps with L = 10000 and K = 1000",
        ),
        (
            ["--warps", "4", "--mem-latency", "10", "--alu", "1", "--cycles", "9e9"],
            "it must be at most 2182060",
        ),
    ],
)
def test_latency_bad_input_is_one_line(capsys, argv, needle):
    code, out, err = run(capsys, "latency", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err, err


def test_latency_with_fewer_warps_than_schedulers(capsys):
    code, out, err = run(capsys, "latency", "--warps", "3", "--mem-latency", "10", "--alu", "4", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["warps_per_scheduler"] == [1, 1, 1, 0]
    assert data["utilization"] == data["model_utilization"] == pytest.approx(3 * 5 / 15 / 4)


def test_latency_at_every_documented_maximum_is_accepted(capsys):
    code, out, err = run(capsys, "latency", "--warps", "1024", "--mem-latency", "10000", "--alu", "1000")
    assert code == 0 and err == "", err
    assert "simulated utilization 100% of issue slots" in out and "of 644,524)" in out


def test_latency_lrr_says_why_it_differs_from_the_closed_form(capsys):
    code, out, err = run(
        capsys, "latency", "--warps", "16", "--mem-latency", "10", "--alu", "4", "--policy", "lrr"
    )
    assert code == 0 and err == ""
    assert "the closed form is exact for gto's steady state" in out
    assert "wait out L together" in out
    # 4 warps per scheduler: 20 issues every 4*4 + 10 + 1 = 27 cycles
    assert "(N K + L + 1)) = 74.1% here; it hides L only from N = L + 1 = 11 warps per scheduler" in out
    code, out, _ = run(capsys, "latency", "--warps", "16", "--mem-latency", "10", "--alu", "4")
    assert "lrr" not in out.split("\n", 2)[2]  # gto's run says nothing of lrr


@pytest.mark.parametrize(
    ("latency", "alu", "warned"), [("650", "0", True), ("650", "50", False), ("3", "0", False)]
)
def test_latency_warns_when_n_star_is_past_the_sm_warp_limit(capsys, latency, alu, warned):
    code, out, err = run(capsys, "latency", "--warps", "16", "--mem-latency", latency, "--alu", alu, "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["warps_needed"] > 64) == warned == bool(data["warnings"])
    code, out, _ = run(capsys, "latency", "--warps", "16", "--mem-latency", latency, "--alu", alu)
    line = "warning: N* = 2604 warps per SM is more than any NVIDIA SM's 64 warp slots: occupancy alone"
    assert (line in out) == warned and ("cannot hide this latency" in out) == warned


@pytest.mark.parametrize(
    ("durations", "words"),
    [
        (
            "jitter:0.5",
            "durations in units of the nominal mean block: 1, the mean of the jitter distribution",
        ),
        ("heavy:1.5", "durations in units of the nominal mean block: 1, the mean of the heavy distribution"),
        ("uniform", "durations in units of the mean block: every block takes 1"),
        ("rows:1,3", "durations in units of the mean block: the rows' weights averaged over the blocks"),
    ],
)
def test_dispatch_says_what_its_mean_block_is(capsys, durations, words):
    """Random kinds are in units of their distribution's mean, which the blocks drawn only approach."""
    argv = ["dispatch", "--device", "1650", "--grid", "98", "--block", "1024", "--durations", durations]
    code, out, _ = run(capsys, *argv, "--json")
    data = json.loads(out)
    assert code == 0 and data["unit_words"].startswith(words)
    if durations.startswith(("jitter", "heavy")):
        drawn = data["total_work"] / 98
        assert f"(the 98 blocks drawn average {drawn:.3f})" in data["unit_words"]
        assert abs(drawn - 1) > 1e-3  # 98 draws: near 1, not 1, so "nominal" is the honest word
    code, out, _ = run(capsys, *argv)
    assert words in out and "Durations are in units" not in out
