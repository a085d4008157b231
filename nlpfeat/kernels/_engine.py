"""Choice of the numeric engine of the Nadaraya-Watson estimators: numba or numpy.

Importing this module imports neither numba nor the compiled module: the compiled
functions are compiled (or loaded from numba's on-disk cache) on first use.
"""
import importlib.util
import warnings

__all__ = ["ENGINES", "resolve_engine"]

ENGINES = ("auto", "numba", "numpy")
_WARNED = []   # "auto" without numba warns once per process


def _numba_available():
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):
        return False


def resolve_engine(engine):
    """``"auto"`` -> ``"numba"`` when numba can be imported, else ``"numpy"`` (one warning).

    ``"numba"`` without numba raises an ImportError saying how to fix it.
    """
    if engine == "numpy":
        return "numpy"
    if _numba_available():
        return "numba"
    if engine == "numba":
        raise ImportError("engine='numba' needs the numba package: pip install numba, or "
                          "use engine='numpy'.")
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn("numba is not installed: the kernel estimators (Nadaraya-Watson, "
                      "kernel attention pooling, locally weighted bag of words) run on the "
                      "slower numpy engine (pip install numba, or pass engine='numpy' to "
                      "silence this).", UserWarning, stacklevel=4)
    return "numpy"
