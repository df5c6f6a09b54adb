"""Seed 000 (validation/data/seeds): the four Xavier DLA batch-32 engines within 20% of the measured medians,
and the 1x1 engine's time dominated by the two reformat copies, as the vendor's breakdown shows.

In-sample checks (marker `in_sample`): validation/fit_specs.py fits the Xavier DLA parameters to these very
medians, so passing says the fit and the model agree, not that the model predicts unseen networks; the
held-out figures are `dlasim validate`'s held_out lines and `fit_specs.py --leave-one-network-out`."""
import csv
import statistics
from pathlib import Path

import pytest

import dlasim

SEEDS = Path(__file__).resolve().parents[1] / "validation" / "data" / "seeds"


def measured_medians() -> dict:
    rows = list(csv.DictReader(l for l in (SEEDS / "xavier_dla_conv_trtexec.csv").open() if not l.startswith("#")))
    return {k: statistics.median(float(r[k]) for r in rows) for k in rows[0] if k != "run"}


@pytest.mark.in_sample
@pytest.mark.parametrize("kernel,precision", [("1x1", "int8"), ("1x1", "fp16"), ("3x3", "int8"), ("3x3", "fp16")])
def test_in_sample_seed000_within_20_percent(kernel, precision):
    measured = measured_medians()[f"k{kernel[0]}_{precision}_ms"]
    e = dlasim.estimate(str(SEEDS / f"kernel_{kernel}.prototxt"), "xavier-agx", device="dla", precision=precision,
                        batch=32)
    assert abs(e.total_ms / measured - 1) < 0.20


@pytest.mark.in_sample
def test_in_sample_seed000_1x1_time_is_mostly_the_two_reformats():
    e = dlasim.estimate(str(SEEDS / "kernel_1x1.prototxt"), "xavier-agx", device="dla", precision="int8", batch=32)
    copies = [s for s in e.steps if s.kind == "reformat"]
    assert len(copies) == 2
    assert sum(s.time_ms for s in copies) > 0.5 * e.total_ms
