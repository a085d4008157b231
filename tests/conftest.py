"""Test-suite settings: a headless matplotlib backend and one BLAS thread.

Tests make many small BLAS calls, for which one thread is fastest, and CI machines have
two cores: oversubscribed BLAS threads (pytest plus subprocesses) slowed some calls a
hundredfold when measured. Subprocesses (CLI and example tests) inherit the variables.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")

try:  # threadpoolctl comes with scikit-learn
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - the environment variables above still apply
    pass
else:
    threadpool_limits(1)
