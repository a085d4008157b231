"""``nlpfeat compare``: classical kernel attention and learned attention, side by side.

Four tasks on bundled data, each a table of models with a cross-validated metric (mean and
standard deviation), fit and predict seconds and, for every learned-attention model, how
close its attention weights are to the Nadaraya-Watson weights on the same queries and
memory (mean KL divergence and correlation): does a learned score rediscover the kernel?

=========  ==========================================  ===============================
task       data                                        metric
=========  ==========================================  ===============================
sine       y = 2 sin(x) + x^0.8 + noise (textbook)     MSE against the noisy targets
diabetes   scikit-learn's diabetes data, standardised  R^2
polarity   200 movie-review sentences                  accuracy, repeated stratified CV
lee        Lee et al. (2005) news + human ratings      Pearson r with the ratings
=========  ==========================================  ===============================

The numbers come from the estimators; this module only wires them into scikit-learn's
``cross_validate`` and writes tables (CSV, JSON) and figures.
"""
import csv
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from threadpoolctl import threadpool_limits

__all__ = ["ALL_MODELS", "TASKS", "run_comparison", "sentence_attention", "weight_agreement"]

TASKS = {
    "sine": "the textbook task y = 2 sin(x) + x^0.8 + noise, x in [0, 5)",
    "diabetes": "scikit-learn's diabetes data (442 patients, 10 standardised features)",
    "polarity": "sentence polarity (200 movie-review sentences), text features",
    "lee": "Lee document similarity: correlation with mean human ratings (1225 pairs)",
}

_REGRESSION = ("sine", "diabetes")
ALL_MODELS = {
    "nw-gaussian": "Nadaraya-Watson, Gaussian kernel, leave-one-out bandwidth",
    "nw-epanechnikov": "Nadaraya-Watson, Epanechnikov kernel, leave-one-out bandwidth",
    "nw-gaussian-ard": "Nadaraya-Watson, Gaussian kernel, per-feature bandwidths (loo-ard)",
    "nw-epanechnikov-ard": "Nadaraya-Watson, Epanechnikov kernel, per-feature bandwidths",
    "attn-gaussian-1h": "AttentionRegressor, Gaussian score (learned metric), 1 head",
    "attn-gaussian-4h": "AttentionRegressor, Gaussian score, 4 heads",
    "attn-additive-1h": "AttentionRegressor, additive score, 1 head",
    "attn-additive-4h": "AttentionRegressor, additive score, 4 heads",
    "attn-scaled_dot-1h": "AttentionRegressor, scaled dot-product score, 1 head",
    "attn-scaled_dot-4h": "AttentionRegressor, scaled dot-product score, 4 heads",
    "knn": "k nearest neighbours (k chosen by inner CV)",
    "kernel-ridge": "kernel ridge regression, RBF kernel (alpha, gamma by inner CV)",
    "ridge": "ridge regression (alpha by inner CV)",
    "logistic": "logistic regression on TF-IDF",
    "pmi-mean": "PMI embeddings, mean pooling",
    "pmi-attention": "PMI embeddings, kernel attention pooling (Nadaraya-Watson over tokens)",
    "bow": "bag of words, cosine",
    "tfidf": "TF-IDF, cosine",
    "logentropy-lsi": "log-entropy weights + LSI (200 topics), cosine",
    "torch-mha": "PyTorch nn.MultiheadAttention of the same shape, trained the same way",
}

_TASK_MODELS = {
    "sine": [m for m in ALL_MODELS if m.startswith(("nw-", "attn-"))]
    + ["knn", "kernel-ridge", "ridge", "torch-mha"],
    "diabetes": [m for m in ALL_MODELS if m.startswith(("nw-", "attn-"))]
    + ["knn", "kernel-ridge", "ridge", "torch-mha"],
    "polarity": ["nw-gaussian", "nw-epanechnikov", "knn", "logistic", "pmi-mean", "pmi-attention"],
    "lee": ["bow", "tfidf", "logentropy-lsi", "pmi-mean", "pmi-attention"],
}


def weight_agreement(reference, weights, eps=1e-12):
    """Mean KL(reference || weights) over queries and the correlation of all weights.

    Parameters
    ----------
    reference, weights : array-like of shape (n_queries, n_memory)
        Row-stochastic attention matrices over the same queries and memory.

    Returns
    -------
    kl : float
        Mean over queries of ``sum_j p_j log(p_j / q_j)`` (q clipped at ``eps``); 0 when
        the weights are equal.
    corr : float
        Pearson correlation of the flattened matrices.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[0.5, 0.5], [0.9, 0.1]])
    >>> kl, corr = weight_agreement(w, w)
    >>> float(kl), float(corr)
    (0.0, 1.0)
    """
    P = np.asarray(reference.toarray() if hasattr(reference, "toarray") else reference, float)
    Q = np.asarray(weights, dtype=np.float64)
    if P.shape != Q.shape:
        raise ValueError(f"weights of shape {Q.shape} do not match the reference {P.shape}.")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, P * (np.log(np.maximum(P, eps)) - np.log(np.maximum(Q, eps))), 0.0)
    kl = float(terms.sum(axis=1).mean())
    corr = float(np.corrcoef(P.ravel(), Q.ravel())[0, 1]) if P.std() > 0 and Q.std() > 0 else np.nan
    return kl, corr


# ----------------------------------------------------------------------------- models
def _attention_params(quick, seed):
    # Each training step attends over at most 128 random memory slots (prediction uses all).
    return dict(max_iter=20 if quick else 60, learning_rate=1e-2, batch_size=32,
                max_memory=128, random_state=seed)


def _regression_model(name, n_features, quick, seed):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import GridSearchCV
    from sklearn.neighbors import KNeighborsRegressor

    from nlpfeat.attention import AttentionRegressor
    from nlpfeat.kernels import NadarayaWatsonRegressor

    if name.startswith("nw-"):
        kernel = name.split("-")[1]
        return NadarayaWatsonRegressor(kernel=kernel,
                                       bandwidth="loo-ard" if name.endswith("ard") else "loo")
    if name.startswith("attn-"):
        _, score, heads = name.split("-")
        return AttentionRegressor(score_func=score, n_heads=int(heads[:-1]),
                                  d_k=8 if score == "additive" else None,
                                  **_attention_params(quick, seed))
    if name == "knn":
        return GridSearchCV(KNeighborsRegressor(), {"n_neighbors": [3, 5, 10, 20]}, cv=3)
    if name == "kernel-ridge":
        return GridSearchCV(KernelRidge(kernel="rbf"),
                            {"alpha": [1e-2, 1e-1, 1.0], "gamma": np.array([0.1, 1.0, 10.0]) / n_features},
                            cv=3)
    if name == "ridge":
        return RidgeCV(alphas=np.logspace(-3, 3, 13))
    if name == "torch-mha":
        return TorchAttentionRegressor(n_heads=4, **_attention_params(quick, seed))
    raise KeyError(name)


def _attention_of(model, X_train, X_query):
    """(n_queries, n_train) head-averaged weights of a fitted pipeline's last step, or None."""
    est = model[-1] if hasattr(model, "steps") else model
    if not hasattr(est, "attention_weights"):
        return None
    Xq = model[:-1].transform(X_query) if hasattr(model, "steps") else X_query
    W = est.attention_weights(Xq)
    W = W.toarray() if hasattr(W, "toarray") else np.asarray(W)
    return W.mean(axis=0) if W.ndim == 3 else W


class TorchAttentionRegressor(RegressorMixin, BaseEstimator):
    """A PyTorch ``nn.MultiheadAttention`` regressor shaped and trained as AttentionRegressor.

    Queries are the (standardised) samples, keys the training inputs, values the training
    targets, each embedded by a linear map to ``d_model``; each training query's own memory
    slot is masked (leave-one-out); minibatch Adam on the squared error, each step attending
    over at most ``max_memory`` random memory slots, as AttentionRegressor does. Only for
    ``nlpfeat compare --with-torch``; torch is imported when it is fitted.
    """

    def __init__(self, n_heads=4, d_model=16, max_iter=60, learning_rate=1e-2, batch_size=32,
                 max_memory=128, random_state=0):
        self.n_heads = n_heads
        self.d_model = d_model
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_memory = max_memory
        self.random_state = random_state

    def _forward(self, Xq, memory=None, mask=None):
        torch = self._torch
        Xm = self.Xm_ if memory is None else self.Xm_[memory]
        ym = self.ym_ if memory is None else self.ym_[memory]
        out, w = self.mha_(self.q_proj_(Xq)[None], self.k_proj_(Xm)[None],
                           self.v_proj_(ym)[None], attn_mask=mask, need_weights=True)
        return self.out_(out[0]), w[0] if w is not None else torch.empty(0)

    def _step(self, idx, memory, optimizer):
        torch = self._torch
        # Mask each query's own slot when it is in the memory drawn for this step.
        mask = torch.as_tensor(idx[:, None] == memory[None, :])
        pred, _ = self._forward(self.Xm_[idx], torch.as_tensor(memory), mask)
        loss = 0.5 * ((pred - self.ym_[idx]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def fit(self, X, y):
        from nlpfeat._validation import import_optional

        torch = self._torch = import_optional("torch", "torch", "TorchAttentionRegressor")
        torch.manual_seed(self.random_state)
        X, y = np.asarray(X, np.float64), np.asarray(y, np.float64).reshape(len(X), -1)
        self.mx_, self.sx_ = X.mean(0), np.where(X.std(0) > 0, X.std(0), 1.0)
        self.my_, self.sy_ = y.mean(0), np.where(y.std(0) > 0, y.std(0), 1.0)
        self.Xm_ = torch.tensor((X - self.mx_) / self.sx_)
        self.ym_ = torch.tensor((y - self.my_) / self.sy_)
        nn, d = torch.nn, self.d_model
        self.q_proj_ = nn.Linear(X.shape[1], d).double()
        self.k_proj_ = nn.Linear(X.shape[1], d).double()
        self.v_proj_ = nn.Linear(y.shape[1], d).double()
        self.mha_ = nn.MultiheadAttention(d, self.n_heads, batch_first=True).double()
        self.out_ = nn.Linear(d, y.shape[1]).double()
        params = [p for m in (self.q_proj_, self.k_proj_, self.v_proj_, self.mha_, self.out_)
                  for p in m.parameters()]
        optimizer = torch.optim.Adam(params, lr=self.learning_rate)
        rng = np.random.RandomState(self.random_state)
        n = len(X)
        for _ in range(self.max_iter):
            order = rng.permutation(n)
            for start in range(0, n, self.batch_size):
                memory = np.sort(rng.choice(n, size=min(n, self.max_memory), replace=False))
                self._step(order[start:start + self.batch_size], memory, optimizer)
        return self

    def predict(self, X):
        torch = self._torch
        with torch.no_grad():
            pred, _ = self._forward(torch.tensor((np.asarray(X, np.float64) - self.mx_) / self.sx_))
        out = pred.numpy() * self.sy_ + self.my_
        return out.ravel() if out.shape[1] == 1 else out

    def attention_weights(self, X):
        torch = self._torch
        with torch.no_grad():
            _, w = self._forward(torch.tensor((np.asarray(X, np.float64) - self.mx_) / self.sx_))
        return w.numpy()[None]


# ----------------------------------------------------------------------------- tasks
def _regression_data(task, quick, seed):
    if task == "sine":
        from nlpfeat.datasets import make_nw_regression

        X, y = make_nw_regression(60 if quick else 200, noise=0.5, random_state=seed)
        return X, y, "mse", "neg_mean_squared_error"
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    if quick:
        X, y = X[:150], y[:150]
    return X, y, "r2", "r2"


def _run_regression(task, names, quick, seed, progress, store):
    from sklearn.model_selection import KFold, cross_validate
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, metric, scoring = _regression_data(task, quick, seed)
    cv = KFold(3 if quick else 5, shuffle=True, random_state=seed)
    train, test = next(cv.split(X))
    reference = None
    rows = []
    for name in names:
        model = make_pipeline(StandardScaler(), _regression_model(name, X.shape[1], quick, seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = cross_validate(model, X, y, cv=cv, scoring=scoring, return_estimator=True)
        scores = -res["test_score"] if metric == "mse" else res["test_score"]
        row = _row(task, name, metric, metric != "mse", scores, res, "tabular")
        if name == "nw-gaussian":
            reference = _attention_of(res["estimator"][0], X[train], X[test])
        weights = _attention_of(res["estimator"][0], X[train], X[test])
        if reference is not None and weights is not None and name != "nw-gaussian" \
                and not name.startswith("nw-"):
            row["weight_kl"], row["weight_corr"] = weight_agreement(reference, weights)
        rows.append(row)
        store.setdefault(task, {})[name] = res["estimator"][0]
        progress.update(1)
    return rows


def _row(task, name, metric, higher, scores, res, features):
    return dict(task=task, model=name, features=features, metric=metric,
                higher_is_better=higher, mean=float(np.mean(scores)), std=float(np.std(scores)),
                n_scores=len(scores), fit_seconds=float(np.mean(res["fit_time"])),
                predict_seconds=float(np.mean(res["score_time"])),
                weight_kl=np.nan, weight_corr=np.nan)


def _pmi_embedding(docs, seed, quick):
    from nlpfeat.text import PMIEmbedding

    return PMIEmbedding(n_components=50 if quick else 200, window=5, min_count=2,
                        stop_words="english", random_state=seed).fit(docs)


def _pooling(name, embedding):
    """Mean pooling, or Nadaraya-Watson attention pooling (median bandwidth, idf query).

    The fitted embedding goes in as gensim KeyedVectors: scikit-learn's ``clone`` (run by
    ``cross_validate``) would turn a fitted estimator parameter into an unfitted one.
    """
    from nlpfeat.text import KernelAttentionPooling

    embedding = embedding.to_keyedvectors()
    if name == "pmi-mean":
        return KernelAttentionPooling(embedding, input="content", stop_words="english",
                                      query="mean", bandwidth=1e6)
    return KernelAttentionPooling(embedding, input="content", stop_words="english",
                                  query="idf", bandwidth="median")


def _polarity_model(name, embedding, seed):
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline

    from nlpfeat.kernels import NadarayaWatsonClassifier
    from nlpfeat.text import TfidfVectorizer

    if name.startswith("nw-"):
        clf = NadarayaWatsonClassifier(kernel=name.split("-")[1], metric="cosine", bandwidth="loo")
        return make_pipeline(TfidfVectorizer(), clf), "tfidf"
    if name == "knn":
        return make_pipeline(TfidfVectorizer(), KNeighborsClassifier(10, metric="cosine")), "tfidf"
    if name == "logistic":
        return make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000)), "tfidf"
    return make_pipeline(_pooling(name, embedding), LogisticRegression(max_iter=1000)), \
        "pmi-embedding"


def _run_polarity(names, quick, seed, progress, store):
    from sklearn.model_selection import RepeatedStratifiedKFold, cross_validate

    from nlpfeat.datasets import load_lee, load_polarity

    data = load_polarity()
    docs, target = list(data.data), np.asarray(data.target)
    # Embeddings learned without labels from the Lee background news and the sentences.
    embedding = _pmi_embedding(list(load_lee().background) + docs, seed, quick)
    cv = RepeatedStratifiedKFold(n_splits=3 if quick else 5, n_repeats=1 if quick else 4,
                                 random_state=seed)
    rows = []
    for name in names:
        model, features = _polarity_model(name, embedding, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = cross_validate(model, docs, target, cv=cv, scoring="accuracy")
        rows.append(_row("polarity", name, "accuracy", True, res["test_score"], res, features))
        progress.update(1)
    return rows


def _lee_vectorizer(name, seed, quick):
    from sklearn.pipeline import make_pipeline

    from nlpfeat.text import BagOfWords, TfidfVectorizer, TopicModel

    if name == "bow":
        return BagOfWords(stop_words="english")
    if name == "tfidf":
        return TfidfVectorizer(stop_words="english")
    if name == "logentropy-lsi":
        return make_pipeline(TfidfVectorizer(weighting="logentropy", stop_words="english"),
                             TopicModel(n_topics=50 if quick else 200, method="lsi",
                                        backend="gensim", random_state=seed))
    return "pmi"


def _pearson_bootstrap(model_sims, human, seed, n_boot=200):
    rng = np.random.RandomState(seed)
    r = float(np.corrcoef(model_sims, human)[0, 1])
    idx = rng.randint(0, len(human), size=(n_boot, len(human)))
    boots = [np.corrcoef(model_sims[i], human[i])[0, 1] for i in idx]
    return r, float(np.std(boots))


def _run_lee(names, quick, seed, progress, store):
    from sklearn.preprocessing import normalize

    from nlpfeat.datasets import load_lee

    lee = load_lee()
    upper = np.triu_indices(len(lee.test), k=1)
    human = lee.similarity[upper]
    embedding = None
    rows = []
    for name in names:
        vectorizer = _lee_vectorizer(name, seed, quick)
        start = time.perf_counter()
        if isinstance(vectorizer, str):
            if embedding is None:
                embedding = _pmi_embedding(list(lee.background), seed, quick)
            vectorizer = _pooling(name, embedding)
        vectorizer.fit(list(lee.background))
        fit_seconds = time.perf_counter() - start
        start = time.perf_counter()
        V = normalize(vectorizer.transform(list(lee.test)))
        sims = V @ V.T
        sims = np.asarray(sims.toarray() if hasattr(sims, "toarray") else sims)[upper]
        predict_seconds = time.perf_counter() - start
        r, std = _pearson_bootstrap(sims, human, seed)
        rows.append(dict(task="lee", model=name, features=name, metric="pearson",
                         higher_is_better=True, mean=r, std=std, n_scores=len(human),
                         fit_seconds=fit_seconds, predict_seconds=predict_seconds,
                         weight_kl=np.nan, weight_corr=np.nan))
        progress.update(1)
    return rows


# ----------------------------------------------------------------------------- output
_COLUMNS = ["task", "model", "features", "metric", "higher_is_better", "mean", "std", "n_scores",
            "fit_seconds", "predict_seconds", "weight_kl", "weight_corr"]


def format_table(rows):
    """A plain-text table of one task's rows (best first by its metric's direction)."""
    if not rows:
        return ""
    higher = rows[0]["higher_is_better"]
    ordered = sorted(rows, key=lambda r: -r["mean"] if higher else r["mean"])
    metric = rows[0]["metric"]
    head = (f"{'model':<22}{'features':<15}{metric + ' (mean ± std)':>24}{'fit s':>9}"
            f"{'predict s':>11}{'KL(NW||attn)':>14}{'corr(NW,attn)':>15}")
    lines = [head, "-" * len(head)]
    for r in ordered:
        kl = "" if np.isnan(r["weight_kl"]) else f"{r['weight_kl']:.3f}"
        corr = "" if np.isnan(r["weight_corr"]) else f"{r['weight_corr']:.3f}"
        lines.append(f"{r['model']:<22}{r['features']:<15}{r['mean']:>15.4f} ± {r['std']:<6.4f}"
                     f"{r['fit_seconds']:>9.3f}{r['predict_seconds']:>11.3f}{kl:>14}{corr:>15}")
    return "\n".join(lines)


def _write(rows, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.csv"), "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row[k] for k in _COLUMNS})
    clean = [{k: (None if isinstance(row[k], float) and np.isnan(row[k]) else row[k])
              for k in _COLUMNS} for row in rows]
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as fh:
        json.dump(clean, fh, indent=1)


def _figures(store, out, seed, quick):
    """Fitted curves on the sine task, attention heatmaps, the LOO bandwidth curve."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["(figures skipped: matplotlib is not installed; pip install \"nlpfeat[viz]\")"]
    from nlpfeat.datasets import make_nw_regression
    from nlpfeat.viz import plot_attention, plot_bandwidth_curve, plot_nw_fit

    models = store.get("sine")
    if not models:
        return []
    X, y = make_nw_regression(60 if quick else 200, noise=0.5, random_state=seed)
    written = []
    names = list(models)
    ncols = 4
    fig, axes = plt.subplots(int(np.ceil(len(names) / ncols)), ncols, squeeze=False,
                             figsize=(4 * ncols, 3 * int(np.ceil(len(names) / ncols))),
                             sharex=True, sharey=True)
    truth = lambda x: 2 * np.sin(x) + x ** 0.8  # noqa: E731
    for ax, name in zip(axes.ravel(), names):
        plot_nw_fit(models[name], X, y, ax=ax, label=name, truth=truth)
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    written.append(_save(fig, out, "sine_fits.png"))

    grid = np.linspace(0, 5, 40)[:, None]
    heat = {name: _attention_of(m, None, grid) for name, m in models.items()
            if name == "nw-gaussian" or name.startswith(("attn-", "torch"))}
    heat = {k: v for k, v in heat.items() if v is not None}
    if heat:
        # Every stored model was fitted on the first CV fold's training rows, in order.
        from sklearn.model_selection import KFold

        train, _ = next(KFold(3 if quick else 5, shuffle=True, random_state=seed).split(X))
        order = np.argsort(X[train, 0], kind="stable")
        stack = np.stack([np.asarray(w)[:, order] for w in heat.values()])
        sparse_labels = lambda values: [f"{v:.1f}" if i % 8 == 0 else ""  # noqa: E731
                                        for i, v in enumerate(values)]
        fig = plot_attention(stack, sparse_labels(grid[:, 0]), sparse_labels(X[train, 0][order]),
                             titles=list(heat), xlabel="training input x_i (sorted)",
                             ylabel="query x")
        written.append(_save(fig, out, "attention_heatmaps.png"))
    if "nw-gaussian" in models:
        ax = plot_bandwidth_curve(models["nw-gaussian"][-1])
        written.append(_save(ax.figure, out, "bandwidth_curve.png"))
    return written


def _save(fig, out, name):
    import matplotlib.pyplot as plt

    path = os.path.join(out, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _print_task(task, task_rows, stream):
    direction = "higher" if task_rows[0]["higher_is_better"] else "lower"
    spread = ("std over 200 bootstrap resamples of the rated pairs" if task == "lee"
              else f"mean ± std over {task_rows[0]['n_scores']} CV folds")
    print(f"\n== {task}: {TASKS[task]}\n   {task_rows[0]['metric']}, {direction} is "
          f"better; {spread}", file=stream)
    print(format_table(task_rows), file=stream, flush=True)


class _NoProgress:
    def update(self, n=1):
        pass

    def clear(self):
        pass

    def close(self):
        pass


def _select(task, models, with_torch):
    names = [m for m in _TASK_MODELS[task] if models is None or m in models]
    if "torch-mha" in names and not with_torch:
        names.remove("torch-mha")
    return names


def run_comparison(tasks=None, models=None, out="nlpfeat-compare", seed=0, quick=False,
                   with_torch=False, plots=True, progress=True, stream=None):
    """Run the comparison, print one table per task and write CSV, JSON and figures.

    Parameters
    ----------
    tasks : list of str, default=None
        Among ``TASKS`` (``"sine"``, ``"diabetes"``, ``"polarity"``, ``"lee"``); all by default.
    models : list of str, default=None
        Among ``ALL_MODELS``; every model that applies to a task by default.
    out : str, default="nlpfeat-compare"
        Folder for ``results.csv``, ``results.json`` and the figures.
    seed : int, default=0
        Seeds the data splits and every estimator's ``random_state``.
    quick : bool, default=False
        Small sizes and few epochs, for smoke tests.
    with_torch : bool, default=False
        Add ``torch-mha`` to the regression tasks (needs torch).
    plots : bool, default=True
        Write figures when matplotlib is installed.
    progress : bool, default=True
        Show a tqdm progress bar on stderr.
    stream : file-like, default=None
        Where the tables go (stdout by default).

    Returns
    -------
    rows : list of dict
        One dict per (task, model), with the columns of ``results.csv``.

    Notes
    -----
    The models are fitted with one BLAS thread (threadpoolctl): the problems are small,
    and on a 2-core machine multithreaded BLAS was measured up to ten times slower on them.
    """
    stream = stream or sys.stdout
    tasks = list(TASKS) if tasks is None else list(tasks)
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise ValueError(f"unknown task(s) {unknown}; choose among {list(TASKS)}.")
    if models is not None and any(m not in ALL_MODELS for m in models):
        bad = [m for m in models if m not in ALL_MODELS]
        raise ValueError(f"unknown model(s) {bad}; choose among {list(ALL_MODELS)}.")
    if with_torch:
        from nlpfeat._validation import import_optional

        import_optional("torch", "torch", "nlpfeat compare --with-torch")
    plan = {task: _select(task, models, with_torch) for task in tasks}
    total = sum(len(v) for v in plan.values())
    bar = _NoProgress()
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="nlpfeat compare", unit="model", file=sys.stderr)
    rows, store = [], {}
    runners = {"polarity": _run_polarity, "lee": _run_lee}
    limits = threadpool_limits(limits=1)
    try:
        for task, names in plan.items():
            if not names:
                continue
            if task in _REGRESSION:
                task_rows = _run_regression(task, names, quick, seed, bar, store)
            else:
                task_rows = runners[task](names, quick, seed, bar, store)
            rows.extend(task_rows)
            bar.clear()
            _print_task(task, task_rows, stream)
            _write(rows, out)
    finally:
        bar.close()
        limits.restore_original_limits()
    written = _figures(store, out, seed, quick) if plots else []
    print(f"\nwrote {os.path.join(out, 'results.csv')}, results.json"
          + "".join(f", {os.path.basename(p)}" for p in written if p.endswith(".png")), file=stream)
    for note in written:
        if not note.endswith(".png"):
            print(note, file=stream)
    return rows


# ----------------------------------------------------------------------------- sentence
def sentence_attention(sentence, n_heads=1, seed=0, tokenizer="regexp", d_model=16):
    """Self-attention weights of a small untrained multi-head model over one sentence.

    Token vectors are PMI embeddings fitted on the bundled toy corpus (English, or Chinese
    when the sentence holds CJK characters) plus sinusoidal positions; a
    :class:`~nlpfeat.attention.MultiHeadAttention` with seeded initial weights attends from
    every token to every token. What a head attends to here reflects the embeddings'
    similarity through random projections, not training.

    Returns
    -------
    tokens : list of str
    weights : ndarray of shape (n_heads, n_tokens, n_tokens)

    Examples
    --------
    >>> tokens, w = sentence_attention("the fat cat sat on the mat", n_heads=2)
    >>> tokens[:3], w.shape
    (['the', 'fat', 'cat'], (2, 7, 7))
    """
    from nlpfeat.attention import MultiHeadAttention
    from nlpfeat.attention.layers import SinusoidalPositionalEncoding
    from nlpfeat.datasets import load_toy_corpus
    from nlpfeat.text import PMIEmbedding, get_tokenizer

    tokens = get_tokenizer(tokenizer)(sentence.lower())
    if not tokens:
        raise ValueError(f"the sentence {sentence!r} has no tokens under tokenizer={tokenizer!r}.")
    if d_model % n_heads:
        d_model = n_heads * int(np.ceil(d_model / n_heads))
    chinese = any("\u4e00" <= ch <= "\u9fff" for ch in sentence)
    corpus = list(load_toy_corpus("zh" if chinese else "en").data) + [sentence]
    emb = PMIEmbedding(n_components=d_model, window=3, min_count=1, tokenizer=tokenizer,
                       random_state=seed).fit(corpus)
    vectors = np.stack([emb.embeddings_[emb.vocabulary_[t]] if t in emb.vocabulary_
                        else np.zeros(emb.embeddings_.shape[1]) for t in tokens])
    # Unit variance per coordinate (norm sqrt(d)), the scale LayerNorm gives a transformer.
    vectors = vectors * np.sqrt(d_model) / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12)
    x = SinusoidalPositionalEncoding(vectors.shape[1]).forward(vectors[None])
    mha = MultiHeadAttention(vectors.shape[1], n_heads, rng=np.random.default_rng(seed))
    _, weights = mha.forward(x, x, x, need_weights=True, average_attn_weights=False)
    return tokens, weights[0]
