"""AttentionRegressor and SequenceAttentionRegressor: parity, properties, API and errors."""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from nlpfeat.attention import (
    AttentionRegressor,
    SequenceAttentionRegressor,
    TrainingDivergedError,
)
from nlpfeat.attention._memory_attention import (
    MemoryAttention,
    _scores,
    init_memory_params,
)
from nlpfeat.attention.functional import masked_softmax
from nlpfeat.datasets import make_nw_regression

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
SCORES = ["gaussian", "additive", "scaled_dot"]


@pytest.fixture(scope="module")
def toy():
    X, y = make_nw_regression(80, noise=0.5, random_state=0)
    return X, y


def seq_data(n=48, L=5, d=2, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, L, d))
    return X, X[:, :, 0].sum(axis=1)


SMALL_SEQ = {"n_layers": 1, "d_model": 8, "n_heads": 2, "dim_feedforward": 16, "max_iter": 3,
             "random_state": 0}


# --------------------------------------------------------------------------- the core


@pytest.mark.parametrize("score_func", [*SCORES, "multidim"])
@pytest.mark.parametrize("n_heads", [1, 3])
def test_memory_attention_backward_matches_finite_differences(score_func, n_heads):
    rng = np.random.RandomState(1)
    X, Y = rng.normal(size=(10, 3)), rng.normal(size=(10, 2))
    params = init_memory_params(score_func, 3, 2, n_heads, 4, 10, rng, np.float64)
    model = MemoryAttention(params, score_func, X, Y, np.arange(10), 100, rng)
    idx = np.array([0, 4, 7])
    model.step_loss(idx)
    for name, value in params.items():
        numeric = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            old = value[i]
            value[i] = old + 1e-6
            up = model.eval_loss(idx)
            value[i] = old - 1e-6
            numeric[i] = (up - model.eval_loss(idx)) / 2e-6
            value[i] = old
        np.testing.assert_allclose(model.grads[name], numeric, rtol=1e-6, atol=1e-9,
                                   err_msg=name)


def test_training_masks_each_query_own_slot():
    rng = np.random.RandomState(0)
    X, Y = rng.normal(size=(6, 2)), rng.normal(size=(6, 1))
    params = init_memory_params("gaussian", 2, 1, 2, 2, 6, rng, np.float64)
    model = MemoryAttention(params, "gaussian", X, Y, np.arange(6), 100, rng)
    idx = np.array([1, 4])
    _, _, cache = model._loss(idx, training=True)
    weights = cache[4]                                  # (H, B, M)
    np.testing.assert_array_equal(weights[:, [0, 1], idx], 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0)


def test_gaussian_loss_gradient_matches_torch_textbook(torch_one_thread):
    """One head, d_k = 1, no value head: d2l's NWKernelRegression with a learned w."""
    torch = torch_one_thread
    rng = np.random.RandomState(0)
    x, y = rng.uniform(0, 5, size=(30, 1)), rng.normal(size=(30, 1))
    params = init_memory_params("gaussian", 1, 1, 1, 1, 30, rng, np.float64)
    model = MemoryAttention(params, "gaussian", x, y, np.arange(30), 100, rng,
                            train_value_head=False)
    loss = model.step_loss(np.arange(30))
    w = torch.tensor(float(params["W"].ravel()[0]), dtype=torch.float64, requires_grad=True)
    xt, yt = torch.from_numpy(x[:, 0]), torch.from_numpy(y[:, 0])
    scores = -((xt[:, None] - xt[None, :]) * w) ** 2 / 2
    scores = scores.masked_fill(torch.eye(30, dtype=torch.bool), float("-inf"))
    pred = torch.softmax(scores, dim=1) @ yt
    t_loss = 0.5 * ((pred - yt) ** 2).mean()
    t_loss.backward()
    assert loss == pytest.approx(t_loss.item(), rel=1e-12)
    assert model.grads["W"].ravel()[0] == pytest.approx(w.grad.item(), rel=1e-10)


# ------------------------------------------------------------------- AttentionRegressor


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_one_gaussian_head_is_nadaraya_watson(toy):
    """value_head=False, one head: predictions equal NW with bandwidth scale_x / |w|."""
    sm = pytest.importorskip("statsmodels.nonparametric.api")
    X, y = toy
    reg = AttentionRegressor(value_head=False, max_iter=20, random_state=0).fit(X, y)
    bandwidth = reg.X_scale_[0] / abs(reg.params_["W"].ravel()[0])
    Xq = np.linspace(0, 5, 25)[:, None]
    expected, _ = sm.KernelReg(y, X, var_type="c", reg_type="lc", bw=[bandwidth]).fit(Xq)
    np.testing.assert_allclose(reg.predict(Xq), expected, rtol=1e-8)
    weights = reg.attention_weights(Xq)
    np.testing.assert_array_equal(reg.attention_weights(Xq, per_head=True)[0], weights)
    manual = np.exp(-0.5 * ((Xq - X.T) / bandwidth) ** 2)
    np.testing.assert_allclose(weights, manual / manual.sum(1, keepdims=True), rtol=1e-8)


def test_learned_bandwidth_fits_the_textbook_curve():
    X, y, f = make_nw_regression(100, noise=0.5, return_true=True, random_state=1)
    reg = AttentionRegressor(max_iter=60, learning_rate=5e-2, random_state=0).fit(X, y)
    assert reg.score(X, f) > 0.9
    assert reg.loss_curve_[-1] < reg.loss_curve_[0]


@pytest.mark.parametrize("seed", range(3))
def test_predictions_stay_in_the_convex_hull_of_targets(seed):
    rng = np.random.RandomState(seed)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40) * 10
    reg = AttentionRegressor("scaled_dot", n_heads=2, value_head=False, max_iter=3,
                             random_state=seed).fit(X, y)
    pred = reg.predict(rng.normal(scale=5, size=(30, 3)))
    assert y.min() - 1e-9 <= pred.min() and pred.max() <= y.max() + 1e-9


@pytest.mark.parametrize("score_func", SCORES)
def test_attention_weights_shape_and_rows(toy, score_func):
    X, y = toy
    reg = AttentionRegressor(score_func, n_heads=2, d_k=3, max_iter=2, random_state=0)
    weights = reg.fit(X, y).attention_weights(X[:7], per_head=True)
    assert weights.shape == (2, 7, len(X))
    assert (weights >= 0).all()
    np.testing.assert_allclose(weights.sum(-1), 1.0)
    mean = reg.attention_weights(X[:7])                 # the convention: (n_queries, n_keys)
    assert mean.shape == (7, len(X))
    np.testing.assert_allclose(mean, weights.mean(axis=0), rtol=1e-12)


def test_multidim_weights_each_output_on_its_own(toy):
    X, y = toy
    Y = np.column_stack([y, -y, np.sign(y)])
    reg = AttentionRegressor("multidim", n_heads=2, max_iter=2, random_state=0).fit(X, Y)
    assert reg.params_["W_q"].shape == (2, 3, 1)          # (heads, outputs, features)
    per_output = masked_softmax(_scores(reg.params_, "multidim", reg._queries(X[:4]),
                                        reg.memory_X_)[0])
    assert per_output.shape == (2, 3, 4, len(X))
    heads = reg.attention_weights(X[:4], per_head=True)
    np.testing.assert_allclose(heads, per_output.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(reg.attention_weights(X[:4]).sum(-1), 1.0, rtol=1e-12)
    pred = (per_output @ reg.memory_y_.T[:, :, None])[..., 0]   # (heads, outputs, queries)
    pred = np.einsum("hoq,ho->qo", pred, reg.params_["value_weight"]) + reg.params_[
        "value_bias"]
    np.testing.assert_allclose(reg.predict(X[:4]), pred * reg.y_scale_ + reg.y_mean_,
                               rtol=1e-12)
    with pytest.raises(ValueError, match="takes no d_k"):
        AttentionRegressor("multidim", d_k=4).fit(X, y)


def test_working_memory_and_memory_subsampling(toy):
    X, y = toy
    reg = AttentionRegressor(max_memory=20, max_iter=3, random_state=0).fit(X, y)
    assert reg.attention_weights(X[:3]).shape == (3, len(X))   # full memory at predict
    small = clone(reg).set_params(working_memory=1e-4).fit(X, y)
    np.testing.assert_allclose(small.predict(X), reg.predict(X), rtol=1e-12)


def test_multi_output_and_float32(toy):
    X, y = toy
    Y = np.column_stack([y, -2 * y])
    reg = AttentionRegressor(n_heads=2, max_iter=3, random_state=0).fit(X, Y)
    assert reg.predict(X[:4]).shape == (4, 2)
    r32 = AttentionRegressor(max_iter=3, random_state=0, dtype=np.float32).fit(X, y)
    r64 = AttentionRegressor(max_iter=3, random_state=0).fit(X, y)
    assert r32.predict(X).dtype == np.float32
    np.testing.assert_allclose(r32.predict(X), r64.predict(X), rtol=1e-3, atol=1e-3)


def test_early_stopping_records_validation_curve(toy):
    X, y = toy
    reg = AttentionRegressor(early_stopping=True, n_iter_no_change=2, max_iter=50,
                             random_state=0).fit(X, y)
    assert len(reg.validation_loss_curve_) == reg.n_iter_ == len(reg.loss_curve_)
    assert reg.n_iter_ < 50
    assert AttentionRegressor(max_iter=2, early_stopping=False).fit(
        X, y).validation_loss_curve_ is None


def test_auto_early_stopping_from_twenty_samples(toy):
    X, y = toy
    assert len(X) >= 20
    assert AttentionRegressor(max_iter=2).fit(X, y).validation_loss_curve_ is not None
    small = AttentionRegressor(max_iter=2).fit(X[:19], y[:19])
    assert small.validation_loss_curve_ is None


def test_defaults_fit_tabular_data_in_seconds_without_a_warning():
    # The case: additive score, 4 heads, scikit-learn's diabetes data (354 rows
    # to fit). Before: 100 epochs over 2048-slot memories, R^2 -0.35 and a
    # ConvergenceWarning; now early stopping ends it after ~20 epochs (no timing asserted).
    import warnings

    from sklearn.datasets import load_diabetes
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import train_test_split

    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=88, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        reg = AttentionRegressor("additive", n_heads=4, random_state=0).fit(Xtr, ytr)
    assert reg.n_iter_ < reg.max_iter
    assert reg.score(Xte, yte) > 0.2


def test_verbose_shows_a_progress_bar_with_the_loss(toy, capsys):
    X, y = toy
    AttentionRegressor(max_iter=2, verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "AttentionRegressor" in err and "loss=" in err


def test_deterministic_pickle_pipeline_gridsearch(toy, assert_best_is_argmax):
    X, y = toy
    a = AttentionRegressor("additive", d_k=4, max_iter=3, random_state=3).fit(X, y)
    b = AttentionRegressor("additive", d_k=4, max_iter=3, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).predict(X), a.predict(X))
    pipe = make_pipeline(StandardScaler(), AttentionRegressor(max_iter=2, random_state=0))
    search = GridSearchCV(pipe, {"attentionregressor__score_func": ["gaussian",
                                                                    "scaled_dot"]}, cv=2)
    search.fit(X, y)
    assert_best_is_argmax(search)


# ----------------------------------------------------------- SequenceAttentionRegressor


def test_sequence_3d_equals_2d_with_seq_len():
    X, y = seq_data()
    a = SequenceAttentionRegressor(**SMALL_SEQ).fit(X, y)
    b = SequenceAttentionRegressor(seq_len=5, **SMALL_SEQ).fit(X.reshape(len(X), -1), y)
    np.testing.assert_allclose(a.predict(X), b.predict(X.reshape(len(X), -1)), rtol=1e-12)
    assert a.n_features_in_ == 10 and (a.seq_len_, a.n_token_features_) == (5, 2)


def test_sequence_learns_a_sum():
    X, y = seq_data(n=160)
    Xt, yt = seq_data(n=60, seed=1)
    reg = SequenceAttentionRegressor(d_model=16, max_iter=25, learning_rate=1e-2,
                                     random_state=0).fit(X, y)
    assert reg.score(Xt, yt) > 0.8


@pytest.mark.parametrize("positional", ["sinusoidal", "learned", "rope", None])
def test_sequence_output_sequence_and_attention_shapes(positional):
    X, _ = seq_data(n=12)
    Y = np.cumsum(X[:, :, :1], axis=1).reshape(12, -1)                # (n, L * 1)
    reg = SequenceAttentionRegressor(output="sequence", positional=positional,
                                     n_kv_heads=1, **SMALL_SEQ).fit(X, Y)
    assert reg.predict(X).shape == (12, 5)
    weights = reg.attention_weights(X[:3], per_head=True, layer="all")
    assert weights.shape == (3, 1, 2, 5, 5)           # samples, layers, heads, L, L
    np.testing.assert_allclose(weights.sum(-1), 1.0)
    last = reg.attention_weights(X[:3])
    assert last.shape == (3, 5, 5)
    np.testing.assert_allclose(last, weights[:, -1].mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(reg.attention_weights(X[:3], layer=0, per_head=True),
                               weights[:, 0], rtol=1e-12)
    with pytest.raises(ValueError, match="layer must be"):
        reg.attention_weights(X[:3], layer=5)


def test_sequence_causal_ignores_the_future():
    X, _ = seq_data(n=16)
    Y = X[:, :, 0].copy()
    reg = SequenceAttentionRegressor(output="sequence", causal=True, **SMALL_SEQ).fit(X, Y)
    X2 = X.copy()
    X2[:, 3:] += 10.0
    np.testing.assert_allclose(reg.predict(X2)[:, :3], reg.predict(X)[:, :3], rtol=1e-12)
    assert np.allclose(np.triu(reg.attention_weights(X[:2]), k=1), 0.0)


@pytest.mark.parametrize("output", ["mean", "last"])
def test_sequence_float32_multi_output_pickle(output):
    X, y = seq_data(n=20)
    Y = np.column_stack([y, y ** 2])
    reg = SequenceAttentionRegressor(output=output, dtype=np.float32, **SMALL_SEQ).fit(X, Y)
    pred = reg.predict(X)
    assert pred.shape == (20, 2) and pred.dtype == np.float32
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), pred)
    again = clone(reg).fit(X, Y)
    np.testing.assert_array_equal(again.predict(X), pred)


def test_sequence_in_gridsearch(assert_best_is_argmax):
    X, y = seq_data(n=24)
    grid = GridSearchCV(SequenceAttentionRegressor(seq_len=5, **SMALL_SEQ),
                        {"n_heads": [1, 2]}, cv=2)
    grid.fit(X.reshape(24, -1), y)
    assert_best_is_argmax(grid)


def test_sequence_training_matches_torch(torch_one_thread):
    """200 Adam steps of the same network from identical weights and batches, in float64."""
    torch = torch_one_thread
    from nlpfeat.attention._sequence_network import SequenceNetwork
    from nlpfeat.attention.optim import Adam, make_schedule

    net = SequenceNetwork(2, 1, 5, n_layers=2, d_model=8, n_heads=2, n_kv_heads=None,
                          dim_feedforward=16, dropout=0.0, activation="gelu", causal=False,
                          positional="learned", norm_first=True, output="mean",
                          init="xavier_uniform", rng=np.random.default_rng(0),
                          dtype=np.float64)

    class Torch(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.input = torch.nn.Linear(2, 8)
            self.positional = torch.nn.Module()
            self.positional.weight = torch.nn.Parameter(torch.zeros(5, 8))
            self.layers = torch.nn.ModuleList([torch.nn.TransformerEncoderLayer(
                8, 2, 16, 0.0, "gelu", batch_first=True, norm_first=True) for _ in range(2)])
            self.norm = torch.nn.LayerNorm(8)
            self.output = torch.nn.Linear(8, 1)

        def forward(self, x):
            h = self.input(x) + self.positional.weight
            for layer in self.layers:
                h = layer(h)
            return self.output(self.norm(h).mean(dim=1))

    ref = Torch().double()
    ref.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in net.params.items()})
    sched = make_schedule("linear_warmup", 200, 0.1)
    opt = Adam(net.params, lr=1e-2, lr_schedule=sched)
    topt = torch.optim.Adam(ref.parameters(), lr=1e-2)
    tsched = torch.optim.lr_scheduler.LambdaLR(topt, sched)
    rng = np.random.default_rng(1)
    ours, theirs = [], []
    for _ in range(200):
        x = rng.normal(size=(8, 5, 2))
        t = x[:, :, :1].sum(axis=1)
        diff = net.forward(x) - t
        ours.append(0.5 * np.mean(diff ** 2))
        net.backward(diff / diff.size)
        opt.step(net.grads)
        topt.zero_grad()
        loss = 0.5 * ((ref(torch.from_numpy(x)) - torch.from_numpy(t)) ** 2).mean()
        loss.backward()
        topt.step()
        tsched.step()
        theirs.append(loss.item())
    np.testing.assert_allclose(ours, theirs, rtol=1e-8)
    assert ours[-1] < 0.5 * ours[0]


# ------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("Est", [AttentionRegressor, SequenceAttentionRegressor])
@pytest.mark.parametrize("where", ["X", "y"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_rejected_at_fit(Est, where, bad):
    X, y = seq_data(n=10)
    X = X.reshape(10, -1)
    (X if where == "X" else y)[3] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        Est(max_iter=1).fit(X, y)


@pytest.mark.parametrize("Est", [AttentionRegressor, SequenceAttentionRegressor])
def test_diverging_loss_stops_with_a_clear_error_and_leaves_unfitted(Est):
    X, y = seq_data(n=20)
    X = X.reshape(20, -1)
    est = Est(max_iter=2, random_state=0).fit(X, y)        # fitted before ...
    est.set_params(learning_rate=1e200)
    with pytest.raises(TrainingDivergedError, match=r"step \d+ \(learning rate 1e\+200\)"):
        est.fit(X, y)
    with pytest.raises(NotFittedError):                    # ... and unfitted after
        est.predict(X)
    assert isinstance(TrainingDivergedError("x"), (ValueError, FloatingPointError))


def test_sequence_head_divisibility_messages_suggest_values():
    X, y = seq_data(n=10)
    with pytest.raises(ValueError, match=r"choose n_heads among \[1, 2, 3, 4, 6, 12\]"):
        SequenceAttentionRegressor(d_model=12, n_heads=5, max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match=r"choose n_kv_heads among \[1, 2, 4\]"):
        SequenceAttentionRegressor(d_model=8, n_heads=4, n_kv_heads=3, max_iter=1).fit(X, y)


def test_sequence_shape_errors_state_the_expected_shape():
    X, y = seq_data(n=10)
    with pytest.raises(ValueError, match=r"Expected X of shape \(n_samples, seq_len, "):
        SequenceAttentionRegressor(max_iter=1).fit(X[..., None], y)
    with pytest.raises(ValueError, match="not a multiple of seq_len=3"):
        SequenceAttentionRegressor(seq_len=3, max_iter=1).fit(X.reshape(10, -1), y)
    with pytest.raises(ValueError, match=r"y of shape \(n_samples, seq_len \* n_outputs\)"):
        SequenceAttentionRegressor(output="sequence", max_iter=1).fit(X, np.ones((10, 7)))
    reg = SequenceAttentionRegressor(**SMALL_SEQ).fit(X, y)
    with pytest.raises(ValueError, match=r"fitted on \(5, 2\)"):
        reg.predict(X.reshape(10, 2, 5))
    with pytest.raises(ValueError, match="expecting 10 features"):
        reg.predict(X.reshape(10, -1)[:, :9])


def test_attention_regressor_shape_and_parameter_errors(toy):
    X, y = toy
    with pytest.raises(ValueError, match="X must be 2-D"):
        AttentionRegressor(max_iter=1).fit(X[:, 0], y)
    with pytest.raises(ValueError, match="score_func"):
        AttentionRegressor("dot").fit(X, y)
    with pytest.raises(ValueError, match="n_heads"):
        AttentionRegressor(n_heads=0).fit(X, y)
    reg = AttentionRegressor(max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="expecting 1 features"):
        reg.predict(np.ones((2, 3)))
    assert "score" not in reg.get_params()          # the score() method stays reachable


def test_attention_estimators_take_working_memory_and_n_jobs(toy):
    X, y = toy
    # n_jobs: the same chunks in threads, bit for bit; working_memory: other chunk sizes,
    # so BLAS may round differently (documented), equal to rounding.
    reg = AttentionRegressor(max_iter=3, working_memory=1e-3, random_state=0).fit(X, y)
    par = clone(reg).set_params(n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(par.predict(X), reg.predict(X))
    np.testing.assert_array_equal(par.attention_weights(X[:9]), reg.attention_weights(X[:9]))
    whole = clone(reg).set_params(working_memory=None).fit(X, y)
    np.testing.assert_allclose(whole.predict(X), reg.predict(X), rtol=1e-12)
    Xs, ys = seq_data(n=20)
    seq = SequenceAttentionRegressor(working_memory=1e-4, **SMALL_SEQ).fit(Xs, ys)
    par = clone(seq).set_params(n_jobs=2).fit(Xs, ys)
    np.testing.assert_array_equal(par.predict(Xs), seq.predict(Xs))
    np.testing.assert_array_equal(par.attention_weights(Xs), seq.attention_weights(Xs))
    whole = clone(seq).set_params(working_memory=None).fit(Xs, ys)
    np.testing.assert_allclose(whole.predict(Xs), seq.predict(Xs), rtol=1e-10)
