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

The functions here are numba intrinsics and ``@njit`` functions; importing this module
imports numba but compiles nothing.
"""
import decimal

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import types
from numba.extending import intrinsic

__all__ = ["fexp", "fexp_ftz", "wide_vectors"]

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
    registers even on AVX-512 CPUs; the kernel loops here run 15-25% faster with 512
    bits. Without AVX-512 the widest legal vectors (256 bits on AVX2) are used as
    before, and nothing is emitted; results differ only by the order of vectorised sums.
    If llvmlite ever refuses the attribute, the function compiles without it.
    """
    def codegen(context, builder, sig, args):
        try:   # llvmlite lists no string attributes in FunctionAttributes._known
            set.add(builder.function.attributes, '"prefer-vector-width"="512"')
        except Exception:   # pragma: no cover - a future llvmlite; speed only
            pass
        return context.get_dummy_value()
    return types.none(), codegen


_CTX = decimal.Context(prec=50)
_LN2 = _CTX.ln(decimal.Decimal(2))


def _ln2_parts():
    """ln2 / _N as hi + lo, hi with its 22 low mantissa bits cleared (n * hi exact)."""
    full = np.float64(float(_CTX.divide(_LN2, _N)))
    hi = np.array([full]).view(np.int64)[0] & ~np.int64((1 << 22) - 1)
    hi = float(np.array([hi]).view(np.float64)[0])
    return hi, float(_CTX.subtract(_CTX.divide(_LN2, _N), decimal.Decimal(hi)))


def _table():
    """2^(j / _N) to 50 digits, rounded once to float64."""
    return np.array([float(_CTX.power(decimal.Decimal(2), _CTX.divide(j, _N)))
                     for j in range(_N)])


_LN2_HI, _LN2_LO = _ln2_parts()
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
def fexp_ftz(x):
    """:func:`fexp` flushed to zero below ``x = -708`` (where ``exp`` nears the subnormals).

    What the kernel loops use: their weights count relative to a row's largest weight
    or to a sum above ``1e-250``, so a weight below ``3.3e-308`` changes nothing at double
    precision, while subnormal arithmetic costs a microcode assist (about a hundred
    cycles) per element on x86. One scaling multiplication instead of two.
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
