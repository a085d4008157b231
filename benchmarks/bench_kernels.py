"""Benchmark: Nadaraya-Watson in nlpfeat vs statsmodels' KernelReg (same run, 1 BLAS thread).

Every section runs both engines of the estimators (``engine="numba"``, the compiled
loops, and ``engine="numpy"``, the reference) beside the peers, in the same run.

Sections (``--sections``, or ``--only`` one; default all but ``compare`` and ``threads``):

- ``simd``:   the SIMD level (``np.show_runtime()``) and numba's compilation target.
- ``isa``:    compiles the kernels afresh (empty cache, in a child process) and counts
  AVX-512 registers (zmm, ymm16-31, mask registers) in the generated assembly: 0 on
  the AVX2 target.
- ``fixed``:  fit + predict with a fixed bandwidth (Gaussian, product kernel, lc),
  n_train 2000 / 8000 (d 5) and 2000 (d 1), 1000 queries, vs ``KernelReg(bw=...)``;
  best of 7, all taking turns; the speed-up's spread over the rounds. The headline is
  one thread against one; a column shows the numba engine with ``n_jobs=2``.
- ``select``: bandwidth selection + predict at n 1000 and 2000, d 5:
  ``bandwidth="loo"`` (30-point grid) and ``"loo-ard"`` on both engines vs
  ``KernelReg(bw="cv_ls")``, with every method's leave-one-out error computed by the
  same function.
- ``ll``:     local linear fits (``reg_type="ll"``, Gaussian product kernel): fit +
  predict at a fixed bandwidth, n_train 2000, d 5, 1000 queries, both engines vs
  ``KernelReg(reg_type="ll", bw=...)``; ``bandwidth="loo"`` (30-point grid) and
  ``"loo-ard"`` + predict at n 1000 and 2000, d 5, numba vs numpy engine (statsmodels'
  ``cv_ls`` for local linear fits is left out: hours at these sizes). Best of 5 (3 for
  the selection), taking turns; the spread of the ratio over the rounds.
- ``text``:   the text features built on kernel weights, numba vs numpy engine:
  ``KernelAttentionPooling`` (PMI/SVD token vectors, d 100) and
  ``LocallyWeightedBagOfWords`` (10 points) ``transform`` of the Lee background corpus
  (300 documents, pre-tokenised); best of 7, taking turns.
- ``first``:  a fresh process's first ``fit`` + ``predict`` (compilation included, empty
  numba cache) and with a warm cache, minus the same call once compiled.
- ``compare``: ``nlpfeat compare --quick`` (``--compare-full``: the full comparison) end
  to end on each engine (numpy: as if numba were not installed), 3 runs each in turn,
  wall and CPU seconds of the child processes.
- ``threads``: the numba engine's predict n x n (``--big-n``), d 10, with 1 and 2 threads
  in turn, and nothing else (``--only threads --big-n 40000`` takes about a minute).
- ``chunk``:  ns per (query, training point) pair for several ``working_memory`` values.
- ``big``:    predict n_query x n_train (default 100 000 x 100 000, d 10) on the numba
  engine with 1 and 2 threads (``--big-numpy`` adds the numpy engine): ns per pair,
  ratio to ``np.exp`` over the same number of elements, peak memory (tracemalloc for
  numpy's allocations, the process's peak RSS growth for everything).
- ``tree``:   ``algorithm="tree"`` vs ``"brute"`` for a compact kernel, n_train 50k/100k, d 1-3.

Run ``python benchmarks/bench_kernels.py --quick`` for a smoke run (about a minute).
``--emulate-avx2`` reruns everything in a child process with AVX2 code only: numba's
``haswell`` target with haswell's features (``NUMBA_CPU_NAME`` alone still emits AVX-512
code on an AVX-512 host), numpy's AVX-512 loops disabled (``NPY_DISABLE_CPU_FEATURES``)
and OpenBLAS's Haswell kernels.
"""
import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from nlpfeat._chunking import DEFAULT_WORKING_MEMORY, chunk_n_rows
from nlpfeat.kernels import NadarayaWatsonRegressor, get_kernel
from nlpfeat.kernels._bandwidth import loo_grid


def _best_time(func, repeat=3, clock=time.perf_counter):
    best, out = np.inf, None
    for _ in range(repeat):
        start = clock()
        out = func()
        best = min(best, clock() - start)
    return best, out


def _task(n, d, seed=0, n_query=1000):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 5, size=(n, d))
    y = 2 * np.sin(X).sum(axis=1) + X[:, 0] ** 0.8 + rng.normal(0, 0.5, n)
    return X, y, rng.uniform(0, 5, size=(n_query, d))


def _print_table(title, header, rows):
    print(f"\n## {title}\n")
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for row in rows:
        print(" | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))


def _times_in_turns(funcs, repeat, clock=time.perf_counter):
    """Every round's time of each function (they take turns) and each one's last result.

    ``clock=time.process_time`` counts this process's CPU seconds instead of wall
    seconds: on a shared machine, time spent waiting for a core is left out.
    """
    times, out = [[] for _ in funcs], [None] * len(funcs)
    for _ in range(repeat):
        for i, func in enumerate(funcs):
            start = clock()
            out[i] = func()
            times[i].append(clock() - start)
    return np.array(times), out


def bench_fixed(sizes, n_query, repeat=7, clock=time.perf_counter):
    from statsmodels.nonparametric.kernel_regression import KernelReg

    rows = []
    for n, d in sizes:
        X, y, Xq = _task(n, d, n_query=n_query)
        h = np.full(d, 0.5)
        regs = [NadarayaWatsonRegressor(bandwidth=h, metric="product", engine=engine,
                                        n_jobs=jobs)
                for engine, jobs in [("numpy", None), ("numba", None), ("numba", 2)]]
        regs[1].fit(X, y).predict(Xq)   # compiled (or loaded from the cache) once
        regs[2].fit(X, y).predict(Xq)
        times, (ref, got_np, got, got_2) = _times_in_turns(
            [lambda: KernelReg(y, X, "c" * d, "lc", bw=h).fit(Xq)[0]]
            + [lambda reg=reg: reg.fit(X, y).predict(Xq) for reg in regs], repeat, clock)
        assert np.array_equal(got, got_2)
        best = times.min(axis=1)
        ratio = times[0] / times[2]   # statsmodels / numba, round by round
        rows.append((n, d, n_query, best[0], best[1], best[2], best[0] / best[2],
                     f"{ratio.min():.3g}-{ratio.max():.3g}", best[0] / best[1],
                     best[1] / best[2], float(np.abs(got - ref).max()),
                     float(np.abs(got - got_np).max()), best[3], best[2] / best[3]))
    _print_table(
        f"fit + predict, fixed bandwidth (Gaussian product kernel, lc), best of {repeat}"
        f"{', CPU seconds' if clock is time.process_time else ''}",
        ["n_train", "d", "n_query", "statsmodels s", "numpy engine s", "numba engine s",
         "numba vs statsmodels", "spread over rounds", "numpy engine vs statsmodels",
         "numba vs numpy engine", "max |diff| vs statsmodels", "max |diff| numba-numpy",
         "numba n_jobs=2 s", "2 threads vs 1"], rows)


def bench_ll(n_fixed, d, n_query, select_ns, repeat=5, clock=time.perf_counter):
    """Local linear fits: fixed bandwidth vs statsmodels; loo and loo-ard vs numpy engine."""
    from statsmodels.nonparametric.kernel_regression import KernelReg

    X, y, Xq = _task(n_fixed, d, n_query=n_query)
    h = np.full(d, 0.5)
    regs = [NadarayaWatsonRegressor(bandwidth=h, metric="product", reg_type="ll",
                                    engine=engine, n_jobs=jobs)
            for engine, jobs in [("numpy", None), ("numba", None), ("numba", 2)]]
    regs[1].fit(X, y).predict(Xq)   # compiled (or loaded from the cache) once
    regs[2].fit(X, y).predict(Xq)
    times, (ref, got_np, got, got_2) = _times_in_turns(
        [lambda: KernelReg(y, X, "c" * d, "ll", bw=h).fit(Xq)[0]]
        + [lambda reg=reg: reg.fit(X, y).predict(Xq) for reg in regs], repeat, clock)
    assert np.array_equal(got, got_2)
    best = times.min(axis=1)
    vs_sm, vs_np = times[0] / times[2], times[1] / times[2]
    _print_table(
        f"local linear fit + predict, fixed bandwidth (Gaussian product kernel), best of "
        f"{repeat}{', CPU seconds' if clock is time.process_time else ''}",
        ["n_train", "d", "n_query", "statsmodels s", "numpy engine s", "numba engine s",
         "numba vs statsmodels (spread)", "numba vs numpy engine (spread)",
         "numpy engine vs statsmodels", "max |diff| vs statsmodels",
         "max |diff| numba-numpy", "numba n_jobs=2 s", "2 threads vs 1"],
        [(n_fixed, d, n_query, best[0], best[1], best[2],
          f"{best[0] / best[2]:.3g} ({vs_sm.min():.3g}-{vs_sm.max():.3g})",
          f"{best[1] / best[2]:.3g} ({vs_np.min():.3g}-{vs_np.max():.3g})",
          best[0] / best[1], float(np.abs(got - ref).max()),
          float(np.abs(got - got_np).max()), best[3], best[2] / best[3])])
    rows = []
    for n in select_ns:
        X, y, Xq = _task(n, d, seed=1, n_query=n_query)
        for bw in ["loo", "loo-ard"]:
            regs = [NadarayaWatsonRegressor(bandwidth=bw, metric="product", reg_type="ll",
                                            engine=engine) for engine in ["numpy", "numba"]]
            regs[1].fit(X[:50], y[:50])   # compiled (or loaded from the cache) once
            times, (p_np, p_nb) = _times_in_turns([lambda reg=reg: reg.fit(X, y).predict(Xq)
                                                   for reg in regs], max(repeat - 2, 1), clock)
            best, ratio = times.min(axis=1), times[0] / times[1]
            rows.append((n, d, bw, best[0], best[1],
                         f"{best[0] / best[1]:.3g} ({ratio.min():.3g}-{ratio.max():.3g})",
                         np.array2string(np.atleast_1d(regs[1].bandwidth_), precision=3),
                         float(np.max(np.abs(regs[1].bandwidth_ / regs[0].bandwidth_ - 1))),
                         float(np.abs(p_nb - p_np).max())))
    _print_table(f"local linear bandwidth selection + predict ({n_query} queries), best of "
                 f"{max(repeat - 2, 1)}{', CPU seconds' if clock is time.process_time else ''}",
                 ["n", "d", "bandwidth", "numpy engine s", "numba engine s",
                  "numba vs numpy engine (spread)", "bandwidth (numba)",
                  "max rel. bandwidth diff", "max |diff| of predictions"], rows)


def bench_text(repeat=7, clock=time.perf_counter):
    """The text features' compiled engine vs their numpy engine, same run."""
    from nlpfeat.datasets import load_lee
    from nlpfeat.text import KernelAttentionPooling, LocallyWeightedBagOfWords, PMIEmbedding

    docs = load_lee().background
    emb = PMIEmbedding(n_components=100).fit(docs)
    tokens = LocallyWeightedBagOfWords().fit(docs)._token_lists(docs)
    cases = [("KernelAttentionPooling(gaussian, median)", lambda e: KernelAttentionPooling(
                 emb, input="tokens", engine=e)),
             ("KernelAttentionPooling(epanechnikov, idf query)", lambda e: KernelAttentionPooling(
                 emb, kernel="epanechnikov", query="idf", input="tokens", engine=e)),
             ("LocallyWeightedBagOfWords(n_positions=10)", lambda e: LocallyWeightedBagOfWords(
                 n_positions=10, input="tokens", engine=e)),
             ("LocallyWeightedBagOfWords(n_positions=10, tricube, 0.1)",
              lambda e: LocallyWeightedBagOfWords(n_positions=10, kernel="tricube",
                                                  bandwidth=0.1, input="tokens", engine=e))]
    rows = []
    for name, make in cases:
        ests = [make(engine).fit(tokens) for engine in ["numpy", "numba"]]
        ests[1].transform(tokens)    # compiled (or loaded from the cache) once
        times, (ref, got) = _times_in_turns([lambda est=est: est.transform(tokens)
                                             for est in ests], repeat, clock)
        best, ratio = times.min(axis=1), times[0] / times[1]
        diff = abs(got - ref).max() if hasattr(got, "tocsr") else np.abs(got - ref).max()
        rows.append((name, len(tokens), sum(map(len, tokens)), best[0] * 1e3, best[1] * 1e3,
                     f"{best[0] / best[1]:.3g} ({ratio.min():.3g}-{ratio.max():.3g})",
                     float(diff)))
    _print_table(f"text features on the Lee background corpus, transform, best of {repeat}"
                 f"{', CPU seconds' if clock is time.process_time else ''}",
                 ["estimator", "documents", "tokens", "numpy engine ms", "numba engine ms",
                  "numba vs numpy engine (spread)", "max |diff|"], rows)


def _loo_error(X, y, h):
    """LOO mean squared error at bandwidth h, the same function for every method."""
    grid = np.atleast_2d(np.asarray(h, dtype=np.float64))
    return float(loo_grid(X, y[:, None], get_kernel("gaussian"), "product", grid)[0])


def _counting_kernelreg():
    from statsmodels.nonparametric.kernel_regression import KernelReg

    class CountingKernelReg(KernelReg):
        """KernelReg that counts its leave-one-out evaluations (one per fmin step)."""

        n_eval = 0

        def cv_loo(self, bw, func):
            self.n_eval += 1
            return super().cv_loo(bw, func)

    return CountingKernelReg


def _run_cv_ls(X, y, Xq, clock=time.perf_counter):
    start = clock()
    kr = _counting_kernelreg()(y, X, "c" * X.shape[1], "lc", bw="cv_ls")
    kr.fit(Xq)
    return clock() - start, kr


def _cv_ls_estimate(X, y, n_eval, clock=time.perf_counter):
    """Extrapolated cv_ls seconds: n_eval (counted at a smaller n) x one LOO evaluation here."""
    kr = _counting_kernelreg()(y, X, "c" * X.shape[1], "lc", bw=np.ones(X.shape[1]))
    h0 = 1.06 * X.std(axis=0) * len(X) ** (-1.0 / (4 + X.shape[1]))
    t_eval, _ = _best_time(lambda: kr.cv_loo(h0, kr._est_loc_constant), 1, clock)
    return n_eval * t_eval, t_eval


def _select_rows(n, t_cv, X, y, Xq, repeat=3, clock=time.perf_counter):
    rows = []
    for bw in ["loo", "loo-ard"]:
        regs = [NadarayaWatsonRegressor(bandwidth=bw, metric="product", engine=engine)
                for engine in ["numpy", "numba"]]
        regs[1].fit(X[:50], y[:50])   # compiled (or loaded from the cache) once
        times, _ = _times_in_turns([lambda reg=reg: reg.fit(X, y).predict(Xq)
                                    for reg in regs], repeat, clock)
        best = times.min(axis=1)
        ratio = times[0] / times[1]
        for reg, t, engine in zip(regs, best, ["numpy", "numba"]):
            rows.append((n, f"nlpfeat {bw}, {engine} engine", t, t_cv / t,
                         f"{best[0] / best[1]:.3g} ({ratio.min():.3g}-{ratio.max():.3g})"
                         if engine == "numba" else "",
                         _loo_error(X, y, reg.bandwidth_),
                         np.array2string(np.atleast_1d(reg.bandwidth_), precision=3)))
    return rows


def bench_select(n_ref, ns, d, n_query, cv_ls_ns, clock=time.perf_counter):
    """cv_ls runs for real at n_ref (and cv_ls_ns); elsewhere it is extrapolated."""
    X, y, Xq = _task(n_ref, d, seed=1, n_query=n_query)
    t_cv, kr = _run_cv_ls(X, y, Xq, clock)
    rows = [(n_ref, f"statsmodels cv_ls ({kr.n_eval} LOO evals)", t_cv, 1.0, "",
             _loo_error(X, y, np.abs(kr.bw)), np.array2string(kr.bw, precision=3))]
    rows += _select_rows(n_ref, t_cv, X, y, Xq, clock=clock)
    for n in ns:
        X, y, Xq = _task(n, d, seed=1, n_query=n_query)
        if n in cv_ls_ns:
            t_cv, kr_n = _run_cv_ls(X, y, Xq, clock)
            rows.append((n, f"statsmodels cv_ls ({kr_n.n_eval} LOO evals)", t_cv, 1.0, "",
                         _loo_error(X, y, np.abs(kr_n.bw)),
                         np.array2string(kr_n.bw, precision=3)))
        else:
            t_cv, t_eval = _cv_ls_estimate(X, y, kr.n_eval, clock)
            rows.append((n, f"statsmodels cv_ls ESTIMATED: {kr.n_eval} evals x {t_eval:.3g} s",
                         t_cv, 1.0, "", "n/a", "n/a"))
        rows += _select_rows(n, t_cv, X, y, Xq, clock=clock)
    _print_table(f"bandwidth selection + predict (d={d}, {n_query} queries)",
                 ["n", "method", "seconds (best of 3)", "speed-up vs cv_ls",
                  "numba vs numpy engine (spread)", "LOO MSE", "bandwidth"], rows)


def _exp_floor(n_rows, n_cols, working_memory):
    """Seconds for np.exp over n_rows * n_cols elements, in our chunk size, in place."""
    rows = chunk_n_rows(8 * n_cols, n_rows, working_memory)
    buf = -np.random.RandomState(0).uniform(0, 10, size=(rows, n_cols))
    n_chunks = -(-n_rows // rows)
    start = time.perf_counter()
    for _ in range(n_chunks):
        np.exp(buf, out=buf)
        buf *= -1.0  # keep values in (-inf, 0]: exp of exp stays in (0, 1]
    return (time.perf_counter() - start) * n_rows / (n_chunks * rows)


def bench_chunk(n, d, memories):
    X, y, Xq = _task(n, d, seed=2, n_query=n)
    rows = []
    for wm in memories:
        reg = NadarayaWatsonRegressor(bandwidth=2.0, working_memory=wm, engine="numpy").fit(X, y)
        t, _ = _best_time(lambda: reg.predict(Xq), 2)
        t_exp = _exp_floor(n, n, wm)
        rows.append((wm, t / n**2 * 1e9, t_exp / n**2 * 1e9, t / t_exp))
    _print_table(f"working_memory sweep (numpy engine): predict {n} x {n}, d={d}",
                 ["working_memory MiB", "ns/pair", "np.exp ns/elem", "ratio"], rows)


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_big(n, d, working_memory, with_numpy=False):
    X, y, Xq = _task(n, d, seed=3, n_query=n)
    data_mb = (X.nbytes + Xq.nbytes + y.nbytes) / 2**20
    wm = DEFAULT_WORKING_MEMORY if working_memory is None else working_memory
    t_exp = _exp_floor(n, n, working_memory)
    small = _task(200, d, seed=3, n_query=20)
    rows = []
    runs = [("numba", None), ("numba", 2)] + ([("numpy", None)] if with_numpy else [])
    for engine, jobs in runs:
        reg = NadarayaWatsonRegressor(bandwidth=2.0, working_memory=working_memory,
                                      engine=engine, n_jobs=jobs)
        reg.fit(*small[:2]).predict(small[2])  # compiled (or loaded from the cache) once
        reg.fit(X, y)
        rss0 = _peak_rss_mb()
        tracemalloc.start()
        start, cpu = time.perf_counter(), time.process_time()
        reg.predict(Xq)
        t, t_cpu = time.perf_counter() - start, time.process_time() - cpu
        peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rows.append((engine, jobs or 1, t, t / n**2 * 1e9, t_cpu / n**2 * 1e9,
                     t_exp / n**2 * 1e9, t / t_exp, peak_mb, _peak_rss_mb() - rss0, float(wm),
                     data_mb))
    if len(rows) > 1:
        rows[1] += (rows[0][2] / rows[1][2],)
    _print_table(f"predict {n} x {n}, d={d}",
                 ["engine", "threads", "seconds", "ns/pair", "CPU ns/pair (all threads)",
                  "np.exp ns/elem", "ratio to exp",
                  "peak MiB (tracemalloc)", "peak RSS growth MiB", "working_memory MiB",
                  "data MiB", "2 threads vs 1"], rows)


def bench_threads(n, d, repeat=2):
    """Predict n x n (d features) on the numba engine with 1 and 2 threads, in turn.

    Wall seconds decide (threads share the work, CPU seconds add up); the outputs must be
    identical.
    """
    X, y, Xq = _task(n, d, seed=3, n_query=n)
    regs = [NadarayaWatsonRegressor(bandwidth=2.0, engine="numba", n_jobs=jobs).fit(X, y)
            for jobs in [None, 2]]
    for reg in regs:
        reg.predict(Xq[:50])   # compiled (or loaded from the cache) once
    walls, outs = _times_in_turns([lambda reg=reg: reg.predict(Xq) for reg in regs], repeat)
    cpus, _ = _times_in_turns([lambda reg=reg: reg.predict(Xq) for reg in regs], 1,
                              time.process_time)
    assert np.array_equal(outs[0], outs[1])
    ratio = walls[0] / walls[1]
    rows = [(threads, walls[i].min(), walls[i].min() / n**2 * 1e9, cpus[i, 0] / n**2 * 1e9)
            for i, threads in enumerate([1, 2])]
    rows[1] += (f"{walls[0].min() / walls[1].min():.3g} ({ratio.min():.3g}-{ratio.max():.3g})",)
    _print_table(f"threads: predict {n} x {n}, d={d}, numba engine, best of {repeat} in turn "
                 f"(load before: {os.getloadavg()[0]:.2f})",
                 ["threads", "wall s", "wall ns/pair", "CPU ns/pair (all threads)",
                  "2 threads vs 1 (spread)"], rows)


_FIRST_CALL = """
import time, warnings
import numpy as np
warnings.simplefilter("ignore")
start = time.perf_counter()
from nlpfeat.kernels import NadarayaWatsonRegressor
rng = np.random.RandomState(0)
X, Xq = rng.uniform(size=(2000, 5)), rng.uniform(size=(1000, 5))
y = X.sum(axis=1)
t_import = time.perf_counter() - start
times = []
for _ in range(2):
    start, cpu = time.perf_counter(), time.process_time()
    NadarayaWatsonRegressor(bandwidth=0.5, metric="product", engine="{engine}").fit(X, y).predict(Xq)
    times += [time.perf_counter() - start, time.process_time() - cpu]
print(t_import, *times)
"""


def bench_first():
    """A fresh process's first fit + predict: cold numba cache, warm cache, numpy engine."""
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label, engine in [("numba, empty cache (compiles)", "numba"),
                              ("numba, warm cache", "numba"), ("numpy engine", "numpy")]:
            out = subprocess.run([sys.executable, "-c", _FIRST_CALL.replace("{engine}", engine)],
                                 env=env, capture_output=True, text=True, check=True)
            t_import, first, first_cpu, second, second_cpu = map(float, out.stdout.split())
            rows.append((label, t_import, first, second, first - second,
                         first_cpu - second_cpu))
    _print_table("a fresh process's first fit + predict (n_train 2000, d 5, 1000 queries; "
                 "numba is imported by the first fit)",
                 ["engine", "import nlpfeat s", "first fit+predict s", "second s",
                  "first-call overhead s", "first-call overhead, CPU s"], rows)


_ISA_CHECK = """
import re, warnings
import numpy as np
warnings.simplefilter("ignore")
from nlpfeat.kernels import NadarayaWatsonRegressor, _compiled
rng = np.random.RandomState(0)
X = rng.uniform(size=(300, 3)); y = X.sum(axis=1)
for metric in ["euclidean", "product"]:
    for reg_type in ["lc", "ll"]:
        reg = NadarayaWatsonRegressor(bandwidth="loo", metric=metric, reg_type=reg_type,
                                      engine="numba").fit(X, y)
        reg.predict(X[:5]); reg.attention_weights(X[:5])
NadarayaWatsonRegressor(bandwidth="loo-ard", engine="numba").fit(X, y)
NadarayaWatsonRegressor(bandwidth="loo-ard", reg_type="ll", engine="numba").fit(X, y)
avx512 = re.compile(r"%zmm|%[xy]mm(1[6-9]|2[0-9]|3[01])\\b|%k[0-7]\\b")
lines = total = 0
for fn in [_compiled._lc_rows, _compiled._weights_rows, _compiled._loo_rows,
           _compiled._ard_rows, _compiled._predict_ll_rows, _compiled._ard_ll_rows,
           _compiled._ard_ll_grad_rows]:
    for sig in fn.signatures:
        asm = fn.inspect_asm(sig)
        lines += len(asm.splitlines())
        total += sum(1 for line in asm.splitlines() if avx512.search(line))
print(lines, total)
"""


def bench_isa():
    """Compile afresh (empty cache, so the assembly can be inspected) and count AVX-512."""
    import numba

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", _ISA_CHECK], env=env, capture_output=True,
                             text=True, check=True)
    lines, hits = map(int, out.stdout.split())
    _print_table("generated assembly of the compiled kernels",
                 ["numba target CPU", "lines of assembly", "lines using AVX-512 registers"],
                 [(os.environ.get("NUMBA_CPU_NAME") or numba.config.CPU_NAME or "host",
                   lines, hits)])


def bench_simd():
    import numba

    print("\n## SIMD level\n")
    np.show_runtime()
    print(f"numba {numba.__version__}: NUMBA_CPU_NAME={os.environ.get('NUMBA_CPU_NAME', 'host')} "
          f"NUMBA_CPU_FEATURES={os.environ.get('NUMBA_CPU_FEATURES', 'host')}")


def bench_compare(full=False, repeat=3):
    """``nlpfeat compare`` end to end, numba engine vs numpy engine, in turn, CPU seconds.

    Each run is a fresh process; the numpy run resolves ``engine="auto"`` to numpy, so
    every Nadaraya-Watson estimator of the compare tasks (which keep the default engine)
    runs on numpy. The numba engine's compiled code comes from the
    on-disk cache (one warm-up run first).
    """
    rows = []
    driver = ("import sys, warnings; from nlpfeat.kernels import _base;"
              "{patch} from nlpfeat.cli import main; sys.exit(main(sys.argv[1:]))")
    engines = [("numba", ""), ("numpy", "_base.resolve_engine = lambda engine: 'numpy';")]
    args = ["compare", "--no-plots", "--no-progress"] + ([] if full else ["--quick"])

    def run(patch):
        with tempfile.TemporaryDirectory() as out:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", driver.format(patch=patch), *args,
                            "--out", out], check=True, capture_output=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        return time.perf_counter() - start, cpu

    run(engines[0][1])   # compiled code into the cache
    times = {engine: [] for engine, _ in engines}
    for _ in range(repeat):
        for engine, patch in engines:
            times[engine].append(run(patch))
    for engine, _ in engines:
        wall, cpu = np.array(times[engine]).T
        rows.append((engine, wall.min(), f"{wall.min():.3g}-{wall.max():.3g}", cpu.min(),
                     f"{cpu.min():.3g}-{cpu.max():.3g}"))
    cpu_ratio = rows[1][3] / rows[0][3]
    _print_table(f"nlpfeat compare{'' if full else ' --quick'}, end to end (one process per "
                 f"run, {repeat} runs each in turn; numpy / numba CPU: {cpu_ratio:.3g})",
                 ["engine", "wall s (best)", "wall spread", "CPU s (best)", "CPU spread"], rows)


def bench_tree(ns, ds, n_query, neighbours=50):
    rows = []
    for n in ns:
        for d in ds:
            rng = np.random.RandomState(4)
            X, Xq = rng.uniform(size=(n, d)), rng.uniform(size=(n_query, d))
            y = np.sin(6 * X).sum(axis=1)
            unit_ball = np.pi ** (d / 2) / math.gamma(d / 2 + 1)
            h = (neighbours / (n * unit_ball)) ** (1 / d)
            times = {}
            for algo in ["tree", "brute"]:
                reg = NadarayaWatsonRegressor("epanechnikov", bandwidth=h, algorithm=algo,
                                              on_empty="mean")
                times[algo], _ = _best_time(lambda: reg.fit(X, y).predict(Xq), 1)
            rows.append((n, d, n_query, round(h, 5), times["tree"], times["brute"],
                         times["brute"] / times["tree"]))
    _print_table(f"epanechnikov: tree vs brute (~{neighbours} neighbours per query)",
                 ["n_train", "d", "n_query", "bandwidth", "tree s", "brute s",
                  "tree speed-up"], rows)


_HASWELL_FEATURES = ("+64bit,+aes,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+cx8,+f16c,+fma,"
                     "+fsgsbase,+fxsr,+invpcid,+lzcnt,+mmx,+movbe,+pclmul,+popcnt,+rdrnd,"
                     "+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave,+xsaveopt")


def _emulate_avx2(argv):
    """Rerun this script in a child process restricted to AVX2 code."""
    env = dict(os.environ, NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES=_HASWELL_FEATURES,
               NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR",
               OPENBLAS_CORETYPE="Haswell")
    argv = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--emulate-avx2"]
    print("# AVX2 emulation: NUMBA_CPU_NAME=haswell, NUMBA_CPU_FEATURES=<haswell's>, "
          "NPY_DISABLE_CPU_FEATURES='X86_V4 AVX512_ICL AVX512_SPR', OPENBLAS_CORETYPE=Haswell",
          flush=True)
    return subprocess.run([sys.executable, __file__, *argv], env=env).returncode


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, smoke run")
    parser.add_argument("--sections",
                        default="simd,isa,fixed,select,ll,text,first,chunk,big,tree")
    parser.add_argument("--emulate-avx2", action="store_true",
                        help="rerun in a child process restricted to AVX2 code (see above)")
    parser.add_argument("--big-n", type=int, default=100_000,
                        help="n_query = n_train of the 'big' section (default 100000)")
    parser.add_argument("--big-numpy", action="store_true",
                        help="also run the 'big' section on the numpy engine (minutes)")
    parser.add_argument("--cv-ls-ref", type=int, default=200,
                        help="n at which statsmodels cv_ls runs for real (default 200); at "
                             "larger n its time is extrapolated from its evaluation count")
    parser.add_argument("--cv-ls-n", default="",
                        help="comma-separated larger n at which cv_ls also runs for real "
                             "(1000 and 2000 take tens of minutes to hours)")
    parser.add_argument("--working-memory", type=float, default=None)
    parser.add_argument("--only", default=None, metavar="SECTION",
                        help="run just this section (same as --sections SECTION), e.g. "
                             "--only threads --big-n 40000: 1 vs 2 threads, nothing else")
    parser.add_argument("--repeat", type=int, default=None,
                        help="rounds of the 'threads' (default 2) and 'compare' (default 3) "
                             "sections")
    parser.add_argument("--compare-full", action="store_true",
                        help="'compare' runs the full comparison instead of --quick")
    parser.add_argument("--cpu-time", action="store_true",
                        help="'fixed', 'select', 'll' and 'text': CPU seconds of this process instead of wall "
                             "seconds (a shared machine's waits for a core left out)")
    args = parser.parse_args(argv)
    if args.emulate_avx2:
        return _emulate_avx2(argv)
    sections = set((args.only or args.sections).split(","))
    clock = time.process_time if args.cpu_time else time.perf_counter
    warnings.simplefilter("ignore")
    with threadpool_limits(limits=1):
        print(f"# bench_kernels (1 BLAS thread; DEFAULT_WORKING_MEMORY="
              f"{DEFAULT_WORKING_MEMORY} MiB){' --quick' if args.quick else ''}")
        if "simd" in sections:
            bench_simd()
        if "isa" in sections:
            bench_isa()
        if "fixed" in sections:
            sizes = [(300, 5), (300, 1)] if args.quick else [(2000, 5), (8000, 5), (2000, 1)]
            bench_fixed(sizes, 200 if args.quick else 1000, 2 if args.quick else 7, clock)
        if "select" in sections:
            cv_ns = [int(v) for v in args.cv_ls_n.split(",") if v]
            bench_select(60 if args.quick else args.cv_ls_ref, [300] if args.quick else
                         [1000, 2000], 5, 200 if args.quick else 1000, cv_ns, clock)
        if "ll" in sections:
            bench_ll(300 if args.quick else 2000, 5, 200 if args.quick else 1000,
                     [300] if args.quick else [1000, 2000], 2 if args.quick else 5, clock)
        if "text" in sections:
            bench_text(2 if args.quick else 7, clock)
        if "first" in sections:
            bench_first()
        if "chunk" in sections:
            bench_chunk(2000 if args.quick else 10_000, 10,
                        [1, 4, 64] if args.quick else [0.25, 1, 2, 4, 8, 16, 64, 256])
        if "big" in sections:
            bench_big(4000 if args.quick else args.big_n, 10, args.working_memory,
                      args.big_numpy)
        if "tree" in sections:
            bench_tree([5000] if args.quick else [50_000, 100_000], [1, 2, 3],
                       500 if args.quick else 2000)
        if "threads" in sections:
            bench_threads(4000 if args.quick else args.big_n, 10, args.repeat or 2)
        if "compare" in sections:
            bench_compare(args.compare_full, args.repeat or 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
