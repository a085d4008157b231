"""Binned Nadaraya-Watson: kernel sums on a grid, for d <= 3 continuous features.

The training points are spread onto a regular grid (linear binning, or its higher-order
generalisation for smooth kernels: the weights of Lagrange interpolation on the 2 or 6
(10 for the gaussian in d = 2) nearest nodes per axis, so that a smooth function of the point's position
is reproduced to second or sixth (tenth) order); the grid of weights (and of weighted targets, and for local
linear fits the moment kernels ``u K(u)`` and ``u u^T K(u)``) is convolved with the
kernel sampled on the grid's offsets (FFT); the sums at a query are interpolated from the
convolved grid with the same stencil. Compact kernels are sampled exactly up to their
support; kernels of infinite support are cut where their tail falls below ``TAIL``.

Every query gets a certificate: an upper bound of the absolute error of its kernel sums
(the grid of counts convolved with an error envelope of one point, measured for the
kernel, the stencil and the spacing at fit time; in d >= 2 on blocks of nodes, see
:func:`_pooled_bound`) and, for local constant fits, of its prediction (the same with
each point's deviation from the mean, in units of std(y) per output, or absolute for
probabilities). The gaussian's local constant sums in d >= 2 have a tighter bound,
proven per axis and cell offset
(:func:`~nlpfeat.kernels._binned_bound._tensor_envelope`), read at the query's cell.
A query whose bound misses the target (a query outside the data, in a
sparse region, or a degenerate local linear design) is computed on the exact path, so
the documented bound holds for every query: predictions within ``1e-6 * std(y)`` of the
exact path. Spreading and gathering are compiled (:mod:`._compiled._binning`).
The polynomial kernels (epanechnikov, biweight, triweight) skip the grid: their sums are
exact, from running moments of sorted strips of the rows
(:class:`~nlpfeat.kernels._binned_poly.PolySums`, same interface and certificate).

Leave-one-out sums are the binned sums at each training point minus that point's own
contribution as the binned pipeline computed it (the stencil weights times the kernel
between its own nodes), so each bandwidth of a grid costs one spreading, one
convolution and one interpolation; the (row, bandwidth) pairs without a certificate are
scored exactly, all in one call after the grid pass (the compiled engine's
:func:`~nlpfeat.kernels._compiled.loo_pairs`: each row's distances once).
"""
import warnings
import weakref

import numpy as np
from scipy import fft as sfft

from nlpfeat.kernels import _binned_poly
from nlpfeat.kernels._binned_bound import _envelope, _lagrange, _lebesgue, _tensor_envelope
from nlpfeat.kernels._loss import EPS, local_solve, loss_grad, mean_loss

__all__ = ["MAX_FEATURES", "BinnedIndex", "BinnedRangeWarning", "BinnedSums",
           "bin_rows", "binned_loo_grid", "check_bins", "default_bins", "target_scale",
           "tau_from"]


class BinnedRangeWarning(UserWarning):
    """Queries of a model fitted on a dask array that its grid sums cannot certify."""


#: Kernels smooth enough for the quintic stencil (C-infinity at every distance).
_SMOOTH = frozenset({"gaussian", "logistic", "sigmoid"})
MAX_FEATURES = 3
#: Stencil order (odd) for the smooth kernels.
ORDER_SMOOTH = 5
#: The gaussian's grid where its tensor bound certifies a coarser one: stencil order and
#: nodes per bandwidth, per dimension.
_TENSOR_GRID = {2: (9, 6)}
#: Relative tail below which an infinite-support kernel is cut.
TAIL = 1e-14
#: Default grid nodes per bandwidth, per stencil order and dimension.
_PER_BANDWIDTH = {"smooth": {1: 12, 2: 16, 3: 10}, 1: {1: 400, 2: 48, 3: 16}}
#: Intervals per feature a default grid takes at least (when it stays small).
#: (local linear fits: a finer d=1 grid, as their certificate is the weight sums' only)
_MIN_BINS = {"lc": {1: 1024, 2: 256, 3: 48}, "ll": {1: 4096, 2: 256, 3: 48}}
#: Largest grid (nodes of the convolved grid) a default grid may take.
MAX_GRID = 2 ** 23
#: The documented bound: prediction error relative to std(y).
TARGET = 1e-6
#: Nodes per axis of the blocks on which the error bound is convolved, per dimension.
POOL = {1: 1, 2: 2, 3: 2}
#: Margin of the certificate over the sampled error envelope.
SAFETY = 2.0
#: Relative error bound of the weight sums that an explicit ``bins`` certifies.
EXPLICIT_TAU = 1e-3


def stencil_order(kern, d=1):
    """``ORDER_SMOOTH`` (Lagrange stencil) for the smooth kernels (the gaussian's in
    ``_TENSOR_GRID``), 1 (linear binning) otherwise."""
    if kern.family == "gaussian" and d in _TENSOR_GRID:
        return _TENSOR_GRID[d][0]
    return ORDER_SMOOTH if kern.family in _SMOOTH else 1


def reach(kern):
    """Radius (in bandwidths) beyond which the kernel is taken as zero (once per kernel:
    a grid of bandwidths asks for it twice a bandwidth)."""
    if kern.compact:
        return kern.radius
    r = _REACH.get(kern)
    if r is None:
        u = np.geomspace(1e-3, 1e4, 4000)
        small = kern.log_k(u) - kern.log_k(0.0) < np.log(TAIL)
        r = _REACH[kern] = float(u[np.argmax(small)])
    return r


_REACH = weakref.WeakKeyDictionary()


def default_bins(span, h, kern, reg_type="lc"):
    """Grid intervals per feature across the data's range ``span``: ``_PER_BANDWIDTH``
    nodes per bandwidth, lowered so the convolved grid stays under ``MAX_GRID`` nodes."""
    span = np.asarray(span, dtype=np.float64)
    d = span.size
    span = np.where(span > 0, span, 0.0)
    per = _PER_BANDWIDTH[1 if stencil_order(kern, d) == 1 else "smooth"][d]
    if kern.family == "gaussian" and d in _TENSOR_GRID:
        per = _TENSOR_GRID[d][1]
    h = np.broadcast_to(np.asarray(h, dtype=np.float64), (d,))
    r = reach(kern)
    nodes = lambda b: np.prod((span / h + 2 * r) * b + 8)     # noqa: E731
    while per > 2 and nodes(per) > MAX_GRID:
        per = max(2, int(per * 0.8))
    if not nodes(per) <= MAX_GRID:  # a bandwidth far below the data's spacing: no grid
        return None
    bins = np.maximum(1, np.ceil(span / h * per))
    # a large bandwidth leaves few nodes: refine up to _MIN_BINS while the grid is small
    fine = np.maximum(bins, _MIN_BINS[reg_type][d])
    return (fine if nodes(per * fine / bins) <= MAX_GRID / 8 else bins).astype(int)


def check_bins(bins, d):
    """``bins`` (None, an int or one int per feature, each >= 1) as an int array or None."""
    if bins is None:
        return None
    arr = np.asarray(bins)
    if arr.ndim == 0:
        arr = np.full(d, arr)
    if arr.shape != (d,) or not np.issubdtype(arr.dtype, np.integer) or (arr < 1).any():
        raise ValueError(f"bins must be None, a positive int or {d} positive ints (one per "
                         f"feature); got {bins!r}.")
    return arr.astype(int)


class _Grid:
    """Geometry of one grid: origin, spacing, stencil, kernel offsets (in nodes)."""

    def __init__(self, lo, span, h, bins, kern, reg_type="lc"):
        self.d = lo.size
        # the gaussian's local constant sums in d >= 2: the tensor bound (_tensor_envelope)
        self.tensor = kern.family == "gaussian" and self.d >= 2 and reg_type == "lc"
        self.order = stencil_order(kern, self.d)
        self.off = (self.order - 1) // 2
        self.h = np.broadcast_to(np.asarray(h, dtype=np.float64), (self.d,)).copy()
        span = np.where(span > 0, span, self.h)
        self.delta = span / bins
        self.lo = lo
        self.shape = tuple(int(b) + self.order + 1 for b in bins)
        r = reach(kern)
        # offsets beyond the data grid's extent (a huge bandwidth) reach no query of
        # the convolved grid that the data could weigh differently: cut there
        with np.errstate(over="ignore"):
            R = np.ceil(np.minimum(r * self.h / self.delta, 2.0 * np.asarray(self.shape)))
        self.R = R.astype(int)
        # where the kernel was cut, only queries within R - shape nodes of the data grid
        # see every data node through the kernel array
        cut = self.R >= 2 * np.asarray(self.shape)
        self.margin = np.where(cut, self.R - np.asarray(self.shape), 0)
        self.out_shape = tuple(s + 2 * R for s, R in zip(self.shape, self.R))
        self.kern = kern

    def stencil(self, X, out=False):
        """Flat node indices and weights (n, P) of rows X on the data grid (or with
        ``out`` on the convolved grid) and a mask of rows whose stencil lies inside it."""
        shift = self.R if out else 0
        z = (X - self.lo) / self.delta + self.off + shift
        base = np.floor(z)
        t = z - base
        base = base.astype(np.int64) - self.off
        shape = self.out_shape if out else self.shape
        m = self.margin if out else 0
        inside = np.all((base >= m) & (base + self.order < np.asarray(shape) - m), axis=1)
        if not inside.all():
            base = np.where(inside[:, None], base, 0)
            t = np.where(inside[:, None], t, 0.0)
        strides = np.cumprod((shape[1:] + (1,))[::-1])[::-1]
        steps = np.arange(self.order + 1)
        idx, w = None, None
        for j in range(self.d):
            wj = _lagrange(t[:, j], self.order)
            ij = (base[:, j:j + 1] + steps) * strides[j]
            if idx is None:
                idx, w = ij, wj
                continue
            idx = (idx[:, :, None] + ij[:, None, :]).reshape(X.shape[0], -1)
            w = (w[:, :, None] * wj[:, None, :]).reshape(X.shape[0], -1)
        return idx, w, inside

    def offsets(self):
        """Scaled offsets ``u`` (kernel grid shape + (d,)) of the kernel's nodes."""
        axes = [np.arange(-R, R + 1) * (dl / h) for R, dl, h in zip(self.R, self.delta, self.h)]
        return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)

    def kernels(self, reg_type):
        """Kernel arrays (n_kernels, *kernel shape): K, and for "ll" the moment kernels
        ``-u_j K`` then ``u_j u_k K`` (j <= k), with K(0) = 1."""
        U = self.offsets()
        K = _k(self.kern, U)
        out = [K]
        if reg_type == "ll":
            out += [-U[..., j] * K for j in range(self.d)]
            out += [U[..., j] * U[..., k] * K for j in range(self.d) for k in range(j, self.d)]
        return np.stack(out)


def _k(kern, U):
    """K(|u|) / K(0) on offsets U (..., d)."""
    u = np.sqrt(np.einsum("...d,...d->...", U, U))
    return np.exp(kern.log_k(u) - kern.log_k(0.0))


def _convolve(grids, kernels, pairs=None):
    """Full convolutions (FFT) of grids (c, *shape) with kernels (k, *kshape): every
    kernel with every grid -> (k, c, *out), or with ``pairs`` [(kernel, grids)], the
    listed grids of each kernel -> a list of (len(grids), *out)."""
    d = grids.ndim - 1
    out = tuple(g + k - 1 for g, k in zip(grids.shape[1:], kernels.shape[1:]))
    fshape = [sfft.next_fast_len(n, real=True) for n in out]
    axes = tuple(range(1, d + 1))
    Fg = sfft.rfftn(grids, fshape, axes=axes, workers=1)
    Fk = sfft.rfftn(kernels, fshape, axes=axes, workers=1)
    crop = tuple(slice(0, n) for n in out)
    if pairs is None:
        res = sfft.irfftn(Fk[:, None] * Fg[None], fshape, axes=tuple(a + 1 for a in axes),
                          workers=1)
        return res[(slice(None), slice(None)) + crop]
    return [sfft.irfftn(Fk[k][None] * Fg[g], fshape, axes=axes, workers=1)[(slice(None),) + crop]
            for k, g in pairs]


def target_scale(Y, absolute=False):
    """Per output, the unit of the documented bound: std(y) (1 where y is constant), or
    1 for probabilities (``absolute``)."""
    if absolute:
        return np.ones(Y.shape[1])
    std = Y.std(axis=0)
    return np.where(std > 0, std, 1.0)


def _node_coords(grid, X, out=False):
    """Rows X in node units of the data grid (``out``: of the convolved grid)."""
    return (X - grid.lo) / grid.delta + (grid.off + (grid.R if out else 0))


def _pooled_bound(coarse, env, grid, R=None):
    """The envelope convolved with the |w| grids, bounded from above on the blocks of
    :func:`_blocks` (``coarse``: (2, *blocks), the grids summed over each block): the
    envelope's largest value over the offsets between two blocks at each block offset,
    convolved on the block grid (``f^d`` times fewer nodes), then read at every node of
    the convolved grid from its block. Returns (2, prod(out_shape))."""
    from scipy.ndimage import maximum_filter

    f, _ = _blocks(grid)
    d = grid.d
    R = grid.R if R is None else R     # the envelope's half-size (offsets) per axis
    if f == 1 and R is grid.R:
        return _convolve(coarse, env[None], [(0, slice(None))])[0].reshape(2, -1)
    # block offset K spans node offsets K f - (f - 1) ... K f + (f - 1)
    Rc = [-(-(Rj + f - 1) // f) for Rj in R]
    wide = np.pad(env, [(Rcj * f - Rj, Rcj * f - Rj) for Rcj, Rj in zip(Rc, R)])
    if f > 1:
        wide = maximum_filter(wide, size=2 * f - 1, mode="constant", cval=0.0)
    env_c = wide[tuple(slice(None, None, f) for _ in range(d))]
    conv = _convolve(coarse, env_c[None], [(0, slice(None))])[0]
    # convolved node o (data coordinate o - R) lies in block (o - R) // f, at Rc + that
    idx = [np.clip((np.arange(n) - Rg) // f + Rcj, 0, conv.shape[1 + j] - 1)
           for j, (n, Rg, Rcj) in enumerate(zip(grid.out_shape, grid.R, Rc))]
    return conv[(slice(None),) + tuple(np.ix_(*idx))].reshape(2, -1)


def _blocks(grid):
    """Block grid of the error bound: nodes per block ``f`` and blocks per axis."""
    f = POOL[grid.d]
    return f, tuple(-(-s // f) for s in grid.shape)


def bin_rows(grid, X, V, scale, closed=False):
    """Raw grids of rows X with centred values V (n, c), flat: spread with ``|w|`` (for
    the error bound) and summed over the blocks of :func:`_blocks`, the counts and each
    row's largest ``|V| / scale``; then with ``w`` the weights and V on the grid. Grids
    of disjoint row sets add up. ``closed``: V's columns sum to zero in every row (class
    indicators less their frequencies): the last is not spread (its sums are minus the
    others'), its deviations still bound."""
    from nlpfeat.kernels._compiled._binning import spread

    ones = np.ones((X.shape[0], 1))
    dev = np.abs(V / scale).max(axis=1, initial=0.0)[:, None]
    Z = np.ascontiguousarray(_node_coords(grid, X))
    f, blocks = _blocks(grid)
    tensor = grid.tensor
    A = np.empty((X.shape[0], 0)) if tensor else np.hstack([ones, dev])
    fine, coarse = spread(Z, A, np.hstack([ones, V[:, :-1] if closed else V]), grid.order,
                          np.asarray(grid.shape, dtype=np.int64), f)
    if tensor:      # counts and deviations per block of the rows' cells
        cell = np.clip(np.floor(Z).astype(np.int64) // f, 0, np.asarray(blocks) - 1)
        flat = np.ravel_multi_index(tuple(cell.T), blocks)
        size = int(np.prod(blocks))
        coarse = np.stack([np.bincount(flat, minlength=size).astype(np.float64),
                           np.bincount(flat, weights=dev[:, 0], minlength=size)])
    return np.concatenate([coarse.ravel(), fine.ravel()])


class BinnedSums:
    """Training data binned for one bandwidth: convolved grids of kernel sums.

    ``V`` (n, c) are the columns summed (targets, or one-hot classes); ``X`` the
    training rows. ``sums(Q)`` gives the interpolated sums, the error bound, and a mask
    of queries inside the grid.
    """

    def __init__(self, X, V, kern, h, bins, reg_type, scale, lo=None, span=None,
                 closed=False):
        lo = X.min(axis=0) if lo is None else lo
        span = np.ptp(X, axis=0) if span is None else span
        self.grid = g = _Grid(lo, span, h, bins, kern, reg_type)
        self.reg_type = reg_type
        self.closed = closed = closed and reg_type == "lc" and V.shape[1] > 1
        self.raw = bin_rows(g, X, V, scale, closed)
        self._finish()

    def _finish(self):
        g = self.grid
        _, blocks = _blocks(g)
        n_c = 2 * int(np.prod(blocks))
        coarse = self.raw[:n_c].reshape((2,) + blocks)      # counts, deviations (|w|)
        grids = self.raw[n_c:].reshape((-1,) + g.shape)     # weights, V
        kernels = g.kernels(self.reg_type)
        self.kmat = kernels
        n_k = kernels.shape[0]
        conv = _convolve(grids, kernels, [(j, slice(None)) for j in range(n_k)])
        if g.tensor:        # bounds per query cell (read at the cell, no stencil)
            env, Kr = _tensor_envelope(g)
            bound = _pooled_bound(coarse, env, g, Kr)
        else:
            bound = _pooled_bound(coarse, _envelope(g, self.reg_type), g)
        # C-ordered, as the compiled gathers take them (one specialisation each)
        if self.reg_type == "lc":
            self.G = np.ascontiguousarray(conv[0].reshape(conv[0].shape[0], -1))  # (c, size)
        else:               # weights with every kernel; targets with K and -u K
            self.G = np.stack(conv[:n_k]).reshape(n_k, conv[0].shape[0], -1)
        # plus the FFT's rounding: a few eps of the largest sum, everywhere
        total = coarse.reshape(2, -1).sum(axis=1)
        if g.tensor:    # pairs beyond the kernel array: both sides below TAIL
            total = total * (1.0 + g.d * _lebesgue(g.order) ** (2 * g.d) * TAIL / (64 * EPS))
        bound += 64 * EPS * total[:, None]
        # the tensor bound per query cell; else per node, read with the stencil's |w|
        self.E_cell = bound if g.tensor else None
        self.E = None if g.tensor else np.ascontiguousarray(bound)

    @property
    def bins(self):
        """Intervals per feature of the grid."""
        return np.asarray(self.grid.shape) - self.grid.order - 1

    @classmethod
    def from_raw(cls, raw, grid, reg_type):
        """Sums from raw grids (of several partitions, added)."""
        self = cls.__new__(cls)
        self.grid, self.reg_type, self.raw, self.closed = grid, reg_type, raw, False
        self._finish()
        return self

    def gather(self, Q):
        """Interpolated sums at Q, their error bounds (m, 2: of the weight sums and of
        the deviation sums) and the mask of Q inside the grid."""
        from nlpfeat.kernels._compiled._binning import gather

        g = self.grid
        lead = self.G.shape[:-1]
        Z = _node_coords(g, Q, out=True)
        order = None
        if g.d > 1:     # queries by row of the grid: their stencils share cache lines
            order = np.argsort(Z[:, 0].astype(np.int64), kind="stable")
            Z = Z[order]
        Z = np.ascontiguousarray(Z)
        E = self.E if self.E_cell is None else np.zeros((0, 1))
        S, B, inside = gather(self.G.reshape(-1, self.G.shape[-1]), E, Z, g.order,
                              np.asarray(g.out_shape, dtype=np.int64),
                              np.asarray(g.margin, dtype=np.int64))
        if self.E_cell is not None:
            B = self._cell_bounds(Z, inside)
        if order is not None:
            back = np.empty_like(order)
            back[order] = np.arange(order.size)
            S, B, inside = S[back], B[back], inside[back]
        return self._close(S.reshape((Q.shape[0],) + lead)), B, inside

    def _close(self, S):
        """Sums (m, 1 + c) with the last column of closed V restored (minus the others)."""
        if not self.closed:
            return S
        return np.hstack([S, -S[:, 1:].sum(axis=1, keepdims=True)])

    def _cell_bounds(self, Z, inside):
        """The tensor bound (2 per row) of the cells of rows ``Z`` (convolved grid's
        node coordinates) inside the grid."""
        cell = np.floor(Z[inside]).astype(np.int64)
        B = np.zeros((Z.shape[0], 2))
        B[inside] = self.E_cell[:, np.ravel_multi_index(tuple(cell.T), self.grid.out_shape)].T
        return B

    def _self_kernels(self):
        """Kernels (nk, P^d, P^d) between the stencil nodes a, b of one point:
        ``K((b - a) delta)``, the nodes in the stencils' order (last axis fastest)."""
        g = self.grid
        P = g.order + 1
        steps = np.stack(np.meshgrid(*[np.arange(P)] * g.d, indexing="ij"), -1).reshape(-1, g.d)
        diff = steps[None, :, :] - steps[:, None, :]                    # (Pd, Pd, d)
        center = np.asarray(g.R)
        # offsets beyond the kernel array (R < P - 1 nodes) are zero in the convolution too
        pos = diff + center
        far = ((pos < 0) | (pos > 2 * center)).any(axis=-1)
        pos = np.clip(pos, 0, 2 * center)
        kk = self.kmat[(slice(None),) + tuple(pos[..., j] for j in range(g.d))]
        return np.ascontiguousarray(np.where(far, 0.0, kk))

    def self_terms(self, X, V):
        """Each training row's own contribution to its binned sums (same shape as
        :meth:`gather`'s sums); the reference of :meth:`loo_gather`'s, in numpy."""
        from nlpfeat.kernels._compiled._binning import stencil_weights

        g = self.grid
        w = stencil_weights(np.ascontiguousarray(_node_coords(g, X)), g.order)
        s = np.stack([np.einsum("np,np->n", w @ kj, w) for kj in self._self_kernels()],
                     axis=1)                                            # (n, nk)
        return self._times_cols(s, V)

    def _times_cols(self, s, V):
        cols = np.hstack([np.ones((V.shape[0], 1)), V])
        if self.reg_type == "lc":
            return s[:, 0:1] * cols
        return s[:, :, None] * cols[:, None, :]                          # (n, nk, c)

    def loo_gather(self, X, V):
        """:meth:`gather`'s sums at the training rows X (values V) less each row's own
        contribution, and their bounds: one compiled pass (the stencil weights once)."""
        from nlpfeat.kernels._compiled._binning import gather_loo

        g = self.grid
        lead = self.G.shape[:-1]
        Z = np.ascontiguousarray(_node_coords(g, X, out=True))
        E = self.E if self.E_cell is None else np.zeros((0, 1))
        S, B, T, inside = gather_loo(self.G.reshape(-1, self.G.shape[-1]), E, Z, g.order,
                                     np.asarray(g.out_shape, dtype=np.int64),
                                     np.asarray(g.margin, dtype=np.int64),
                                     self._self_kernels())
        if self.E_cell is not None:     # (a row's own pair is inside its bound)
            B = self._cell_bounds(Z, inside)
        return self._close(S.reshape((X.shape[0],) + lead)) - self._times_cols(T, V), B


def _predictions(S, B, reg_type, d, tau, top, scale=None):
    """Predictions from gathered sums and the mask of certified rows.

    ``S``: (n, c) for "lc" (column 0 the weight sum), (n, nk, c) for "ll"; ``B`` (n, 2):
    the bounds of the weight sums' error and of the deviation sums'; ``top``: the
    targets' largest distance to their mean, per output (the slopes' scale). A local
    constant prediction with ``scale`` (the default grid) is certified when its own
    bound, ``(B_dev + |y_hat - mean| / scale B_w) / (S0 - B_w)`` in units of ``scale``,
    is below ``TARGET / SAFETY``; otherwise (explicit bins, local linear) when the
    weight sums' relative error is below ``tau``.
    """
    E = B[:, 0]
    if reg_type == "lc":
        s0 = S[:, 0]
        if scale is None:
            ok = s0 > E / tau
            return S[:, 1:] / np.where(ok, s0, 1.0)[:, None], ok
        ok = s0 > 2.0 * E
        pred = S[:, 1:] / np.where(ok, s0, 1.0)[:, None]
        # (y_b - y) S0 = sum_i e_i (y_i - y_b): |y_i - y_b| <= |y_i - mean| + |y_b - mean|
        bound = (B[:, 1:2] + np.abs(pred) / scale * E[:, None]) \
            / np.where(ok, s0 - E, 1.0)[:, None]
        ok &= (SAFETY * bound <= TARGET).all(axis=1)
        return pred, ok
    # the moment kernels u K and u u^T K err a few times more than K: a margin of 4
    E = 4.0 * E
    s0 = S[:, 0, 0]
    ok = s0 > E / tau
    s0 = np.where(ok, s0, 1.0)
    m = S[:, 1:1 + d, 0] / s0[:, None]
    ybar = S[:, 0, 1:] / s0[:, None]
    S2 = np.zeros((S.shape[0], d, d))
    pos = 1 + d
    for j in range(d):
        for k in range(j, d):
            S2[:, j, k] = S2[:, k, j] = S[:, pos, 0] / s0
            pos += 1
    Sc = S2 - m[:, :, None] * m[:, None, :]
    Tc = S[:, 1:1 + d, 1:] / s0[:, None, None] - m[:, :, None] * ybar[:, None, :]
    b = local_solve(Sc, Tc, 0.0)                                     # (n, d, k)
    # the local design must stand clear of the sums' error: its smallest variance
    # against the error of the offsets' moments, amplified by |m| and the slopes
    lam = np.linalg.eigvalsh(Sc)[:, 0]
    slope = np.abs(b / np.where(top > 0, top, 1.0)).max(axis=(1, 2))
    ok &= lam > E / (tau * s0) * (1.0 + np.einsum("nd,nd->n", m, m)) * (1.0 + slope)
    return ybar - np.einsum("nd,ndk->nk", m, b), ok


def _tau(Y):
    """Relative accuracy of the weight sums that keeps predictions within the target:
    ``|error| <= 2 max|y - mean| E / S0``."""
    return tau_from(Y.std(axis=0), _top(Y))


def _top(Y):
    return np.abs(Y - Y.mean(axis=0)).max(axis=0)


def tau_from(std, top):
    """:func:`_tau` from the targets' deviations and largest distance to their mean."""
    ratio = np.where(top > 0, std / np.where(top > 0, top, 1.0), 1.0)
    return TARGET * 0.5 * float(max(ratio.min(), 1e-3))


def _sums(X, V, kern, h, bins, reg_type, scale, lo=None, span=None, raws=None,
          closed=False):
    """The binned sums of one bandwidth: exact polynomial sums
    (:class:`~nlpfeat.kernels._binned_poly.PolySums`) for the polynomial kernels,
    else the interpolated grid (None: no grid fits the bandwidth). ``raws``: a dict
    that keeps the last raw grids of rows X, reused by the next bandwidth whose grid has
    the same nodes (the bandwidths of a search whose grids stop at ``_MIN_BINS``)."""
    span = np.ptp(X, axis=0) if span is None else span
    if _binned_poly.fits(kern, *X.shape, V.shape[1], reg_type):
        return _binned_poly.PolySums(X, V, kern, h, bins, reg_type, scale, lo, span)
    bins = default_bins(span, h, kern, reg_type) if bins is None else bins
    if bins is None:
        return None
    if raws is None:
        return BinnedSums(X, V, kern, h, bins, reg_type, scale, lo, span, closed)
    grid = _Grid(X.min(axis=0) if lo is None else lo, span, h, bins, kern, reg_type)
    # the raw grids depend on the nodes only (origin, spacing, shape, stencil, and the
    # bound's kind), not on h
    key = (tuple(grid.lo), tuple(grid.delta), grid.shape, grid.order, grid.tensor)
    if key not in raws:
        raws.clear()
        raws[key] = bin_rows(grid, X, V, scale)
    return BinnedSums.from_raw(raws[key], grid, reg_type)


class BinnedIndex:
    """Binned sums of the training data for predictions at a fixed bandwidth.

    Parameters
    ----------
    X, Y : training rows (n, d) and values (n, k)
    kern, bandwidth, reg_type : as the exact index
    bins : ndarray of int or None (:func:`default_bins`)
    exact : object with ``predict(Q) -> (out, empty)`` (the exact path), or None (a
        model fitted on a dask array: uncertified queries then get NaN).
    """

    def __init__(self, X, Y, kern, bandwidth, reg_type, bins, exact, *, sums=None,
                 y_mean=None, tau=None, top=None, scale=None, absolute=False):
        self.kern, self.reg_type, self.exact, self.Y = kern, reg_type, exact, Y
        self.bandwidth = bandwidth
        self.y_mean = Y.mean(axis=0) if y_mean is None else y_mean
        self.scale = target_scale(Y, absolute) if scale is None else scale
        self.explicit = bins is not None
        # explicit bins: the user's accuracy; sums whose bound passes 1e-3 of them go exact
        self.top = _top(Y) if top is None else top
        if tau is None:     # (_tau, with the top computed once)
            tau = tau_from(Y.std(axis=0), self.top) if bins is None else EXPLICIT_TAU
        self.tau = tau
        if sums is None:
            # class indicators less their frequencies: columns that sum to zero
            sums = _sums(X, Y - self.y_mean, kern, bandwidth, bins, reg_type, self.scale,
                         closed=absolute)
        self.sums = sums            # None: no grid fits the bandwidth, every query exact
        self.exact_index = None     # set by the engine; None for a fit on a dask array
        self.bins = None if sums is None else sums.bins

    def predict(self, Q, **exact_options):
        """Predictions (m, k) and the empty mask; uncertified queries on the exact path."""
        if self.sums is None:
            out, ok = np.empty((Q.shape[0], self.y_mean.size)), np.zeros(Q.shape[0], bool)
        else:
            S, E, inside = self.sums.gather(Q)
            out, ok = _predictions(S, E, self.reg_type, Q.shape[1], self.tau, self.top,
                                   None if self.explicit else self.scale)
            ok &= inside
            out = out + self.y_mean
        empty = np.zeros(Q.shape[0], dtype=bool)
        self.n_exact_ = int((~ok).sum())
        if self.n_exact_:
            rows = np.flatnonzero(~ok)
            if self.exact is None:
                out[rows] = np.nan
                warnings.warn(
                    f"{self.n_exact_} of {Q.shape[0]} queries lie where the grid sums of "
                    f"this model (fitted on a dask array: no training rows kept for the "
                    f"exact path) cannot certify the error bound (outside the data or in "
                    f"a sparse region); they get NaN. Fit in memory, or pass a coarser "
                    f"explicit bins, to predict there.", BinnedRangeWarning, stacklevel=4)
            else:
                out[rows], empty[rows] = self.exact(Q[rows], **exact_options)
        return out, empty


def grid_order(X):
    """A permutation of rows X that visits a grid's nodes nearly in C order: by the
    first feature, in d >= 2 by 256 slabs of it, then the next features."""
    if X.shape[1] == 1:
        return np.argsort(X[:, 0], kind="stable")
    lo, span = X.min(axis=0), np.ptp(X, axis=0)
    slab = np.floor((X[:, 0] - lo[0]) / np.where(span[0] > 0, span[0], 1.0) * 255.999)
    return np.lexsort(tuple(X[:, j] for j in range(X.shape[1] - 1, 0, -1)) + (slab,))


def binned_loo_grid(X, Y, kern, grid, *, reg_type="lc", loss="squared", bins=None,
                    exact_pairs=None):
    """Leave-one-out loss at every bandwidth of ``grid`` (n_grid, d or 1) on the grid.

    ``exact_pairs(rows, need) -> P`` gives exact LOO predictions (len(rows), n_grid, k)
    of training rows ``rows`` at the bandwidths where ``need`` (len(rows), n_grid) is
    set: the (row, bandwidth) pairs without a certificate, all scored in one call after
    the grid pass. Returns the losses as :func:`nlpfeat.kernels._bandwidth.loo_grid` does.
    """
    n, k = Y.shape
    d = X.shape[1]
    # the rows in the grids' order (the loss is a sum over rows): spreading and gathering
    # then walk the nodes in sequence instead of at random
    perm = grid_order(X)
    X, Y = X[perm], Y[perm]
    y_mean = Y.mean(axis=0)
    Yc = Y - y_mean
    tau = _tau(Y) if bins is None else EXPLICIT_TAU
    top = _top(Y)
    scale = target_scale(Y, absolute=loss != "squared")
    totals = np.zeros(len(grid))
    need = np.zeros((n, len(grid)), dtype=bool)
    lo, span = X.min(axis=0), np.ptp(X, axis=0)
    raws = {}
    for gi, h in enumerate(grid):
        h = np.broadcast_to(h, (d,))
        sums = _sums(X, Yc, kern, h, bins, reg_type, scale, lo, span, raws)
        if sums is None:    # no grid fits this bandwidth: every row exact
            need[:, gi] = True
            continue
        S, E = sums.loo_gather(X, Yc)
        P, ok = _predictions(S, E, reg_type, d, tau, top, None if bins is not None else scale)
        totals[gi] = loss_grad(P[ok] + y_mean, Y[ok], loss)[0]
        need[:, gi] = ~ok
    rows = np.flatnonzero(need.any(axis=1))
    if rows.size:
        sub = need[rows]
        P = exact_pairs(perm[rows], sub)
        for gi in np.flatnonzero(sub.any(axis=0)):
            sel = sub[:, gi]
            totals[gi] += loss_grad(P[sel, gi], Y[rows[sel]], loss)[0]
    return mean_loss(totals, n, k, loss)
