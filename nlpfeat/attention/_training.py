"""The minibatch training loop shared by the attention estimators.

One loop, used by :class:`~nlpfeat.attention.AttentionRegressor` and
:class:`~nlpfeat.attention.SequenceAttentionRegressor`: shuffled minibatches per epoch,
a learning-rate schedule with linear warm-up, Adam, optional early stopping on a held-out
validation split (best parameters restored), a tqdm progress bar showing the loss, and a
guard that stops training with a clear error when the loss becomes NaN or infinite.

The model is anything with a ``params`` dict (name -> ndarray, updated in place), a
``step_loss(idx)`` method that computes the loss on the training rows ``idx`` and fills
its ``grads`` dict, and an ``eval_loss(idx)`` method (no gradients, no dropout).
"""
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from nlpfeat._progress import progress_bar
from nlpfeat._validation import Integral, Interval, Options, Real, StrOptions
from nlpfeat.attention._optim import Adam, clip_grad_norm, make_schedule

__all__ = ["TRAINING_PARAMETER_CONSTRAINTS", "TrainingDivergedError", "clear_fitted",
           "fit_with_optimizer", "split_validation", "standardise", "train", "training_rows"]


class TrainingDivergedError(ValueError, FloatingPointError):
    """The training loss became NaN or infinite; the estimator is left unfitted.

    A subclass of both ``ValueError`` and ``FloatingPointError``, so that code catching
    either sees it; its message names the step and the learning rate to lower.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.attention import AttentionRegressor, TrainingDivergedError
    >>> X = np.random.default_rng(0).normal(size=(20, 2))
    >>> reg = AttentionRegressor(learning_rate=1e200, max_iter=2, random_state=0)
    >>> try:
    ...     reg.fit(X, X[:, 0])
    ... except TrainingDivergedError as exc:
    ...     print(str(exc).split(":")[0])
    AttentionRegressor training diverged
    """


def clear_fitted(estimator):
    """Delete every fitted attribute (trailing ``_``) so ``check_is_fitted`` fails again."""
    for name in [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]:
        delattr(estimator, name)


def split_validation(n_samples, validation_fraction, rng):
    """Shuffle ``range(n_samples)`` into (train, validation) index arrays.

    At least one row on each side; raises ValueError when ``n_samples < 2``.
    """
    if n_samples < 2:
        raise ValueError(
            f"early_stopping=True needs at least 2 samples to hold out a validation set; "
            f"got n_samples={n_samples}. Pass more data or early_stopping=False."
        )
    n_val = min(max(1, int(round(validation_fraction * n_samples))), n_samples - 1)
    perm = rng.permutation(n_samples)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def _check_finite_loss(loss, step, lr, name):
    if not np.isfinite(loss):
        raise TrainingDivergedError(
            f"{name} training diverged: the loss became {loss} at step {step} "
            f"(learning rate {lr:.3g}). Lower learning_rate (e.g. {lr / 10:.3g}), "
            f"raise warmup_fraction or set max_grad_norm. The estimator is left unfitted."
        )


def _run_epoch(model, optimizer, train_idx, batch_size, rng, max_grad_norm, name):
    """One shuffled pass over ``train_idx``; returns the sample-weighted mean loss."""
    perm = train_idx[rng.permutation(len(train_idx))]
    total = 0.0
    for start in range(0, len(perm), batch_size):
        batch = perm[start:start + batch_size]
        loss = float(model.step_loss(batch))
        _check_finite_loss(loss, optimizer.n_steps + 1, optimizer.current_lr(), name)
        if max_grad_norm is not None:
            clip_grad_norm(model.grads, max_grad_norm)
        optimizer.step(model.grads)
        total += loss * len(batch)
    return total / len(perm)


def train(model, optimizer, *, train_idx, val_idx=None, batch_size, max_iter,
          n_iter_no_change, tol, rng, max_grad_norm=None, verbose=0, name="Estimator"):
    """Fit ``model`` in place; return a dict of training statistics.

    Parameters
    ----------
    model : object with ``params``, ``grads``, ``step_loss(idx)``, ``eval_loss(idx)``.
    optimizer : nlpfeat.attention.optim.Optimizer over ``model.params`` (its learning-rate
        schedule carries the warm-up).
    train_idx, val_idx : ndarray of int
        Rows to train on and, for early stopping, the held-out rows (or None); see
        :func:`split_validation`.
    batch_size, max_iter : int
        Rows per step, epochs at most.
    n_iter_no_change, tol
        scikit-learn's ``MLPRegressor`` meaning: stop once the monitored loss (validation
        loss with early stopping, else the training loss) has not improved by ``tol`` for
        ``n_iter_no_change`` epochs; with early stopping the best parameters are restored.
    rng : numpy.random.RandomState
    max_grad_norm : float or None
        Clip the global gradient norm before each step.

    Returns
    -------
    dict with ``loss_curve`` (mean training loss per epoch), ``validation_loss_curve``
    (or None), ``n_iter`` (epochs run) and ``t`` (optimizer steps).
    """
    batch_size = max(1, min(batch_size, len(train_idx)))
    monitor = _Monitor(model, val_idx, tol, n_iter_no_change)
    bar = progress_bar(verbose, name, total=max_iter, unit="epoch", leave=False)
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            for _ in range(max_iter):
                loss = _run_epoch(model, optimizer, train_idx, batch_size, rng,
                                  max_grad_norm, name)
                if monitor.end_epoch(loss, bar):
                    break
            else:
                warnings.warn(f"{name}: max_iter={max_iter} epochs reached and the loss is "
                              f"still improving; raise max_iter.", ConvergenceWarning)
    finally:
        bar.close()
    monitor.restore_best()
    return {"loss_curve": monitor.curve, "n_iter": len(monitor.curve), "t": optimizer.n_steps,
            "validation_loss_curve": monitor.val_curve if val_idx is not None else None}


class _Monitor:
    """Per-epoch bookkeeping: loss curves, the no-improvement count, the best parameters."""

    def __init__(self, model, val_idx, tol, n_iter_no_change):
        self.model, self.val_idx, self.tol, self.patience = model, val_idx, tol, n_iter_no_change
        self.curve, self.val_curve = [], []
        self.best, self.best_params, self.stale = np.inf, None, 0

    def end_epoch(self, train_loss, bar):
        """Record the epoch; True when training should stop."""
        self.curve.append(train_loss)
        monitored = train_loss
        if self.val_idx is not None:
            monitored = float(self.model.eval_loss(self.val_idx))
            self.val_curve.append(monitored)
        bar.update(1)
        extra = {"val_loss": f"{monitored:.4g}"} if self.val_idx is not None else {}
        bar.set_postfix(loss=f"{train_loss:.4g}", **extra)
        if self.val_idx is not None and monitored < self.best:
            self.best_params = {k: v.copy() for k, v in self.model.params.items()}
        self.stale = 0 if monitored < self.best - self.tol else self.stale + 1
        self.best = min(self.best, monitored)
        return self.stale >= self.patience

    def restore_best(self):
        """With early stopping, put back the parameters of the best validation epoch."""
        if self.best_params is not None:
            for k, v in self.best_params.items():
                self.model.params[k][...] = v


#: Parameters shared with SequenceAttentionRegressor (optimisation and bookkeeping).
TRAINING_PARAMETER_CONSTRAINTS = {
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "warmup_fraction": [Interval(Real, 0, 1, closed="left")],
    "early_stopping": ["boolean", StrOptions({"auto"})],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
    "dtype": [Options(type, {np.float32, np.float64})],
}


def standardise(A):
    """Column means and scales, as StandardScaler, scale-equivariant.

    The moments are taken in units of each column's power of two nearest its magnitude
    (an exact rescaling), so that squaring neither underflows for data near 1e-300 nor
    overflows for data near 1e300. A column is constant when its standard deviation is
    within rounding of zero *relative to its magnitude* (``std <= 10 eps max|a|``), so that
    rescaling the data never turns a varying feature into a constant one. A constant column
    is scaled by its magnitude, a column of zeros by the largest magnitude of the others,
    so that rescaling the data rescales every scale with it and a query off the constant
    value is treated alike at any magnitude. Only data that is zero everywhere has no
    scale: its columns are scaled by 1, and a query is read in its own units.
    """
    size = np.abs(A).max(axis=0) if len(A) else np.zeros(A.shape[1:], A.dtype)
    unit = power_of_two(size)
    mean = (A / unit).mean(axis=0) * unit
    scale = (A / unit).std(axis=0) * unit
    varies = scale > 10 * np.finfo(A.dtype).eps * size
    largest = size.max() if size.size else 0.0
    constant = np.where(size > 0, size, largest if largest > 0 else 1.0)
    return mean, np.where(varies, scale, constant).astype(A.dtype)


def power_of_two(size):
    """The power of two of each magnitude in ``size`` (1 for zeros): dividing by it is exact."""
    _, exponent = np.frexp(size)
    return np.ldexp(np.ones_like(size), np.where(size > 0, exponent, 1) - 1)


#: Standardised queries beyond this magnitude (in training standard deviations) are
#: rejected: their scores would overflow float64 (outside the numerical contract).
MAX_STANDARDISED = 1e100


def standardised_queries(X, mean, scale):
    """``(X - mean) / scale``, or a clear ValueError for a query too far to score."""
    with np.errstate(over="ignore", invalid="ignore"):
        Z = (X - mean) / scale
    # float32 data: squared scores must stay finite too
    limit = np.asarray(min(MAX_STANDARDISED, float(np.finfo(Z.dtype).max) ** 0.5), Z.dtype)
    bad = ~(np.abs(Z) <= limit)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"query row {row} lies {abs(float(Z[row, col])):.3g} training standard deviations "
            f"from the training data in feature {col} (beyond {float(limit):.0e}): its "
            f"attention scores would overflow float64. Rescale the data or drop the outlier.")
    return Z


#: ``early_stopping="auto"`` holds out a validation split from this many samples on.
AUTO_EARLY_STOPPING_MIN_SAMPLES = 20


def training_rows(estimator, n_samples, rng):
    """(train_idx, val_idx or None) as the estimator's early-stopping settings ask."""
    early = estimator.early_stopping
    if early == "auto":
        early = n_samples >= AUTO_EARLY_STOPPING_MIN_SAMPLES
    if early:
        return split_validation(n_samples, estimator.validation_fraction, rng)
    return np.arange(n_samples), None


def fit_with_optimizer(estimator, model, train_idx, val_idx, rng, max_grad_norm=None):
    """Run the shared training loop with Adam and the warm-up schedule; set the curves.

    On a diverging loss every fitted attribute is removed before the error propagates.
    """
    batch_size = max(1, min(estimator.batch_size, len(train_idx)))
    total = estimator.max_iter * -(-len(train_idx) // batch_size)
    schedule = make_schedule("linear_warmup", total, estimator.warmup_fraction)
    optimizer = Adam(model.params, lr=estimator.learning_rate, lr_schedule=schedule)
    try:
        stats = train(model, optimizer, train_idx=train_idx, val_idx=val_idx,
                      batch_size=batch_size, max_iter=estimator.max_iter,
                      n_iter_no_change=estimator.n_iter_no_change, tol=estimator.tol,
                      rng=rng, max_grad_norm=max_grad_norm, verbose=estimator.verbose,
                      name=type(estimator).__name__)
    except TrainingDivergedError:
        clear_fitted(estimator)
        raise
    estimator.loss_curve_ = stats["loss_curve"]
    estimator.validation_loss_curve_ = stats["validation_loss_curve"]
    estimator.n_iter_, estimator.t_ = stats["n_iter"], stats["t"]
