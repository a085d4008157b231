"""Compiled local linear moments: the centred weighted moments of one query row.

As :func:`nlpfeat.kernels._nadaraya_watson.local_linear`: a row's weights, then the
weighted means of the offsets from the row's anchor (its heaviest training point) and of
the targets, then the centred second moments, in a second pass over the stored weights.
The callers (:mod:`._predict`, :mod:`._loo`, :mod:`._ard`) solve the small ``d x d``
systems of a batch of rows with the same rule, :func:`nlpfeat.kernels._loss.local_solve`.
"""
import numpy as np
from numba import njit

from nlpfeat.kernels._compiled._rows import _FMA, _TILE, _dot, _sum, _times


@njit(cache=True, fastmath=_FMA)
def _offsets(zq, Zt, t0, m, cs, centre, dif):
    """``dif[f, :m] = (z_{t0 + i, f} - zq_f) cs - centre_f``, rounded as numpy rounds it
    (``cs``: the power of two of :func:`nlpfeat.kernels._loss.ll_exponent`, exact).

    No reassociation here: a training point at the query gives an exact 0 offset, and
    one distinct point with weight gives exact 0 centred offsets (then ``S = 0``).
    """
    for f in range(zq.size):
        q, c = zq[f], centre[f]
        row = Zt[f, t0:t0 + m]
        out = dif[f]
        for i in range(m):
            out[i] = (row[i] - q) * cs - c


@njit(cache=True)
def _ll_moments(w, zq, Zt, cs, Yt, dif, wdif, zero, mc, m_out, ybar_out, S_out, T_out):
    """Centred local linear moments of one query row with weights ``w`` (n_train,).

    As :func:`nlpfeat.kernels._nadaraya_watson.local_linear`: ``sw = sum w``, the weighted
    means ``m`` of the offsets ``(z_i - z_a) cs`` from the anchor ``a`` (the first
    heaviest training point) and ``y_bar`` of the targets, then (second pass)
    ``S = sum w (D - m)(D - m)^T / sw`` and ``T = sum w (D - m) y^T / sw``; finally
    ``m`` goes to ``mc`` and ``m_out`` gets the offset from the query, ``(z_a - z_q) cs + m``.
    ``dif``, ``wdif`` (d, _TILE) are scratch; ``zero`` is a (d,) array of zeros.
    Returns the anchor ``a``.
    """
    d, n = Zt.shape
    k = Yt.shape[0]
    sw = _sum(w, n)
    top = 0
    for i in range(n):
        if w[i] > w[top]:
            top = i
    anchor = Zt[:, top].copy()
    for f in range(d):
        m_out[f] = 0.0
    for t0 in range(0, n, _TILE):
        mm = min(_TILE, n - t0)
        _offsets(anchor, Zt, t0, mm, cs, zero, dif)
        for f in range(d):
            m_out[f] += _dot(w[t0:t0 + mm], dif[f], mm)
    for f in range(d):
        m_out[f] /= sw
    for c in range(k):
        ybar_out[c] = _dot(w, Yt[c], n) / sw
    S_out[:] = 0.0
    T_out[:] = 0.0
    for t0 in range(0, n, _TILE):
        mm = min(_TILE, n - t0)
        _offsets(anchor, Zt, t0, mm, cs, m_out, dif)
        wt = w[t0:t0 + mm]
        for a in range(d):
            _times(wt, dif[a], mm, wdif[a])
            for b in range(a, d):
                S_out[a, b] += _dot(wdif[a], dif[b], mm)
            for c in range(k):
                T_out[a, c] += _dot(wdif[a], Yt[c, t0:t0 + mm], mm)
    for a in range(d):
        for b in range(a, d):
            S_out[a, b] /= sw
            S_out[b, a] = S_out[a, b]
        for c in range(k):
            T_out[a, c] /= sw
    for f in range(d):   # as numpy: (anchor - query) + m
        mc[f] = m_out[f]
        m_out[f] = (anchor[f] - zq[f]) * cs + m_out[f]
    return top


def _ll_buffers(c, d, k, lead=()):
    """Empty ``m``, ``y_bar``, ``S``, ``T`` for ``c`` rows (and ``lead`` axes after them)."""
    shape = (c,) + tuple(lead)
    return (np.empty(shape + (d,)), np.empty(shape + (k,)), np.empty(shape + (d, d)),
            np.empty(shape + (d, k)))


def _ll_bytes(d, k):
    return 8 * (d + k + d * d + d * k)
