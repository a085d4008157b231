"""The compiled spreading, gathering and stencil weights of the binned grids against the
numpy stencil (:meth:`nlpfeat.kernels._binned._Grid.stencil`), and the certificate."""
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpfeat.kernels import NadarayaWatsonRegressor, get_kernel
from nlpfeat.kernels._binned import (
    BinnedSums,
    _Grid,
    _node_coords,
    _predictions,
    target_scale,
)
from nlpfeat.kernels._compiled._binning import gather, spread, stencil_weights


def _grid(rng, d, kernel, n):
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 5.0, size=d)
    X[0] = X[0].round()                       # a row on a node
    bins = rng.integers(1, 12, size=d)
    lo, span = X.min(axis=0), np.ptp(X, axis=0)
    return X, _Grid(lo, span, rng.uniform(0.2, 2.0), bins, get_kernel(kernel))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(1, 3),
       kernel=st.sampled_from(["gaussian", "epanechnikov"]))
def test_compiled_spread_and_gather_match_the_numpy_stencil(seed, d, kernel):
    rng = np.random.default_rng(seed)
    X, g = _grid(rng, d, kernel, int(rng.integers(1, 40)))
    V = rng.normal(size=(len(X), 2))
    idx, w, inside = g.stencil(X)
    assert inside.all()
    size = int(np.prod(g.shape))
    absolute = np.bincount(idx.ravel(), (np.abs(w) * V[:, :1]).ravel(), minlength=size)
    signed = np.stack([np.bincount(idx.ravel(), (w * V[:, c:c + 1]).ravel(), minlength=size)
                       for c in range(2)])
    for pool in (1, 3):
        fine, coarse = spread(np.ascontiguousarray(_node_coords(g, X)), V[:, :1].copy(), V,
                              g.order, np.asarray(g.shape, dtype=np.int64), pool)
        np.testing.assert_allclose(fine, signed, rtol=1e-12, atol=1e-12 * np.abs(V).max())
        blocks = [-(-s // pool) for s in g.shape]
        padded = np.pad(absolute.reshape(g.shape),
                        [(0, b * pool - s) for b, s in zip(blocks, g.shape)])
        ref = padded.reshape([x for b in blocks for x in (b, pool)]).sum(
            axis=tuple(range(1, 2 * d, 2)))
        np.testing.assert_allclose(coarse[0], ref.ravel(), rtol=1e-12,
                                   atol=1e-12 * np.abs(V).max())
    # gathering on the convolved grid, queries inside and outside
    Q = np.vstack([X + rng.normal(scale=0.3, size=X.shape), X.max(axis=0) + 100.0])
    size_out = int(np.prod(g.out_shape))
    G = rng.normal(size=(3, size_out))
    E = rng.uniform(size=(1, size_out))
    qi, qw, q_in = g.stencil(Q, out=True)
    S, B, got_in = gather(G, E, np.ascontiguousarray(_node_coords(g, Q, out=True)), g.order,
                          np.asarray(g.out_shape, dtype=np.int64),
                          np.asarray(g.margin, dtype=np.int64))
    np.testing.assert_array_equal(got_in, q_in)
    assert not got_in[-1]
    np.testing.assert_allclose(S[q_in], np.einsum("cnp,np->nc", G[:, qi], qw)[q_in],
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(B[q_in, 0], np.einsum("np,np->n", E[0, qi], np.abs(qw))[q_in],
                               rtol=1e-10)
    np.testing.assert_allclose(stencil_weights(np.ascontiguousarray(_node_coords(g, X)),
                                               g.order), w, rtol=1e-12, atol=1e-13)


def test_the_certificate_bounds_each_certified_prediction():
    """On grids coarse enough that the bound is close to the error, every query the
    certificate passes is within its own bound of the exact prediction (local constant)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 1))
    Y = (np.sin(3 * X[:, 0]) + 0.2 * rng.normal(size=2000))[:, None]
    Q = np.vstack([rng.normal(size=(300, 1)) * 1.3, [[6.0]]])
    h, kern = 0.1, get_kernel("gaussian")
    exact = NadarayaWatsonRegressor(bandwidth=h, algorithm="brute").fit(X, Y[:, 0]).predict(Q)
    scale = target_scale(Y)
    ratios = []
    for bins in (150, 300, 600):
        sums = BinnedSums(X, Y - Y.mean(axis=0), kern, h, np.array([bins]), "lc", scale)
        S, B, inside = sums.gather(Q)
        pred, _ = _predictions(S, B, "lc", 1, None, None, scale)
        ok = inside & (S[:, 0] > 2 * B[:, 0])
        bound = (B[ok, 1:2] + np.abs(pred[ok]) / scale * B[ok, 0:1]) \
            / (S[ok, 0] - B[ok, 0])[:, None]
        err = np.abs(pred[ok, 0] + Y.mean() - exact[ok]) / scale[0]
        assert ok.sum() > 100 and (err <= bound[:, 0]).all()
        ratios.append(np.median(err / bound[:, 0]))
    assert max(ratios) > 1e-4                           # the bound is not vacuous


def test_classifier_certificate_is_absolute():
    """Probabilities are bounded in absolute terms: a rare class does not tighten it."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 1))
    y = (X[:, 0] > 0).astype(int)
    y[:15] = 2                                          # rare class: std 0.07
    from nlpfeat.kernels import NadarayaWatsonClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = NadarayaWatsonClassifier(bandwidth=0.2, algorithm="binned").fit(X, y)
        ref = NadarayaWatsonClassifier(bandwidth=0.2, algorithm="brute").fit(X, y)
        Q = rng.normal(size=(200, 1))
        assert np.abs(clf.predict_proba(Q) - ref.predict_proba(Q)).max() <= 1e-6
    np.testing.assert_array_equal(clf._index.scale, np.ones(3))


def test_default_grids_certify_the_queries_inside_smooth_data():
    """The default grid is fine enough that its own certificate passes inside the data,
    for both fits (a grid too coarse for its certificate only adds exact work)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20000, 1))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=20000)
    Q = rng.uniform(-1.5, 1.5, size=(300, 1))
    for reg_type in ("lc", "ll"):
        reg = NadarayaWatsonRegressor(bandwidth="scott", reg_type=reg_type,
                                      algorithm="binned").fit(X, y)
        reg.predict(Q)
        assert reg._index.n_exact_ == 0, reg_type


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(1, 2), ray=st.booleans(),
       kernel=st.sampled_from(["gaussian", "epanechnikov", "tricube"]),
       reg_type=st.sampled_from(["lc", "ll"]))
def test_compiled_loo_pairs_match_the_numpy_rows(seed, d, ray, kernel, reg_type):
    """The (row, bandwidth) pairs the binned search scores exactly: the compiled batch
    equals numpy's ``loo_rows`` per bandwidth, tiny bandwidths (empty supports, nearest
    points) and duplicated rows included."""
    from nlpfeat.kernels._bandwidth import loo_rows
    from nlpfeat.kernels._compiled import loo_grid as compiled_loo_grid
    from nlpfeat.kernels._compiled import loo_pairs

    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    X = rng.normal(size=(n, d))
    X[1] = X[0]                                             # a tie
    Y = rng.normal(size=(n, 2))
    base = rng.uniform(0.2, 1.0, size=d)
    scales = np.geomspace(1e-3, 3.0, 5)
    grid = (scales[:, None] * base if ray else
            base * rng.uniform(1e-3, 3.0, size=(5, d)))
    rows = np.sort(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False))
    need = rng.random((len(rows), len(grid))) < 0.5
    need[0, 0] = True
    kern = get_kernel(kernel)
    P = loo_pairs(X, Y, kern, "euclidean", grid, rows, need, reg_type=reg_type)
    full = loo_pairs(X, Y, kern, "euclidean", grid, rows, np.ones_like(need),
                     reg_type=reg_type)
    np.testing.assert_array_equal(P[need], full[need])      # the mask skips, nothing else
    if reg_type == "ll":
        # local linear designs of a few points are ill-conditioned, where the two engines'
        # exact loo_grid differ too: every row through the pairs = the compiled loo_grid
        every = loo_pairs(X, Y, kern, "euclidean", grid, np.arange(n),
                          np.ones((n, len(grid)), bool), reg_type="ll")
        losses = ((every - Y[:, None, :]) ** 2).mean(axis=(0, 2))
        np.testing.assert_allclose(losses, compiled_loo_grid(X, Y, kern, "euclidean", grid,
                                                             reg_type="ll"), rtol=1e-12)
        return
    for g in np.flatnonzero(need.any(axis=0)):
        ref = loo_rows(X, Y, kern, grid[g], "euclidean", rows[need[:, g]])
        np.testing.assert_allclose(P[need[:, g], g], ref, rtol=1e-8, atol=1e-9)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(1, 3),
       kernel=st.sampled_from(["gaussian", "epanechnikov"]),
       reg_type=st.sampled_from(["lc", "ll"]))
def test_fused_loo_gather_matches_gather_less_the_numpy_self_terms(seed, d, kernel, reg_type):
    rng = np.random.default_rng(seed)
    X, g = _grid(rng, d, kernel, int(rng.integers(1, 40)))
    V = rng.normal(size=(len(X), 2))
    sums = BinnedSums(X, V, g.kern, g.h, np.asarray(g.shape) - g.order - 1, reg_type,
                      target_scale(V), g.lo, np.ptp(X, axis=0))
    S, B = sums.loo_gather(X, V)
    S0, B0, _ = sums.gather(X)
    scale = np.abs(S0).max()
    np.testing.assert_allclose(S, S0 - sums.self_terms(X, V), rtol=1e-10, atol=1e-12 * scale)
    np.testing.assert_array_equal(B, B0)
