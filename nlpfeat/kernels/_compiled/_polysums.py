"""Compiled exact kernel sums of the polynomial kernels ``(1 - |t|^2)^p`` (d <= 3).

The training rows, in scaled coordinates ``z`` (support radius 1), are sorted into strips
(cells of width ``c`` in the first d - 1 axes) and, within a strip, by the last axis; a
strip is cut into segments of length ``seg`` along the last axis, and every row keeps the
running sums (from its segment's first row) of its columns times the monomials of its
position relative to its segment's centre. For a query, a strip's rows whose last
coordinate lies where the whole strip is inside the support contribute exactly through
those moments (the kernel is a polynomial in the query's and the row's coordinates: one
difference of running sums per segment), the rows near the support's boundary one by one.

Every sum comes with a bound of its rounding error: the running sums' (each at most its
length times the unit roundoff times the sum of absolute terms, these bounded by the
monomials' largest values), the cancellation between the monomials' coefficients, the
scaled coordinates' own rounding (the kernel's slope times it), and the final additions.
"""
import numpy as np
from numba import njit

#: Unit roundoff of float64.
_U = 2.0 ** -53


@njit(cache=True)
def _strip_key(z, c, ns):
    k = 0
    for j in range(ns.size):
        s = min(max(int(z[j] / c[j]), 0), ns[j] - 1)
        k = k * ns[j] + s
    return k


@njit(cache=True)
def _monomials(x, mono, pw, out):
    """Monomials ``prod_j x_j^mono[m, j]`` of the position ``x`` into ``out``."""
    d = x.size
    for j in range(d):
        pw[j, 0] = 1.0
        for e in range(1, pw.shape[1]):
            pw[j, e] = pw[j, e - 1] * x[j]
    for m in range(mono.shape[0]):
        acc = 1.0
        for j in range(d):
            acc *= pw[j, mono[m, j]]
        out[m] = acc


@njit(cache=True)
def build(Z, V, c, ns, seg, mono):
    """Sorted rows and running moments.

    ``Z`` (n, d) scaled coordinates (>= 0), ``V`` (n, nc) columns (the first the ones),
    ``c``, ``ns`` (d - 1,) strip widths and counts, ``seg`` the segments' length, ``mono``
    (M, d) exponents. Returns the order, the strips' first rows (n_strips + 1), the
    sorted rows ``R`` (n, d + nc: coordinates then columns), each row's segment bounds and centre, the running moments
    (n, nc, M) and the largest ``|x_j|`` of a row relative to its frame, per axis.
    """
    n, d = Z.shape
    L = d - 1
    M = mono.shape[0]
    nc = V.shape[1]
    n_strips = 1
    for j in range(L):
        n_strips *= ns[j]
    key = np.empty(n, dtype=np.int64)
    start = np.zeros(n_strips + 1, dtype=np.int64)
    for i in range(n):
        key[i] = _strip_key(Z[i], c, ns)
        start[key[i] + 1] += 1
    for s in range(n_strips):
        start[s + 1] += start[s]
    fill = start[:-1].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[fill[key[i]]] = i
        fill[key[i]] += 1
    # one gather of the rows (coordinates, then columns: one record a row), then each
    # strip sorted along the last axis in place
    R = np.empty((n, d + nc))
    for i in range(n):
        o = order[i]
        for j in range(d):
            R[i, j] = Z[o, j]
        for k in range(nc):
            R[i, d + k] = V[o, k]
    buf = np.empty((n, d + nc))
    obuf = np.empty(n, dtype=np.int64)
    for s in range(n_strips):
        a, b = start[s], start[s + 1]
        if b - a > 1:
            sub = np.argsort(R[a:b, L])
            for r in range(b - a):
                buf[r] = R[a + sub[r]]
                obuf[r] = order[a + sub[r]]
            R[a:b] = buf[:b - a]
            order[a:b] = obuf[:b - a]
    seg_lo = np.empty(n, dtype=np.int64)
    seg_hi = np.empty(n, dtype=np.int64)
    ctr = np.empty(n)
    P = np.empty((n, nc, M))
    xb = np.zeros(d)
    deg = 0
    for m in range(M):
        for j in range(d):
            deg = max(deg, mono[m, j])
    pw = np.empty((d, deg + 1))
    x = np.empty(d)
    mo = np.empty(M)
    lead = np.empty(max(L, 1))
    for s in range(n_strips):
        a, b = start[s], start[s + 1]
        rem = s
        for j in range(L - 1, -1, -1):
            lead[j] = (rem % ns[j] + 0.5) * c[j]
            rem //= ns[j]
        i = a
        while i < b:
            blk = np.floor(R[i, L] / seg)
            j1 = i
            while j1 < b and np.floor(R[j1, L] / seg) == blk:
                j1 += 1
            centre = (blk + 0.5) * seg
            for t in range(i, j1):
                seg_lo[t], seg_hi[t], ctr[t] = i, j1, centre
                for j in range(L):
                    x[j] = R[t, j] - lead[j]
                x[L] = R[t, L] - centre
                for j in range(d):
                    xb[j] = max(xb[j], abs(x[j]))
                _monomials(x, mono, pw, mo)
                for k in range(nc):
                    for m in range(M):
                        P[t, k, m] = R[t, d + k] * mo[m] + (P[t - 1, k, m] if t > i else 0.0)
            i = j1
    return order, start, R, seg_lo, seg_hi, ctr, P, xb


@njit(cache=True)
def _first(arr, a, b, x, strict):
    """First index in [a, b) of the sorted ``arr`` with ``arr >= x`` (``> x``: strict)."""
    while a < b:
        mid = (a + b) >> 1
        if arr[mid] < x or (strict and arr[mid] == x):
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _point(t, v, R, p, kk_g, nk, S, A):
    """Row ``t``'s exact contribution to the sums (and their absolute values); returns
    whether it lies in the support."""
    d = v.size
    u2 = 0.0
    for j in range(d):
        dj = R[t, j] - v[j]
        u2 += dj * dj
    if u2 >= 1.0:
        return False
    base = 1.0 - u2
    w = base
    for _ in range(p - 1):
        w *= base
    for kk in range(nk):
        g = w
        if kk > 0:
            for j in range(d):
                for _ in range(kk_g[kk, j]):
                    g *= R[t, j] - v[j]
        for k in range(S.shape[1]):
            val = g * R[t, d + k]
            S[kk, k] += val
            A[kk, k] += abs(val)
    return True


@njit(cache=True)
def query(Q, R, zl, start, seg_lo, seg_hi, ctr, P, xb, c, ns, p, kk_g, mono, t_kk, t_m,
          t_coef, t_vexp, colmax, zmax):
    """Kernel sums (m, nk, nc) at query rows ``Q`` (scaled coordinates) and their error
    bounds (m, nk, nc).

    ``kk_g`` (nk, d): the exponents of ``t = z - q`` multiplying the kernel in each sum
    (``t_j K``, ``t_j t_k K`` of a local linear fit); ``t_*`` the terms of the sums'
    polynomial (sum ``kk``, monomial ``m``, coefficient, exponents of the query's
    position in the frame); ``colmax`` (nc,) the columns' largest ``|value|``; ``zmax``
    the coordinates' largest magnitude (``zl``: the sorted rows' last coordinates).
    The inner range leaves a margin in ``|t|^2`` well above the coordinates' rounding,
    so the rows summed through the moments lie inside the support for the exact path
    too.
    """
    m_q, d = Q.shape
    L = d - 1
    nk, nc = kk_g.shape[0], R.shape[1] - d
    M, T = mono.shape[0], t_kk.shape[0]
    S = np.zeros((m_q, nk, nc))
    B = np.zeros((m_q, nk, nc))
    deg = 0
    for i in range(T):
        for j in range(d):
            deg = max(deg, t_vexp[i, j])
    pw = np.ones((d, deg + 1))
    coef = np.zeros((nk, M))
    cabs = np.zeros((nk, M))
    mb = np.empty(M)                       # the monomials' largest |value|
    for m in range(M):
        acc = 1.0
        for j in range(d):
            acc *= xb[j] ** mono[m, j]
        mb[m] = acc
    gam = (T + M + 2 * deg + 8) * _U
    margin = max(1e-9, 64.0 * d * _U * (zmax + 1.0))
    slope = 2.0 * p + 2.0                  # |d/dt (t^a K)| on the support, a <= 2
    lo_s = np.zeros(max(L, 1), dtype=np.int64)
    n_s = np.ones(max(L, 1), dtype=np.int64)
    vloc = np.empty(d)
    Acc = np.zeros((nk, nc))
    Sq = np.zeros((nk, nc))
    Eq = np.zeros((nk, nc))
    for q in range(m_q):
        v = Q[q]
        Sq[:] = 0.0
        Acc[:] = 0.0
        Eq[:] = 0.0
        n_terms = 0
        n_touch = 0
        total = 1
        for j in range(L):
            a = max(int(np.floor((v[j] - 1.0) / c[j])), 0)
            b = min(int(np.floor((v[j] + 1.0) / c[j])), ns[j] - 1)
            lo_s[j] = a
            n_s[j] = max(b - a + 1, 0)
            total *= n_s[j]
        for flat in range(total):
            rem = flat
            key = 0
            d2min = 0.0
            d2max = 0.0
            stride = 1
            for j in range(L - 1, -1, -1):
                sj = lo_s[j] + rem % n_s[j]
                rem //= n_s[j]
                key += sj * stride
                stride *= ns[j]
                e0 = sj * c[j] - v[j]
                e1 = (sj + 1) * c[j] - v[j]
                dmin = max(e0, -e1, 0.0)
                dmax = max(abs(e0), abs(e1))
                d2min += dmin * dmin
                d2max += dmax * dmax
                vloc[j] = v[j] - (sj + 0.5) * c[j]
            a, b = start[key], start[key + 1]
            if a == b or d2min >= 1.0:
                continue
            w_out = np.sqrt(1.0 - d2min)
            vl = v[L]
            i0 = _first(zl, a, b, vl - w_out, False)
            if d2max < 1.0 - margin:
                # the boundary rows are few: walk to the inner range, search its end
                w_in = np.sqrt(1.0 - d2max - margin)
                i1 = i0
                while i1 < b and zl[i1] < vl - w_in:
                    i1 += 1
                i2 = _first(zl, i1, b, vl + w_in, True)
                i3 = i2
                while i3 < b and zl[i3] <= vl + w_out:
                    i3 += 1
            else:
                i3 = _first(zl, i0, b, vl + w_out, True)
                i1 = i3
                i2 = i3
            n_touch += i3 - i0
            for t in range(i0, i1):
                if _point(t, v, R, p, kk_g, nk, Sq, Acc):
                    n_terms += 1
            for t in range(i2, i3):
                if _point(t, v, R, p, kk_g, nk, Sq, Acc):
                    n_terms += 1
            lo = i1
            while lo < i2:
                s0, s1 = seg_lo[lo], seg_hi[lo]
                hi = min(s1, i2)
                vloc[L] = vl - ctr[lo]
                for j in range(d):
                    for e in range(1, deg + 1):
                        pw[j, e] = pw[j, e - 1] * vloc[j]
                coef[:] = 0.0
                cabs[:] = 0.0
                for i in range(T):
                    val = t_coef[i]
                    for j in range(d):
                        val *= pw[j, t_vexp[i, j]]
                    coef[t_kk[i], t_m[i]] += val
                    cabs[t_kk[i], t_m[i]] += abs(val)
                r_hi = hi - s0
                r_lo = lo - s0
                cnt = hi - lo
                for kk in range(nk):
                    for k in range(nc):
                        acc = 0.0
                        err = 0.0
                        for m in range(M):
                            prev = P[lo - 1, k, m] if lo > s0 else 0.0
                            acc += coef[kk, m] * (P[hi - 1, k, m] - prev)
                            err += cabs[kk, m] * mb[m]
                        # running sums' rounding; the coefficients' and the dot's
                        err *= colmax[k] * (1.01 * _U * ((r_hi + deg + 2) * r_hi
                                                         + (r_lo + deg + 2) * r_lo)
                                            + cnt * gam)
                        Sq[kk, k] += acc
                        Acc[kk, k] += abs(acc)
                        Eq[kk, k] += err
                n_terms += 1
                lo = hi
        # the scaled coordinates' rounding (a few ulps of zmax per row, times the
        # slope), and the additions of the n_terms contributions
        dz = 8.0 * d * _U * (zmax + 1.0) * slope * (n_touch + 1)
        for kk in range(nk):
            for k in range(nc):
                S[q, kk, k] = Sq[kk, k]
                B[q, kk, k] = Eq[kk, k] + (n_terms + 2) * _U * Acc[kk, k] + dz * colmax[k]
    return S, B
