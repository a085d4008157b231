"""SequenceAttentionRegressor: a small transformer encoder as a scikit-learn regressor."""
import copy

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, MultiOutputMixin, RegressorMixin
from sklearn.utils import check_random_state

from nlpfeat._chunking import gen_row_chunks, map_chunks
from nlpfeat._docstrings import fill_doc
from nlpfeat._validation import (Integral, Interval, Real, StrOptions, check_is_fitted,
                                 fit_context, validate_data)
from nlpfeat.attention._init import INIT_SCHEMES, check_rng
from nlpfeat.attention._sequence_network import SequenceNetwork
from nlpfeat.attention._training import (
    TRAINING_PARAMETER_CONSTRAINTS,
    fit_with_optimizer,
    standardise,
    standardised_queries,
    training_rows,
)

__all__ = ["SequenceAttentionRegressor"]

_SHAPES = ("(n_samples, seq_len, n_token_features), or 2-D (n_samples, seq_len * "
           "n_token_features) with seq_len set")


def _has_sequences(arr):
    """Whether a 1-D object array holds lists/arrays (ragged sequences), not scalars."""
    return arr.size > 0 and isinstance(arr.flat[0], (list, tuple, np.ndarray))


class _TrainingModel:
    """The training-loop protocol (``params``, ``grads``, ``step_loss``, ``eval_loss``)."""

    def __init__(self, network, X, Y):
        self.network, self.X, self.Y = network, X, Y
        self.params = network.params
        self.grads = {}

    def _loss(self, idx):
        diff = self.network.forward(self.X[idx]) - self.Y[idx]
        return 0.5 * float(np.mean(diff * diff)), diff / diff.size

    def step_loss(self, idx):
        loss, d_pred = self._loss(idx)
        self.network.backward(d_pred)
        self.grads = self.network.grads
        return loss

    def eval_loss(self, idx):
        self.network.eval()
        try:
            return self._loss(idx)[0]
        finally:
            self.network.train()


@fill_doc
class SequenceAttentionRegressor(MultiOutputMixin, RegressorMixin, BaseEstimator):
    """A transformer encoder over each sample's sequence, trained by minibatch Adam.

    Each sample is a sequence of ``seq_len`` tokens with ``n_token_features`` features. A
    linear map lifts tokens to ``d_model``, a positional encoding is added, ``n_layers``
    :class:`~nlpfeat.attention.layers.TransformerEncoderLayer` blocks attend within the
    sequence, and a linear map gives the outputs: one vector per position
    (``output="sequence"``), or one per sample after mean pooling (``"mean"``) or from the
    last position (``"last"``). Inputs and targets are standardised internally.

    Parameters
    ----------
    seq_len : int, default=None
        Sequence length L when X is 2-D of shape (n_samples, L * n_token_features). None
        with 2-D X means one scalar token per column (L = n_features); ignored for 3-D X.
    output : {"mean", "last", "sequence"}, default="mean"
        ``"sequence"`` needs y of shape (n_samples, L * n_outputs) (position-major) and
        predicts that shape.
    n_layers : int, default=2
    d_model : int, default=32
    n_heads : int, default=4
        Must divide ``d_model``.
    n_kv_heads : int, default=None
        Key/value heads (grouped-query attention; 1 = multi-query); must divide ``n_heads``.
    dim_feedforward : int, default=64
    dropout : float, default=0.0
    activation : {"relu", "gelu"}, default="relu"
    causal : bool, default=False
        Each position attends only to itself and earlier positions.
    positional : {"sinusoidal", "learned", "rope"} or None, default="sinusoidal"
    norm_first : bool, default=True
        Pre-norm blocks (stable without warm-up) and a final LayerNorm; False is the
        original post-norm transformer.
    init : str, default="default"
        PyTorch's defaults, or a scheme of :func:`nlpfeat.attention.optim.init_array`
        applied to every weight matrix.
    learning_rate : float, default=1e-3
    batch_size : int, default=32
    max_iter : int, default=100
        Epochs at most.
    warmup_fraction : float, default=0.1
        Fraction of the steps with a linear learning-rate warm-up from 0.
    max_grad_norm : float, default=None
        Clip the global gradient norm before each step.
    early_stopping : bool or "auto", default=False
        As :class:`AttentionRegressor`, whose default is ``"auto"``; ``False`` here on
        purpose: this network's defaults were not tuned with a held-out split, so every
        sample trains for all ``max_iter`` epochs unless asked. Switching the default
        would follow scikit-learn's practice (a ``FutureWarning`` first).
    validation_fraction, n_iter_no_change, tol
        As :class:`AttentionRegressor`.
    working_memory : float, default=None
        MiB that the activations of one chunk of samples may take at prediction (None:
        scikit-learn's ``working_memory`` configuration when set, else nlpfeat's 4 MiB).
    n_jobs : int, default=None
        Threads for prediction and ``attention_weights`` (chunks of samples, each thread
        on its own copy of the network); results do not depend on it. None means 1.
    random_state : int, RandomState instance or None, default=None
    verbose : int, default=0
        Show a tqdm progress bar with the loss.
    dtype : {np.float64, np.float32}, default=np.float64

    Attributes
    ----------
    network_ : SequenceNetwork
        The trained layers; ``network_.params`` maps PyTorch-style names to arrays.
    seq_len_, n_token_features_, n_outputs_ : int
    loss_curve_, validation_loss_curve_, n_iter_, t_, n_features_in_
        As :class:`AttentionRegressor`.

    Notes
    -----
    %(numerical_contract)s

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.attention import SequenceAttentionRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(64, 6, 2))            # 64 sequences of 6 tokens, 2 features
    >>> y = X[:, :, 0].max(axis=1)
    >>> reg = SequenceAttentionRegressor(max_iter=5, random_state=0).fit(X, y)
    >>> reg.predict(X[:3]).shape, reg.attention_weights(X[:3]).shape   # (n, L, L)
    ((3,), (3, 6, 6))
    """

    _parameter_constraints = {
        "seq_len": [Interval(Integral, 1, None, closed="left"), None],
        "output": [StrOptions({"sequence", "mean", "last"})],
        "n_layers": [Interval(Integral, 1, None, closed="left")],
        "d_model": [Interval(Integral, 1, None, closed="left")],
        "n_heads": [Interval(Integral, 1, None, closed="left")],
        "n_kv_heads": [Interval(Integral, 1, None, closed="left"), None],
        "dim_feedforward": [Interval(Integral, 1, None, closed="left")],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "activation": [StrOptions({"relu", "gelu"})],
        "causal": ["boolean"],
        "positional": [StrOptions({"sinusoidal", "learned", "rope"}), None],
        "norm_first": ["boolean"],
        "init": [StrOptions(set(INIT_SCHEMES))],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither"), None],
        "working_memory": [Interval(Real, 0, None, closed="neither"), None],
        "n_jobs": [Integral, None],
        **TRAINING_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, seq_len=None, *, output="mean", n_layers=2, d_model=32, n_heads=4,
                 n_kv_heads=None, dim_feedforward=64, dropout=0.0, activation="relu",
                 causal=False, positional="sinusoidal", norm_first=True, init="default",
                 learning_rate=1e-3, batch_size=32, max_iter=100, warmup_fraction=0.1,
                 max_grad_norm=None, early_stopping=False, validation_fraction=0.1,
                 n_iter_no_change=10, tol=1e-4, working_memory=None, n_jobs=None,
                 random_state=None, verbose=0, dtype=np.float64):
        self.seq_len = seq_len
        self.output = output
        self.n_layers = n_layers
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.dim_feedforward = dim_feedforward
        self.dropout = dropout
        self.activation = activation
        self.causal = causal
        self.positional = positional
        self.norm_first = norm_first
        self.init = init
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.warmup_fraction = warmup_fraction
        self.max_grad_norm = max_grad_norm
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.working_memory = working_memory
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.dtype = dtype

    def _flatten(self, X):
        """3-D -> 2-D (n, L*d) plus the (L, d) it had; 2-D passes through; else ValueError."""
        if sp.issparse(X) or not hasattr(X, "__len__"):
            return X, None
        try:
            arr = np.asarray(X)
        except ValueError:  # numpy's "inhomogeneous shape": ragged sequences
            arr = None
        if arr is None or (arr.dtype == object and arr.ndim == 1 and _has_sequences(arr)):
            raise ValueError(
                f"X holds sequences of different lengths (or tokens with different numbers "
                f"of features); expected X of shape {_SHAPES}. Pad or truncate every "
                f"sequence to one length first.")
        if arr.ndim == 3:
            return arr.reshape(len(arr), -1), arr.shape[1:]
        if arr.ndim != 2:
            raise ValueError(f"Expected X of shape {_SHAPES}; got an array of shape "
                             f"{arr.shape}. Reshape your data, e.g. with "
                             f"X.reshape(n_samples, seq_len, n_token_features).")
        return X, None

    def _token_shape(self, n_features, shape3d):
        if shape3d is not None:
            return shape3d
        L = self.seq_len or n_features
        if n_features % L:
            raise ValueError(f"X has {n_features} columns, not a multiple of seq_len={L}; "
                             f"expected shape {_SHAPES}.")
        return L, n_features // L

    def _check_y(self, y):
        Y = np.asarray(y, dtype=self.dtype).reshape(len(y), -1)
        if self.output != "sequence":
            return Y
        L = self.seq_len_
        if y.ndim != 2 or Y.shape[1] % L:
            raise ValueError(f"output='sequence' needs y of shape (n_samples, seq_len * "
                             f"n_outputs) with seq_len={L}; got shape {y.shape}.")
        return Y.reshape(len(Y), L, -1)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train the encoder on sequences X and targets y.

        Parameters
        ----------
        X : array-like of shape (n_samples, L, d) or (n_samples, L * d)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs), or
            (n_samples, L * n_outputs) for ``output="sequence"``

        Returns
        -------
        self : SequenceAttentionRegressor
        """
        X, shape3d = self._flatten(X)
        X, y = validate_data(self, X, y, dtype=self.dtype, y_numeric=True, multi_output=True)
        rng = check_random_state(self.random_state)
        self.seq_len_, self.n_token_features_ = self._token_shape(X.shape[1], shape3d)
        Y = self._check_y(y)
        self._y_1d = y.ndim == 1
        X3 = X.reshape(len(X), self.seq_len_, self.n_token_features_)
        self.X_mean_, self.X_scale_ = standardise(X3.reshape(-1, self.n_token_features_))
        self.y_mean_, self.y_scale_ = standardise(Y.reshape(-1, Y.shape[-1]))
        self.n_outputs_ = Y.shape[-1]
        network = SequenceNetwork(
            self.n_token_features_, self.n_outputs_, self.seq_len_, n_layers=self.n_layers,
            d_model=self.d_model, n_heads=self.n_heads, n_kv_heads=self.n_kv_heads,
            dim_feedforward=self.dim_feedforward, dropout=self.dropout,
            activation=self.activation, causal=self.causal, positional=self.positional,
            norm_first=self.norm_first, output=self.output, init=self.init,
            rng=check_rng(rng), dtype=self.dtype)
        model = _TrainingModel(network, (X3 - self.X_mean_) / self.X_scale_,
                               (Y - self.y_mean_) / self.y_scale_)
        train_idx, val_idx = training_rows(self, len(X), rng)
        fit_with_optimizer(self, model, train_idx, val_idx, rng, self.max_grad_norm)
        self.network_ = network.eval()
        return self

    def _tokens(self, X):
        check_is_fitted(self)
        X, shape3d = self._flatten(X)
        if shape3d is not None and shape3d != (self.seq_len_, self.n_token_features_):
            raise ValueError(f"X has sequences of shape {shape3d}; this estimator was fitted "
                             f"on ({self.seq_len_}, {self.n_token_features_}).")
        X = validate_data(self, X, dtype=self.dtype, reset=False)
        X3 = X.reshape(len(X), self.seq_len_, self.n_token_features_)
        shape = X3.shape
        Z = standardised_queries(X3.reshape(-1, shape[-1]), self.X_mean_.reshape(-1),
                                 self.X_scale_.reshape(-1))
        return Z.reshape(shape)

    def _chunks(self, n):
        row = self.seq_len_ * (4 * self.d_model + self.dim_feedforward + 2 * self.n_heads *
                               self.seq_len_) * np.dtype(self.dtype).itemsize
        return gen_row_chunks(n, row, self.working_memory)

    def _forward_chunks(self, X3, read):
        """``[read(network) after network.forward(X3[rows]) for each chunk]``, in order.

        With ``n_jobs`` > 1 the chunks run in threads, each thread on its own copy of the
        trained network (a forward pass keeps per-layer state), so the results are those
        of one thread, bit for bit.
        """
        chunks = list(self._chunks(len(X3)))
        workers = min(effective_n_jobs(self.n_jobs), len(chunks))
        if workers <= 1:
            return [read(self.network_, self.network_.forward(X3[rows])) for rows in chunks]
        networks = [copy.deepcopy(self.network_) for _ in range(workers)]

        def run(worker):
            net = networks[worker]
            return [read(net, net.forward(X3[rows])) for rows in chunks[worker::workers]]

        per_worker = map_chunks(run, range(workers), n_jobs=workers)
        out = [None] * len(chunks)
        for worker, results in enumerate(per_worker):
            out[worker::workers] = results
        return out

    def predict(self, X):
        """Predict with the trained encoder (dropout off).

        Parameters
        ----------
        X : array-like of shape (n_samples, L, d) or (n_samples, L * d)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), (n_samples, n_outputs) or, for
            ``output="sequence"``, (n_samples, L * n_outputs)
        """
        X3 = self._tokens(X)
        parts = self._forward_chunks(X3, lambda network, pred: pred)
        out = np.concatenate(parts) * self.y_scale_ + self.y_mean_
        if self.output == "sequence":
            return out.reshape(len(out), -1)
        return out.ravel() if self._y_1d else out

    def attention_weights(self, X, *, per_head=False, layer=-1):
        """Self-attention weights of each sample's positions over its positions.

        nlpfeat's convention for every estimator: ``(n_queries, n_keys)`` per sample,
        averaged over heads, here of the last layer; ``per_head=True`` keeps a heads axis
        and ``layer="all"`` a layers axis.

        Parameters
        ----------
        X : array-like of shape (n_samples, L, d) or (n_samples, L * d)
        per_head : bool, default=False
            Each head's weights instead of their mean.
        layer : int or "all", default=-1
            Which encoder layer (negative counts from the last), or every layer.

        Returns
        -------
        weights : ndarray of shape (n_samples, L, L)
            Row ``i`` of ``weights[s]`` is how position ``i`` of sample ``s`` weights every
            position. ``layer="all"`` gives ``(n_samples, n_layers, L, L)``, ``per_head``
            ``(n_samples, [n_layers,] n_heads, L, L)``.
        """
        n_layers = self.n_layers
        if layer != "all" and not (isinstance(layer, (int, np.integer))
                                   and -n_layers <= layer < n_layers):
            raise ValueError(f"layer must be 'all' or an int in [-{n_layers}, {n_layers}); "
                             f"got {layer!r}.")
        X3 = self._tokens(X)
        parts = self._forward_chunks(X3, lambda network, _: network.attention_weights())
        # (n_layers, n_samples, n_heads, L, L) -> (n_samples, n_layers, n_heads, L, L)
        W = np.concatenate(parts, axis=1).swapaxes(0, 1)
        if layer != "all":
            W = W[:, layer]
        return W if per_head else W.mean(axis=-3)
