"""Benchmark: CPU time of every example and of ``nlpfeat compare``, default threads vs one.

Issue 29 asks that no example (in its quick form, run as ``tests/test_examples.py`` runs
it: ``--quick``, and ``--out`` into a temporary folder where the script takes it) and no
``nlpfeat compare`` use more than 1.3x the CPU time of a single-thread run, with the same
output. Each command runs in a fresh process: once to warm numba's cache (not counted),
then ``--repeats`` times with the default threading (no thread variable set) and as many
times with ``OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=NUMBA_NUM_THREADS=1``,
taking turns. CPU is user + sys of the process and every descendant it waited for (the
``wait4`` rusage, so Dask workers count), best of the repeats. The printed outputs of the
two settings are compared after removing timings (seconds, rates) and the temporary paths.

    OMP_NUM_THREADS= python benchmarks/bench_threads.py             # every example + compare --quick
    python benchmarks/bench_threads.py --only topics_lee chinese    # a subset (substring match)
    python benchmarks/bench_threads.py --compare-full               # also the full `nlpfeat compare`
"""
import argparse
import difflib
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
LIMIT = 1.3

#: What differs between two runs without the results differing: durations and rates in
#: the text, the columns of tables headed by one of TIME_HEADERS, and each run's
#: temporary folder (all replaced before the outputs are compared).
_TIMING = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?\s*(?:ms|s|sec|seconds?|min|MB/s|it/s)\b")
TIME_HEADERS = ("s", "sec", "seconds", "wall s", "fit s", "predict s", "time")
_CELL = re.compile(r"\S+(?: \S+)*")          # a header cell: words one space apart
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def normalise(text):
    """``text`` without what varies from run to run (see ``_TIMING``, ``TIME_HEADERS``)."""
    out, spans = [], []
    for line in text.splitlines():
        if not line.strip():
            spans = []                                 # a table ends at a blank line
        cells = [m.span() for m in _CELL.finditer(line) if m.group() in TIME_HEADERS]
        if cells and not any(_NUMBER.fullmatch(word) for word in line.split()):  # a header
            spans = cells
        elif spans:
            line = _NUMBER.sub(lambda m: "<t>" if any(m.start() < b and m.end() > a
                                                       for a, b in spans) else m.group(), line)
        out.append(_TIMING.sub("<t>", line))
    return "\n".join(out)


def _options(source):
    return set(re.findall(r"add_argument\(\s*\"(--[a-z-]+)\"", source))


def commands(only=(), compare_full=False):
    """``(name, argv builder)`` of every example's quick form and of ``nlpfeat compare``."""
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        if path.name.startswith("_"):
            continue
        options = _options(path.read_text(encoding="utf-8"))

        def argv(tmp, path=path, options=options):
            args = [sys.executable, str(path)]
            if "--quick" in options:
                args.append("--quick")
            if "--out" in options:
                args += ["--out", str(Path(tmp) / "out")]
            return args
        out.append((path.name, argv))
    cli = [sys.executable, "-m", "nlpfeat", "compare", "--no-progress"]
    out.append(("nlpfeat compare --quick", lambda tmp: cli + ["--quick", "--out", str(Path(tmp) / "out")]))
    if compare_full:
        out.append(("nlpfeat compare", lambda tmp: cli + ["--out", str(Path(tmp) / "out")]))
    if only:                             # in the order of ``only``
        out = [(name, argv) for o in only for name, argv in out if o in name]
        out = list({name: (name, argv) for name, argv in out}.values())
    return out


def run_once(argv_of, single):
    """``(cpu seconds, wall seconds, normalised stdout)`` of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    env.update(MPLBACKEND="Agg", PYTHONIOENCODING="utf-8", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    if single:
        env.update(dict.fromkeys(THREAD_VARS, "1"))
    with tempfile.TemporaryDirectory(prefix="bench-threads-") as tmp:
        argv = argv_of(tmp)
        t = time.perf_counter()
        with open(Path(tmp) / "stdout", "wb") as stdout:
            proc = subprocess.Popen(argv, cwd=tmp, env=env, stdout=stdout,
                                    stderr=subprocess.PIPE)
            _, err = proc.communicate()
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise RuntimeError(f"{argv} exited {proc.returncode}:\n{err.decode()[-2000:]}")
        text = (Path(tmp) / "stdout").read_text(encoding="utf-8").replace(tmp, "<tmp>")
    return wall, normalise(text)


def measure(argv_of, single):
    """``run_once`` and its CPU seconds: the process (reaped by ``communicate``) and the
    children it waited for land in our ``RUSAGE_CHILDREN``; the difference is the run's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, text = run_once(argv_of, single)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, text


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", nargs="+", default=(), help="substrings of the names to run, in this order")
    p.add_argument("--repeats", type=int, default=2, help="runs per setting (best counts)")
    p.add_argument("--no-warm", action="store_true", help="skip the uncounted warm-up run")
    p.add_argument("--compare-full", action="store_true",
                   help="also the full `nlpfeat compare` (default tasks, minutes)")
    args = p.parse_args(argv)
    rows, failed = [], []
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    print("| command | default CPU s | one thread CPU s | ratio | spread | output |")
    print("|---|---|---|---|---|---|", flush=True)
    for name, argv_of in commands(args.only, args.compare_full):
        if not args.no_warm:
            measure(argv_of, single=False)
        cpu = {False: [], True: []}
        texts = {False: set(), True: set()}
        for _ in range(args.repeats):
            for single in (False, True):          # taking turns
                c, _, text = measure(argv_of, single)
                cpu[single].append(c)
                texts[single].add(text)
        ratio = min(cpu[False]) / min(cpu[True])
        # the spread: the ratio's range over the pairs of runs of one round
        pairs = [d / s for d, s in zip(cpu[False], cpu[True])]
        same = texts[False] == texts[True] and len(texts[False]) == 1
        rows.append((name, ratio, same))
        if ratio > LIMIT or not same:
            failed.append(name)
        print(f"| {name} | {min(cpu[False]):.2f} | {min(cpu[True]):.2f} | {ratio:.2f} | "
              f"{min(pairs):.2f}-{max(pairs):.2f} | {'same' if same else 'DIFFERS'} |",
              flush=True)
        if not same:                      # the first lines that differ between two runs
            first, *others = sorted(texts[False]) + sorted(texts[True])
            other = next(t for t in others if t != first)
            diff = difflib.unified_diff(first.splitlines(), other.splitlines(), lineterm="", n=0)
            print("\n".join("    " + line for line in list(diff)[2:8]))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    if failed:
        print(f"over {LIMIT}x or a different output: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
