"""A float64 ``exp`` that LLVM vectorises, for the compiled kernel loops (numba).

``exp(x) = 2^k * 2^(j/256) * exp(r)`` with ``x = (256 k + j) ln2 / 256 + r``,
``|r| <= ln2 / 512``: the rounding of ``256 x / ln2`` to an integer is the classic
"add 1.5 * 2^52" trick (no float-to-int conversion), ``r`` comes from a two-part
(Cody-Waite) ``ln2 / 256`` whose high part has 30 significant bits (so ``n * hi`` is
exact), ``2^(j/256)`` from a 256-entry table (50-digit decimals rounded once, 2 KiB),
``exp(r) - 1`` from its degree-4 Taylor polynomial (truncation below 4e-17 relative)
and ``2^k`` from two exponent-field bit patterns, whose product
rounds once, so subnormal results are correct too. Multiply-adds may fuse (FMA);
nothing may be reassociated (callers that allow it for their sums keep this function's
own instruction flags when LLVM inlines it). Accurate to 1 ulp on ``[-745, 0]``
(tested against ``np.exp`` on a dense grid); ``exp(x) = 0`` below -746 (inputs are
clipped there, so ``-inf`` gives 0), ``exp(0) = 1`` exactly, ``inf`` above 709.78 (valid
up to ``x = 1400``; the callers pass ``x <= 0``). No NaN handling: the callers never pass
NaN.

The kernel loops call :data:`fexp_ftz`: this table version where the target CPU has
AVX-512 (its vector gathers are fast), else a table-free version (a degree-13 polynomial
on ``|r| <= ln2 / 2``), since AVX2 code looks the table up one element at a time.

The functions here are numba intrinsics and ``@njit`` functions; importing this module
imports numba but compiles nothing.
"""
import decimal
import math

import numba
import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import types
from numba.extending import intrinsic

__all__ = ["fexp", "fexp_ftz", "fexp_ftz_poly", "fexp_ftz_table", "wide_vectors"]

_N = 256  # table size: 2^(j / 256), j = 0..255


@intrinsic
def _bits(typingctx, x):
    """float64 -> its int64 bit pattern (an LLVM bitcast: vectorises)."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, n):
    """int64 bit pattern -> float64 (an LLVM bitcast: vectorises)."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def wide_vectors(typingctx):
    """Call first in a compiled function: its loops may use 512-bit vectors.

    Sets LLVM's ``"prefer-vector-width"="512"`` attribute on the calling function (what
    clang's ``-mprefer-vector-width=512`` does). LLVM otherwise vectorises with 256-bit
    registers even on AVX-512 CPUs, and the kernel loops here are faster with 512 bits
    (figures in ``benchmarks/RESULTS.md``). Without AVX-512 nothing is set (asking for
    512 bits there makes LLVM split each operation in two 256-bit halves, and the 16 AVX2
    registers then spill); results differ only by the order of vectorised sums.
    Should llvmlite store attributes otherwise, the function compiles without it.
    """
    def codegen(context, builder, sig, args):
        attributes = builder.function.attributes
        if _avx512() and isinstance(attributes, set):   # set.add: FunctionAttributes.add
            set.add(attributes, '"prefer-vector-width"="512"')   # knows no string attributes
        return context.get_dummy_value()
    return types.none(), codegen


_CTX = decimal.Context(prec=50)
_LN2 = _CTX.ln(decimal.Decimal(2))


def _ln2_parts(size=_N):
    """ln2 / size as hi + lo, hi with its 22 low mantissa bits cleared (n * hi exact)."""
    full = np.float64(float(_CTX.divide(_LN2, size)))
    hi = np.array([full]).view(np.int64)[0] & ~np.int64((1 << 22) - 1)
    hi = float(np.array([hi]).view(np.float64)[0])
    return hi, float(_CTX.subtract(_CTX.divide(_LN2, size), decimal.Decimal(hi)))


def _table():
    """2^(j / _N) to 50 digits, rounded once to float64."""
    return np.array([float(_CTX.power(decimal.Decimal(2), _CTX.divide(j, _N)))
                     for j in range(_N)])


_LN2_HI, _LN2_LO = _ln2_parts()
_LN2_HI1, _LN2_LO1 = _ln2_parts(1)
_INV_LN2 = float(_CTX.divide(1, _LN2))
_TAB = _table()
_INV_LN2_N = float(_CTX.divide(_N, _LN2))
_SHIFT = 6755399441055744.0      # 1.5 * 2^52: adding it rounds to an integer
_SHIFT_BITS = 0x4338000000000000  # its bit pattern
_BIAS = 1023


@njit(cache=True, fastmath={"contract"})   # fused multiply-adds: one rounding each
def fexp(x):
    """``exp(x)`` for float64 ``x <= 1400``, within 1 ulp on ``[-745, 0]``; 0 below -746."""
    x = max(x, -746.0)
    t = x * _INV_LN2_N + _SHIFT
    n = _bits(t) - _SHIFT_BITS            # round(256 x / ln2), exactly
    nf = t - _SHIFT
    r = (x - nf * _LN2_HI) - nf * _LN2_LO
    p = r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0))))
    tj = _TAB[n & (_N - 1)]
    k = n >> 8                            # floor(n / 256)
    k1 = k >> 1
    k2 = k - k1                           # 2^k = 2^k1 * 2^k2, both normal numbers
    return (tj + tj * p) * _from_bits((k1 + _BIAS) << 52) * _from_bits((k2 + _BIAS) << 52)


@njit(cache=True)
def fexp_array(x, out):
    """``out[i] = fexp(x[i])`` (for tests and benchmarks)."""
    for i in range(x.size):
        out[i] = fexp(x[i])
    return out


_FTZ = -708.0   # exp(-708) = 3.3e-308, above the smallest normal number 2.2e-308


@njit(cache=True, fastmath={"contract"})
def fexp_ftz_table(x):
    """:func:`fexp` flushed to zero below ``x = -708`` (where ``exp`` nears the subnormals).

    What the kernel loops use: their weights count relative to a row's largest weight
    or to a sum above ``1e-250``, so a weight below ``3.3e-308`` changes nothing at double
    precision, while subnormal arithmetic costs a microcode assist (about a hundred
    cycles) per element on x86. One scaling multiplication instead of two.

    The table lookup vectorises as a gather, fast on AVX-512 CPUs (see :data:`fexp_ftz`).
    """
    y = max(x, _FTZ)
    t = y * _INV_LN2_N + _SHIFT
    n = _bits(t) - _SHIFT_BITS
    nf = t - _SHIFT
    r = (y - nf * _LN2_HI) - nf * _LN2_LO
    p = r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0))))
    tj = _TAB[n & (_N - 1)]
    e = (tj + tj * p) * _from_bits(((n >> 8) + _BIAS) << 52)
    return e if x >= _FTZ else 0.0


# Taylor coefficients 1/2!, ..., 1/13! of exp(r) - 1 - r (each rounded once)
_C = [float(_CTX.divide(1, math.factorial(k))) for k in range(2, 14)]
(_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13) = _C


@njit(cache=True, fastmath={"contract"})
def fexp_ftz_poly(x):
    """:func:`fexp_ftz_table` without the table: ``exp(x) = 2^k exp(r)``, ``|r| <= ln2 / 2``.

    ``exp(r) - 1`` is its degree-13 Taylor polynomial (truncation below 5e-18); ``2^k`` is
    added to the exponent field, the result being a normal number for ``x >= -708``
    (``1 + p >= 0.7`` and ``k >= -1021``). Nine more multiply-adds than the table version
    but no memory lookup, which AVX2 code (no fast gather) does one element at a time.
    """
    y = max(x, _FTZ)
    t = y * _INV_LN2 + _SHIFT
    k = _bits(t) - _SHIFT_BITS            # round(x / ln2), exactly
    kf = t - _SHIFT
    r = (y - kf * _LN2_HI1) - kf * _LN2_LO1
    p = r * (1.0 + r * (_C2 + r * (_C3 + r * (_C4 + r * (_C5 + r * (_C6 + r * (
        _C7 + r * (_C8 + r * (_C9 + r * (_C10 + r * (_C11 + r * (_C12 + r * _C13))))))))))))
    e = _from_bits(_bits(1.0 + p) + (k << 52))
    return e if x >= _FTZ else 0.0


def _avx512():
    """Whether numba's target CPU has AVX-512 (512-bit vectors, fast gathers)."""
    features = numba.config.CPU_FEATURES
    if features is None:   # numba's default: the host's features, whatever NUMBA_CPU_NAME
        from llvmlite import binding

        features = binding.get_host_cpu_features().flatten()
    return "+avx512f" in features.split(",")


#: What the kernel loops call: :func:`fexp_ftz_table` where vector gathers are fast
#: (AVX-512), else :func:`fexp_ftz_poly`; both within 2 ulp of ``np.exp`` (tested).
fexp_ftz = fexp_ftz_table if _avx512() else fexp_ftz_poly
