"""Numbers as the CLI and the panel both print them."""

from __future__ import annotations

from explorer.bench.fmt import eta_text, first_sentences, number_text, seconds_text


def test_seconds_pick_the_readable_unit():
    assert [seconds_text(t) for t in (2.5, 0.0123, 4.56e-5, 7e-9)] == ["2.5 s", "12.3 ms", "45.6 µs", "7 ns"]
    assert seconds_text(None) == "" and seconds_text(None, "-") == "-"


def test_rates_and_time_left():
    assert number_text(1234.4, "GFLOP/s") == "1,234 GFLOP/s"
    assert number_text(12.345, "GB/s") == "12.3 GB/s" and number_text(None) == ""
    assert eta_text(None) == "time left: estimating…"
    assert eta_text(75) == "time left: about 1 min 15 s" and eta_text(9.6) == "time left: about 10 s"


def test_long_reasons_are_cut_to_their_first_sentences():
    text = "No NVIDIA driver. NVML is missing. Install the driver. Then restart."
    assert first_sentences(text) == "No NVIDIA driver. NVML is missing. (Hover for more.)"
    assert first_sentences("One. Two") == "One. Two"
