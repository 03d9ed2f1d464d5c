"""The typed point record a worker is sent, and a point's key: what it measures, never its label."""

from __future__ import annotations

import json

import pytest

from explorer.bench.results import BenchPoint
from explorer.bench.runner import BenchPlan, plan_points
from explorer.bench.spec import PointKey, PointSpec
from explorer.schema import SchemaError


def test_a_planned_point_goes_over_the_pipe_and_comes_back_the_same_record():
    specs = plan_points(BenchPlan("copies", ["cpu"], sizes=[4096], repeats=3, measure_roof=True))
    assert all(isinstance(s, PointSpec) for s in specs)
    for spec in specs:
        wire = json.loads(json.dumps(spec.to_dict()))  # what the agent protocol carries
        assert PointSpec.from_dict(wire) == spec
    assert specs[0].key("gpu-lab") == PointKey("gpu-lab", "cpu", "host_memcpy", 4096)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"size": -64}, "the point's size is -64, less than 1"),
        ({"size": "big"}, "the point's size"),
        ({"size": 10**400}, "the point's size"),
        ({"repeats": 0}, "the point's repeats is 0, less than 1"),
        ({"budget_s": 1e300}, "the point's budget_s"),
        ({"variant_key": ["plain"]}, "the point's variant_key"),
        ({"measure_roof": "yes"}, "the point's measure_roof"),
    ],
)
def test_a_spec_that_does_not_fit_is_one_line_naming_the_field(change, words):
    wire = {**plan_points(BenchPlan("matmul", ["cpu"], sizes=[64]))[0].to_dict(), **change}
    with pytest.raises(SchemaError) as info:
        PointSpec.from_dict(wire)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_missing_fields_and_non_objects_are_refused():
    with pytest.raises(SchemaError, match="variant_key is missing"):
        PointSpec.from_dict({"index": 0, "workload": "matmul", "device": "cpu", "variant": "cpu", "size": 64})
    with pytest.raises(SchemaError):
        PointSpec.from_dict(["not", "an", "object"])


def test_a_points_key_is_what_it_measured_and_the_point_is_immutable():
    p = BenchPoint("matmul", "cpu", "cpu", 64, "n=64", variant_key="plain", host="gpu-lab")
    assert p.key == PointKey("gpu-lab", "cpu", "plain", 64)
    relabelled = BenchPoint("matmul", "cpu renamed", "cpu", 64, "n=64", variant_key="plain", host="gpu-lab")
    assert relabelled.key == p.key
    with pytest.raises(AttributeError):
        p.noisy = True  # type: ignore[misc]
