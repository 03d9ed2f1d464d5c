"""FP32 FLOP per cycle per core of a CPU, from its vector instruction set, with the assumption said.

The widest FP32 vector unit the ISA flags promise gives the lanes; a fused multiply-add counts as
2 FLOP; the number of FMA pipes per core is *not* in the flags, so it is assumed per ISA from the
vendors' optimisation manuals and Agner Fog's microarchitecture guide, and the assumption is part
of the text every peak carries:

* AVX-512 (Intel Skylake-SP and later Xeons, Ice Lake, Sapphire Rapids; AMD Zen 5): two 512-bit
  FMA pipes, 16 lanes x 2 x 2 = 64 FLOP/cycle. Some Intel parts have one (Xeon Bronze/Silver,
  several client chips): the figure is an upper bound there, never an underestimate.
* AMD Zen 4 (x86 family 25 with AVX-512) runs each 512-bit FMA as two 256-bit halves on its two
  256-bit FMA pipes: 32 FLOP/cycle, not 64 (a native FMA loop on an EPYC Zen 4 reaches 236 GFLOP/s
  on 2 cores at 3.69 GHz, exactly 32 per cycle; 64 would have put every matmul at half its share).
  The flags alone cannot tell Zen 4 from Zen 5, so the vendor and family numbers decide.
* AVX2 + FMA (Intel Haswell to Alder Lake, AMD Zen 2/3): two 256-bit FMA pipes, 8 x 2 x 2 = 32.
  AMD Zen and Zen+ (family 23, models below 0x30) split 256-bit operations over 128-bit pipes: 16.
* AVX without FMA (Sandy/Ivy Bridge): one 256-bit multiply and one 256-bit add per cycle, 16.
* SSE: one 128-bit multiply and one add per cycle, 8.
* Arm NEON/ASIMD: two 128-bit FMA pipes assumed (Cortex-A76 and later big cores, Neoverse N1),
  4 x 2 x 2 = 16; Apple's P-cores have four, so their peak is twice this.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class FlopsPerCycle:
    """FP32 FLOP one core can retire per cycle, and how that number was reached."""

    isa: str  # "AVX-512", "AVX2+FMA", "AVX", "SSE", "NEON", "scalar"
    lanes: int  # FP32 lanes of the widest vector unit
    pipes: int  # vector FMA (or multiply + add) pipes per core assumed
    fma: bool  # a multiply-add is one instruction of 2 FLOP; without, the pipes are one multiply + one add
    #: the core the figure was chosen for, where the flags alone would mislead ("AMD Zen 4: ...")
    core: str = ""

    @property
    def flop_per_cycle(self) -> int:
        return self.lanes * self.pipes * (2 if self.fma else 1)

    @property
    def basis(self) -> str:
        """The per-cycle figure in words: "64 FLOP/cycle (AVX-512: 16 FP32 lanes x 2 FLOP per FMA x
        2 FMA pipes assumed)"."""
        if self.core:
            how = f"{self.lanes} FP32 lanes x 2 FLOP per FMA x {self.pipes} per cycle on {self.core}"
        elif self.fma:
            how = f"{self.lanes} FP32 lanes x 2 FLOP per FMA x {self.pipes} FMA pipes assumed"
        elif self.pipes > 1:
            how = f"{self.lanes} FP32 lanes x 1 multiply + 1 add per cycle, no FMA"
        else:
            how = "no vector unit known: 1 FP32 operation per cycle"
        return f"{self.flop_per_cycle} FLOP/cycle ({self.isa}: {how})"


ZEN4_FAMILY = 25  # x86 family 19h: Zen 3 (no AVX-512) and Zen 4
ZEN1_FAMILY, ZEN2_FIRST_MODEL = 23, 0x30  # family 17h: Zen and Zen+ below model 30h, Zen 2 from it


def flops_per_cycle(
    flags: Iterable[str], vendor: str | None = None, family: int | None = None, model: int | None = None
) -> FlopsPerCycle:
    """The FP32 FLOP per cycle per core the ISA ``flags`` allow (lower-case cpuinfo names), on the
    core ``vendor`` ("AMD", "Intel") and its x86 ``family`` and ``model`` numbers name, where known."""
    have = {f.lower() for f in flags}
    amd = (vendor or "").lower() in ("amd", "authenticamd")
    if "avx512f" in have:
        if amd and family == ZEN4_FAMILY:
            return FlopsPerCycle(
                "AVX-512", 16, 1, True, core="AMD Zen 4 (each 512-bit FMA runs as two 256-bit halves)"
            )
        return FlopsPerCycle("AVX-512", 16, 2, True)
    if "avx" in have and "fma" in have:
        if amd and family == ZEN1_FAMILY and model is not None and model < ZEN2_FIRST_MODEL:
            return FlopsPerCycle(
                "AVX2+FMA", 8, 1, True, core="AMD Zen/Zen+ (each 256-bit FMA runs as two 128-bit halves)"
            )
        return FlopsPerCycle("AVX2+FMA", 8, 2, True)
    if "avx" in have:
        return FlopsPerCycle("AVX", 8, 2, False)
    if "asimd" in have or "neon" in have:
        return FlopsPerCycle("NEON", 4, 2, True)
    if have & {"sse", "sse2", "sse4_1", "sse4_2"}:
        return FlopsPerCycle("SSE", 4, 2, False)
    return FlopsPerCycle("scalar", 1, 1, False)


def cpu_fp32_peak_gflops(clock_ghz: float, cores: int, per_cycle: FlopsPerCycle) -> float:
    """Clock x cores x FLOP per cycle: the rate no FP32 code on those cores can beat at that clock.
    The one formula of a CPU's peak: the probe's estimate (on a reported clock) and the roof's
    theoretical peak (on the measured clock) are both this, with ``cpu_fp32_peak_basis``'s words."""
    return clock_ghz * cores * per_cycle.flop_per_cycle


def cpu_fp32_peak_basis(clock_words: str, cores: int, per_cycle: FlopsPerCycle) -> str:
    """The formula in words: "measured clock 3.24 GHz x 2 cores x 32 FLOP/cycle (AVX2+FMA: ...)"."""
    return f"{clock_words} x {cores} cores x {per_cycle.basis}"
