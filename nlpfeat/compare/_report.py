"""The comparison's report: console tables, ``results.csv`` and ``results.json``."""
import csv
import datetime
import json
import math
import os

from nlpfeat.compare._tasks import TASKS

COLUMNS = ["task", "model", "features", "metric", "higher_is_better", "mean", "std", "n_scores",
           "fit_seconds", "predict_seconds", "weight_kl", "weight_corr"]

AGREEMENT_NOTE = ("KL(NW||attn): mean KL divergence from the Nadaraya-Watson (Gaussian) weights "
                  "to the model's attention weights on the same queries, 0 when equal; "
                  "corr(NW,attn): correlation of all weights; blank for models without "
                  "learned attention.")


def _missing(value):
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_table(rows):
    """A plain-text table of one task's rows (best first by its metric's direction).

    Examples
    --------
    >>> row = dict(task="sine", model="ridge", features="tabular", metric="mse",
    ...            higher_is_better=False, mean=0.5, std=0.1, n_scores=5, fit_seconds=0.01,
    ...            predict_seconds=0.001, weight_kl=None, weight_corr=None)
    >>> print(format_table([row]).splitlines()[2].split())
    ['ridge', 'tabular', '0.5000', '±', '0.1000', '0.010', '0.001']
    """
    if not rows:
        return ""
    higher = rows[0]["higher_is_better"]
    ordered = sorted(rows, key=lambda r: -r["mean"] if higher else r["mean"])
    metric = rows[0]["metric"]
    head = (f"{'model':<22}{'features':<15}{metric + ' (mean ± std)':>24}{'fit s':>9}"
            f"{'predict s':>11}{'KL(NW||attn)':>14}{'corr(NW,attn)':>15}")
    lines = [head, "-" * len(head)]
    for r in ordered:
        kl = "" if _missing(r["weight_kl"]) else f"{r['weight_kl']:.3f}"
        corr = "" if _missing(r["weight_corr"]) else f"{r['weight_corr']:.3f}"
        lines.append(f"{r['model']:<22}{r['features']:<15}{r['mean']:>15.4f} ± {r['std']:<6.4f}"
                     f"{r['fit_seconds']:>9.3f}{r['predict_seconds']:>11.3f}{kl:>14}{corr:>15}")
    return "\n".join(lines)


def print_task(task, task_rows, stream):
    """The task's heading, what its spread means, its table and the agreement columns."""
    direction = "higher" if task_rows[0]["higher_is_better"] else "lower"
    spread = ("std over 200 bootstrap resamples of the rated pairs" if task == "lee"
              else f"mean ± std over {task_rows[0]['n_scores']} CV folds")
    print(f"\n== {task}: {TASKS[task]}\n   {task_rows[0]['metric']}, {direction} is "
          f"better; {spread}", file=stream)
    print(format_table(task_rows), file=stream, flush=True)
    if any(not _missing(r["weight_kl"]) for r in task_rows):
        print(f"   {AGREEMENT_NOTE}", file=stream, flush=True)


def write_results(rows, out, *, options, warnings_seen=()):
    """Write ``results.csv`` (missing cells empty, as pandas writes them) and ``results.json``.

    The JSON file holds the rows with the run's context: nlpfeat's version, the date, the
    seed and options, and the warnings the models raised. Both load as typed tables:
    ``pandas.read_csv(".../results.csv")`` gives one dtype per column (text, bool, int,
    float with NaN for a missing value) and ``pandas.DataFrame(json.load(fh)["rows"])``
    the same frame, its rows being records (one dict per row, ``null`` when missing).
    """
    from nlpfeat import __version__

    os.makedirs(out, exist_ok=True)
    clean = [{k: (None if _missing(row[k]) else row[k]) for k in COLUMNS} for row in rows]
    with open(os.path.join(out, "results.csv"), "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for row in clean:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    meta = {"nlpfeat_version": __version__,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "seed": options.get("seed"), "options": options, "rows": clean,
            "warnings": list(warnings_seen)}
    with open(os.path.join(out, "results.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1)
