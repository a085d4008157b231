"""Error bounds of the binned sums: the Lagrange stencil's weights and constants, the
error envelope of one point (:func:`_envelope`), and the tensor bound of the gaussian's
local constant sums in d >= 2 (:func:`_tensor_envelope`), proven per axis and offset
between cells (used by :mod:`nlpfeat.kernels._binned`)."""
import functools

import numpy as np

from nlpfeat.kernels._loss import EPS

__all__ = ["CRAMER", "TENSOR_SAMPLES"]


def _lagrange(t, order):
    """Stencil weights (n, order + 1) of positions ``t`` in [0, 1) on the nodes
    ``-(order - 1) / 2 ... (order + 1) / 2`` relative to ``floor`` (Lagrange basis:
    products of all factors but one, from prefix and suffix products)."""
    nodes = np.arange(order + 1) - (order - 1) // 2
    if order == 1:
        t = np.asarray(t, dtype=np.float64)
        return np.stack([1.0 - t, t], axis=1)
    f = np.asarray(t, dtype=np.float64)[:, None] - nodes[None, :]       # (n, P)
    pre = np.ones_like(f)
    suf = np.ones_like(f)
    np.cumprod(f[:, :-1], axis=1, out=pre[:, 1:])
    np.cumprod(f[:, :0:-1], axis=1, out=suf[:, -2::-1])
    denom = np.array([np.prod([xj - xm for xm in nodes if xm != xj]) for xj in nodes])
    pre *= suf
    pre /= denom
    return pre


#: Cramer's constant: |He_n(u)| exp(-u^2 / 4) <= CRAMER sqrt(n!) for every u.
CRAMER = 1.086435
#: Positions per cell (and axis) at which the tensor envelope samples the error.
TENSOR_SAMPLES = 16


def _poly_sup(coef, lo=0.0, hi=1.0):
    """The largest |p| on [lo, hi] of the polynomial ``coef`` (numpy order): at the ends
    and the real roots of p' inside."""
    p = np.polynomial.Polynomial(coef)
    r = p.deriv().roots() if p.degree() > 1 else np.zeros(0)
    r = r.real[(np.abs(r.imag) < 1e-9) & (r.real > lo) & (r.real < hi)]
    return float(np.abs(p(np.concatenate([[lo, hi], r]))).max())


@functools.lru_cache(maxsize=None)
def _stencil_constants(order):
    """Of the Lagrange stencil of ``order`` on [0, 1]: ``sup |omega^(i)|`` (i = 0, 1, 2;
    ``omega`` the node polynomial) and the Lebesgue constant ``sup sum_a |w_a|``."""
    nodes = np.arange(order + 1) - (order - 1) // 2
    omega = np.polynomial.Polynomial.fromroots(nodes)
    Wk = tuple(_poly_sup(omega.deriv(i).coef if i else omega.coef) for i in range(3))
    # on (0, 1) every basis polynomial keeps its sign: the Lebesgue function is one
    lam = np.polynomial.Polynomial([0.0])
    for a in range(order + 1):
        la = np.polynomial.Polynomial.fromroots(np.delete(nodes, a))
        lam = lam + np.sign(la(0.5) / la(nodes[a])) * la / la(nodes[a])
    return Wk, _poly_sup(lam.coef)


def _lebesgue(order):
    """The stencil's Lebesgue constant: ``sum_a |w_a(t)| <= _lebesgue(order)``."""
    return _stencil_constants(order)[1]


def _tensor_envelope(grid):
    """Per-pair error bound of the gaussian's binned sums on cell offsets (d >= 2).

    The gaussian is a product over axes, and so are the stencils: the binned kernel of
    a pair is ``prod_j B_j`` with ``B_j`` the 1-D binned kernel of axis j, so
    ``prod B_j - prod g_j = sum_j (prod_{i<j} g_i) (B_j - g_j) (prod_{i>j} B_i)``. For each
    axis and each cell offset k between the query's cell and the point's, ``eps_j(k)``
    bounds ``|B_j - g_j|`` over every position of both in their cells: the largest
    error on ``TENSOR_SAMPLES + 1`` positions per cell and side, plus ``delta^2 / 8`` times
    bounds of its second derivatives (Lagrange's remainder ``omega(t) f[nodes, t]`` and
    its derivatives, each divided difference by ``sup |f^(n)| / n!`` and that by
    Cramer's inequality on the distances the stencils span), which covers the positions
    between samples. ``g_j <= gamma_j(k)`` (the gaussian at the nearest distance of two
    cells k apart) and ``|B_j| <= gamma_j + eps_j``. A proof, not a sampled check: the
    samples are the error's values (to rounding), the margin bounds the error of their
    bilinear interpolation, i.e. what lies between them.

    Returns the envelope over cell offsets (shape ``2 Kr + 1`` per axis) and ``Kr``.
    """
    Kr = np.asarray(grid.R) + grid.order + 1
    eps, gam = zip(*(_axis_envelope(grid, j, Kr[j]) for j in range(grid.d)))
    env = 0.0
    for j in range(grid.d):
        sides = list(gam[:j]) + [eps[j]] + [g + e for g, e in zip(gam[j + 1:], eps[j + 1:])]
        term = sides[0]
        for side in sides[1:]:
            term = np.multiply.outer(term, side)
        env = env + term
    return env, Kr


def _axis_envelope(grid, j, Kr):
    """``eps_j(k)`` and ``gamma_j(k)`` of :func:`_tensor_envelope` on the cell offsets
    ``k = -Kr ... Kr`` of axis j."""
    from math import factorial

    P = grid.order + 1
    m = TENSOR_SAMPLES
    t = np.linspace(0.0, 1.0, m + 1)
    W = _lagrange(t, grid.order)                                       # (m + 1, P)
    nodes = np.arange(P) - (grid.order - 1) // 2
    Wk, lam_max = _stencil_constants(grid.order)
    s = float(grid.delta[j] / grid.h[j])
    f = lambda u: np.exp(-0.5 * (s * u) ** 2)                           # noqa: E731
    k = np.arange(-Kr, Kr + 1)
    # query node b of cell k, point node a of cell 0: offset k + b - a
    Kn = f(k[:, None, None] + nodes[None, None, :] - nodes[None, :, None])
    approx = W @ Kn @ W.T                                              # (nk, tx, tq)
    exact = f(k[:, None, None] + t[None, None, :] - t[None, :, None])
    err = np.abs(approx - exact).max(axis=(1, 2))
    # sup |f^(n)| over the distances both stencils span (k - 2P ... k + 2P)
    u = np.maximum(np.abs(k) - 2 * P, 0) * s
    M = {n: s ** n * CRAMER * np.sqrt(factorial(n)) * np.exp(-u * u / 4)
         for n in (P, P + 1, P + 2)}
    # second derivatives of the error in either position (both alike)
    dq = lam_max * (Wk[2] * M[P] / factorial(P) + 2 * Wk[1] * M[P + 1] / factorial(P + 1)
                    + 2 * Wk[0] * M[P + 2] / factorial(P + 2)) + Wk[0] * M[P + 2] / factorial(P)
    return err + 2 * dq / (8 * m * m), f(np.maximum(np.abs(k) - 1, 0))


def _envelope(grid, reg_type="lc"):
    """Per-point error bound of one kernel sum on the grid's kernel offsets (K(0) = 1);
    for "ll" of the moment kernels ``u K`` and ``u^2 K`` too (the largest).

    Measured on a line: a point at sampled positions inside its cell, the binned value at
    sampled query positions minus the exact kernel, maximised over both positions and
    over the neighbouring offsets (a radial profile of the error, at the coarsest
    spacing of the axes); every axis interpolates independently, so the bound is that
    profile at the offset's radius times the number of axes, doubled for safety.
    The profile is even in the cell offset ``k`` (the kernel is): measured at k >= 0.
    """
    step = float(np.max(grid.delta / grid.h))
    P = grid.order + 1
    n_r = int(np.max(grid.R)) + P + 2
    C = _stencil_pairs(grid.order)                              # (2P - 1, ns^2)
    ns = _N_POS
    # a point at s_a in cell 0, a query at s_b in cell k: offset k + (b - a) / ns; its
    # nodes pa, pb: offset k + pb - pa. Every offset is a multiple of step / ns (exact:
    # ns is a power of 2), so the kernel is evaluated once on that lattice.
    k = np.arange(n_r + 1)
    first = -(P + 1) * ns
    u = np.arange(first, (n_r + P + 1) * ns + 1) * (step / ns)
    i_exact = k[:, None] * ns + _POS_DIFF[None, :] - first          # (nk, ns^2)
    i_nodes = (k[:, None] + np.arange(1 - P, P)[None, :]) * ns - first
    kv = np.exp(grid.kern.log_k(np.abs(u)) - grid.kern.log_k(0.0))
    profiles = [kv] if reg_type == "lc" else [kv, u * kv, u * u * kv]
    err = np.zeros(k.size)
    for v in profiles:
        dev = v[i_nodes] @ C            # binned value: sum of W_a(pa) W_b(pb) K(k + pb - pa)
        dev -= v[i_exact]
        err = np.maximum(err, np.abs(dev).max(axis=1))
    # neighbouring offsets (positions between nodes): the largest within P cells
    from scipy.ndimage import maximum_filter1d

    err = maximum_filter1d(np.concatenate([err[:0:-1], err]), size=2 * P + 1,
                           mode="constant", cval=0.0)[n_r:]
    U = grid.offsets()
    radius = np.sqrt(np.einsum("...d,...d->...", U, U))
    return grid.d * np.interp(radius, k * step, err) + EPS


#: Positions sampled per cell by :func:`_envelope` (a power of 2: exact offsets).
_N_POS = 8
#: ``b - a`` for the sampled positions a (rows) and b (columns), flat.
_POS_DIFF = (np.arange(_N_POS)[None, :] - np.arange(_N_POS)[:, None]).ravel()


@functools.lru_cache(maxsize=8)
def _stencil_pairs(order):
    """``C[delta, (a, b)] = sum over pb - pa = delta of W_a(pa) W_b(pb)``: the stencil
    weights of the sampled positions a, b (:data:`_N_POS` per cell) paired by their
    nodes' offset, so that the binned kernel at cell offset k is one product with the
    kernel at the node offsets ``k + delta``."""
    P = order + 1
    W = _lagrange(np.arange(_N_POS) / _N_POS, order)                # (ns, P)
    C = np.zeros((2 * P - 1, _N_POS, _N_POS))
    for pa in range(P):
        for pb in range(P):
            C[pb - pa + P - 1] += W[:, pa, None] * W[None, :, pb]
    C = C.reshape(2 * P - 1, -1)
    C.flags.writeable = False
    return C
