"""A hung driver costs a probe's deadline, never the app: NVML, torch.cuda and numba.cuda each.

The stand-ins sleep for a minute inside the driver call, as ``nvmlInit`` does on a GPU that
fell off the bus. Without the deadlines these tests would wait that minute and then find the
probe's normal answer, so they fail both ways.
"""

from __future__ import annotations

import threading
import time

import pytest

from explorer.devices.deadline import ProbeTimedOut, call_with_deadline, still_stuck
from explorer.devices.discover import discover
from tests.devices.fake_cuda import A100, GTX1650, make_fake_numba, make_fake_torch
from tests.devices.fake_nvml import make_fake_nvml
from tests.processes import wait_until

HANG_S = 60.0


def _hung_nvml():
    nvml = make_fake_nvml()
    nvml.nvmlInit = lambda: time.sleep(HANG_S)
    return nvml


def _hung_torch():
    torch = make_fake_torch([A100, GTX1650])
    torch.cuda.is_available = lambda: time.sleep(HANG_S) or True
    return torch


def test_a_blocked_call_times_out_and_a_second_one_is_not_queued_behind_it():
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(
        ProbeTimedOut, match=r"^NVML did not answer within 0.2 s: the driver or a GPU may be hung"
    ):
        call_with_deadline("nvml", lambda: release.wait(HANG_S), 0.2, key="t1")
    assert time.monotonic() - started < HANG_S / 2
    assert "nvml" in still_stuck()
    # Refresh while it is still stuck: told at once, no second call piles up in the driver. Its
    # own deadline is the hang's length: a call that waited for it would be told "did not answer
    # within 60 s", not "has not answered for", so the words prove it, with no clock to break.
    with pytest.raises(ProbeTimedOut, match="has not answered for"):
        call_with_deadline("nvml", lambda: pytest.fail("asked again while stuck"), HANG_S, key="t1")
    release.set()
    wait_until(lambda: "nvml" not in still_stuck(), None, 60, "the released call was let go")
    assert call_with_deadline("nvml", lambda: 42, 1.0, key="t1") == 42


def test_a_probes_own_error_comes_through_unchanged():
    with pytest.raises(ZeroDivisionError):
        call_with_deadline("torch", lambda: 1 / 0, 1.0, key="t2")


def test_hung_nvml_is_reported_and_everything_else_is_listed(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    started = time.monotonic()
    disc = discover(
        nvml=_hung_nvml(),
        torch=make_fake_torch([A100, GTX1650]),
        numba=make_fake_numba([A100, GTX1650]),
        deadlines={"nvml": 0.5},
    )
    assert time.monotonic() - started < HANG_S / 2
    nvml = disc.report("nvml")
    assert nvml is not None and not nvml.ok
    assert nvml.message == "NVML did not answer within 0.5 s: the driver or a GPU may be hung."
    assert nvml.timed_out
    # the CPU, the catalog and what the CUDA runtime sees are all still there
    assert disc.cpu is not None and disc.catalog
    assert [g.key for g in disc.present_gpus] == ["cuda:0", "cuda:1"]
    a100 = disc.present_gpus[0]
    assert a100.live is None and "NVML did not answer within 0.5 s" in a100.reason("live")
    assert a100.reason("driver_version").startswith("NVML: NVML did not answer within 0.5 s")


def test_hung_torch_does_not_hold_back_numba(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    started = time.monotonic()
    disc = discover(
        include_catalog=False,
        nvml=make_fake_nvml(),
        torch=_hung_torch(),
        numba=make_fake_numba([A100, GTX1650]),
        deadlines={"torch": 0.5, "numba": 5.0},
    )
    assert time.monotonic() - started < HANG_S / 2
    assert disc.report("torch").message.startswith("torch.cuda did not answer within 0.5 s")
    assert disc.report("numba").ok
    a100 = disc.present_gpus[0]
    assert a100.name == "NVIDIA A100-SXM4-40GB" and a100.limits.max_block_dim == (1024, 1024, 64)


def test_progressive_discovery_reports_nvml_before_torch_and_numba_are_asked(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    log: list[str] = []
    partials = []
    torch = make_fake_torch([A100, GTX1650])
    torch.cuda.is_available = lambda: log.append("torch asked") or True

    def on_update(partial):
        log.append("partial")
        partials.append(partial)

    final = discover(
        nvml=make_fake_nvml(), torch=torch, numba=make_fake_numba([A100, GTX1650]), on_update=on_update
    )
    assert log == ["partial", "torch asked"]
    (partial,) = partials
    assert partial.pending == ["torch", "numba"]
    assert [d.kind for d in partial.devices][:3] == ["cpu", "cuda", "cuda"]
    # NVML's own numbering until the CUDA runtime says otherwise; live readings already there
    assert [g.name for g in partial.present_gpus] == ["NVIDIA GeForce GTX 1650", "NVIDIA A100-SXM4-40GB"]
    assert all(g.live is not None for g in partial.present_gpus)
    assert (
        partial.present_gpus[0].reason("sm_count") == "torch and numba are still being asked about this GPU"
    )
    assert partial.why_no_gpu() is None and partial.catalog
    # the final answer is merged afresh, in CUDA's order, with the runtime's facts
    assert final.pending == []
    assert [g.name for g in final.present_gpus] == ["NVIDIA A100-SXM4-40GB", "NVIDIA GeForce GTX 1650"]
    assert final.present_gpus[0].sm_count == 108 and final.present_gpus[0].unexplained() == []
    assert "torch and numba are still being asked" not in str(final.to_dict())


def test_partial_without_any_gpu_shows_no_banner_until_the_runtimes_answered(monkeypatch):
    partials = []
    final = discover(
        nvml=make_fake_nvml(init_error="library_not_found"),
        torch=make_fake_torch(None),
        numba=make_fake_numba(None),
        on_update=partials.append,
    )
    assert partials[0].why_no_gpu() is None  # torch might still find one
    assert final.why_no_gpu().startswith("No NVIDIA GPU was found")


def test_a_timed_out_probe_never_lets_the_banner_claim_there_is_no_gpu():
    disc = discover(
        include_catalog=False,
        nvml=_hung_nvml(),
        torch=make_fake_torch(None),
        numba=make_fake_numba(None),
        deadlines={"nvml": 0.3},
    )
    why = disc.why_no_gpu()
    assert not why.startswith("No NVIDIA GPU was found")
    assert why.startswith("No NVIDIA GPU could be listed: a driver did not answer in time")
    assert "NVML did not answer within 0.3 s" in why


def test_the_same_reason_from_two_probes_is_said_once():
    """A quick probe skips torch and numba for one reason; the banner (and a remote's, which lists
    with a quick probe) says it once."""
    from explorer.devices.discovery import Discovery, ProbeReport

    skipped = "Not asked: NVML sees no GPU and the CUDA driver library cannot be loaded."
    disc = Discovery(
        devices=[],
        reports=[
            ProbeReport(probe="nvml", ok=False, message="NVML library not found."),
            ProbeReport(probe="torch", ok=False, message=skipped),
            ProbeReport(probe="numba", ok=False, message=skipped),
        ],
    )
    why = disc.why_no_gpu()
    assert why == f"No NVIDIA GPU was found on this machine. NVML library not found. {skipped}"
