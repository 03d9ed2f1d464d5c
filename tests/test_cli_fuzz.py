"""Property: whatever argument list a user (or an attacker) types, and whatever is found in a file
the app reads, every sub-command ends in exit status 0, 1 or 2, never a traceback, and an error is
exactly one line.

Arguments come from each sub-command's real options with hostile values (tests/fuzzing.py).
``cli.main`` runs with ``check_only=True``: parsing and validation to the last step before the
work, so no benchmark runs and no window opens. ``occupancy``, ``launch``, ``memory``, ``tiling``,
``dispatch``, ``latency``, ``divergence`` and ``lessons`` are pure, so they also run whole.

Files: every file the app reads (settings, the last results, the measured ceilings, the remotes,
a lesson, a results file to resume) is planted with a damaged, hostile or non-regular content and
read the way the app reads it: a lesson through ``gui --lesson`` and ``screenshot --lesson``, a
resume file through ``bench --resume``, the app's own state through its loader (what the window
calls at start). A small sample keeps CI fast; benchmarks/fuzz_cli.py runs 10,000 calls.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import cli
from tests import fuzzing
from tests.fuzzing import COMMANDS, HOSTILE, PURE

values = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12))


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working folder with the file the good ``--resume`` value names, and a home of its own."""
    from explorer.bench.results import BenchPoint, points_to_csv

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    point = BenchPoint("matmul", "cpu", "cpu", 16, "n=16", median_s=1e-4, repeats=1)
    (tmp_path / "resume.csv").write_text(points_to_csv([point]))
    return tmp_path


@pytest.mark.parametrize("command", fuzzing.ALL_COMMANDS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_sub_command_parses_hostile_arguments_to_0_1_or_2(command, seed, workdir):
    """The argument lists of tests/fuzzing.py (the benchmark's), drawn from a seed hypothesis picks."""
    argv = fuzzing.argv_for(random.Random(seed), command)
    outcome = fuzzing.call(argv, check_only=True)
    assert not outcome.problem, (argv, outcome.problem)
    if command in PURE and outcome.code == 0 and "-h" not in argv and "--help" not in argv:
        outcome = fuzzing.call(argv, check_only=False)  # pure: run it whole too
        assert not outcome.problem, (argv, outcome.problem)
        assert outcome.code == 0


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=st.lists(values, max_size=6))
def test_any_argument_list_at_all(argv, workdir):
    outcome = fuzzing.call(argv, check_only=True)
    assert not outcome.problem, (argv, outcome.problem)


def test_every_sub_command_declares_its_check_step():
    """A new sub-command without its own ``check`` would inherit the window's; make that loud."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    names = set(sub.choices)  # type: ignore[union-attr]
    assert set(COMMANDS) | {"agent", "launcher-guard"} == names  # the hidden two: the child ends
    for name, subparser in sub.choices.items():  # type: ignore[union-attr]
        assert "check" in subparser._defaults, name


# --- every file the app reads ------------------------------------------------------------------


def _readers(home, path):
    """For each kind of file: how the app reads it, as a callable that returns an ``Outcome``-like
    problem string ('' when all is well)."""
    from explorer.bench import results as R
    from explorer.prefs import Prefs, load_with_notice, save
    from explorer.remote.saved import load_remotes
    from explorer.roofs import store

    def one_line_notice(notice: str) -> str:
        return "" if "\n" not in notice else f"a notice of more than one line: {notice!r}"

    def settings_read() -> str:
        problem = fuzzing.never_raises(lambda: load_with_notice())
        return problem or fuzzing.never_raises(
            lambda: save(Prefs())
        )  # saving keeps unknown keys: reads again

    def cli(*argv: str) -> str:
        return fuzzing.call([*argv], check_only=True).problem

    return {
        "settings": settings_read,
        "results": lambda: fuzzing.never_raises(lambda: one_line_notice(R.load_last().notice)),
        "ceilings": lambda: fuzzing.never_raises(lambda: store.load("cpu", "fingerprint")),
        "remotes": lambda: fuzzing.never_raises(lambda: one_line_notice(load_remotes().notice)),
        "lesson": lambda: (
            cli("gui", "--lesson", str(path)) or cli("screenshot", "--lesson", str(path), "--out", "x.png")
        ),
        "resume-json": lambda: cli("bench", "matmul", "--sizes", "16", "32", "--resume", str(path)),
        "resume-csv": lambda: cli("bench", "matmul", "--sizes", "16", "32", "--resume", str(path)),
        "resume-lines": lambda: cli("bench", "matmul", "--sizes", "16", "32", "--resume", str(path)),
    }


_LOCATIONS = {
    "settings": "settings.json",
    "results": "last-bench-results.json",
    "ceilings": "measured-ceilings.json",
    "remotes": "remotes.json",
    "lesson": "lesson.json",
    "resume-json": "run.json",
    "resume-csv": "run.csv",
    "resume-lines": "run.jsonl",
}


@pytest.mark.parametrize("kind", fuzzing.FILE_KINDS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_file_the_app_reads_survives_hostile_contents(kind, seed, workdir):
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    path = (home if kind in ("settings", "results", "ceilings", "remotes") else workdir) / _LOCATIONS[kind]
    rng = random.Random(seed)
    content = fuzzing.file_content(rng, kind, _GOOD)
    fuzzing.plant(path, content, fuzzing.size_limits()[kind])
    problem = _readers(home, path)[kind]()
    assert not problem, (kind, seed, content if isinstance(content, str) else content[:200], problem)


_GOOD = fuzzing.good_documents()
