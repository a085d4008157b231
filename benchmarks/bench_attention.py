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

``--decode`` times incremental decoding instead: one causal ``MultiHeadAttention`` layer
(d_model 256, 8 heads, float32, batch 1) fed T = 128 / 256 / 512 / 2048 tokens one at a
time, with the key/value cache (``use_cache=True``) and by recomputing the whole prefix at
every step (``T (T + 1) / 2`` token positions in all), the same two ways in torch (a
hand-written cache around ``scaled_dot_product_attention``, since ``nn.MultiheadAttention``
has none; ``nn.MultiheadAttention`` with a causal mask for the recomputation), and the
cache's bytes for ``n_kv_heads`` = 8, 4 and 1. Recomputing 2048 tokens takes minutes, so
past ``--full-recompute`` tokens (default 512) it times the middle step of each block of
64 and counts it for its block (marked ``~``). ``--sinkhorn`` measures how far the
column sums of Sinkhorn's weights stay from one, with and without a causal mask.

Usage::

    python benchmarks/bench_attention.py            # a few minutes on 2 cores
    python benchmarks/bench_attention.py --quick    # smoke run, seconds
    python benchmarks/bench_attention.py --decode   # a few minutes
    python benchmarks/bench_attention.py --sinkhorn # seconds
"""
import argparse
import cProfile
import importlib.util
import pathlib
import pstats
import sys
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


# ------------------------------------------------------------------ decoding
DECODE_LENGTHS = (128, 256, 512, 2048)
DECODE_MODEL = {"d_model": 256, "n_heads": 8}
SAMPLE_EVERY = 64


def _numpy_decoders(mha, x):
    """(cached, recompute_step): decoding with the cache; one step of recomputation."""
    def cached():
        cache, outs = None, []
        for t in range(x.shape[1]):
            tok = x[:, t:t + 1]
            out, _, cache = mha.forward(tok, tok, tok, need_weights=False,
                                        past_key_value=cache, use_cache=True)
            outs.append(out)
        return np.concatenate(outs, axis=1), cache

    def recompute_step(t):
        prefix = x[:, :t + 1]
        return mha.forward(prefix, prefix, prefix, need_weights=False)[0][:, -1:]

    return cached, recompute_step


def _torch_decoders(mha, x):
    """The same two ways in torch, from the same weights."""
    import torch
    import torch.nn.functional as F

    E, H = mha.d_model, mha.n_heads
    tmha = torch.nn.MultiheadAttention(E, H, batch_first=True)
    tmha.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in mha.params.items()})
    tx = torch.from_numpy(x)
    w_in, b_in = tmha.in_proj_weight, tmha.in_proj_bias
    w_out, b_out = tmha.out_proj.weight, tmha.out_proj.bias

    def heads(t):  # (1, n, E) -> (1, H, n, E / H)
        return t.reshape(1, -1, H, E // H).transpose(1, 2)

    @torch.no_grad()
    def cached():
        keys = values = None
        outs = []
        for t in range(tx.shape[1]):
            q, k, v = (heads(a) for a in F.linear(tx[:, t:t + 1], w_in, b_in).chunk(3, -1))
            keys = k if keys is None else torch.cat([keys, k], dim=2)
            values = v if values is None else torch.cat([values, v], dim=2)
            ctx = F.scaled_dot_product_attention(q, keys, values)   # the last query sees all
            outs.append(F.linear(ctx.transpose(1, 2).reshape(1, 1, E), w_out, b_out))
        return torch.cat(outs, dim=1)

    @torch.no_grad()
    def recompute_step(t):
        prefix = tx[:, :t + 1]
        mask = torch.ones(t + 1, t + 1, dtype=torch.bool).triu(1)
        return tmha(prefix, prefix, prefix, attn_mask=mask, need_weights=False)[0][:, -1:]

    return cached, recompute_step


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _recompute_seconds(step, T, full_up_to):
    """Seconds to recompute the prefix at every step; beyond ``full_up_to`` tokens the
    middle step of each block of 64 is timed and counts for its block.
    -> (seconds, estimated, outputs of the timed steps)."""
    block = 1 if T <= full_up_to else SAMPLE_EVERY
    total, outs = 0.0, {}
    for start in range(0, T, block):
        n = min(block, T - start)
        t = start + n // 2
        seconds, outs[t] = _timed(lambda t=t: step(t))
        total += seconds * n
    return total, block > 1, outs


def decode_rows(lengths, full_up_to, with_torch):
    """One row per length: seconds cached / recomputed, numpy and torch, and the largest
    difference between the cached outputs and the recomputed ones."""
    rng = np.random.default_rng(0)
    mha = MultiHeadAttention(**DECODE_MODEL, causal=True, rng=0, dtype=np.float32).eval()
    rows = []
    for T in lengths:
        x = rng.standard_normal((1, T, DECODE_MODEL["d_model"])).astype(np.float32)
        cached, recompute = _numpy_decoders(mha, x)
        t_cache, (out, _) = _timed(cached)
        t_full, estimated, checked = _recompute_seconds(recompute, T, full_up_to)
        err = max(float(np.abs(out[:, t] - o[:, 0]).max()) for t, o in checked.items())
        row = {"T": T, "cached": t_cache, "recompute": t_full, "estimated": estimated,
               "max_diff": err}
        if with_torch:
            t_cached, t_recompute = _torch_decoders(mha, x)
            row["torch_cached"], t_out = _timed(t_cached)
            row["torch_recompute"] = _recompute_seconds(t_recompute, T, full_up_to)[0]
            row["torch_diff"] = float(np.abs(out - t_out.numpy()).max())
        rows.append(row)
    return rows


def cache_bytes(T):
    """Bytes of the cache after T tokens for n_kv_heads = H, H/2, 1 (float32)."""
    H = DECODE_MODEL["n_heads"]
    x = np.zeros((1, T, DECODE_MODEL["d_model"]), np.float32)
    out = {}
    for G in (H, H // 2, 1):
        mha = MultiHeadAttention(**DECODE_MODEL, n_kv_heads=G, causal=True, rng=0,
                                 dtype=np.float32)
        out[G] = mha.forward(x, x, x, need_weights=False, use_cache=True)[2].nbytes
    return out


def print_decode(rows, threads):
    torch = sys.modules.get("torch")
    version = f"torch {torch.__version__}" if torch else "without torch"
    print(f"threads={threads}  float32  d_model {DECODE_MODEL['d_model']}, "
          f"{DECODE_MODEL['n_heads']} heads, batch 1  seconds per sequence  {version}  "
          f"(~: estimated from every {SAMPLE_EVERY}th step)")
    print(f"{'T':>5s} {'cached':>8s} {'recompute':>10s} {'speed-up':>9s} {'max diff':>9s}"
          f" {'torch cached':>13s} {'torch recomp.':>14s} {'torch diff':>10s}")
    for r in rows:
        mark = "~" if r["estimated"] else " "
        line = (f"{r['T']:5d} {r['cached']:8.3f} {mark}{r['recompute']:9.2f} "
                f"{r['recompute'] / r['cached']:8.0f}x {r['max_diff']:9.1e}")
        if "torch_cached" in r:
            line += (f" {r['torch_cached']:13.3f} {mark}{r['torch_recompute']:13.2f} "
                     f"{r['torch_diff']:10.1e}")
        print(line)
    T = max(row["T"] for row in rows)
    sizes = ", ".join(f"n_kv_heads={g}: {b / 2**20:.3f} MiB" for g, b in cache_bytes(T).items())
    print(f"cache after {T} tokens: {sizes}")


def sinkhorn_columns(n_iters=(0, 1, 3, 10, 100), size=10, n=1000, scales=(1.0, 2.0)):
    """Mean and worst |column sum - 1| of Sinkhorn's weights on N(0, scale^2) scores of
    ``n`` (size x size) matrices, and with a causal mask also the mean diagonal weight."""
    from nlpfeat.attention.functional import causal_mask, sinkhorn

    rng = np.random.default_rng(0)
    print(f"Sinkhorn on {n} i.i.d. N(0, s^2) score matrices of {size} x {size}: "
          f"|column sum - 1| mean / worst; causal: also the mean diagonal weight")
    for scale in scales:
        s = rng.normal(scale=scale, size=(n, size, size))
        for n_iter in n_iters:
            free = np.abs(sinkhorn(s, None, n_iter)[0].sum(-2) - 1.0)
            w = sinkhorn(s, causal_mask(size), n_iter)[0]
            causal = np.abs(w.sum(-2) - 1.0)
            diag = np.einsum("bii->bi", w).mean()
            print(f"s={scale:3.1f} iters={n_iter:3d}  free {free.mean():7.2%} / "
                  f"{free.max():7.2%}   causal {causal.mean():7.2%} / {causal.max():7.2%}"
                  f"  diagonal {diag:6.1%}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="few repeats, smoke run")
    p.add_argument("--threads", type=int, default=1, help="threads for numpy and torch")
    p.add_argument("--repeat", type=int, default=None)
    p.add_argument("--profile", action="store_true", help="profile the numpy encoder step")
    p.add_argument("--decode", action="store_true", help="incremental decoding instead")
    p.add_argument("--lengths", type=int, nargs="+", default=DECODE_LENGTHS)
    p.add_argument("--full-recompute", type=int, default=512,
                   help="longest T whose recomputation is timed at every step")
    p.add_argument("--sinkhorn", action="store_true", help="Sinkhorn's column sums instead")
    args = p.parse_args(argv)
    if args.sinkhorn:
        return sinkhorn_columns()
    if args.decode:  # torch's columns only where torch is installed
        with_torch = importlib.util.find_spec("torch") is not None
        if with_torch:
            import torch

            torch.set_num_threads(args.threads)
        with threadpool_limits(args.threads):
            rows = decode_rows(args.lengths, args.full_recompute, with_torch)
        print_decode(rows, args.threads)
        return rows
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
