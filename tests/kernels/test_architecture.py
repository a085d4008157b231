"""The layout of the kernels: one engine dispatch, a compiled package that imports none of
its callers, text reaching the kernels through their internal API only."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nlpfeat

ROOT = Path(nlpfeat.__file__).parent
KERNELS = ROOT / "kernels"
KERNEL_FEATURES = ROOT / "text" / "_kernel_features"


def _imports(path):
    """Every module imported by ``path``, at module level or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("path", sorted((KERNELS / "_compiled").glob("*.py")), ids=lambda p: p.name)
def test_the_compiled_package_imports_none_of_its_callers(path):
    allowed = ("nlpfeat.kernels._compiled", "nlpfeat.kernels._pairwise",
               "nlpfeat.kernels._loss", "nlpfeat._chunking")
    ours = {name for name in _imports(path) if name.startswith("nlpfeat")}
    assert {name for name in ours if not name.startswith(allowed)} == set()


def test_the_engine_is_chosen_in_one_module():
    comparison = re.compile(r"""engine_?\s*(==|!=|\bin\b)\s*[("']|==\s*["'](numba|numpy)["']""")
    paths = sorted(KERNELS.rglob("*.py")) + sorted(KERNEL_FEATURES.glob("*.py"))
    found = {p.relative_to(ROOT).as_posix() for p in paths if comparison.search(p.read_text())}
    assert found == {"kernels/_engine.py"}


@pytest.mark.parametrize("path", sorted(KERNEL_FEATURES.glob("*.py")), ids=lambda p: p.name)
def test_text_reaches_the_kernels_through_their_internal_api(path):
    kernels = {name for name in _imports(path) if name.startswith("nlpfeat.kernels")}
    assert {name.rsplit(".", 1)[0] if name.count(".") > 2 else name
            for name in kernels} <= {"nlpfeat.kernels._shared"}


def test_importing_the_kernels_loads_no_text_module_and_no_numba():
    code = ("import sys, nlpfeat.kernels; "
            "print(sorted(m for m in sys.modules if m.startswith('nlpfeat.text') or "
            "m.split('.')[0] == 'numba'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
