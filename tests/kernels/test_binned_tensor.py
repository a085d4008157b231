"""The tensor error bound of the gaussian's binned local constant sums in d >= 2
(:func:`nlpfeat.kernels._binned._tensor_envelope`) against the exact sums."""
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nlpfeat.kernels import get_kernel
from nlpfeat.kernels._binned import BinnedSums, _Grid, target_scale
from nlpfeat.kernels._binned_bound import _axis_envelope, _lagrange, _lebesgue


def _exact_sums(X, V, Q, h):
    """Sums of K (K(0) = 1) and of V K at Q, exactly."""
    d2 = ((Q[:, None, :] - X[None, :, :]) / h) ** 2
    K = np.exp(-0.5 * d2.sum(axis=-1))
    return K.sum(axis=1), K @ V


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(2, 3), per=st.integers(1, 5))
@example(seed=1, d=2, per=1)     # lognormal: the bound holds, 2e5 times the error
def test_tensor_bound_holds_for_each_sum_on_coarse_grids(seed, d, per):
    """Every query inside the grid: the weight sum and the deviation sum are within
    their bounds of the exact sums, on grids from 1 to 5 nodes per bandwidth (where
    the errors are large enough to test the bound), skewed data, queries outside."""
    rng = np.random.default_rng(seed)
    n = 300
    X = rng.lognormal(size=(n, d)) if seed % 2 else rng.normal(size=(n, d))
    X *= rng.uniform(0.5, 2.0, size=d)
    y = np.sin(X.sum(axis=1)) + rng.normal(size=n)
    V = (y - y.mean())[:, None]
    scale = target_scale(V)
    h = float(rng.uniform(0.05, 1.0)) * np.ptp(X, axis=0).mean() / 4
    bins = np.maximum(1, np.ceil(np.ptp(X, axis=0) / h * per)).astype(int)
    sums = BinnedSums(X, V, get_kernel("gaussian"), h, bins, "lc", scale)
    assert sums.grid.tensor
    lo, hi = X.min(axis=0), X.max(axis=0)
    Q = rng.uniform(lo - h, hi + h, size=(200, d))
    S, B, inside = sums.gather(Q)
    S0, SV = _exact_sums(X, V, Q[inside], h)
    assert inside.sum() > 50
    err0 = np.abs(S[inside, 0] - S0)
    errv = np.abs(S[inside, 1] - SV[:, 0]) / scale[0]
    assert (err0 <= B[inside, 0]).all() and (errv <= B[inside, 1]).all()
    # not vacuous (d = 2: its pools are 2 cells wide): on normal data, within 1e3 times
    # the error where the error is above rounding (at most 478 over 80 seeds and 1 to 5
    # nodes per bandwidth; on lognormal data the median over a draw's queries reached
    # 1e5-1e7, its sparse tail's errors cancelling far below their absolute sum)
    big = err0 > 1e-9 * S0
    if d == 2 and seed % 2 == 0 and big.sum() > 10:
        assert np.median(B[inside, 0][big] / err0[big]) < 1e3


def test_tensor_envelope_bounds_the_one_dimensional_errors_between_its_samples():
    """The per-axis bound at each cell offset against the 1-D pair error of the binned
    kernel at random positions of the query and the point (not the sampled ones), for
    the stencils of d = 2 and d = 3 at 1 to 3 nodes per bandwidth."""
    rng = np.random.default_rng(3)
    kern = get_kernel("gaussian")
    for d, per in ((2, 1), (2, 3), (3, 2)):
        g = _Grid(np.zeros(d), np.full(d, 10.0), 1.0, np.full(d, 10 * per), kern)
        Kr = int(g.R[0]) + g.order + 1
        eps, gam = _axis_envelope(g, 0, Kr)
        s = 1.0 / per
        nodes = np.arange(g.order + 1) - (g.order - 1) // 2
        tx, tq = rng.uniform(size=4000), rng.uniform(size=4000)
        k = rng.integers(-Kr, Kr + 1, size=4000)
        wx, wq = _lagrange(tx, g.order), _lagrange(tq, g.order)
        f = lambda u: np.exp(-0.5 * (s * u) ** 2)     # noqa: E731
        Kn = f(k[:, None, None] + nodes[None, None, :] - nodes[None, :, None])
        approx = np.einsum("na,nab,nb->n", wx, Kn, wq)
        err = np.abs(approx - f(k + tq - tx))
        assert (err <= eps[Kr + k]).all() and (f(k + tq - tx) <= gam[Kr + k]).all()
        near = np.abs(k) < 4 * per                     # the margin is small
        assert np.median(err[near] / eps[Kr + k[near]]) > 0.05
    assert 1.5 < _lebesgue(9) < 1.6


def test_closed_columns_give_the_sums_and_bounds_of_all_columns():
    """Class indicators less their frequencies (the classifier's columns sum to zero):
    the last column's sums restored from the others' equal those spread directly."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 2))
    Y = np.eye(3)[rng.integers(0, 3, size=500)]
    V = Y - Y.mean(axis=0)
    scale = target_scale(Y, absolute=True)
    args = (X, V, get_kernel("gaussian"), 0.3, np.array([40, 40]), "lc", scale)
    full, closed = BinnedSums(*args), BinnedSums(*args, closed=True)
    assert closed.closed and closed.G.shape[0] == full.G.shape[0] - 1
    Q = rng.normal(size=(50, 2))
    (S, B, inside), (Sc, Bc, inside_c) = full.gather(Q), closed.gather(Q)
    np.testing.assert_array_equal(inside, inside_c)
    np.testing.assert_allclose(Sc, S, rtol=1e-12, atol=1e-12 * np.abs(S).max())
    np.testing.assert_array_equal(Bc, B)
