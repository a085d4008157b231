"""Engine agreement (issue 25): reruns the property test's cases and prints the figures.

``tests/test_properties.py::test_engines_agree_on_every_kernel_reg_type_and_selector``
asserts that the compiled (numba) engine equals the numpy reference on random data with
degenerate designs and exact ties, for every kernel, ``reg_type`` and bandwidth selector.
This script runs that same test function (the same fixed examples) and reports the worst
relative difference of the predictions (of their scale) and of the leave-one-out scores,
and how many selected bandwidths differ, overall and by case (the figures of
``benchmarks/RESULTS.md``, section "Engine agreement (issue 25)").

Usage (from the repository root)::

    python benchmarks/engine_agreement.py
"""
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]   # this checkout's nlpfeat and its tests

import test_properties


def _summary(rows, label):
    with_selection = [r for r in rows if r["selection"]]
    beyond = sum(r["prediction"] > 1e-9 or r["score"] > 1e-9 for r in rows)
    worst = {key: max((r[key] for r in rows), default=0.0) for key in
             ("prediction", "score", "margin")}
    print(f"{label:<26} {len(rows):>5}  {worst['prediction']:9.2e}  {worst['score']:9.2e}"
          f"  {sum(r['selection differs'] for r in with_selection):>4} of {len(with_selection):<5}"
          f"  {beyond:>5}  {worst['margin']:7.1e}")


def main():
    test_properties.ENGINE_AGREEMENT = rows = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kernel, selector in test_properties.ENGINE_COMBINATIONS:
            test_properties.test_engines_agree_on_every_kernel_reg_type_and_selector(
                kernel=kernel, selector=selector)
    seconds = time.perf_counter() - start
    print(f"{len(rows)} cases in {seconds:.1f} s (numba compilation included when uncached)")
    print(f"{'cases':<26} {'n':>5}  {'pred rel':>9}  {'LOO rel':>9}  {'selections differ':<13}"
          f"  {'>1e-9':>5}  {'of tol':>7}")
    _summary(rows, "all")
    for key in ("model", "selector"):
        for value in sorted({r[key] for r in rows}):
            _summary([r for r in rows if r[key] == value], f"{key} {value}")
    for kernel in test_properties.KERNELS:
        _summary([r for r in rows if r["kernel"] == kernel], f"kernel {kernel}")
    worst = sorted(rows, key=lambda r: -max(r["prediction"], r["score"]))[:5]
    print("worst cases:", *(f"{r['kernel']} {r['model']} {r['selector']}: prediction "
                            f"{r['prediction']:.2e}, LOO {r['score']:.2e}" for r in worst),
          sep="\n  ")
    assert np.isfinite([r["prediction"] for r in rows]).all()


if __name__ == "__main__":
    main()
