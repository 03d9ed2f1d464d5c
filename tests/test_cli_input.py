"""Hostile input at the command line: one line, exit status 2, never a traceback.

The in-process tests pin each rule; the subprocess tests run the causes the fuzzing found, as a
user would type them, through ``python -m explorer``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from explorer import cli
from explorer.commands import bench as bench_command
from explorer.devices import discover as discover_module
from explorer.devices import find as find_module
from explorer.devices.discovery import Discovery
from explorer.devices.model import CatalogGpu, CpuDevice, CudaGpu
from explorer.errors import UserError

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv: str, check_only: bool = False) -> tuple[int, str, str]:
    code = cli.main(list(argv), check_only=check_only)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["occupancy"], "the following arguments are required"),
        (["occupancy", "--cc", "7.5"], "--threads"),
        (["launch", "--device", "1650"], "--grid, --block"),
        (["devices", "--bogus"], "unrecognized arguments: --bogus"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["screenshot", "--panel", "nope", "--out", "x.png"], "invalid choice: 'nope'"),
        (["bench", "--sizes"], "expected at least one argument"),
        (["devices", "a\nb"], "unrecognized arguments: a\\nb"),
    ],
)
def test_argparse_mistakes_are_one_line(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("device-explorer: error: ")
    assert needle in err and "--help" in err and "usage:" not in err


@pytest.mark.parametrize("argv", [["--help"], ["occupancy", "--help"], ["bench", "-h"]])
def test_help_is_still_the_full_help(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert out.startswith("usage: device-explorer") and out.count("\n") > 5


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("device-explorer ")


# --- bench --device takes names too ----------------------------------------------------------

HERE = CudaGpu(name="NVIDIA GeForce RTX 4090", key="cuda:1", index=1)
SHEET = CatalogGpu(name="NVIDIA GeForce GTX 1650 Laptop GPU", key="catalog:gtx-1650-laptop")
CPU = CpuDevice(name="AMD Ryzen 7 5800X 8-Core Processor", key="cpu")


@pytest.fixture
def fake_discovery(monkeypatch):
    disc = Discovery(devices=[CPU, HERE, SHEET], reports=[])
    monkeypatch.setattr(discover_module, "default_discovery", lambda: disc)
    # what the NVIDIA driver lists under /proc on such a machine (the no-probe catalog path reads it)
    monkeypatch.setattr(find_module, "installed_gpu_names", lambda proc_dir=None: [HERE.name])
    return disc


@pytest.mark.parametrize(
    "text,key",
    [("cpu", "cpu"), ("CUDA", "cuda:0"), ("cuda:3", "cuda:3"), ("rtx 4090", "cuda:1"), ("ryzen", "cpu")],
)
def test_bench_device_names_resolve_to_keys(fake_discovery, text, key):
    assert bench_command.resolve_bench_device(text) == key


def test_bench_refuses_a_catalog_sheet_in_one_line(fake_discovery):
    with pytest.raises(UserError) as info:
        bench_command.resolve_bench_device("gtx1650")
    message = str(info.value)
    assert (
        "NVIDIA GeForce GTX 1650 Laptop GPU is a spec sheet from the catalog, not a GPU on this machine"
        in message
    )


@pytest.mark.parametrize(
    "text,needle", [("", "device is empty"), ("cuda:²", "digits 0-9"), ("gtx1605", "did you mean")]
)
def test_bench_device_errors(fake_discovery, text, needle):
    with pytest.raises(UserError, match=needle):
        bench_command.resolve_bench_device(text)


def _bench_args(**kw) -> Namespace:
    base = {"workload": "matmul", "device": "cpu", "sizes": None, "repeats": None, "csv": None, "json": False}
    base["remeasure_ceilings"] = False
    base.update(kw)
    return Namespace(**base)


def test_bench_request_keeps_sizes_above_2_53_exact():
    req = bench_command.parse_bench(_bench_args(sizes=["9007199254740993", "4K"]))
    assert req.run is not None and req.run.plan.sizes == [2**53 + 1, 4096]


def test_bench_checks_the_csv_path_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    req = bench_command.parse_bench(_bench_args(csv="~/r.csv"))
    assert req.csv == tmp_path / "r.csv"
    code, out, err = run(capsys, "bench", "matmul", "--csv", str(tmp_path / "missing" / "r.csv"))
    assert code == 2 and out == "" and "does not exist" in err  # refused before the run printed anything
    assert not (tmp_path / "missing").exists()


def test_bench_l2_is_cold_unless_warm_is_asked_for_on_a_gpu(monkeypatch):
    from explorer.bench.runner import plan_points

    monkeypatch.setattr(bench_command, "check_device_present", lambda device: None)
    cold = bench_command.parse_bench(_bench_args(workload="vector_add", device="cuda:0"))
    assert cold.run is not None and cold.run.plan.warm_l2 is False
    for text, warm in (("warm", True), (" Cold ", False)):
        req = bench_command.parse_bench(_bench_args(workload="strided_copy", device="cuda:0", l2=text))
        assert req.run is not None and req.run.plan.warm_l2 is warm
        assert {s.warm_l2 for s in plan_points(req.run.plan)} == {warm}


@pytest.mark.parametrize(
    "workload,device,text,message",
    [
        (
            "vector_add",
            "cpu",
            "warm",
            "--l2 warm: the L2 choice is for GPUs; CPU points run with the CPU's caches as they find them; "
            "leave --l2 out",
        ),
        ("vector_add", "cpu", "cold", "--l2 cold: the L2 choice is for GPUs;"),
        (
            "matmul",
            "cuda:0",
            "warm",
            "--l2 warm: matmul does not stream memory, so its points leave the L2 as it is; leave --l2 out",
        ),
        ("vector_add", "cuda:0", "tepid", "--l2 must be cold or warm; got 'tepid'"),
    ],
)
def test_bench_l2_is_refused_in_one_line_where_it_means_nothing(monkeypatch, workload, device, text, message):
    monkeypatch.setattr(bench_command, "check_device_present", lambda device: None)
    with pytest.raises(UserError) as info:
        bench_command.parse_bench(_bench_args(workload=workload, device=device, l2=text))
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_bench_l2_flag_reaches_the_parser(capsys):
    code, out, err = run(capsys, "bench", "vector_add", "--l2", "warm")  # the CPU by default
    assert code == 2 and out == ""
    assert "--l2 warm: the L2 choice is for GPUs" in err and "Traceback" not in err


def test_smem_takes_the_same_forms_as_sizes(capsys):
    code, out, _ = run(capsys, "occupancy", "--cc", "7.5", "--threads", "256", "--smem", "48K", "--json")
    assert code == 0 and '"smem_per_block_bytes": 49152' in out


# --- real invocations -----------------------------------------------------------------------

LONG_NAME = "a" * 296 + ".png"


def _run_explorer(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DEVICE_EXPLORER_HOME": str(tmp_path / "home")}
    environment.pop("PYTHONIOENCODING", None)
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        timeout=120,
    )


HOSTILE = [
    (["occupancy", "--cc", "8.²", "--threads", "256"], "'8.²' is not of the form X.Y"),
    (["bench", "matmul", "--device", "cuda:²"], "digits 0-9"),
    (["bench", "matmul", "--device", ""], "device is empty"),
    (["bench", "matmul", "--sizes", "1e400"], "'1e400'; it must be at most"),
    (["occupancy", "--cc", "7.5", "--threads", "9" * 5000], "at most 30 characters"),
    (["launch", "--device", "1650", "--grid", "1", "--block", "32", "--n", "0x10"], "hexadecimal"),
    (["launch", "--device", "1650", "--grid", "1", "--block", "32", "--n", "_1_"], "'_1_'"),
    (["screenshot", "--out", "x.png", "--size", "9" * 5000 + "x800"], "640x480 to 7680x4320"),
    (["screenshot", "--out", "~nosuchuser/x.png"], "no user 'nosuchuser'"),
    (["screenshot", "--out", LONG_NAME], "is 300 bytes long; this file system allows at most 255"),
    (["occupancy", "--threads", "256"], "one of the arguments --device --cc is required"),
    # an empty capability is said as such, not as "no device named"
    (["occupancy", "--cc", "", "--threads", "256"], "compute capability is empty; give it as X.Y"),
]


@pytest.mark.slow
@pytest.mark.parametrize("argv,needle", HOSTILE, ids=[" ".join(a)[:40] for a, _ in HOSTILE])
def test_hostile_invocations_exit_2_with_one_line(tmp_path, argv, needle):
    proc = _run_explorer(argv, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and len(proc.stderr) < 400
    assert needle in proc.stderr


@pytest.mark.slow
def test_ascii_terminal_gets_ascii_spellings_not_a_traceback(tmp_path):
    """PYTHONIOENCODING=ascii: "µs" in a bench line and "²" in an error used to raise UnicodeEncodeError.

    The bench runs in this worker's own app folder, not a fresh one: there the CPU's ceilings are
    measured once for all of the worker's benchmarks, and a fresh folder would measure them again
    (20 s) for a line whose spelling is all this test reads."""
    proc = _run_explorer(
        ["bench", "matmul", "--sizes", "16", "--repeats", "1"],
        tmp_path,
        PYTHONIOENCODING="ascii",
        DEVICE_EXPLORER_HOME=os.environ["DEVICE_EXPLORER_HOME"],
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert " us " in proc.stdout or " ns " in proc.stdout or " ms " in proc.stdout
    assert proc.stdout.isascii()
    proc = _run_explorer(["occupancy", "--cc", "8.²", "--threads", "256"], tmp_path, PYTHONIOENCODING="ascii")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "'8.\\xb2'" in proc.stderr or "8.^2" in proc.stderr


@pytest.mark.slow
def test_c_locale_is_not_a_traceback(tmp_path):
    proc = _run_explorer(["occupancy", "--cc", "8.²", "--threads", "256"], tmp_path, LC_ALL="C", LANG="C")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.slow
def test_a_pynvml_that_calls_sys_exit_on_import_is_a_probe_report_not_exit_3(tmp_path):
    """``devices`` exited 3 with no output."""
    stand_in = tmp_path / "stand-in"
    stand_in.mkdir()
    (stand_in / "pynvml.py").write_text("import sys\nsys.exit(3)\n")
    environment = {**os.environ, "PYTHONPATH": f"{stand_in}{os.pathsep}{Path(__file__).resolve().parents[1]}"}
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "devices"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "pynvml is installed but ended the program while being imported (sys.exit(3))" in proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_a_sub_command_built_alone_is_the_one_the_full_parser_has(name, capsys):
    """``main`` builds only the sub-command named first (so ``launch`` is not slowed by the
    others): its help, and so its options and defaults, must be the full parser's."""

    def help_of(parser) -> str:
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"])
        return capsys.readouterr().out

    alone = help_of(cli.build_parser(name))
    assert alone == help_of(cli.build_parser())
    assert "usage: device-explorer " + name in alone
