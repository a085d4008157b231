"""The kernel registry: one-dimensional smoothing kernels of the scaled distance u = |x - x_i| / h.

Every kernel is stored by its logarithm, so that weights can be normalised in log space
(log-sum-exp): a tiny bandwidth then degrades to nearest-neighbour weights instead of
``0 / 0``. Kernels are normalised densities on the real line (they integrate to 1), which
does not matter for Nadaraya-Watson (the constant cancels) but makes ``k`` usable as a
density, e.g. for kernel-smoothed positions.

Public API
----------
``get_kernel(kernel)``
    A registered name, a :class:`Kernel` or a callable ``k(u)`` -> :class:`Kernel`.
``register_kernel(name, func, *, compact=False, radius=1.0, log=False, dlog_k_du=None)``
    Add a kernel to the registry under ``name``.
``available_kernels()``
    Sorted list of registered names.
:class:`Kernel`
    ``log_k(u)``, ``k(u)``, ``log_k_sq(u2)``, ``k_sq(u2)``, ``dlog_k_du(u)``,
    ``differentiable``, ``compact``, ``radius``, ``name``, ``family``.
``unregister_kernel(name)``
    Remove a kernel a user registered (built-in kernels cannot be removed or replaced).

Between query and training rows, :func:`nlpfeat.kernels.kernel_log_weights` gives the
(normalised) log weights for the metrics "euclidean", "product" and "cosine".
"""
import numpy as np

__all__ = ["Kernel", "available_kernels", "get_kernel", "register_kernel",
           "unregister_kernel"]

_LOG_2PI = np.log(2.0 * np.pi)


def _inside(u, radius, strict):
    """Mask of u inside the support (closed ball for the tophat, open otherwise)."""
    return u < radius if strict else u <= radius


class Kernel:
    """A one-dimensional kernel, evaluated in log space.

    Parameters
    ----------
    name : str
        Name shown in messages and reprs.
    log_k : callable
        ``log_k(u)`` for an array ``u >= 0`` of scaled distances; ``-inf`` where the
        kernel is zero (outside a compact support). Must be vectorised.
    compact : bool, default=False
        True when the kernel is zero for ``u > radius``: such kernels give sparse
        weight matrices, support radius (tree) queries and may leave a query with no
        training point in its support.
    radius : float, default=1.0
        Support radius in units of the bandwidth (only meaningful when ``compact``).
    dlog_k_du : callable or None, default=None
        Derivative of ``log_k`` with respect to ``u`` (inside the support), used by
        ``bandwidth="loo-ard"``. None when the kernel has no useful gradient.
    log_k_sq : callable or None, default=None
        ``log_k`` as a function of ``u ** 2`` (saves a square root on the Euclidean
        hot path); by default ``log_k(sqrt(u2))``.
    k_sq : callable or None, default=None
        ``k`` as a function of ``u ** 2`` (the polynomial kernels evaluate it without
        log or exp); by default ``exp(log_k_sq(u2))``.

    Attributes
    ----------
    differentiable : bool
        Whether ``dlog_k_du`` is available.
    family : str or None
        The built-in kernel family (``"gaussian"``, ``"epanechnikov"``, ...) whose
        closed forms the fast paths may use, or None for every kernel a user defines.
        Fast paths dispatch on this field, never on ``name``: a user's callable, whatever
        its name, always runs on the generic path through its own ``log_k``.

    Examples
    --------
    >>> from nlpfeat.kernels import get_kernel
    >>> kern = get_kernel("epanechnikov")
    >>> kern.compact, kern.radius
    (True, 1.0)
    >>> print(np.round(kern.k(np.array([0.0, 0.5, 2.0])), 4))
    [0.75   0.5625 0.    ]
    """

    def __init__(self, name, log_k, *, compact=False, radius=1.0, dlog_k_du=None,
                 log_k_sq=None, k_sq=None):
        if compact and not (np.isfinite(radius) and radius > 0):
            raise ValueError(f"a compact kernel's radius must be a positive finite number; "
                             f"got radius={radius!r} for kernel {name!r}.")
        self.name = name
        self._log_k = log_k
        self.compact = bool(compact)
        self.radius = float(radius) if compact else np.inf
        self._dlog_k_du = dlog_k_du
        self._log_k_sq = log_k_sq
        self._k_sq = k_sq
        self._poly_power = None
        self.family = None  # set only by _register_builtins

    def __repr__(self):
        return f"Kernel({self.name!r}, compact={self.compact})"

    def __reduce__(self):
        # Registered kernels pickle by name, so estimators holding them stay picklable.
        if _REGISTRY.get(self.name) is self:
            return (get_kernel, (self.name,))
        return object.__reduce__(self)

    def _registered(self):
        """Whether this is the registry's kernel of its name (or a copy loaded from it)."""
        kern = _REGISTRY.get(self.name)
        return kern is not None and (kern is self or vars(kern) == vars(self))

    def __getstate__(self):
        # skops saves the state, not ``__reduce__``: a registered kernel by its name (its
        # functions are closures, which neither skops nor pickle can save), others whole.
        if self._registered():
            return {"registered_name": self.name}
        local = [k for k, v in vars(self).items() if "<" in getattr(v, "__qualname__", "")]
        if local:                    # a lambda or a closure: pickle and skops cannot save it
            raise TypeError(
                f"kernel {self.name!r} holds functions defined inside another function "
                f"({', '.join(local)}), which cannot be saved; register it with "
                f"register_kernel({self.name!r}, func) and pass kernel={self.name!r} (register "
                f"it again before loading).")
        return dict(vars(self))

    def __setstate__(self, state):
        if set(state) == {"registered_name"}:
            state = vars(get_kernel(state["registered_name"]))
        vars(self).update(state)

    @property
    def differentiable(self):
        return self._dlog_k_du is not None

    def log_k(self, u):
        """Log kernel of the scaled distance ``u`` (``-inf`` outside the support)."""
        u = np.abs(np.asarray(u, dtype=np.float64))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(self._log_k(u), dtype=np.float64)

    def k(self, u):
        """Kernel value ``K(u)`` (``exp(log_k(u))``)."""
        return np.exp(self.log_k(u))

    def log_k_sq(self, u2):
        """``log_k(sqrt(u2))`` for squared scaled distances ``u2`` (clipped at 0)."""
        u2 = np.maximum(np.asarray(u2, dtype=np.float64), 0.0)
        if self._log_k_sq is None:
            return self.log_k(np.sqrt(u2))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(self._log_k_sq(u2), dtype=np.float64)

    def k_sq(self, u2):
        """``k(sqrt(u2))``, directly for the polynomial kernels (no log, no exp)."""
        if self._k_sq is None:
            return np.exp(self.log_k_sq(u2))
        return np.asarray(self._k_sq(np.abs(np.asarray(u2, dtype=np.float64))))

    def dlog_k_du(self, u):
        """``d log_k / du`` inside the support (0 outside); raises if not differentiable."""
        if self._dlog_k_du is None:
            raise ValueError(
                f"kernel {self.name!r} has no derivative, so it cannot be used with "
                f"bandwidth='loo-ard'; use bandwidth='loo' or a smooth kernel such as "
                f"'gaussian'."
            )
        u = np.abs(np.asarray(u, dtype=np.float64))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            g = np.asarray(self._dlog_k_du(u), dtype=np.float64)
        return np.where(_inside(u, self.radius, True) & np.isfinite(g), g, 0.0)


_REGISTRY = {}
_BUILTIN_NAMES = set()  # filled once by _register_builtins; these names cannot be replaced


def _poly(const, power, exponent=2, strict=True):
    """log of ``const * (1 - u**exponent) ** power`` on u < 1."""

    def log_k(u):
        inside = _inside(u, 1.0, strict)
        val = np.log(const) + power * np.log1p(-np.minimum(u, 1.0) ** exponent)
        return np.where(inside, val, -np.inf)

    def dlog(u):
        return power * (-exponent * u ** (exponent - 1)) / (1.0 - u**exponent)

    return log_k, dlog


def _poly_sq(u2, const, power):
    """``const * max(1 - u2, 0) ** power`` with in-place passes (no slow float pow)."""
    base = np.subtract(1.0, u2)
    np.maximum(base, 0.0, out=base)
    out = base.copy() if power > 1 else base
    for _ in range(power - 1):
        out *= base
    out *= const
    return out


def _sigmoid_log_k(u):
    """The registry's ``"sigmoid"`` kernel, the hyperbolic-secant density, in log space.

    ``K(u) = 2 / (pi (e^u + e^-u)) = sech(u) / pi``: a smoothing density of the scaled
    distance (positive, even, integrating to 1, decreasing in ``|u|``), the kernel named
    "sigmoid" in the usual tables of smoothing kernels. It is not the "sigmoid" kernel of
    support vector machines, ``tanh(a <x, y> + c)``: that is a function of an inner
    product, not of a distance, takes negative values and is not a density, so it cannot
    weight a Nadaraya-Watson mean (negative weights, or weights summing to nearly zero,
    put the prediction outside the range of the targets). The signs matter too: ``K``
    decreases because ``e^u`` stands in its denominator, as the Gaussian's ``exp(-u^2 / 2)``
    does because of its minus; the source material prints that exponent as
    ``exp(+u^2 / 2)``, a sign slip under which the farthest point would weigh most.
    Written as ``log(2 / pi) - u - log1p(exp(-2u))`` for ``u >= 0``, which neither
    overflows nor underflows to ``-inf`` at large ``u``.
    """
    return np.log(2.0 / np.pi) - u - np.log1p(np.exp(-2.0 * u))


def _register_builtins():
    def gauss(u):
        return -0.5 * u * u - 0.5 * _LOG_2PI

    register_kernel("gaussian", gauss, log=True, dlog_k_du=lambda u: -u,
                    _log_k_sq=lambda u2: -0.5 * u2 - 0.5 * _LOG_2PI)
    for name, const, power, expo in [("epanechnikov", 0.75, 1, 2), ("biweight", 15 / 16, 2, 2),
                                     ("triweight", 35 / 32, 3, 2), ("tricube", 70 / 81, 3, 3),
                                     ("triangular", 1.0, 1, 1)]:
        log_k, dlog = _poly(const, power, expo)
        kern = register_kernel(name, log_k, log=True, compact=True, dlog_k_du=dlog)
        if expo == 2:  # a polynomial in u^2: evaluate it directly on the hot path
            kern._k_sq = lambda u2, c=const, p=power: _poly_sq(u2, c, p)
            kern._poly_power = power  # K(u) = const * max(1 - u^2, 0) ** power
    tophat = register_kernel("tophat", lambda u: np.where(u <= 1.0, np.log(0.5), -np.inf),
                             log=True, compact=True)
    tophat._k_sq = lambda u2: np.where(u2 <= 1.0, 0.5, 0.0)
    register_kernel(
        "cosine",
        lambda u: np.where(u < 1.0, np.log(np.pi / 4 * np.cos(np.pi / 2 * np.minimum(u, 1))),
                           -np.inf),
        log=True, compact=True, dlog_k_du=lambda u: -np.pi / 2 * np.tan(np.pi / 2 * u))
    register_kernel("laplacian", lambda u: -u - np.log(2.0), log=True,
                    dlog_k_du=lambda u: -np.ones_like(u))
    register_kernel("logistic", lambda u: -u - 2.0 * np.log1p(np.exp(-u)), log=True,
                    dlog_k_du=lambda u: -np.tanh(u / 2.0))
    register_kernel("sigmoid", _sigmoid_log_k, log=True, dlog_k_du=lambda u: -np.tanh(u))
    for name, kern in _REGISTRY.items():
        kern.family = name
    _BUILTIN_NAMES.update(_REGISTRY)


def register_kernel(name, func, *, compact=False, radius=1.0, log=False, dlog_k_du=None,
                    _log_k_sq=None):
    """Register a kernel so that estimators accept it by name.

    Parameters
    ----------
    name : str
        Registry name. A name a user registered before is replaced; the built-in
        names (``available_kernels()`` at import) cannot be, since estimators take
        closed-form fast paths for them: choose another name.
    func : callable
        Vectorised ``k(u)`` (non-negative) of the scaled distance ``u >= 0``, or
        ``log k(u)`` when ``log=True`` (preferred: exact tails, no underflow).
    compact : bool, default=False
        Whether ``k(u) = 0`` for ``u > radius``.
    radius : float, default=1.0
        Support radius for a compact kernel.
    log : bool, default=False
        Whether ``func`` returns the log kernel.
    dlog_k_du : callable, default=None
        Optional derivative of ``log k`` in ``u``, enabling ``bandwidth="loo-ard"``.

    Returns
    -------
    kernel : Kernel

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.kernels import register_kernel, get_kernel
    >>> _ = register_kernel("cauchy", lambda u: 1.0 / (np.pi * (1.0 + u**2)))
    >>> print(round(float(get_kernel("cauchy").k(1.0)), 4))
    0.1592
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"kernel name must be a non-empty str; got {name!r}.")
    if not callable(func):
        raise TypeError(f"kernel function must be callable; got {type(func).__name__}.")
    if name in _BUILTIN_NAMES:
        raise ValueError(
            f"{name!r} is a built-in kernel and cannot be replaced; register your kernel "
            f"under another name (e.g. {name + '_custom'!r}) or pass the callable itself."
        )
    log_k = func if log else (lambda u, _f=func: np.log(_f(u)))
    kern = Kernel(name, log_k, compact=compact, radius=radius, dlog_k_du=dlog_k_du,
                  log_k_sq=_log_k_sq)
    _check_kernel(kern)
    _REGISTRY[name] = kern
    return kern


def unregister_kernel(name):
    """Remove a kernel registered with :func:`register_kernel`.

    Parameters
    ----------
    name : str
        A name registered by the user; built-in kernels cannot be removed.

    Examples
    --------
    >>> import numpy as np
    >>> from nlpfeat.kernels import available_kernels, register_kernel, unregister_kernel
    >>> _ = register_kernel("box2", lambda u: np.where(u <= 2.0, 0.25, 0.0))
    >>> unregister_kernel("box2")
    >>> "box2" in available_kernels()
    False
    """
    if name in _BUILTIN_NAMES:
        raise ValueError(f"{name!r} is a built-in kernel and cannot be unregistered.")
    if name not in _REGISTRY:
        raise KeyError(f"no kernel registered under {name!r}; registered: "
                       f"{available_kernels()}.")
    del _REGISTRY[name]


def available_kernels():
    """Sorted names of the registered kernels.

    Examples
    --------
    >>> from nlpfeat.kernels import available_kernels
    >>> [name for name in available_kernels() if name.startswith("t")]
    ['tophat', 'triangular', 'tricube', 'triweight']
    """
    return sorted(_REGISTRY)


def _check_kernel(kern):
    """A user kernel must give finite-or--inf log values, not NaN or +inf, on a probe."""
    probe = np.linspace(0.0, 3.0, 7)
    val = kern.log_k(probe)
    if val.shape != probe.shape or np.isnan(val).any() or np.isposinf(val).any():
        raise ValueError(
            f"kernel {kern.name!r} must be a vectorised function returning non-negative "
            f"finite values of the same shape as its input; on u={probe.tolist()} it "
            f"returned {np.exp(val) if val.shape == probe.shape else val!r}."
        )
    if np.isneginf(val[0]):
        raise ValueError(f"kernel {kern.name!r} must be positive at u=0; got k(0)=0.")


def get_kernel(kernel):
    """Resolve ``kernel`` (name, :class:`Kernel` or callable ``k(u)``) to a :class:`Kernel`.

    Parameters
    ----------
    kernel : str, Kernel or callable
        A registered name (see :func:`available_kernels`), a :class:`Kernel`, or a
        vectorised callable ``k(u) >= 0`` of the scaled distance (treated as a
        non-compact kernel without gradient).

    Returns
    -------
    kernel : Kernel

    Examples
    --------
    >>> from nlpfeat.kernels import get_kernel
    >>> kern = get_kernel("gaussian")
    >>> print(np.round(kern.log_k([0.0, 1.0]), 4))
    [-0.9189 -1.4189]
    >>> get_kernel(lambda u: np.exp(-u)).compact
    False
    """
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str):
        try:
            return _REGISTRY[kernel]
        except KeyError:
            raise ValueError(
                f"Unknown kernel {kernel!r}. Valid kernels are {available_kernels()}, "
                f"or pass a callable k(u) / register one with register_kernel."
            ) from None
    if callable(kernel):
        name = getattr(kernel, "__name__", "callable")
        kern = Kernel(name, lambda u, _f=kernel: np.log(_f(u)))
        _check_kernel(kern)
        return kern
    raise TypeError(
        f"kernel must be a str among {available_kernels()}, a Kernel or a callable; "
        f"got {type(kernel).__name__}."
    )


_register_builtins()
