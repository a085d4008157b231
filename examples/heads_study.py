"""The heads study: multi-query, grouped and multi-head attention, heads vs layers, 3 vs 5 tokens.

Four questions of ``docs/concepts.rst`` ("Heads"), each answered on synthetic sequence
tasks with several seeds, a verdict rule applied to the measured errors, a table and a
figure: (1) multi-query vs grouped vs multi-head vs one head at equal width (d_model 16,
one layer): why does adding only queries help? (2) one layer of 4 heads vs 4 layers of 1
head at matched parameter counts (the one layer gets a wider feed-forward layer); (3) "3
tokens vs 5 tokens": one head averages what it attends to (1/3 each, or 1/5 each, or a
positive mix), while concatenated heads plus a feed-forward layer can sum; (4) heads as
mixture components: from each head's own weights, how alike the trained heads are.

Tasks (tokens in random order, each with its kind one-hot, no positional encoding; the
output of a final query token is read out):

* ``lookup``: one token of each of 4 types and 3 others, 4 numbers each; target: number
  j of the type-j token (4 patterns, one number each); ``lookup-wide``: 8 numbers per
  token, numbers 2j and 2j+1 of the type-j token (8 numbers through the values);
* ``3v5-diff``: 3 tokens of kind A and 5 of kind B with v ~ N(0, 1); target sum_A v -
  sum_B v (``3v5-sum``, the control: sum_A v + sum_B v).

Encoder models: :class:`nlpfeat.attention.SequenceAttentionRegressor` (post-norm, Adam,
10% warm-up). Question 3 adds a *separated* model from
:class:`~nlpfeat.attention.layers.MultiHeadAttention`: a learned query, keys that see only
the kinds, values that see only the numbers, then a feed-forward layer (best of 4
restarts by training error). There one head's output depends on the numbers through one
mean with positive weights, so its best on ``3v5-diff`` is to attend to B alone, leaving
3/8 of the variance. In the encoder keys and values see the whole token, which the
bound ignores.

Measure: test error over the target's variance (1 = predicting the mean). Verdict rule
(``VERDICT_SE``, ``NEGLIGIBLE``): A is better than B when the mean paired difference over
seeds (same data) exceeds 2 standard errors and 0.01; beyond 2 standard errors but under
0.01 it is "negligible"; otherwise "no difference within noise". Heads are alike when the
total-variation distance of their weights at the query is under ``ALIKE`` = 0.25.

Measured with ``--full`` (5 seeds, 4000 training and 2000 test sequences, 40 epochs; all
runs in ``heads_study.csv`` beside this script; ``--report`` prints the tables):

* (1) on ``lookup`` every 4-query model solves it (multi-query 0.0011, grouped 0.0006,
  multi-head 0.0007) and beats one head (0.51) by 0.5; among them: negligible or no
  difference. On ``lookup-wide`` multi-query stays at 0.26 in every seed (one key/value
  head of width 4 for 8 numbers), multi-head 0.0007; grouped solves 4 of 5 seeds (one at
  0.25), so grouped vs multi-head: no difference within noise. The queries buy the
  attention patterns; key/value heads matter once a pattern's values outgrow one head.
* (2) both solve both tasks in every seed: 1 layer x 4 heads 0.0006 / 0.0009, 4 layers x
  1 head 0.0034 / 0.0026: the one layer is lower, beyond noise but negligible.
* (3) separated: one head sits at the bound in every seed (0.387 ± 0.006 vs 0.375) and
  sums the control; two heads solve it (<= 1e-5), although 7 of their 20 restarts put
  both heads on one kind (the one-head solution). Encoder: one head solves it in 4 of 5
  seeds (0.0025-0.0095, one seed 0.39), so 2 heads vs one: no difference within noise.
* (4) on ``lookup`` the 4 heads are distinct, one per type (4 groups in 5 of 5 seeds,
  multi-query too); on ``3v5-diff`` (2 patterns, 4 heads) some are alike, some not (2 or
  3 groups); removing any head costs more than 0.01 in every case.

Usage::

    python examples/heads_study.py              # --quick: 2 seeds, small (about a minute)
    python examples/heads_study.py --full --csv runs.csv    # 45 min of runs on a busy 2-core CPU
    python examples/heads_study.py --report examples/heads_study.csv --out figs
"""
import argparse
import csv
import math
import os
import textwrap
import time
import warnings

import numpy as np
from scipy.sparse.csgraph import connected_components
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from nlpfeat.attention import SequenceAttentionRegressor
from nlpfeat.attention.layers import (
    Layer,
    Linear,
    MultiHeadAttention,
    ReLU,
    Sequential,
    TransformerEncoderLayer,
)
from nlpfeat.attention.optim import Adam, make_schedule

D_MODEL, FEEDFORWARD, LEARNING_RATE, BATCH, WARMUP = 16, 32, 3e-3, 32, 0.1
#: The verdict rule: a paired difference counts beyond VERDICT_SE standard errors, and
#: matters beyond NEGLIGIBLE (a fraction of the target's variance).
VERDICT_SE, NEGLIGIBLE = 2.0, 0.01
#: Heads are alike below this total-variation distance between their weights.
ALIKE = 0.25
#: Smallest error the figure shows (the CSV keeps 5 decimals).
FLOOR = 1e-5
#: The one-head bound of the separated model on 3v5-diff: var(sum_A) / var(target).
BOUND_3V5 = 3 / 8
FULL = {"seeds": [0, 1, 2, 3, 4], "n_train": 4000, "n_test": 2000, "epochs": 40}
QUICK = {"seeds": [0, 1], "n_train": 800, "n_test": 800, "epochs": 12}
#: Trainings of each separated model, the one with the lowest training error kept: its
#: landscape holds the one-head solution (both heads on one kind) as a local optimum.
RESTARTS = 4


# ----------------------------------------------------------------------------- tasks
def _shuffled_kinds(n, kinds, rng):
    """(n, len(kinds)) kinds, each row a random permutation of ``kinds``."""
    return np.asarray(kinds)[np.argsort(rng.random((n, len(kinds))), axis=1)]


def lookup(n, rng, width=1, n_types=4, n_distractors=3):
    """One token per type and ``n_distractors`` more, each with ``n_types * width`` numbers,
    then the query; target: numbers ``j*width .. (j+1)*width - 1`` of the type-j token.

    Features: one-hot kind (types, distractor, query), then the numbers.
    """
    kind = _shuffled_kinds(n, list(range(n_types)) + [n_types] * n_distractors, rng)
    numbers = rng.standard_normal((n, kind.shape[1], n_types * width))
    X = np.zeros((n, kind.shape[1] + 1, n_types + 2 + n_types * width))
    X[:, :-1, :n_types + 1] = np.eye(n_types + 1)[kind]
    X[:, -1, n_types + 1] = 1.0
    X[:, :-1, n_types + 2:] = numbers
    where = np.argsort(kind, axis=1, kind="stable")[:, :n_types]  # position of each type
    rows = np.arange(n)
    y = np.concatenate([numbers[rows, where[:, j], j * width:(j + 1) * width]
                        for j in range(n_types)], axis=1)
    return X, y


def three_five(n, rng, sign):
    """3 tokens of kind A and 5 of kind B, each with v ~ N(0, 1), then the query;
    target ``sum_A v + sign * sum_B v``. Features: one-hot kind (A, B, query), then v."""
    kind = _shuffled_kinds(n, [0] * 3 + [1] * 5, rng)
    v = rng.standard_normal(kind.shape)
    X = np.zeros((n, 9, 4))
    X[:, :-1, 0], X[:, :-1, 1], X[:, :-1, 3] = kind == 0, kind == 1, v
    X[:, -1, 2] = 1.0
    return X, (v * (kind == 0)).sum(axis=1) + sign * (v * (kind == 1)).sum(axis=1)


#: name -> (generator, names of the one-hot kind features that open each token)
TASKS = {
    "lookup": (lambda n, rng: lookup(n, rng), ("t0", "t1", "t2", "t3", "3 others", "query")),
    "lookup-wide": (lambda n, rng: lookup(n, rng, width=2),
                    ("t0", "t1", "t2", "t3", "3 others", "query")),
    "3v5-diff": (lambda n, rng: three_five(n, rng, -1.0), ("3 A", "5 B", "query")),
    "3v5-sum": (lambda n, rng: three_five(n, rng, 1.0), ("3 A", "5 B", "query")),
}


def task_data(task, seed, n_train, n_test):
    """The task's training and test sets for ``seed``, the same for every model."""
    rng = np.random.default_rng([seed, list(TASKS).index(task)])
    X, y = TASKS[task][0](n_train + n_test, rng)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def relative_error(y, pred):
    """Mean squared error over the target's variance (per output, then averaged)."""
    y, pred = y.reshape(len(y), -1), pred.reshape(len(pred), -1)
    return float(((y - pred) ** 2).mean(axis=0).sum() / y.var(axis=0).sum())


# ----------------------------------------------------------------------------- models
#: name -> (label, settings). Encoder settings go to SequenceAttentionRegressor;
#: ``dim_feedforward="matched"`` is solved so the parameter count matches "4x1".
MODELS = {
    "1h": ("one head", {"n_heads": 1}),
    "2h": ("2 heads", {"n_heads": 2}),
    "mqa": ("multi-query (4 q, 1 kv)", {"n_heads": 4, "n_kv_heads": 1}),
    "gqa": ("grouped (4 q, 2 kv)", {"n_heads": 4, "n_kv_heads": 2}),
    "mha": ("multi-head (4)", {"n_heads": 4}),
    "1x4": ("1 layer x 4 heads, wide FF", {"n_heads": 4, "dim_feedforward": "matched"}),
    "4x1": ("4 layers x 1 head", {"n_heads": 1, "n_layers": 4}),
    "sep-1h": ("separated, one head", {"separated": True, "n_heads": 1}),
    "sep-2h": ("separated, 2 heads", {"separated": True, "n_heads": 2}),
}
#: Every (task, model) run, once per seed; the questions below read them.
RUNS = ([(t, m) for t in ("lookup", "lookup-wide") for m in ("1h", "mqa", "gqa", "mha",
                                                              "1x4", "4x1")]
        + [("3v5-diff", m) for m in ("sep-1h", "sep-2h", "1h", "2h", "mha")]
        + [("3v5-sum", "sep-1h")])


def count_params(n_in, n_out, n_layers=1, n_heads=1, n_kv_heads=None, dim_feedforward=32):
    """Parameters of the encoder regressor: input and output maps around the layers."""
    parts = [Linear(n_in, D_MODEL, rng=0), Linear(D_MODEL, n_out, rng=0)]
    parts += [TransformerEncoderLayer(D_MODEL, n_heads, dim_feedforward, 0.0, rng=0,
                                      n_kv_heads=n_kv_heads) for _ in range(n_layers)]
    return sum(p.size for part in parts for p in part.params.values())


def encoder_settings(model, n_in, n_out):
    """The model's SequenceAttentionRegressor settings, the matched width solved."""
    settings = {"n_layers": 1, "n_kv_heads": None, "dim_feedforward": FEEDFORWARD,
                **MODELS[model][1]}
    if settings["dim_feedforward"] == "matched":
        deep = {"n_layers": 1, "dim_feedforward": FEEDFORWARD, **MODELS["4x1"][1]}
        target = count_params(n_in, n_out, **deep)
        base = count_params(n_in, n_out, n_heads=settings["n_heads"], dim_feedforward=1)
        # each feed-forward unit adds a row and a column of D_MODEL weights and a bias
        settings["dim_feedforward"] = 1 + round((target - base) / (2 * D_MODEL + 1))
    return settings


def fit_encoder(model, X, y, seed, epochs):
    settings = encoder_settings(model, X.shape[-1], y.reshape(len(y), -1).shape[1])
    est = SequenceAttentionRegressor(
        output="last", positional=None, norm_first=False, d_model=D_MODEL,
        learning_rate=LEARNING_RATE, batch_size=BATCH, max_iter=epochs,
        warmup_fraction=WARMUP, random_state=seed, **settings)
    with warnings.catch_warnings():  # a fixed budget of epochs, by design
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


class SeparatedHeads(Layer):
    """A learned query attends to keys that see only the kinds and values that see only
    the numbers (3v5 features), then ``h + FF(h)`` and a linear readout.

    One head's output then depends on the numbers only through one weighted mean with
    positive weights, the premise of the averaging argument.
    """

    def __init__(self, n_heads, rng, d_model=D_MODEL, dim_feedforward=FEEDFORWARD):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, n_heads, kdim=2, vdim=1, rng=rng)
        self.ff = Sequential(Linear(d_model, dim_feedforward, rng=rng), ReLU(),
                             Linear(dim_feedforward, d_model, rng=rng))
        self.readout = Linear(d_model, 1, rng=rng)
        # a zero query: every head starts from uniform weights (a random one starts biased
        # towards one kind, and one head then often settles on the worse kind, A: 5/8)
        self._params["query"] = np.zeros((1, 1, d_model))
        self._children = {"attn": self.attn, "ff": self.ff, "readout": self.readout}

    def forward(self, X):
        query = np.repeat(self._params["query"], len(X), axis=0)
        h, _ = self.attn.forward(query, X[:, :-1, :2], X[:, :-1, 3:4], need_weights=False)
        h = h[:, 0]
        return self.readout.forward(h + self.ff.forward(h))[:, 0]

    def backward(self, d_output):
        d_h = self.readout.backward(d_output[:, None])
        d_query, _, _ = self.attn.backward((d_h + self.ff.backward(d_h))[:, None])
        self._grads["query"] = d_query.sum(axis=0, keepdims=True)


def _train_separated(n_heads, X, z, rng, epochs):
    """Adam with the encoder's settings (batch, warm-up, epochs) on standardised z."""
    net = SeparatedHeads(n_heads, rng)
    n_batches = math.ceil(len(X) / BATCH)
    opt = Adam(net.params, lr=LEARNING_RATE,
               lr_schedule=make_schedule("linear_warmup", epochs * n_batches, WARMUP))
    for _ in range(epochs):
        for idx in np.array_split(rng.permutation(len(X)), n_batches):
            diff = net.forward(X[idx]) - z[idx]
            net.backward(diff / diff.size)
            opt.step(net.grads)
    return net


def fit_separated(model, X, y, seed, epochs):
    """The best of RESTARTS trainings by training error (the training set alone chooses).

    Returns ``predict`` and the training error of every restart.
    """
    mean, scale = y.mean(), y.std()
    z = (y - mean) / scale
    nets = [_train_separated(MODELS[model][1]["n_heads"], X, z,
                             np.random.default_rng([seed, restart]), epochs)
            for restart in range(RESTARTS)]
    train_errors = [relative_error(z, net.forward(X)) for net in nets]
    best = nets[int(np.argmin(train_errors))]
    return (lambda X_new: best.forward(X_new) * scale + mean), train_errors


# ----------------------------------------------------------------------------- heads
def _drop_head(est, head, X):
    """Predictions with one head's slice of the output projection set to zero."""
    w = est.network_.params["layers.0.self_attn.out_proj.weight"]
    width = w.shape[1] // est.n_heads
    cols = slice(head * width, (head + 1) * width)
    saved = w[:, cols].copy()
    w[:, cols] = 0.0
    try:
        return est.predict(X)
    finally:
        w[:, cols] = saved


def head_stats(est, X, y, n_kinds):
    """Each head's weights at the query token: mass per kind, distances, groups, importance.

    The distance of two heads is the total-variation distance between their weights,
    averaged over ``X``; a head's importance is the rise of the relative error when its
    output is removed (the mixture-component view: what each component carries).
    """
    W = est.attention_weights(X, per_head=True)[:, :, -1, :]  # (n, H, L)
    kind = X[:, :, :n_kinds].argmax(axis=-1)
    profile = np.stack([(W * (kind == k)[:, None]).sum(axis=-1).mean(axis=0)
                        for k in range(n_kinds)], axis=1)
    tv = 0.5 * np.abs(W[:, :, None] - W[:, None]).sum(axis=-1).mean(axis=0)
    n_groups = connected_components((tv < ALIKE).astype(int), directed=False)[0]
    base = relative_error(y, est.predict(X))
    importance = [relative_error(y, _drop_head(est, h, X)) - base for h in range(len(tv))]
    H = len(tv)
    return {"head_groups": n_groups,
            "head_distance": f"{tv[~np.eye(H, dtype=bool)].mean():.4f}",
            "head_importance": ";".join(f"{v:.4f}" for v in importance),
            "head_profile": ";".join("/".join(f"{v:.3f}" for v in row) for row in profile)}


# ----------------------------------------------------------------------------- runs
CSV_FIELDS = ["task", "model", "seed", "n_train", "n_test", "epochs", "n_layers", "n_heads",
              "n_kv_heads", "dim_feedforward", "n_params", "test_error", "train_error",
              "seconds", "head_groups", "head_distance", "head_importance", "head_profile",
              "restart_train_errors"]
_KEY = ("task", "model", "seed", "n_train", "n_test", "epochs")


def run_one(task, model, seed, cfg):
    """Train one model on one task and seed; returns its CSV record."""
    Xtr, ytr, Xte, yte = task_data(task, seed, cfg["n_train"], cfg["n_test"])
    start = time.perf_counter()
    record = {"task": task, "model": model, "seed": seed, **{k: cfg[k] for k in _KEY[3:]}}
    if MODELS[model][1].get("separated"):
        predict, restarts = fit_separated(model, Xtr, ytr, seed, cfg["epochs"])
        record.update(n_layers=1, n_heads=MODELS[model][1]["n_heads"], n_kv_heads="",
                      dim_feedforward=FEEDFORWARD, n_params=_separated_size(model),
                      restart_train_errors=";".join(f"{v:.5f}" for v in restarts))
    else:
        est = fit_encoder(model, Xtr, ytr, seed, cfg["epochs"])
        predict = est.predict
        record.update(n_layers=est.n_layers, n_heads=est.n_heads,
                      n_kv_heads=est.n_kv_heads or est.n_heads,
                      dim_feedforward=est.dim_feedforward,
                      n_params=sum(p.size for p in est.network_.params.values()))
        if est.n_heads > 1 and est.n_layers == 1:
            record.update(head_stats(est, Xte, yte, len(TASKS[task][1])))
    record.update(test_error=f"{relative_error(yte, predict(Xte)):.5f}",
                  train_error=f"{relative_error(ytr, predict(Xtr)):.5f}",
                  seconds=f"{time.perf_counter() - start:.1f}")
    return record


def _separated_size(model):
    net = SeparatedHeads(MODELS[model][1]["n_heads"], np.random.default_rng(0))
    return sum(p.size for p in net.params.values())


def read_csv(path):
    if not path or not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def append_csv(path, record):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        if new:
            writer.writeheader()
        writer.writerow({k: record.get(k, "") for k in CSV_FIELDS})


def run_all(cfg, path):
    """Every run of RUNS for every seed, appended to ``path`` as it ends (runs already
    there are skipped, so a long study resumes)."""
    done = {tuple(str(r[k]) for k in _KEY) for r in read_csv(path)}
    print(f"{'task':12s} {'model':28s} {'seed':>4s} {'params':>6s} {'test':>8s} "
          f"{'train':>8s} {'s':>6s}")
    for seed in cfg["seeds"]:
        for task, model in RUNS:
            if (task, model, str(seed), *(str(cfg[k]) for k in _KEY[3:])) in done:
                print(f"{task:12s} {MODELS[model][0]:28s} {seed:4d}   (in csv)")
                continue
            r = run_one(task, model, seed, cfg)
            append_csv(path, r)
            print(f"{task:12s} {MODELS[model][0]:28s} {seed:4d} {r['n_params']:6d} "
                  f"{r['test_error']:>8s} {r['train_error']:>8s} {r['seconds']:>6s}",
                  flush=True)


# ----------------------------------------------------------------------------- verdicts
def _pairs(task, pairs):
    return [((task, a), (task, b)) for a, b in pairs]


#: number -> (question, the (task, model) rows of its table, the comparisons (A, B)).
QUESTIONS = {
    1: ("multi-query vs grouped vs multi-head vs one head (d_model 16, one layer)",
        [(t, m) for t in ("lookup", "lookup-wide") for m in ("1h", "mqa", "gqa", "mha")],
        [c for t in ("lookup", "lookup-wide") for c in _pairs(
            t, [("mqa", "1h"), ("gqa", "mqa"), ("mha", "gqa"), ("mha", "mqa")])]),
    2: ("one layer of 4 heads vs 4 layers of 1 head (matched parameters, d_model 16)",
        [(t, m) for t in ("lookup", "lookup-wide") for m in ("1x4", "4x1")],
        [c for t in ("lookup", "lookup-wide") for c in _pairs(t, [("1x4", "4x1")])]),
    3: ("3 tokens vs 5 tokens: one head averages, heads + feed-forward can sum",
        [("3v5-diff", "sep-1h"), ("3v5-diff", "sep-2h"), ("3v5-sum", "sep-1h"),
         ("3v5-diff", "1h"), ("3v5-diff", "2h"), ("3v5-diff", "mha")],
        _pairs("3v5-diff", [("sep-2h", "sep-1h"), ("2h", "1h"), ("mha", "2h")])),
}
#: (task, model) of question 4 -> attention patterns the task needs.
COMPONENTS = {("lookup", "mha"): 4, ("lookup-wide", "mha"): 4, ("lookup", "mqa"): 4,
              ("3v5-diff", "mha"): 2}


def by_run(rows):
    """{(task, model): {seed: row}}."""
    out = {}
    for r in rows:
        out.setdefault((r["task"], r["model"]), {})[int(r["seed"])] = r
    return out


def _mean_se(values):
    values = np.asarray(values, dtype=float)
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
    return float(values.mean()), float(se)


def errors(runs, key):
    return {s: float(r["test_error"]) for s, r in runs.get(key, {}).items()}


def compare(a, b, name_a, name_b):
    """The verdict rule on the paired differences (same seeds) of two models' errors."""
    seeds = sorted(set(a) & set(b))
    if len(seeds) < 2:
        return "fewer than 2 paired seeds: no verdict"
    diff, se = _mean_se([b[s] - a[s] for s in seeds])  # > 0: A has the lower error
    text = f"{diff:+.4f} ± {se:.4f} ({len(seeds)} seeds)"
    if abs(diff) <= VERDICT_SE * se:
        return f"no difference within noise: {text}"
    winner = name_a if diff > 0 else name_b
    if abs(diff) < NEGLIGIBLE:
        return f"{winner} lower, beyond noise but negligible (< {NEGLIGIBLE}): {text}"
    return f"{winner} better: {text}"


def bound_verdict(errs, bound):
    """Is the separated one head at the averaging bound, below it, or above it?"""
    mean, se = _mean_se(list(errs.values()))
    tol = max(VERDICT_SE * (0.0 if np.isnan(se) else se), NEGLIGIBLE)
    where = ("below the bound: the averaging argument fails" if mean < bound - tol else
             "above the bound: not trained to it" if mean > bound + tol else
             "at the averaging bound")
    return f"{where} ({mean:.4f} ± {se:.4f} vs {bound:.3f})"


def _cell(errs):
    """Mean ± standard error | range | seeds solved (error under NEGLIGIBLE)."""
    if not errs:
        return "not run | | "
    values = np.array(list(errs.values()))
    mean, se = _mean_se(values)
    solved = int((values < NEGLIGIBLE).sum())
    return (f"{mean:.4f} ± {se:.4f} | {values.min():.4f}-{values.max():.4f} | "
            f"{solved} of {len(values)}")


def _three_five_lines(runs):
    """Question 3's extra lines: the bound, the control, the separated models' restarts."""
    bound = bound_verdict(errors(runs, ("3v5-diff", "sep-1h")), BOUND_3V5)
    lines = [f"- separated one head vs the bound 3/8: {bound}"]
    control = errors(runs, ("3v5-sum", "sep-1h"))
    if control:
        solved = _mean_se(list(control.values()))[0] < NEGLIGIBLE
        lines.append(f"- control, separated one head on 3v5-sum: "
                     f"{'solved' if solved else 'NOT solved'} (error < {NEGLIGIBLE})")
    for key in [("3v5-diff", "sep-1h"), ("3v5-diff", "sep-2h")]:
        train = [float(v) for r in runs.get(key, {}).values()
                 for v in r.get("restart_train_errors", "").split(";") if v]
        if train:
            lines.append(f"- {MODELS[key[1]][0]}: restarts solved (training error < "
                         f"{NEGLIGIBLE}): {sum(v < NEGLIGIBLE for v in train)} of {len(train)}")
    return lines


def question_lines(number, runs):
    title, rows, comparisons = QUESTIONS[number]
    header = (f"| task | model | parameters | test error: mean ± se | min-max | seeds "
              f"solved (< {NEGLIGIBLE}) |")
    lines = [f"\n### {number}. {title}\n", header, "|---|---|---|---|---|---|"]
    for key in rows:
        params = next((r["n_params"] for r in runs.get(key, {}).values()), "")
        lines.append(f"| {key[0]} | {MODELS[key[1]][0]} | {params} | "
                     f"{_cell(errors(runs, key))} |")
    lines.append("")
    if number == 3:
        lines += _three_five_lines(runs)
    for a, b in comparisons:
        verdict = compare(errors(runs, a), errors(runs, b), MODELS[a[1]][0], MODELS[b[1]][0])
        lines.append(f"- {a[0]}: {MODELS[a[1]][0]} vs {MODELS[b[1]][0]}: {verdict}")
    return lines


def heads_verdict(groups, n_heads):
    if all(g == n_heads for g in groups):
        return "all heads distinct"
    if all(g == 1 for g in groups):
        return "all heads alike"
    return "some alike, some not"


def mixture_lines(runs):
    """Question 4: groups of alike heads, distances and importances per seed."""
    header = ("| task | model | components needed | groups per seed | mean distance | heads "
              f"carrying > {NEGLIGIBLE} | verdict |")
    lines = [f"\n### 4. heads as mixture components (alike: distance < {ALIKE})\n", header,
             "|---|---|---|---|---|---|---|"]
    for (task, model), needed in COMPONENTS.items():
        seeds = runs.get((task, model), {})
        if not seeds:
            continue
        rows = [seeds[s] for s in sorted(seeds)]
        groups = [int(r["head_groups"]) for r in rows]
        dist = _mean_se([float(r["head_distance"]) for r in rows])
        carrying = [sum(float(v) > NEGLIGIBLE for v in r["head_importance"].split(";"))
                    for r in rows]
        verdict = heads_verdict(groups, int(rows[0]["n_heads"]))
        verdict += (f"; as many groups as components in {groups.count(needed)} of "
                    f"{len(groups)} seeds")
        lines.append(f"| {task} | {MODELS[model][0]} | {needed} | {groups} | "
                     f"{dist[0]:.3f} ± {dist[1]:.3f} | {carrying} | {verdict} |")
    return lines


def report(rows):
    runs = by_run(rows)
    lines = []
    for number in QUESTIONS:
        lines += question_lines(number, runs)
    return "\n".join(lines + mixture_lines(runs))


# ----------------------------------------------------------------------------- figure
def _bar(ax, x, errs, colour, label):
    """One model: mean (bar, value on top), standard error (line), seeds (dots), all
    floored at FLOOR so that a log axis shows errors the CSV rounds to zero."""
    mean, se = _mean_se(errs)
    shown = max(mean, FLOOR)
    ax.bar(x, shown, 0.8, color=colour, label=label)
    ax.errorbar(x, shown, yerr=[[min(0.0 if np.isnan(se) else se, shown - FLOOR / 2)],
                                [0.0 if np.isnan(se) else se]], color="k", capsize=3)
    ax.plot(np.full(errs.size, x), np.maximum(errs, FLOOR), "k.", ms=4)
    text = f"{mean:.2g}" if mean >= FLOOR else f"<{FLOOR:.0e}"
    top = max(shown + (0.0 if np.isnan(se) else se), errs.max())
    ax.text(x, top * 1.5, text, ha="center", va="bottom", fontsize=6, rotation=90)


def _bars(ax, runs, groups, title):
    """One bar per model, grouped by task; one colour per model."""
    x, ticks, labels, colours = 0.0, [], [], {}
    for group, keys in groups:
        start = x
        for key in keys:
            errs = np.array(list(errors(runs, key).values()))
            if errs.size:
                label = MODELS[key[1]][0]
                first = label not in colours
                colour = colours.setdefault(label, f"C{len(colours)}")
                _bar(ax, x, errs, colour, label if first else None)
                x += 1.0
        ticks.append((start + x - 1.0) / 2)
        labels.append(group)
        x += 0.8
    ax.set_yscale("log")
    ax.set_ylim(FLOOR / 2, 30.0)                 # headroom above 1 for the legend
    ax.set_xticks(ticks, labels, fontsize=8)
    ax.set_ylabel("test error / target variance")
    ax.set_title(textwrap.fill(title, 56), fontsize=9)
    ax.legend(fontsize=7, loc="upper center", ncol=2)


def _profiles(ax, rows, kinds, title):
    """One trained model's heads (first seed): weight mass on each kind of token."""
    row = rows[min(rows)]
    profile = np.array([[float(v) for v in h.split("/")] for h in row["head_profile"].split(";")])
    importance = [float(v) for v in row["head_importance"].split(";")]
    ax.imshow(profile, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
    for (i, j), v in np.ndenumerate(profile):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                color="k" if v > 0.5 else "w")
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_yticks(range(len(importance)),
                  [f"head {h}\n{v:+.3f}" for h, v in enumerate(importance)], fontsize=7)
    ax.set_title(f"{title}, seed {row['seed']}: {row['head_groups']} group(s)", fontsize=9)


def save_figure(rows, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print('\n(figure skipped: matplotlib is not installed; pip install "nlpfeat[viz]")')
        return
    runs = by_run(rows)
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5), layout="constrained")
    for ax, number in zip(axes[0], QUESTIONS):
        groups = {}
        for key in QUESTIONS[number][1]:
            kind = "separated\n" if key[1].startswith("sep") else "encoder\n"
            groups.setdefault(key[0] if number != 3 else kind + key[0].replace("3v5-", ""),
                              []).append(key)
        _bars(ax, runs, list(groups.items()), f"{number}. {QUESTIONS[number][0]}")
    axes[0, 2].axhline(BOUND_3V5, color="grey", ls="--", lw=1)
    axes[0, 2].text(1.5, BOUND_3V5 * 1.2, "one-head bound 3/8", fontsize=7, color="grey")
    for ax, key in zip(axes[1], [k for k in COMPONENTS if k[1] == "mha"]):
        if key in runs:
            _profiles(ax, runs[key], TASKS[key[0]][1], f"4. {key[0]}, {MODELS[key[1]][0]}")
        else:
            ax.set_axis_off()
    fig.suptitle("Heads study: test errors (bars: mean, lines: standard error, dots: seeds); "
                 "bottom: each head's weight on each kind of token, and the error its "
                 "removal adds", fontsize=10)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "heads_study.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"saved {path}")


# ----------------------------------------------------------------------------- main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="the default: seeds 0 and 1, 800 training sequences, 12 epochs "
                        "(about a minute on one core); indicative only")
    p.add_argument("--full", action="store_true",
                   help="the study: 5 seeds, 4000 training and 2000 test sequences, 40 "
                        "epochs (the runs took 45 minutes in all on a busy 2-core CPU)")
    p.add_argument("--seeds", type=int, nargs="+", help="override the seeds")
    p.add_argument("--n-train", type=int, help="override the training sequences per task")
    p.add_argument("--n-test", type=int, help="override the test sequences per task")
    p.add_argument("--epochs", type=int, help="override the epochs")
    p.add_argument("--csv", help="append each finished run to this CSV and skip the runs "
                                 "already in it (default: a fresh OUT/heads_study.csv)")
    p.add_argument("--report", metavar="CSV",
                   help="print the tables and verdicts of a CSV of finished runs, draw its "
                        "figure into --out, and exit")
    p.add_argument("--out", default="nlpfeat-examples",
                   help="folder for the figure (default: ./nlpfeat-examples)")
    p.add_argument("--threads", type=int, default=1,
                   help="BLAS threads (default 1: the matrices are small, threads only "
                        "add overhead, and a 2-core machine stays usable)")
    args = p.parse_args(argv)
    if args.quick and args.full:
        p.error("choose one of --quick and --full")
    cfg = dict(FULL if args.full else QUICK)
    overrides = {"seeds": args.seeds, "n_train": args.n_train, "n_test": args.n_test,
                 "epochs": args.epochs}
    cfg.update({k: v for k, v in overrides.items() if v is not None})
    return args, cfg


def _largest_config(rows):
    """The rows of the configuration (sizes, epochs) with the most runs in a CSV."""
    configs = {}
    for r in rows:
        configs.setdefault(tuple(r[k] for k in _KEY[3:]), []).append(r)
    return max(configs.values(), key=len) if configs else []


def main(argv=None):
    args, cfg = parse_args(argv)
    if args.report:
        rows = _largest_config(read_csv(args.report))
        if not rows:
            raise SystemExit(f"{args.report} holds no runs.")
        print(f"{len(rows)} runs; n_train={rows[0]['n_train']}, n_test={rows[0]['n_test']}, "
              f"epochs={rows[0]['epochs']}")
    else:
        path = args.csv or os.path.join(args.out, "heads_study.csv")
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        if not args.csv and os.path.exists(path):
            os.remove(path)                       # the default CSV is this run's alone
        print(f"seeds={cfg['seeds']} n_train={cfg['n_train']} n_test={cfg['n_test']} "
              f"epochs={cfg['epochs']}" + ("" if args.full else " (reduced: indicative only)"))
        with threadpool_limits(limits=args.threads):
            run_all(cfg, path)
        rows = [r for r in read_csv(path) if int(r["seed"]) in cfg["seeds"]
                and all(r[k] == str(cfg[k]) for k in _KEY[3:])]
    print(report(rows))
    save_figure(rows, args.out)
    return rows


if __name__ == "__main__":
    main()
