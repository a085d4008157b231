"""The comparison's runs: cross-validate every model of every task, collect the rows,
the folds and the warnings, and hand them to the report and the figures."""
import os
import sys
import time
import warnings
from collections import Counter

import numpy as np
from threadpoolctl import threadpool_limits

from nlpfeat._progress import progress_bar

from nlpfeat.compare._attention import attention_of, weight_agreement
from nlpfeat.compare._report import print_task, write_results
from nlpfeat.compare._tasks import (
    ALL_MODELS,
    REGRESSION_TASKS,
    TASKS,
    lee_vectorizer,
    pmi_embedding,
    polarity_model,
    pooling,
    regression_cv,
    regression_data,
    regression_model,
    select_models,
)


class _Warnings:
    """Warnings raised while fitting, counted per (task, model, category).

    A grid of models raises the same convergence or empty-support warning many times;
    the harness records each kind once with its count and reports it, instead of hiding
    it or printing it on every fold.
    """

    def __init__(self):
        self.counts = Counter()
        self.first = {}

    def record(self, task, model, caught):
        for w in caught:
            key = (task, model, w.category.__name__)
            self.counts[key] += 1
            text = " ".join(str(w.message).split())
            self.first.setdefault(key, text if len(text) <= 160 else text[:157] + "...")

    def as_rows(self):
        return [dict(task=t, model=m, category=c, first_message=self.first[(t, m, c)], count=n)
                for (t, m, c), n in self.counts.items()]

    def report(self, stream):
        if not self.counts:
            return
        print(f"\nwarnings raised while fitting ({sum(self.counts.values())} in all, one line "
              "per kind; also in results.json):", file=stream)
        for (task, model, category), n in self.counts.items():
            print(f"  {task}/{model}: {category} x{n}: {self.first[(task, model, category)]}",
                  file=stream)


def _cross_validate(model, X, y, *, cv, scoring, caught, task, name, **kwargs):
    from sklearn.model_selection import cross_validate

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = cross_validate(model, X, y, cv=cv, scoring=scoring, **kwargs)
    caught.record(task, name, seen)
    return res


def _row(task, name, metric, higher, scores, res, features):
    return dict(task=task, model=name, features=features, metric=metric,
                higher_is_better=higher, mean=float(np.mean(scores)), std=float(np.std(scores)),
                n_scores=len(scores), fit_seconds=float(np.mean(res["fit_time"])),
                predict_seconds=float(np.mean(res["score_time"])),
                weight_kl=np.nan, weight_corr=np.nan)


# ----------------------------------------------------------------------------- tasks
def _run_regression(task, names, quick, seed, progress, store, caught):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, metric, scoring = regression_data(task, quick, seed)
    cv = regression_cv(quick, seed)
    train, test = next(cv.split(X))
    # What the figures need: the data, the first fold's rows and each model fitted on them.
    fitted = store.setdefault(task, dict(X=X, y=y, train=train, test=test, models={},
                                         rows={}, folds=list(cv.split(X))))
    reference = None
    rows = []
    for name in names:
        model = make_pipeline(StandardScaler(), regression_model(name, X.shape[1], quick, seed))
        res = _cross_validate(model, X, y, cv=cv, scoring=scoring, caught=caught, task=task,
                              name=name, return_estimator=True)
        scores = -res["test_score"] if metric == "mse" else res["test_score"]
        row = _row(task, name, metric, metric != "mse", scores, res, "tabular")
        weights = attention_of(res["estimator"][0], X[test])
        if name == "nw-gaussian":
            reference = weights
        elif reference is not None and weights is not None and not name.startswith("nw-"):
            row["weight_kl"], row["weight_corr"] = weight_agreement(reference, weights)
        rows.append(row)
        fitted["models"][name] = res["estimator"][0]
        fitted["rows"][name] = row
        progress.update(1)
    return rows


def _run_polarity(names, quick, seed, progress, store, caught):
    from sklearn.model_selection import RepeatedStratifiedKFold

    from nlpfeat.datasets import load_lee, load_polarity

    data = load_polarity()
    docs, target = list(data.data), np.asarray(data.target)
    # Embeddings learned without labels from the Lee background news and the sentences.
    embedding = pmi_embedding(list(load_lee().background) + docs, seed, quick)
    cv = RepeatedStratifiedKFold(n_splits=3 if quick else 5, n_repeats=1 if quick else 4,
                                 random_state=seed)
    store["polarity"] = dict(folds=list(cv.split(docs, target)))
    rows = []
    for name in names:
        model, features = polarity_model(name, embedding, seed)
        res = _cross_validate(model, docs, target, cv=cv, scoring="accuracy", caught=caught,
                              task="polarity", name=name)
        rows.append(_row("polarity", name, "accuracy", True, res["test_score"], res, features))
        progress.update(1)
    return rows


def _pearson_bootstrap(model_sims, human, seed, n_boot=200):
    rng = np.random.RandomState(seed)
    r = float(np.corrcoef(model_sims, human)[0, 1])
    idx = rng.randint(0, len(human), size=(n_boot, len(human)))
    boots = [np.corrcoef(model_sims[i], human[i])[0, 1] for i in idx]
    return r, float(np.std(boots))


def _run_lee(names, quick, seed, progress, store, caught):
    from sklearn.preprocessing import normalize

    from nlpfeat.datasets import load_lee

    lee = load_lee()
    upper = np.triu_indices(len(lee.test), k=1)
    human = lee.similarity[upper]
    embedding = None
    rows = []
    for name in names:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            vectorizer = lee_vectorizer(name, seed, quick)
            start = time.perf_counter()
            if isinstance(vectorizer, str):
                if embedding is None:
                    embedding = pmi_embedding(list(lee.background), seed, quick)
                vectorizer = pooling(name, embedding)
            vectorizer.fit(list(lee.background))
            fit_seconds = time.perf_counter() - start
            start = time.perf_counter()
            V = normalize(vectorizer.transform(list(lee.test)))
        caught.record("lee", name, seen)
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


def _check_choices(tasks, models, with_torch):
    """Refuse unknown tasks and models, and ``with_torch`` without torch, before any work."""
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise ValueError(f"unknown task(s) {unknown}; choose among {list(TASKS)}.")
    if models is not None and any(m not in ALL_MODELS for m in models):
        bad = [m for m in models if m not in ALL_MODELS]
        raise ValueError(f"unknown model(s) {bad}; choose among {list(ALL_MODELS)}.")
    if with_torch:
        from nlpfeat._validation import import_optional

        import_optional("torch", "torch", "nlpfeat compare --with-torch")


def _check_plan(plan, models, with_torch):
    """Refuse a run in which no asked-for model applies to any asked-for task (it would
    write a table of headers only), naming the models each task takes."""
    if any(plan.values()):
        return
    takes = "; ".join(f"{task}: {', '.join(select_models(task, None, True))}" for task in plan)
    torch_applies = any(select_models(task, models, True) for task in plan)
    hint = " (torch-mha needs with_torch)" if torch_applies and not with_torch else ""
    raise ValueError(f"no model of {list(models)} applies to the task(s) {list(plan)}"
                     f"{hint}; the models of each task are {takes}.")


def _progress_bar(progress, total):
    """A tqdm bar on stderr over the models to run, or one that shows nothing."""
    return progress_bar(progress, "nlpfeat compare", total=total, unit="model")


def _save_figures(store, out, caught):
    """Write the figures; the warnings drawing them raises are reported with the models'."""
    from nlpfeat.compare._figures import save_figures

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        written = save_figures(store, out)
    caught.record("figures", "sine", seen)
    return written


def run_comparison(tasks=None, models=None, out="nlpfeat-compare", seed=0, quick=False,
                   with_torch=False, plots=True, progress=True, stream=None,
                   return_folds=False):
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
    return_folds : bool, default=False
        Also return the cross-validation folds each task used.

    Returns
    -------
    rows : list of dict
        One dict per (task, model), with the columns of ``results.csv``.
    folds : dict
        Only with ``return_folds``: ``{task: [(train_indices, test_indices), ...]}`` for
        the regression and polarity tasks (Lee is scored on all its rated pairs).

    Notes
    -----
    The models are fitted with one BLAS thread (threadpoolctl): the problems are too small
    for BLAS threads to pay off (figures in ``benchmarks/RESULTS.md``).

    Examples
    --------
    >>> import io, os, tempfile
    >>> from nlpfeat.compare import run_comparison
    >>> with tempfile.TemporaryDirectory() as out:
    ...     rows = run_comparison(tasks=["sine"], models=["ridge", "knn"], out=out,
    ...                           quick=True, plots=False, progress=False,
    ...                           stream=io.StringIO())
    ...     written = sorted(os.listdir(out))
    >>> written
    ['results.csv', 'results.json']
    >>> sorted((row["task"], row["model"], row["metric"]) for row in rows)
    [('sine', 'knn', 'mse'), ('sine', 'ridge', 'mse')]
    """
    stream = stream or sys.stdout
    tasks = list(TASKS) if tasks is None else list(tasks)
    _check_choices(tasks, models, with_torch)
    options = dict(tasks=tasks, models=models, seed=seed, quick=quick, with_torch=with_torch,
                   plots=plots)
    plan = {task: select_models(task, models, with_torch) for task in tasks}
    _check_plan(plan, models, with_torch)
    bar = _progress_bar(progress, sum(len(v) for v in plan.values()))
    rows, store, caught, folds = [], {}, _Warnings(), {}
    runners = {"polarity": _run_polarity, "lee": _run_lee}
    limits = threadpool_limits(limits=1)
    try:
        for task, names in plan.items():
            if not names:
                continue
            if task in REGRESSION_TASKS:
                task_rows = _run_regression(task, names, quick, seed, bar, store, caught)
            else:
                task_rows = runners[task](names, quick, seed, bar, store, caught)
            folds[task] = store.get(task, {}).get("folds")
            rows.extend(task_rows)
            bar.clear()
            print_task(task, task_rows, stream)
            write_results(rows, out, options=options, warnings_seen=caught.as_rows())
    finally:
        bar.close()
        limits.restore_original_limits()
    written = _save_figures(store, out, caught) if plots else []
    caught.report(stream)
    write_results(rows, out, options=options, warnings_seen=caught.as_rows())
    print(f"\nwrote {os.path.join(out, 'results.csv')}, results.json"
          + "".join(f", {os.path.basename(p)}" for p in written if p.endswith(".png")), file=stream)
    for note in written:
        if not note.endswith(".png"):
            print(note, file=stream)
    return (rows, folds) if return_folds else rows


