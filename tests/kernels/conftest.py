"""The estimator checks that predict from read-only memory maps compile every predict loop
once more, for read-only arrays (10-18 CPU-s into an empty numba cache): they run in the
slow pass. The other read-only checks (fit on a memory map) stay in the README's command."""
import pytest

SLOW_CHECKS = ("check_estimators_pickle(readonly_memmap=True)",)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if (item.path.name == "test_estimator_checks.py"
                and any(check in item.name for check in SLOW_CHECKS)):
            item.add_marker(pytest.mark.slow)
