"""The estimator checks on read-only memory maps of the regressors compile every predict
loop once more, for read-only arrays (about 17 CPU-s into an empty numba cache): they run
in the slow pass. The classifier's, which compile little, stay in the README's command."""
import pytest

SLOW_CHECKS = ("check_estimators_pickle(readonly_memmap=True)",)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if (item.path.name == "test_estimator_checks.py" and "Regressor" in item.name
                and any(check in item.name for check in SLOW_CHECKS)):
            item.add_marker(pytest.mark.slow)
