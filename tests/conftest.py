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


def _assert_search_picked_the_best(search):
    """``best_params_`` is the candidate with the highest mean test score (the first of
    tied ones, as scikit-learn ranks), recomputed from ``cv_results_``."""
    import numpy as np

    means = np.asarray(search.cv_results_["mean_test_score"], dtype=float)
    assert np.isfinite(means).all(), means
    best = int(np.argmax(means))
    assert search.best_index_ == best
    assert search.best_params_ == search.cv_results_["params"][best]
    assert np.isclose(search.best_score_, means[best])


import pytest  # noqa: E402


@pytest.fixture
def assert_best_is_argmax():
    """Check a fitted search's choice against its own cross-validation table."""
    return _assert_search_picked_the_best


#: The shared Dask clusters, by fixture name: {"stack": its ExitStack, "client": its Client}
#: while it runs.
_DASK = {}
_DASK_FIXTURES = ("dask_client", "dask_process_client")
_LAST_DASK_TEST = pytest.StashKey[dict]()


def _start_dask(name):
    import contextlib

    import dask
    import distributed

    # With Dask's monitors at their defaults (an event-loop tick every 20 ms, the workers'
    # sampling profiler, work stealing every 100 ms) an idle cluster burns about a fifth
    # of a core; at these intervals about a fortieth, and it stops after its last test.
    quiet = {"distributed.admin.tick.interval": "1s",
             "distributed.admin.system-monitor.interval": "5s",
             "distributed.worker.profile.enabled": False,
             "distributed.worker.profile.interval": "1s",
             "distributed.worker.memory.monitor-interval": "1s",
             "distributed.scheduler.work-stealing-interval": "1s"}
    processes = name == "dask_process_client"
    stack = contextlib.ExitStack()
    stack.enter_context(dask.config.set(quiet))
    # Worker threads talk to the scheduler over TCP, as worker processes do: every task,
    # its arguments and its result are pickled, and the CLI's subprocesses can connect.
    cluster = stack.enter_context(distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=processes, protocol="tcp://",
        dashboard_address=":0", memory_limit="1GiB" if processes else 0))
    _DASK[name] = dict(stack=stack, client=stack.enter_context(distributed.Client(cluster)))


def _stop_dask(name=None):
    for key in [name] if name else list(_DASK):
        if key in _DASK:
            _DASK.pop(key)["stack"].close()


def _dask_fixture(name):
    pytest.importorskip("distributed")
    if name not in _DASK:
        _start_dask(name)
    return _DASK[name]["client"]


@pytest.fixture(scope="session")
def dask_client():
    """A ``distributed.Client`` of a real LocalCluster of two single-threaded workers that
    run in this process and talk to their scheduler over TCP (so tasks and results are
    pickled as on any cluster), shared by the Dask tests of the session (started by the
    first, stopped after the last); skips when distributed is missing."""
    return _dask_fixture("dask_client")


@pytest.fixture(scope="session")
def dask_process_client():
    """The same with two worker processes (fresh interpreters: what a test of the slow pass
    checks that in-process workers cannot, such as state that must travel with a task)."""
    return _dask_fixture("dask_process_client")


def _dask_fixtures_of(item):
    """The cluster fixtures an item uses, declared or named by a parameter (a test may pick
    its cluster with ``request.getfixturevalue``)."""
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        names.update(v for v in callspec.params.values() if isinstance(v, str))
    return [name for name in _DASK_FIXTURES if name in names]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    last = {}
    for item in items:
        for name in _dask_fixtures_of(item):
            last[name] = item.nodeid
    config.stash[_LAST_DASK_TEST] = last


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    if nextitem is None:
        _stop_dask()
        return
    for name, nodeid in item.config.stash.get(_LAST_DASK_TEST, {}).items():
        if item.nodeid == nodeid:
            _stop_dask(name)


def pytest_sessionfinish(session):
    _stop_dask()                      # a run stopped early (-x, Ctrl-C)


@pytest.fixture
def torch_one_thread():
    """torch, on one intra-op thread for the test (its thread pool thrashes on a busy
    2-core machine); skips when torch is not installed."""
    torch = pytest.importorskip("torch")
    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n_threads)


@pytest.fixture
def _torch_one_thread_autouse(torch_one_thread):
    """For modules that use torch in every test: ``pytestmark = usefixtures(...)``."""
    return torch_one_thread


# Property tests (tests/test_properties.py) count the examples hypothesis runs through them;
# the totals, by test outcome, are printed at the end of the run.
import collections  # noqa: E402

_RUNNING = pytest.StashKey[list]()                   # [examples run by the current test]
_TOTALS = pytest.StashKey[collections.Counter]()     # outcome -> examples


@pytest.fixture(scope="session")
def hypothesis_example_counter(request):
    """A one-item list; a property test adds 1 to it per example it runs."""
    return request.config.stash.setdefault(_RUNNING, [0])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    running = item.config.stash.get(_RUNNING, None)
    if call.when == "call" and running and running[0]:
        report = outcome.get_result()
        kind = "xfailed" if hasattr(report, "wasxfail") else report.outcome
        item.config.stash.setdefault(_TOTALS, collections.Counter())[kind] += running[0]
        running[0] = 0


def pytest_terminal_summary(terminalreporter, config):
    totals = config.stash.get(_TOTALS, None)
    if totals:
        terminalreporter.write_line("hypothesis examples run: " + ", ".join(
            f"{n} in {kind} tests" for kind, n in sorted(totals.items())))
