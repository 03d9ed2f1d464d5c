"""The real run's SM map: on a GPU each block's first thread writes the SM it ran on (``%smid``,
read by a hand-written PTX function). No GPU here, so the parts are checked apart: the PTX is
assembled for Hopper by NVIDIA's ptxas, the kernel's bookkeeping runs on numba's simulator with a
stand-in for ``%smid``, and the map travels through the file and the remote answer unchanged."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

from explorer.errors import UserError
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch_runs import realrun
from tests.simulator import run_on_simulator


def _result(sm_of_block: np.ndarray | None, grid=(6, 1, 1), note: str = "") -> realrun.RealRunResult:
    n = 6 * 32
    i = np.arange(n, dtype=np.int64)
    return realrun.RealRunResult(
        grid=grid,
        block=(32, 1, 1),
        n=n,
        backend="gpu",
        device_name="NVIDIA H100 80GB HBM3",
        block_of_element=i // 32,
        thread_of_element=i % 32,
        writes_per_element=np.ones(n, np.int32),
        sum_correct=True,
        kernel_s=0.001,
        total_s=1.0,
        sm_of_block=sm_of_block,
        sm_note=note,
    )


@pytest.mark.slow
def test_the_smid_ptx_assembles_for_hopper(tmp_path):
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("NVIDIA's ptxas is not installed (CUDA toolkit), so the PTX cannot be assembled here")
    source = tmp_path / "dx_smid.ptx"
    source.write_text(realrun.SMID_PTX)
    proc = subprocess.run(
        [ptxas, "-arch=sm_90", "-c", str(source), "-o", str(tmp_path / "dx_smid.o")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "%smid" in realrun.SMID_PTX and ".visible .func" in realrun.SMID_PTX


SIM_SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    from explorer.numbacuda import cuda
    from explorer.launch_runs import realrun as rr

    rr._kernel()
    rr._DEVICE_RECORD = cuda.jit(device=True)(rr._record_vector_add)

    @cuda.jit(device=True)
    def fake_smid():  # a stand-in for %smid: a different, known SM for each block
        return (cuda.blockIdx.x * 7 + cuda.blockIdx.y * 3 + cuda.blockIdx.z) % 5

    rr._SMID = fake_smid
    kernel = cuda.jit(rr._record_vector_add_sm)
    grid, block, n = (3, 2, 2), (4, 2, 1), 80  # 12 blocks of 8 threads for 80 elements
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    block_of = np.full(n, -1, np.int64)
    thread_of = np.full(n, -1, np.int64)
    writes = np.zeros(n, np.int32)
    sm = np.full(12, -1, np.int32)
    kernel[grid, block](a, b, c, block_of, thread_of, writes, sm, n, 0, 0, 0)
    print("RESULT" + json.dumps({"sm": sm.tolist(), "writes": writes.tolist(), "sum": bool((c == a + b).all()),
                                "block_of": block_of.tolist()}))
    """
)


@pytest.mark.slow
def test_the_first_thread_of_every_block_writes_its_sm_by_linear_block_number():
    out = run_on_simulator(SIM_SCRIPT)
    expected = [(x * 7 + y * 3 + z) % 5 for z in range(2) for y in range(2) for x in range(3)]
    assert out["sm"] == expected  # blocks numbered x fastest, as the visualizer numbers them
    assert out["writes"] == [1] * 80 and out["sum"]  # the vector add itself is unchanged
    assert out["block_of"] == [i // 8 for i in range(80)]


@pytest.mark.slow
def test_on_the_simulator_a_run_has_no_sm_map_and_says_why():
    result = realrun.run_real(LaunchConfig(Dim3(2), Dim3(32), n=64), simulator=True, timeout_s=120)
    assert result.sm_of_block is None and result.sm_note == "the simulator has no SMs"
    assert result.sms_used() is None and "%smid" not in result.summary()


def test_the_summary_counts_the_sms_the_blocks_ran_on():
    result = _result(np.array([0, 2, 4, 0, 2, 4], np.int32))
    assert result.sms_used() == 3
    assert result.blocks_per_sm() == {0: 2, 2: 2, 4: 2}
    assert "its 6 blocks ran on 3 SMs (read from %smid)" in result.summary()


def test_the_sm_map_survives_the_file_the_local_run_writes(tmp_path):
    sent = _result(np.array([5, 1, 131, 0, 7, 7], np.int32))
    path = str(tmp_path / "run.npz")
    realrun._save(sent, path)
    back = realrun._load(path, 2.0)
    assert back.sm_of_block is not None and back.sm_of_block.tolist() == [5, 1, 131, 0, 7, 7]
    without = dataclasses.replace(sent, sm_of_block=None, sm_note="%smid could not be read: no linker")
    realrun._save(without, path)
    back = realrun._load(path, 2.0)
    assert back.sm_of_block is None and back.sm_note == "%smid could not be read: no linker"


def test_a_remote_sm_map_comes_back_and_a_forged_one_is_refused():
    sent = json.loads(json.dumps(realrun.result_to_inline(_result(np.array([3, 9, 3, 9, 0, 1], np.int32)))))
    back = realrun.result_from_inline(sent, (6, 1, 1), (32, 1, 1), 192, None, 1.0)
    assert back.sm_of_block is not None and back.sm_of_block.tolist() == [3, 9, 3, 9, 0, 1]
    assert back.sm_of_block.dtype == np.int32
    huge = realrun._encode_array(np.array([3, 9, 3, 9, 0, 99_999], np.int64))
    short = realrun._encode_array(np.array([3, 9], np.int64))
    for bad, words in (
        ({**sent, "sm_of_block": huge}, "outside -1..4095"),
        ({**sent, "sm_of_block": short}, "6 values"),
    ):
        with pytest.raises(UserError, match=words):
            realrun.result_from_inline(bad, (6, 1, 1), (32, 1, 1), 192, None, 1.0)


def test_the_result_file_is_read_only_when_its_headers_have_the_launchs_shape(tmp_path):
    """Each array's header is checked before the array is read: a result of another shape is one
    line, not a read of whatever size it claims."""
    sent = _result(np.array([5, 1, 131, 0, 7, 7], np.int32))
    path = str(tmp_path / "run.npz")
    realrun._save(sent, path)
    n = len(sent.block_of_element)
    assert realrun._load(path, 2.0, n, 6).sm_of_block.tolist() == [5, 1, 131, 0, 7, 7]
    with pytest.raises(
        UserError, match=rf"block_of_element has shape \({n},\); the launch has {n + 1} elements"
    ):
        realrun._load(path, 2.0, n + 1, 6)
    with pytest.raises(UserError, match=r"sm_of_block has shape \(6,\); the launch has 7 blocks"):
        realrun._load(path, 2.0, n, 7)
    np.savez(path, meta=np.zeros(4, np.uint8), huge=np.zeros(3))
    with pytest.raises(UserError, match="holds 'huge', which no run writes"):
        realrun._load(path, 2.0, n, 6)
    (tmp_path / "run.npz").write_bytes(b"not a zip")
    with pytest.raises(UserError, match="the real run's result file cannot be read"):
        realrun._load(path, 2.0, n, 6)
