"""Two launch animations on one clock, so A and B show the same moment.

Qt-free, like ``animation``. The clock's unit is the wave: a wave takes the same time on both
sides (the model ignores clock speeds and what the kernel does), so a launch of 7 waves beside one
of 1 wave shows B finished while A is in its second wave: that gap is what a class should see.

The side with the most waves leads: every move is made on it (its wave boundaries are the other's,
and it can go further), then the others are put at the same moment, clamped to their own end.
A block step follows the side the teacher is editing, whose blocks land at its own pace.

The clock may run past the lead's last wave, to ``end``: a view that shows the launch in time
(``explorer.launch.time_views``: uneven blocks can end after the wave picture's last wave) asks for
it. Past the last wave both animations stay finished, and a wave step moves by one whole unit.
"""

from __future__ import annotations

import math

from explorer.launch.animation import CLOCK_EPS, Animation


class LockStep:
    """Drives one or two ``Animation`` s together; the panel's buttons and keys call it as they
    would call a single animation (play, step, speed)."""

    def __init__(self, anims: list[Animation], end: float = 0.0) -> None:
        if not anims:
            raise ValueError("LockStep needs at least one animation")
        self.anims = anims
        self.lead = max(anims, key=lambda a: a.waves)
        self._end = max(0.0, end)
        self._past: float | None = None  # the clock's time once it is past the lead's last wave
        self.speed_index = self.lead.speed_index
        self._sync()

    # --- shared state -------------------------------------------------------------------
    @property
    def t(self) -> float:
        return self._past if self._past is not None else self.lead.t

    @property
    def waves(self) -> int:
        return self.lead.waves

    @property
    def end(self) -> float:
        """Where the clock stops: the lead's last wave, or later when a view asked for more."""
        return max(float(self.lead.waves), self._end)

    def set_end(self, end: float) -> None:
        """Let the clock run to ``end`` (0: the lead's last wave); a moment past it is pulled back."""
        self._end = max(0.0, end)
        if self.t > self.end:
            self.seek(self.end)

    @property
    def finished(self) -> bool:
        return self.t >= self.end

    @property
    def playing(self) -> bool:
        return self.lead.playing

    @playing.setter
    def playing(self, value: bool) -> None:
        for a in self.anims:
            a.playing = value

    @property
    def speed_index(self) -> int:
        return self.lead.speed_index

    @speed_index.setter
    def speed_index(self, value: int) -> None:
        for a in self.anims:
            a.speed_index = value

    @property
    def speed_waves_per_s(self) -> float:
        return self.lead.speed_waves_per_s

    def _sync(self) -> None:
        """Every side at the lead's moment (a shorter launch stays finished past its end)."""
        for a in self.anims:
            if a is not self.lead:
                a.seek(self.lead.t)
                a.playing = self.lead.playing
                a.speed_index = self.lead.speed_index

    # --- moves --------------------------------------------------------------------------
    def advance(self, dt_s: float) -> bool:
        """Move a playing clock by wall time ``dt_s`` at the speed; False (and stop) at the end."""
        if not self.playing:
            return False
        self.seek(self.t + dt_s * self.speed_waves_per_s)
        if self.finished:
            self.playing = False
        return not self.finished

    def seek(self, t: float) -> None:
        t = min(max(t, 0.0), self.end)
        if t > self.lead.waves:
            self.lead.seek(float(self.lead.waves))
            self._past = t
        else:
            self.lead.seek(t)
            self._past = None
        self._sync()

    def restart(self) -> None:
        self.seek(0.0)

    def faster(self) -> None:
        self.lead.faster()
        self._sync()

    def slower(self) -> None:
        self.lead.slower()
        self._sync()

    def step_wave(self, direction: int = 1) -> None:
        """The lead's next (or previous) full wave; past its last wave, the next whole unit."""
        waves = self.lead.waves
        if direction > 0 and self.t >= waves and self.end > waves:
            self.seek(min(math.floor(self.t + CLOCK_EPS) + 1.0, self.end))
            return
        if direction <= 0 and self._past is not None:
            self.seek(max(math.ceil(self.t - CLOCK_EPS) - 1.0, float(waves)))
            return
        self.lead.step_wave(direction)
        self._sync()

    def step_block(self, direction: int = 1, side: Animation | None = None) -> None:
        """One block on ``side`` (the one being edited), or on the lead once that side is done.
        Past the lead's last wave no block is left to place; one back lands on that wave."""
        if self._past is not None:
            if direction > 0:
                return
            self.seek(float(self.lead.waves))
        mover = side if side is not None and side in self.anims else self.lead
        if mover is not self.lead and (mover.finished and direction > 0 or self.lead.t > mover.waves):
            mover = self.lead  # past the shorter launch's end only the longer one has blocks to place
        mover.step_block(direction)
        if mover is not self.lead:
            self.lead.seek(mover.t)
        self._sync()
