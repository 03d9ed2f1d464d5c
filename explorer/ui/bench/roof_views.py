"""The Benchmarks panel's two pictures of roofs, the roofline and the bandwidth view, fed from the
shown run's own roofs, and the roofline's "Measure again".

Each run carries the roofs its points were placed under (``RunResults``, filled from the run's
stream): nothing here reads the ceilings file while a run goes on. Only where a run has none (a
file saved by an older version, a worker that could not say, a page with no run yet) is this
machine's roof taken from the window's one book of them (``AppContext.roofs``, built once per
device) and kept with the run. When the ceilings are measured again (here or on the Devices page),
every run's points of that device are judged against the new roof and the views redrawn.

What is shown lives in the page's ``BenchSession`` (the run's roofs, the catalog roof chosen);
this view draws it whenever the session's ``roofs`` event says so.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject

from explorer.bench.session import BenchSession
from explorer.roofs.model import Roof
from explorer.ui.bench.bandwidth_view import BandwidthPlot
from explorer.ui.bench.latency_view import LatencyView
from explorer.ui.bench.roofline_view import RooflinePlot
from explorer.ui.context import AppContext
from explorer.ui.roof_measure import MeasureAgain


class RoofViews(QObject):
    def __init__(
        self,
        context: AppContext,
        session: BenchSession,
        roofline: RooflinePlot,
        bandwidth: BandwidthPlot,
        parent: QObject | None = None,
        latency: LatencyView | None = None,
    ) -> None:
        super().__init__(parent)
        self._context, self._session = context, session
        self._results = session.results
        self.roofline, self.bandwidth, self.latency = roofline, bandwidth, latency
        self.measure = MeasureAgain(context, self.devices_to_measure)
        roofline.add_tool(self.measure)
        roofline.catalog_chosen.connect(session.set_catalog)
        context.roofs_measured.connect(self._measured)
        session.events.roofs.connect(self.refresh)

    def add_roof(self, roof: Roof, workload: str) -> None:
        """A device's roof from the run under way (the session keeps it and says its notice)."""
        self._session.add_roof(roof, workload)
        shown = self._context.roofs.get(roof.device)
        if (
            not roof.host
            and roof.measured_at is not None
            and shown is not None
            and (shown.measured_at != roof.measured_at)
        ):
            # the run's worker measured this machine's ceilings and stored them: every page (the
            # Devices page's "from another machine" note) shows them now, without a Refresh
            from explorer.bench.remeasure import Measured

            self._context.measured_again([Measured(roof.device, roof, "")])

    def devices_to_measure(self) -> list[str]:
        """This machine's devices the shown run measured on (the CPU when it has none)."""
        present = {d.key for d in self._context.devices if d.kind == "cpu" or (d.kind == "cuda" and d.usable)}
        shown = [p.device for p in self._results.points if not p.host and p.device in present]
        return list(dict.fromkeys(shown)) or (["cpu"] if "cpu" in present else [])

    def set_running(self, running: bool) -> None:
        """No measuring while a benchmark runs: each would disturb the other's figures."""
        self.measure.button.setEnabled(not running)

    def refresh(self) -> None:
        """Draw the roofs the session says the shown run stands under."""
        points = self._results.points
        records = {d.key: d for d in self._context.devices}
        roofs = self._session.roofs_shown(
            lambda key: self._context.roof_of(records[key]) if key in records else None
        )
        catalog = None
        key = self._session.catalog_key
        if key and key in records:
            from explorer.devices.roofs import catalog_roof

            rec = records[key]
            catalog = catalog_roof(rec) if rec.kind == "catalog" else None
        self.roofline.set_data(roofs, points, catalog)
        self.bandwidth.set_data(roofs, points)
        if self.latency is not None:  # the run's GPUs, and this machine's even before a run
            shown = {r.key for r in roofs}
            here = [
                self._context.roof_of(d)
                for d in records.values()
                if d.kind == "cuda" and ("", d.key) not in shown
            ]
            self.latency.set_roofs([*roofs, *here])

    def devices_found(self) -> None:
        devices = self._context.devices
        self.roofline.set_catalog_choices([(d.key, d.name) for d in devices if d.kind == "catalog"])
        if devices:
            self.refresh()

    def shutdown(self) -> None:
        self.measure.shutdown()

    def _measured(self, result: list[Any]) -> None:
        self._session.measured_again([m.roof for m in result if m.roof is not None])
