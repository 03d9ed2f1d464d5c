"""Two launch animations on one clock, so A and B show the same moment.

Qt-free, like ``animation``. The clock's unit is the wave: a wave takes the same time on both
sides (the model ignores clock speeds and what the kernel does), so a launch of 7 waves beside one
of 1 wave shows B finished while A is in its second wave: that gap is what a class should see.

The side with the most waves leads: every move is made on it (its wave boundaries are the other's,
and it can go further), then the others are put at the same moment, clamped to their own end.
A block step follows the side the teacher is editing, whose blocks land at its own pace.
"""

from __future__ import annotations

from explorer.launch.animation import Animation


class LockStep:
    """Drives one or two ``Animation`` s together; the panel's buttons and keys call it as they
    would call a single animation (play, step, speed)."""

    def __init__(self, anims: list[Animation]) -> None:
        if not anims:
            raise ValueError("LockStep needs at least one animation")
        self.anims = anims
        self.lead = max(anims, key=lambda a: a.waves)
        self.speed_index = self.lead.speed_index
        self._sync()

    # --- shared state -------------------------------------------------------------------
    @property
    def t(self) -> float:
        return self.lead.t

    @property
    def waves(self) -> int:
        return self.lead.waves

    @property
    def finished(self) -> bool:
        return self.lead.finished

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
        going = self.lead.advance(dt_s)
        self._sync()
        return going

    def seek(self, t: float) -> None:
        self.lead.seek(t)
        self._sync()

    def restart(self) -> None:
        self.lead.restart()
        self._sync()

    def faster(self) -> None:
        self.lead.faster()
        self._sync()

    def slower(self) -> None:
        self.lead.slower()
        self._sync()

    def step_wave(self, direction: int = 1) -> None:
        self.lead.step_wave(direction)
        self._sync()

    def step_block(self, direction: int = 1, side: Animation | None = None) -> None:
        """One block on ``side`` (the one being edited), or on the lead once that side is done."""
        mover = side if side is not None and side in self.anims else self.lead
        if mover is not self.lead and (mover.finished and direction > 0 or self.lead.t > mover.waves):
            mover = self.lead  # past the shorter launch's end only the longer one has blocks to place
        mover.step_block(direction)
        if mover is not self.lead:
            self.lead.seek(mover.t)
        self._sync()
