"""Benchmark: binned Nadaraya-Watson (``algorithm="binned"``) vs the exact compiled path.

Every row of issue 27's target table, the exact compiled path (``algorithm="brute"``,
numba engine, one thread) as the peer in the same run: CPU seconds (``process_time``)
of fit + predict, best of ``--repeats`` taking turns, the ratio's spread over the
rounds, and the largest error of the binned predictions (relative to std(y); absolute
for probabilities). ``--scale`` shrinks every n (0.1 for a quick look); ``--rows``
picks rows (1 to 6). Run with OMP_NUM_THREADS=1.

Rows: 1 d=1, n 200 000, 20 000 queries, Scott bandwidth, gaussian, lc and ll;
2 d=2, n 100 000, 10 000 queries, epanechnikov and gaussian; 3 ``bandwidth="loo"``,
30-point grid, d=1, n 10 000; 4 the classifier, d=2, n 100 000, 10 000 queries;
5 d=1, n 10^6, ``bandwidth="loo"`` then predict 10^6 queries (binned only: wall
seconds, peak traced memory); 6 statsmodels' ``KernelReg`` (fixed bandwidth, lc) at
the largest n of a doubling series that it finishes within 60 s, vs binned.
"""
import argparse
import time
import tracemalloc
import warnings

import numpy as np

from nlpfeat.kernels import NadarayaWatsonClassifier, NadarayaWatsonRegressor


def _data(rng, n, d):
    X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) + (X[:, 1] if d > 1 else 0) + 0.3 * rng.normal(size=n)
    return X, y


def _timed(make, X, y, Q, proba=False):
    t = time.process_time()
    model = make().fit(X, y)
    out = model.predict_proba(Q) if proba else model.predict(Q)
    return time.process_time() - t, out, model


def _row(label, make_exact, make_binned, X, y, Q, repeats, proba=False):
    times = {"exact": [], "binned": []}
    outs = {}
    for _ in range(repeats):
        for name, make in (("exact", make_exact), ("binned", make_binned)):
            sec, outs[name], model = _timed(make, X, y, Q, proba)
            times[name].append(sec)
            if name == "binned":
                n_exact = getattr(model._index, "n_exact_", 0)
    diff = np.abs(outs["binned"] - outs["exact"]).max()
    err = diff if proba else diff / np.std(y)
    ratios = np.array(times["exact"]) / np.array(times["binned"])
    print(f"| {label} | {min(times['exact']):.3f} | {min(times['binned']):.3f} | "
          f"{min(times['exact']) / min(times['binned']):.1f}x ({ratios.min():.1f}-"
          f"{ratios.max():.1f}) | {err:.1e} | {n_exact} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", default="1,2,3,4,5,6")
    args = ap.parse_args()
    rows = {int(r) for r in args.rows.split(",")}
    rng = np.random.default_rng(0)
    sc = lambda n: max(200, int(n * args.scale))       # noqa: E731
    warnings.simplefilter("ignore")
    R, C = NadarayaWatsonRegressor, NadarayaWatsonClassifier
    # compile the exact path once, outside the timings
    R(bandwidth=0.5, algorithm="brute").fit(*_data(rng, 50, 1)).predict(np.zeros((2, 1)))
    print("| work | exact CPU s | binned CPU s | ratio (spread) | error | exact-path queries |")
    print("|---|---|---|---|---|---|")
    if 1 in rows:
        X, y = _data(rng, sc(200_000), 1)
        Q = rng.normal(size=(sc(20_000), 1))
        for reg in ("lc", "ll"):
            _row(f"d=1 n={len(X)} m={len(Q)} gaussian {reg}",
                 lambda: R(bandwidth="scott", reg_type=reg, algorithm="brute"),
                 lambda: R(bandwidth="scott", reg_type=reg, algorithm="binned"),
                 X, y, Q, args.repeats)
    if 2 in rows:
        X, y = _data(rng, sc(100_000), 2)
        Q = rng.normal(size=(sc(10_000), 2))
        for kern in ("gaussian", "epanechnikov"):
            _row(f"d=2 n={len(X)} m={len(Q)} {kern} lc",
                 lambda: R(kern, bandwidth="scott", algorithm="brute"),
                 lambda: R(kern, bandwidth="scott", algorithm="binned"),
                 X, y, Q, args.repeats)
    if 3 in rows:
        X, y = _data(rng, sc(10_000), 1)
        Q = X[:100]
        ex = R(bandwidth="loo", algorithm="brute").fit(X, y)
        bi = R(bandwidth="loo", algorithm="binned").fit(X, y)
        pick = int(np.argmin(bi.loo_scores_))
        print(f"<!-- loo choice: exact {ex.bandwidth_:.6g}, binned {bi.bandwidth_:.6g}; "
              f"exact score at the binned pick / best - 1 = "
              f"{ex.loo_scores_[pick] / ex.loo_scores_.min() - 1:.2e} -->")
        _row(f"loo 30-grid d=1 n={len(X)}", lambda: R(bandwidth="loo", algorithm="brute"),
             lambda: R(bandwidth="loo", algorithm="binned"), X, y, Q, args.repeats)
    if 4 in rows:
        X, y = _data(rng, sc(100_000), 2)
        labels = (y > 0).astype(int) + (y > 1)
        Q = rng.normal(size=(sc(10_000), 2))
        _row(f"classifier d=2 n={len(X)} m={len(Q)} gaussian",
             lambda: C(bandwidth="scott", algorithm="brute"),
             lambda: C(bandwidth="scott", algorithm="binned"), X, labels, Q, args.repeats,
             proba=True)
    if 5 in rows:
        X, y = _data(rng, sc(1_000_000), 1)
        Q = rng.normal(size=(sc(1_000_000), 1))
        tracemalloc.start()
        t, c = time.perf_counter(), time.process_time()
        model = R(bandwidth="loo", algorithm="binned").fit(X, y)
        model.predict(Q)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"| d=1 n={len(X)} loo + predict {len(Q)} (binned only) | - | {cpu:.2f} "
              f"(wall {wall:.2f}) | - | peak traced {peak:.0f} MiB | "
              f"{model._index.n_exact_} |")
    if 6 in rows:
        from statsmodels.nonparametric.kernel_regression import KernelReg

        n, last = 250, None
        while True:
            X, y = _data(rng, n, 1)
            t = time.process_time()
            KernelReg(y, X, "c", reg_type="lc", bw=[0.3]).fit(X)
            sec = time.process_time() - t
            if sec > 60 or n > 64_000:
                break
            last, n = (n, sec), n * 2
            if sec > 15:          # the next doubling would pass 60 s
                break
        n, sm_sec = last
        X, y = _data(rng, n, 1)
        b_sec, _, _ = _timed(lambda: R(bandwidth=0.3, algorithm="binned"), X, y, X)
        print(f"| KernelReg lc fixed bw, n=m={n} | {sm_sec:.2f} (statsmodels) | {b_sec:.3f} | "
              f"{sm_sec / b_sec:.0f}x | - | - |")


if __name__ == "__main__":
    main()
