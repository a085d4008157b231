"""The versions we declare are the versions we test.

``setup.cfg`` states a minimum for every dependency, the required ones and the extras';
the oldest-versions job of ``.ci/run`` installs exactly those minimums from
``.ci/oldest-constraints.txt`` and runs the test suite on them. These checks keep the two
files saying the same thing, so a raised minimum is tested from the commit that raises it.
"""
import configparser
import re
from pathlib import Path

import pytest

packaging = pytest.importorskip("packaging")
from packaging.requirements import Requirement  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402
from packaging.version import Version  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _declared():
    """Every requirement of setup.cfg, as (where, Requirement)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    sections = {"install_requires": config["options"]["install_requires"]}
    sections.update(config["options.extras_require"])
    return [(where, Requirement(line.strip()))
            for where, text in sections.items()
            for line in text.splitlines() if line.strip()]


def _minimum(requirement):
    lower = [Version(spec.version) for spec in requirement.specifier if spec.operator == ">="]
    assert len(lower) == 1, f"{requirement}: one lower bound (>=) expected"
    return lower[0]


def _constraints():
    pins = {}
    for line in (ROOT / ".ci" / "oldest-constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            requirement = Requirement(line)
            (spec,) = requirement.specifier
            assert spec.operator == "==", line
            pins[canonicalize_name(requirement.name)] = Version(spec.version)
    return pins


def test_every_dependency_has_one_minimum_wherever_it_is_declared():
    minimums = {}
    for where, requirement in _declared():
        name = canonicalize_name(requirement.name)
        minimums.setdefault(name, {})[where] = _minimum(requirement)
    differing = {name: found for name, found in minimums.items() if len(set(found.values())) > 1}
    assert not differing, differing


def test_the_oldest_versions_job_installs_every_declared_minimum():
    pins = _constraints()
    for where, requirement in _declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{name} ({where}) is not pinned in .ci/oldest-constraints.txt"
        assert pins[name] == _minimum(requirement), (name, pins[name], _minimum(requirement))
        for extra in requirement.extras:       # dask[distributed]: the extra's package too
            assert canonicalize_name(extra) in pins, f"{extra} of {name} is not pinned"
            assert pins[canonicalize_name(extra)] == pins[name], extra


def test_the_ci_script_runs_the_suite_on_the_oldest_versions():
    script = (ROOT / ".ci" / "run").read_text()
    assert "-c .ci/oldest-constraints.txt" in script
    job = script.split("-c .ci/oldest-constraints.txt", 1)[1]
    assert re.search(r"^(time )?pytest$", job, re.MULTILINE), job
