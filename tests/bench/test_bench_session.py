"""The Benchmarks page's model without Qt: what it shows, a run's lifecycle, and its events.

Every test records the session's events and checks each one fires exactly when what it names
changed: a view that redraws on an event must never miss a change nor redraw for nothing."""

from __future__ import annotations

import json

import pytest

from explorer.bench.results import BenchPoint, error_point, load_last_run
from explorer.bench.runner import BenchPlan, Progress
from explorer.bench.session import Bar, BenchSession, Recording, one_line
from explorer.errors import UserError
from explorer.gpuqueue.share import QueueWait
from explorer.remote.target import parse_remote
from explorer.roofs.model import Roof

EVENTS = ("shown", "point", "run", "progress", "message", "roofs", "recorded", "resume")
PLAN = BenchPlan("matmul", ["cpu"], sizes=[32, 64, 128], repeats=3)


def _ok(size: int, workload: str = "matmul", host: str = "") -> BenchPoint:
    return BenchPoint(
        workload, "cpu", "cpu", size, f"n={size}", variant_key="plain", median_s=1e-3, repeats=3, host=host
    )


def _err(size: int) -> BenchPoint:
    return error_point("matmul", "cpu", "cpu", size, f"n={size}", "the worker crashed")


class Heard:
    """Counts each event of a session since the last ``take``."""

    def __init__(self, session: BenchSession) -> None:
        self.counts = dict.fromkeys(EVENTS, 0)
        for name in EVENTS:
            getattr(session.events, name).connect(lambda name=name: self._hear(name))

    def _hear(self, name: str) -> None:
        self.counts[name] += 1

    def take(self) -> set[str]:
        """The events heard since the last call (each name once), and forget them."""
        heard = {name for name, n in self.counts.items() if n}
        self.counts = dict.fromkeys(EVENTS, 0)
        return heard


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A data folder of the test's own: a run ended here is saved there."""
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def told():
    return []


@pytest.fixture
def session(home, told):
    return BenchSession(tell=told.append)


def test_a_new_session_is_idle_with_nothing_shown(session):
    assert not session.running and session.phase == "idle" and session.outcome == ""
    assert session.points == [] and session.bar == Bar() and session.message == ""
    assert session.plan is None and session.last_plan is None and session.summary() == ""


def test_showing_a_workload_emits_only_when_it_changes(session):
    heard = Heard(session)
    assert session.show("matmul")
    assert {"shown", "roofs", "recorded", "progress"} <= heard.take()
    assert session.bar.text == "no run of this workload yet"
    assert not session.show("matmul")
    assert heard.take() == set()


@pytest.mark.parametrize("bad", ["", "   "])
def test_an_unnamed_workload_is_refused_in_one_line(session, bad):
    heard = Heard(session)
    with pytest.raises(UserError) as exc:
        session.show(bad)
    assert "\n" not in str(exc.value) and repr(bad) in str(exc.value)
    assert heard.take() == set() and session.shown == ""


def test_a_run_given_whole_is_shown_and_another_workloads_point_refused(session):
    session.show("matmul")
    heard = Heard(session)
    session.set_run([_ok(32), _ok(64)])
    assert "shown" in heard.take() and [p.size for p in session.points] == [32, 64]
    assert session.bar.text == "2 points from this workload's last run"
    with pytest.raises(UserError, match="cannot hold points of vector_add"):
        session.set_run([_ok(32), _ok(1000, "vector_add")])
    assert heard.take() == set() and len(session.points) == 2  # the shown run is untouched


def test_a_run_before_any_workload_is_shown_is_refused(session):
    with pytest.raises(UserError, match="choose a workload"):
        session.set_run([_ok(32)])


def test_a_runs_lifecycle_start_progress_points_done(session, home, told):
    session.show("matmul")
    heard = Heard(session)
    assert session.start(PLAN)
    assert heard.take() == {"shown", "roofs", "run", "progress"}
    assert session.running and session.plan is PLAN and session.last_plan is PLAN
    assert session.bar == Bar(0, 0, "starting the worker process…")  # busy until a total comes

    session.progress(Progress(0, 3, None))
    assert heard.take() == {"progress"}
    assert session.bar == Bar(0, 3, "0 / 3 points") and session.eta == "time left: estimating…"
    assert session.total_points == 3

    for size in (32, 64, 128):
        assert session.add_point(_ok(size))
        assert heard.take() == {"point"}
    session.progress(Progress(3, 3, 0.0))
    assert session.bar.value == 3 and session.eta == "time left: about 0 s"
    heard.take()

    session.end()
    assert heard.take() == {"progress", "run"}
    assert not session.running and session.outcome == "finished"
    assert session.bar == Bar(3, 3, "done: 3 / 3 points") and session.eta == ""
    assert session.summary() == "Benchmark finished: 3 points"
    assert session.resume_offer.left == 0 and session.message == ""
    saved = load_last_run()  # kept for the next start
    assert saved.value is not None and [p.size for p in saved.value.points] == [32, 64, 128]
    session.end()  # a second end (a late signal) changes nothing
    assert heard.take() == set()


def test_start_is_refused_while_running_or_while_ceilings_are_measured(session):
    session.show("matmul")
    assert not session.start(PLAN, measuring=True)
    assert not session.running and "ceilings are being measured" in session.message
    assert session.start(PLAN)
    assert session.message == ""  # a start clears the line the refused one left
    heard = Heard(session)
    assert not session.start(PLAN)
    assert heard.take() == {"message"} and "already running" in session.message
    assert session.plan is PLAN


def test_a_plan_must_be_a_plan_and_kept_points_its_own_workloads(session):
    with pytest.raises(UserError, match="BenchPlan, not dict"):
        session.start({"workload": "matmul"})
    with pytest.raises(UserError, match="cannot keep points of vector_add"):
        session.start(PLAN, [_ok(1000, "vector_add")])
    assert not session.running


def test_a_cancelled_run_says_stopped_and_offers_to_resume_the_rest(session):
    session.show("matmul")
    session.start(PLAN)
    session.progress(Progress(0, 3, None))
    session.add_point(_ok(32))
    heard = Heard(session)
    assert session.stop()
    assert heard.take() == {"run", "progress"}
    assert session.phase == "stopping" and session.running and session.bar.text == "stopping…"
    assert not session.stop()  # asked once: nothing more to ask
    session.progress(Progress(1, 3, 5.0))  # a record already on its way still counts...
    assert session.bar.text == "stopping…"  # ...but the bar keeps saying it is stopping
    heard.take()
    session.end()
    assert heard.take() == {"progress", "run", "resume"}
    assert session.outcome == "stopped" and session.bar.text == "stopped: 1 / 3 points"
    assert session.summary() == "Benchmark stopped: 1 points"
    assert session.resume_offer.left == 2 and session.resume_offer.text == "Resume (2 left)"
    assert "2 points without a result" in session.resume_offer.tooltip


def test_resume_measures_only_the_rest_and_keeps_the_finished_points(session, told):
    session.show("matmul")
    session.start(PLAN)
    session.add_point(_ok(32))
    session.add_point(_err(64))
    session.end()
    assert session.resume_left() == 2  # the error row and the point never reached
    heard = Heard(session)
    plan = session.resume()
    assert plan is not None and plan.skip and session.running
    assert session.last_plan is PLAN  # a resumed plan is not what a later Resume resumes
    assert [p.size for p in session.points] == [32]  # the finished point kept, shown first
    assert {"shown", "run", "resume"} <= heard.take()
    assert session.resume_offer.left == 0  # nothing to offer while running
    assert session.resume() is None  # not while a run goes on


def test_resume_with_nothing_left_says_why_in_one_line(session):
    session.show("matmul")
    assert session.resume() is None and session.message == ""  # no run started here: silent
    session.start(PLAN)
    for size in (32, 64, 128):
        session.add_point(_ok(size))
    session.end()
    assert session.resume() is None
    assert session.message and "\n" not in session.message and not session.running


def test_a_failed_run_becomes_one_clear_line(session):
    session.show("matmul")
    session.start(PLAN)
    heard = Heard(session)
    session.fail("the benchmark stopped: RuntimeError: boom\nTraceback (most recent call last):\n  ...")
    assert heard.take() == {"message"}
    assert session.message == "the benchmark stopped: RuntimeError: boom"
    session.end()
    assert session.outcome == "failed" and session.message == "the benchmark stopped: RuntimeError: boom"
    session.fail("the benchmark stopped: RuntimeError: boom")  # the same line again: no event
    assert "message" not in heard.take()


def test_a_failure_without_words_still_says_something(session):
    session.show("matmul")
    session.start(PLAN)
    session.fail("  \n \n")
    assert session.message == "the benchmark stopped without saying why"


def test_one_line_keeps_the_first_non_empty_line():
    assert one_line("\n  first  \nsecond") == "first"
    assert one_line("") == ""


def test_a_wait_is_shown_until_a_point_comes(session):
    session.show("matmul")
    session.start(PLAN)
    heard = Heard(session)
    wait = QueueWait(
        "waiting for the GPU: ana has it since 10:02, you are 2nd", 12.0, "ana", 2, short="2nd in line"
    )
    session.wait(wait)
    assert heard.take() == {"progress"}
    assert session.bar.text == "2nd in line" and session.bar.tooltip == wait.message
    assert session.wait_text == wait.message and session.waiting is wait
    session.progress(Progress(0, 3, None))  # no point yet: the wait still stands
    assert session.wait_text == wait.message
    session.progress(Progress(1, 3, 2.0))
    assert session.wait_text == "" and session.bar.tooltip == ""


@pytest.mark.parametrize(
    ("done", "total", "eta"),
    [(-1, 3, None), (4, 3, None), (0, -1, None), (1, 3, float("nan")), (1, 3, -2.0), (1, 3, float("inf"))],
)
def test_bad_progress_is_refused_in_one_line_naming_the_value(session, done, total, eta):
    session.show("matmul")
    session.start(PLAN)
    before = session.bar
    heard = Heard(session)
    with pytest.raises(UserError) as exc:
        session.progress(Progress(done, total, eta))
    text = str(exc.value)
    assert "\n" not in text and (str(done) in text if eta is None else repr(eta) in text)
    assert session.bar == before and heard.take() == set()


def test_late_records_of_an_ended_run_change_nothing(session):
    session.show("matmul")
    session.start(PLAN)
    session.end()
    heard = Heard(session)
    session.progress(Progress(1, 3, 1.0))
    session.wait(QueueWait("waiting", 1.0))
    assert heard.take() == set() and session.bar.text == "done: 0 / 0 points"


def test_a_late_point_of_a_workload_no_longer_shown_is_kept_not_drawn(session):
    session.show("matmul")
    session.start(PLAN)
    session.show("vector_add")
    heard = Heard(session)
    assert not session.add_point(_ok(32))
    assert heard.take() == set() and session.points == []
    assert [p.size for p in session.results.points_of("matmul")] == [32]


def test_a_point_must_be_a_point(session):
    with pytest.raises(UserError, match="BenchPoint, not str"):
        session.add_point("32 ms")


def test_a_remote_runs_bar_names_the_machine(session):
    session.show("matmul")
    plan = BenchPlan("matmul", ["cuda:0"], sizes=[64], remote=parse_remote("gpu-lab"))
    session.start(plan)
    assert session.bar.text == "connecting to gpu-lab and starting the worker there…"


def test_roofs_its_notice_is_told_and_the_shown_runs_roofs_event(session, told):
    session.show("matmul")
    session.start(PLAN)
    heard = Heard(session)
    roof = Roof("cpu", "Test CPU", [], notice="the stored ceilings were moved aside")
    session.add_roof(roof)
    assert heard.take() == {"roofs"} and session.roofs() == [roof]
    assert told == ["the stored ceilings were moved aside"]
    session.add_roof(Roof("cpu", "Test CPU", []), "vector_add")  # not the shown workload's
    assert heard.take() == set()


def test_the_catalog_roof_is_set_and_emitted_only_on_change(session):
    heard = Heard(session)
    session.set_catalog("h100")
    assert heard.take() == {"roofs"} and session.catalog_key == "h100"
    session.set_catalog("h100")
    assert heard.take() == set()
    with pytest.raises(UserError, match="by its key"):
        session.set_catalog(None)


def test_a_recording_is_drawn_for_its_own_workload_only(session):
    session.show("matmul")
    heard = Heard(session)
    rec = Recording(
        "Intel Xeon Gold (server), 2 threads", "2026-11-23", (_ok(64), _err(128), _ok(500, "vector_add"))
    )
    session.set_recording(rec)
    assert heard.take() == {"recorded"}
    assert [p.size for p in session.recorded_points()] == [64]  # measured, matmul's
    assert session.recorded_mark() == "recorded on Intel Xeon Gold, 2026-11-23"
    session.set_recording(Recording(rec.device, rec.date, rec.points))  # the same again
    assert heard.take() == set()
    session.show("vector_add")
    assert [p.size for p in session.recorded_points()] == [500]
    heard.take()
    session.set_recording(None)
    assert heard.take() == {"recorded"} and session.recorded_points() == [] and session.recorded_mark() == ""


def test_a_bad_recording_is_refused_in_one_line(session):
    with pytest.raises(UserError, match="needs the date"):
        Recording("GTX 1650", " ", ())
    with pytest.raises(UserError, match="benchmark points only, not dict"):
        Recording("GTX 1650", "2026-11-23", ({"size": 64},))
    with pytest.raises(UserError, match="a Recording, not str"):
        session.set_recording("recorded")


def test_a_save_that_cannot_be_written_is_one_line_and_the_run_still_ends(session, home):
    from explorer.bench.results import last_results_path

    last_results_path().mkdir()  # a folder where the file goes: the write fails
    session.show("matmul")
    session.start(PLAN)
    session.add_point(_ok(32))
    session.end()
    assert not session.running and session.outcome == "finished"
    assert session.message.startswith("could not keep these results for next time")
    assert "\n" not in session.message


def test_the_last_run_comes_back_and_a_damaged_file_is_told_once(home, told):
    first = BenchSession(tell=told.append)
    first.show("matmul")
    first.start(PLAN)
    first.add_point(_ok(32))
    first.end()
    again = BenchSession(tell=told.append)
    again.show("matmul")
    heard = Heard(again)
    assert again.restore_last() == "matmul"
    assert "shown" in heard.take() and [p.size for p in again.points] == [32]
    again.show_restored()
    assert again.bar.text.startswith("last results: 1 points, measured ")
    assert told == []

    from explorer.bench.results import last_results_path

    last_results_path().write_text(json.dumps({"points": "not a list"}), encoding="utf-8")
    third = BenchSession(tell=told.append)
    assert third.restore_last() is None and third.points == []
    assert len(told) == 1 and "moved" in told[0]


def test_measured_again_rejudges_the_shown_run(session):
    session.show("matmul")
    session.set_run([_ok(64)])
    heard = Heard(session)
    session.measured_again([Roof("cuda:7", "Some GPU", [])])  # no point of that device
    assert heard.take() == {"roofs"}
    session.measured_again([Roof("cpu", "Test CPU", [])])
    assert heard.take() == {"shown", "roofs"}
    assert [r.device for r in session.roofs()] == ["cpu"]


@pytest.mark.parametrize(
    ("plan", "words"),
    [
        (BenchPlan("matmul", []), "Choose at least one device."),
        (BenchPlan("matmul", ["cpu"], sizes=[]), "the sizes are empty"),
        (BenchPlan("matmul", ["cpu"], sizes=[64, 0]), "size 0 is not a size: each must be at least 1"),
        (BenchPlan("matmul", ["cpu"], time_budget_s=float("nan")), "time budget nan s per point"),
        (BenchPlan("matmul", ["cpu"], time_budget_s=0.0), "time budget 0.0 s per point: must be more than 0"),
    ],
)
def test_a_plan_that_cannot_run_is_refused_in_one_line_and_nothing_starts(session, plan, words):
    session.show("matmul")
    heard = Heard(session)
    assert not session.start(plan)
    assert heard.take() == {"message"} and session.message.startswith(words) and "\n" not in session.message
    assert not session.running and session.last_plan is None


def test_the_roofs_shown_are_the_runs_own_else_this_machines_kept_with_the_run(session):
    here = {"cpu": Roof("cpu", "Test CPU", [], note="this machine's")}
    asked: list[str] = []

    def roof_here(device: str) -> Roof | None:
        asked.append(device)
        return here.get(device)

    session.show("matmul")
    assert session.roofs_shown(roof_here) == [here["cpu"]]  # no point yet: the CPU's, not kept
    assert session.roofs() == []
    carried = Roof("cpu", "Test CPU", [], note="the run's", host="gpu-lab")
    session.set_run([_ok(32), _ok(64, host="gpu-lab"), _ok(128)], [carried])
    asked.clear()
    assert session.roofs_shown(roof_here) == [here["cpu"], carried]
    assert asked == ["cpu"]  # the remote's roof came with the run: never this machine's
    assert here["cpu"] in session.roofs()  # kept with the run: not asked again
    asked.clear()
    session.roofs_shown(roof_here)
    assert asked == []
