"""The Benchmarks panel's parts: controls, live plot, results table, run stream, export.

``explorer.ui.bench_panel.BenchPanel`` puts them together; each module here holds one of them so
none grows past what a reader can hold in mind.
"""
