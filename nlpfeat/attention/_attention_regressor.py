"""AttentionRegressor: learned attention over the training set, Nadaraya-Watson's learned twin."""
import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin
from sklearn.utils import check_random_state

from nlpfeat._chunking import gen_row_chunks, map_chunks
from nlpfeat._docstrings import fill_doc
from nlpfeat._validation import (Integral, Interval, Real, StrOptions, check_2d, check_is_fitted,
                                 fit_context, validate_data)
from nlpfeat.attention._functional import masked_softmax
from nlpfeat.attention._memory_attention import (
    MemoryAttention,
    _scores,
    init_memory_params,
)
from nlpfeat.attention._training import (
    TRAINING_PARAMETER_CONSTRAINTS,
    fit_with_optimizer,
    standardise,
    standardised_queries,
    training_rows,
)

__all__ = ["AttentionRegressor"]

@fill_doc
class AttentionRegressor(MultiOutputMixin, RegressorMixin, BaseEstimator):
    """Learned attention over the training set: parametric Nadaraya-Watson regression.

    Each query (a sample) attends over a memory whose keys are the training inputs and
    whose values are the training targets; the prediction is the attention-weighted mean
    of the targets, mixed over heads by a linear value head. The scoring function's
    parameters are learned by minibatch Adam on the leave-one-out squared error: each
    training sample's own memory slot is masked, so it cannot copy its own target.

    Parameters
    ----------
    score_func : {"gaussian", "additive", "scaled_dot", "multidim"}, default="gaussian"
        ``"gaussian"``: ``-|(x - x_i) W|^2 / 2`` with one learned projection ``W``
        (d, d_k) per head, a learned metric; with ``d_k = d = 1`` it is the textbook
        ``-((x - x_i) w)^2 / 2``. ``"additive"``: ``v^T tanh(x W_q + x_i W_k)``.
        ``"scaled_dot"``: ``(x W_q + b_q)(x_i W_k)^T / sqrt(d_k)`` (a key bias would cancel).
        ``"multidim"``: ``tanh(x W_q + x_i W_k)`` with one entry per output, each output
        normalised over the memory with its own weights (multi-dimensional attention). Its
        scores lie in (-1, 1) and rise or fall with ``x_i W_k`` whatever the query, so one
        head cannot single out the samples near a query: on the example below R^2 is
        -0.02 with one head, 0.62 with four mixed by the value head (Gaussian: 0.94).
    n_heads : int, default=1
        Attention heads, each with its own scoring parameters.
    d_k : int, default=None
        Projection width per head; None means ``n_features`` for ``"gaussian"`` and 8
        otherwise. ``"multidim"`` has one hidden unit per output and takes no ``d_k``.
    value_head : bool, default=True
        Learn the mixing weights (and a bias) of the heads' outputs. False averages the
        heads, so with one head the prediction is exactly a Nadaraya-Watson estimate.
    learning_rate : float, default=1e-2
        Adam's step size (after warm-up).
    batch_size : int, default=32
        Queries per step (at most the number of training samples).
    max_iter : int, default=200
        Epochs at most (early stopping usually ends training well before).
    warmup_fraction : float, default=0.0
        Fraction of the ``max_iter * steps_per_epoch`` steps over which the learning rate
        rises linearly from 0 to ``learning_rate`` (then constant).
    early_stopping : bool or "auto", default="auto"
        Hold out ``validation_fraction`` of the data, stop when its loss stops improving
        and restore the best parameters. Validation queries attend over the other rows.
        ``"auto"`` does so from 20 samples on. :class:`SequenceAttentionRegressor`
        defaults to ``False`` on purpose: these defaults (``max_iter=200``, ``d_k``,
        ``max_memory``) were tuned with the held-out split, that network's were not, and
        turning it on there would change fitted models without a deprecation cycle.
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=10
        Epochs without an improvement of ``tol`` before stopping.
    tol : float, default=1e-4
    max_memory : int, default=256
        Memory slots each training step attends over. With more training samples, every
        step draws a fresh random subset of this size (a cost of ``batch_size *
        max_memory`` scores per step instead of ``batch_size * n_samples``). Prediction
        always attends over the full training set, in chunks of ``working_memory``.
    working_memory : float, default=None
        MiB per chunk of the query-by-memory score matrix at prediction; None means
        scikit-learn's ``working_memory`` configuration when set, else nlpfeat's 4 MiB.
    n_jobs : int, default=None
        Threads over query chunks for ``predict`` and ``attention_weights``; results do
        not depend on it. None means 1, -1 all cores.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial parameters, the shuffling and the memory subsets.
    verbose : int, default=0
        Show a tqdm progress bar with the loss.
    dtype : {np.float64, np.float32}, default=np.float64

    Attributes
    ----------
    params_ : dict of str -> ndarray
        Learned parameters, in standardised units (inputs and targets are standardised
        internally): ``W`` (H, d, d_k) or ``W_q``, ``W_k`` (and ``b_q`` or ``v``; (H,
        n_outputs, d) for ``"multidim"``),
        ``value_weight`` (H, n_outputs), ``value_bias`` (n_outputs,).
    memory_X_ : ndarray of shape (n_samples, n_features)
        The standardised training inputs (the keys).
    memory_y_ : ndarray of shape (n_samples, n_outputs)
        The standardised training targets (the values).
    loss_curve_ : list of float
        Mean leave-one-out training loss (0.5 * squared error, standardised) per epoch.
    validation_loss_curve_ : list of float or None
        Validation loss per epoch with ``early_stopping``.
    n_iter_ : int
        Epochs run.
    t_ : int
        Optimiser steps taken.
    n_features_in_ : int

    See Also
    --------
    nlpfeat.kernels.NadarayaWatsonRegressor : the same estimate with a fixed bandwidth.
    SequenceAttentionRegressor : attention within each sample's sequence.

    Notes
    -----
    Cost: each training step scores ``batch_size * max_memory * n_heads`` (query, key)
    pairs, so an epoch costs about ``n_samples * max_memory * n_heads * d_k`` operations;
    early stopping (on by default from 20 samples) usually ends training after 15-25
    epochs, so the defaults fit small tabular data in seconds without a ConvergenceWarning
    (timings in ``benchmarks/RESULTS.md``).

    With one Gaussian head, ``value_head=False`` and 1-D inputs,

    .. math:: f(x) = \\sum_i \\mathrm{softmax}_i\\left(-\\tfrac{1}{2}((x - x_i) w)^2\\right) y_i,

    the parametric attention pooling of the textbooks, with ``w`` an inverse bandwidth
    learned by gradient descent on the leave-one-out error. Predicting on the training
    set itself lets each point see its own target, as for any kernel smoother.

    %(numerical_contract)s

    Examples
    --------
    >>> from nlpfeat.attention import AttentionRegressor
    >>> from nlpfeat.datasets import make_nw_regression
    >>> X, y, f = make_nw_regression(100, noise=0.5, return_true=True, random_state=0)
    >>> reg = AttentionRegressor(learning_rate=0.05, max_iter=50, random_state=0).fit(X, y)
    >>> reg.attention_weights(X[:2]).shape          # (n_queries, n_keys)
    (2, 100)
    >>> print(round(reg.score(X, f), 2))       # R^2 against the noiseless curve
    0.93
    """

    _parameter_constraints = {
        "score_func": [StrOptions({"gaussian", "additive", "scaled_dot", "multidim"})],
        "n_heads": [Interval(Integral, 1, None, closed="left")],
        "d_k": [Interval(Integral, 1, None, closed="left"), None],
        "value_head": ["boolean"],
        "max_memory": [Interval(Integral, 1, None, closed="left")],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "n_jobs": [Integral, None],
        **TRAINING_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, score_func="gaussian", *, n_heads=1, d_k=None, value_head=True,
                 learning_rate=1e-2, batch_size=32, max_iter=200, warmup_fraction=0.0,
                 early_stopping="auto", validation_fraction=0.1, n_iter_no_change=10,
                 tol=1e-4, max_memory=256, working_memory=None, n_jobs=None,
                 random_state=None, verbose=0, dtype=np.float64):
        self.score_func = score_func
        self.n_heads = n_heads
        self.d_k = d_k
        self.value_head = value_head
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.warmup_fraction = warmup_fraction
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.max_memory = max_memory
        self.working_memory = working_memory
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.dtype = dtype

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the scoring parameters by leave-one-out minibatch Adam.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self : AttentionRegressor
        """
        X, y = validate_data(self, check_2d(X), y, dtype=self.dtype, y_numeric=True,
                             multi_output=True)
        if self.score_func == "multidim" and self.d_k is not None:
            raise ValueError(f"score_func='multidim' has one hidden unit per output, so it "
                             f"takes no d_k (got d_k={self.d_k}); leave d_k=None.")
        rng = check_random_state(self.random_state)
        Y = np.asarray(y, dtype=self.dtype).reshape(len(y), -1)
        self._y_1d = y.ndim == 1
        self.X_mean_, self.X_scale_ = standardise(X)
        self.y_mean_, self.y_scale_ = standardise(Y)
        Xs, Ys = (X - self.X_mean_) / self.X_scale_, (Y - self.y_mean_) / self.y_scale_
        d_k = self.d_k or (X.shape[1] if self.score_func == "gaussian" else 8)
        params = init_memory_params(self.score_func, X.shape[1], Y.shape[1], self.n_heads,
                                    d_k, min(len(X), self.max_memory), rng, self.dtype)
        train_idx, val_idx = training_rows(self, len(X), rng)
        model = MemoryAttention(params, self.score_func, Xs, Ys, train_idx, self.max_memory,
                                rng, train_value_head=self.value_head)
        fit_with_optimizer(self, model, train_idx, val_idx, rng)
        self.params_ = params
        self.memory_X_, self.memory_y_ = Xs, Ys
        return self

    def _model(self):
        return MemoryAttention(self.params_, self.score_func, self.memory_X_, self.memory_y_,
                               np.arange(len(self.memory_X_)), len(self.memory_X_), None)

    def _queries(self, X):
        check_is_fitted(self)
        X = validate_data(self, check_2d(X), dtype=self.dtype, reset=False)
        return standardised_queries(X, self.X_mean_, self.X_scale_)

    def _row_bytes(self):
        n_mem = len(self.memory_X_)
        if self.score_func == "multidim":  # scores, weights and tanh' per output
            width = 3 * self.memory_y_.shape[1]
        else:
            width = 3 + (self.params_["v"].shape[-1] if "v" in self.params_ else 0)
        return self.n_heads * n_mem * width * np.dtype(self.dtype).itemsize

    def predict(self, X):
        """Attention-weighted mean of the training targets for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_queries,) or (n_queries, n_outputs)
        """
        Xq, model = self._queries(X), self._model()
        out = np.empty((len(Xq), self.memory_y_.shape[1]), dtype=self.dtype)

        def fill(rows):
            out[rows] = model.forward(Xq[rows], self.memory_X_, self.memory_y_)[0]

        self._map_query_chunks(len(Xq), fill)
        out = out * self.y_scale_ + self.y_mean_
        return out.ravel() if self._y_1d else out

    def attention_weights(self, X, *, per_head=False):
        """Attention of each query over the memory (the whole training set).

        nlpfeat's convention for every estimator: ``(n_queries, n_keys)``, averaged over
        heads; ``per_head=True`` adds a leading heads axis. ``"multidim"`` weights each
        output on its own; these are their mean over the outputs.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
        per_head : bool, default=False
            Return each head's weights instead of their mean.

        Returns
        -------
        weights : ndarray of shape (n_queries, n_samples_fit), or (n_heads, n_queries, n_samples_fit) with ``per_head``
            Non-negative, each row summing to one.
        """
        Xq = self._queries(X)
        shape = (self.n_heads, len(Xq), len(self.memory_X_))
        out = np.empty(shape if per_head else shape[1:], dtype=self.dtype)

        def fill(rows):
            S, _ = _scores(self.params_, self.score_func, Xq[rows], self.memory_X_)
            W = masked_softmax(S, None)
            if W.ndim == 4:  # "multidim": one set of weights per output, averaged
                W = W.mean(axis=1)
            if per_head:
                out[:, rows] = W
            else:
                out[rows] = W.mean(axis=0)

        self._map_query_chunks(len(Xq), fill)
        return out

    def _map_query_chunks(self, n_queries, fill):
        """Run ``fill(rows)`` over query chunks of ``working_memory``, in ``n_jobs`` threads
        (each chunk writes its own rows: the same numbers for any ``n_jobs``)."""
        chunks = gen_row_chunks(n_queries, self._row_bytes(), self.working_memory)
        map_chunks(fill, chunks, n_jobs=self.n_jobs)

