"""Benchmark nlpfeat's numpy attention layers against PyTorch on the CPU, in the same run.

Cases (float32 on both sides, same thread count: ``torch.set_num_threads`` and
``threadpoolctl.threadpool_limits`` for numpy's BLAS):

* ``mha_step``: one training step (forward, backward, Adam) of ``MultiHeadAttention`` at
  batch 16, L 10, d_model 64, 4 heads (self-attention; ``need_weights=False`` on both
  sides). Target: faster than torch.
* ``mha_forward``: its forward alone. Target: at most 1.2x torch.
* ``encoder_step``: one training step of the warm-up study's model (Linear 100 -> 256,
  6 post-norm encoder layers, d_model 256, 4 heads, feed-forward 2048, dropout 0.1,
  Linear 256 -> 50) on a (16, 10, 100) batch. Target: at most 1.5x torch.
* ``encoder_forward``: its inference forward (eval mode, no gradients). Target: at most
  1.3x torch.

Each case is timed ``--repeat`` times after a warm-up call; the table shows the median
milliseconds per call and the ratio numpy / torch (below 1 means numpy is faster).
``--profile`` prints where the numpy encoder step spends its time.

Usage::

    python benchmarks/bench_attention.py            # a few minutes on 2 cores
    python benchmarks/bench_attention.py --quick    # smoke run, seconds
"""
import argparse
import cProfile
import importlib.util
import pathlib
import pstats
import time

import numpy as np
from threadpoolctl import threadpool_limits

from nlpfeat.attention.layers import MultiHeadAttention
from nlpfeat.attention.optim import Adam

TARGETS = {"mha_step": 1.0, "mha_forward": 1.2, "encoder_step": 1.5, "encoder_forward": 1.3}


def _study():
    """The model and data of examples/warmup_init_study.py (one definition, reused)."""
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "warmup_init_study.py"
    spec = importlib.util.spec_from_file_location("warmup_init_study", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_ms(fn, repeat):
    fn()                                            # warm-up (allocations, caches)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def mha_cases(rng):
    """(numpy step, numpy forward, torch step, torch forward) for the MHA cases."""
    import torch

    x = rng.standard_normal((16, 10, 64)).astype(np.float32)
    mha = MultiHeadAttention(64, 4, rng=0, dtype=np.float32)
    opt = Adam(mha.params, lr=1e-3)

    def np_forward():
        return mha.forward(x, x, x, need_weights=False)[0]

    def np_step():
        out = np_forward()
        mha.backward(np.ones_like(out) / out.size)
        opt.step(mha.grads)

    tmha = torch.nn.MultiheadAttention(64, 4, batch_first=True)
    tmha.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in mha.params.items()})
    topt = torch.optim.Adam(tmha.parameters(), lr=1e-3)
    tx = torch.from_numpy(x)

    def t_forward():
        with torch.no_grad():
            return tmha(tx, tx, tx, need_weights=False)[0]

    def t_step():
        topt.zero_grad()
        xr = tx.clone().requires_grad_(True)
        out = tmha(xr, xr, xr, need_weights=False)[0]
        out.mean().backward()
        topt.step()

    return {"mha_step": (np_step, t_step), "mha_forward": (np_forward, t_forward)}


def encoder_cases(rng):
    """The study's 6-layer model: a training step and an inference forward, both sides."""
    import torch

    study = _study()
    cfg = dict(study.BASE)
    model = study.build_numpy(cfg, 0, np.float32)
    opt = Adam(model.params, lr=1e-3)
    x, t = study.make_batch(rng, cfg["batch"], cfg["seq"], cfg["half"], np.float32)
    net = study.torch_model(cfg, model.state_dict(), "cpu", torch.float32)
    topt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def np_forward():
        model.eval()
        out = model.forward(x)
        model.train()
        return out

    def t_forward():
        net.eval()
        with torch.no_grad():
            out = net(torch.from_numpy(x))
        net.train()
        return out

    return {"encoder_step": (lambda: study.numpy_step(model, opt, x, t, 1e-3),
                             lambda: study.torch_step(net, topt, x, t, 1e-3, "cpu")),
            "encoder_forward": (np_forward, t_forward),
            "_numpy_step": lambda: study.numpy_step(model, opt, x, t, 1e-3)}


def profile(fn, n=5, top=18):
    """Print the numpy functions that take the most time over ``n`` calls."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        fn()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="few repeats, smoke run")
    p.add_argument("--threads", type=int, default=1, help="threads for numpy and torch")
    p.add_argument("--repeat", type=int, default=None)
    p.add_argument("--profile", action="store_true", help="profile the numpy encoder step")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    repeat = args.repeat or (3 if args.quick else 30)
    rng = np.random.default_rng(0)
    rows = []
    with threadpool_limits(args.threads):
        cases = {**mha_cases(rng), **encoder_cases(rng)}
        for name in TARGETS:
            np_fn, t_fn = cases[name]
            n_rep = repeat if name.startswith("mha") else max(3, repeat // 3)
            ours, theirs = median_ms(np_fn, n_rep * 10 if name.startswith("mha") else n_rep), \
                median_ms(t_fn, n_rep * 10 if name.startswith("mha") else n_rep)
            rows.append((name, ours, theirs))
        if args.profile:
            profile(cases["_numpy_step"])
    print(f"threads={args.threads}  float32  median ms per call  torch {torch.__version__}")
    print(f"{'case':16s} {'nlpfeat':>9s} {'torch':>9s} {'ratio':>7s} {'target':>8s}")
    for name, ours, theirs in rows:
        ratio = ours / theirs
        ok = "ok" if ratio <= TARGETS[name] else "MISSED"
        print(f"{name:16s} {ours:9.3f} {theirs:9.3f} {ratio:7.2f} {'<=' + str(TARGETS[name]):>8s} {ok}")
    return rows


if __name__ == "__main__":
    main()
