"""The layout rules of the package (docs/guide/layout.md), checked on the source itself.

Imports flow one way (cli -> compare -> text / attention / kernels -> _validation), text
reaches the kernels only through ``kernels._shared`` and only from its ``_kernel_features``
wing, the compiled engine imports none of its callers, one module chooses the engine, the
counting engine holds no estimator, and no module grows past one screenful of concerns.
"""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nlpfeat

PACKAGE = Path(nlpfeat.__file__).resolve().parent
MAX_LINES = 700


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(module, node):
    """The nlpfeat modules an import statement of ``module`` names (the packages above them
    are not counted: importing a submodule runs its parents' faces, which is no edge)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in MODULES}
    base = node.module or ""
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    found = {f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES}
    if len(found) < len(node.names) and base in MODULES:
        found.add(base)
    return found


def _third_party(module):
    """Top-level names of the packages that ``module`` imports anywhere."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.partition(".")[0])
    return names


def _imports(module):
    """Every nlpfeat module that ``module`` imports, at module level or inside a function
    (``TYPE_CHECKING`` blocks included: a cycle there is still a cycle for a reader)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= _resolve(module, node)
    found.discard(module)
    # importing a submodule also runs its package's __init__: not an edge of its own
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def _cycle():
    """One import cycle among nlpfeat's modules, or None."""
    colour, stack = {}, []

    def visit(node):
        colour[node] = "grey"
        stack.append(node)
        for nxt in sorted(GRAPH[node]):
            if colour.get(nxt) == "grey":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in colour:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        colour[node] = "black"
        return None

    for node in sorted(GRAPH):
        if node not in colour:
            found = visit(node)
            if found:
                return found
    return None


def _is_package_edge(a, b):
    """``a`` is a package and ``b`` one of its submodules (a package's __init__ re-exporting
    its own modules is the public-face pattern, not a cycle)."""
    return b.startswith(a + ".") and MODULES[a].name == "__init__.py"


def test_no_import_cycle():
    for module in GRAPH:        # a package's face re-exporting its modules is no cycle
        GRAPH[module] = {m for m in GRAPH[module] if not _is_package_edge(module, m)}
    assert _cycle() is None, " -> ".join(_cycle())


def _importers_of(prefix):
    return {m for m, deps in GRAPH.items() if any(d.startswith(prefix) for d in deps)}


def test_imports_flow_one_way():
    def layer(module):
        if module == "nlpfeat.__main__":
            return -1
        for rank, prefix in enumerate(("nlpfeat.cli", "nlpfeat.compare")):
            if module.startswith(prefix):
                return rank
        return 2

    for module, deps in GRAPH.items():
        for dep in deps:
            assert layer(dep) >= layer(module), f"{module} imports {dep}"
    numeric = [m for m in GRAPH if m.startswith(("nlpfeat.kernels", "nlpfeat.attention"))]
    for module in numeric:
        assert not {d for d in GRAPH[module] if d.startswith("nlpfeat.text")}, module


def test_text_reaches_the_kernels_through_shared_from_one_wing():
    for module, deps in GRAPH.items():
        if not module.startswith("nlpfeat.text"):
            continue
        kernels = {d for d in deps if d.startswith("nlpfeat.kernels")}
        if kernels:
            assert kernels <= {"nlpfeat.kernels", "nlpfeat.kernels._shared"}, module
            assert module.startswith("nlpfeat.text._kernel_features") or kernels == {
                "nlpfeat.kernels"}, module


def test_the_compiled_engine_imports_none_of_its_callers():
    allowed = {"nlpfeat.kernels._kernels", "nlpfeat.kernels._pairwise", "nlpfeat.kernels._loss",
               "nlpfeat._chunking"}
    for module, deps in GRAPH.items():
        if module.startswith("nlpfeat.kernels._compiled"):
            outside = {d for d in deps if not d.startswith("nlpfeat.kernels._compiled")}
            assert outside <= allowed, (module, outside - allowed)


def test_the_counting_engine_holds_no_estimator():
    for module in MODULES:
        if module.startswith("nlpfeat.text._counting"):
            assert "sklearn" not in _third_party(module), module
            assert not {d for d in GRAPH[module] if d.startswith("nlpfeat.text.")
                        and not d.startswith(("nlpfeat.text._counting", "nlpfeat.text._base"))
                        }, module


def _engine_comparisons(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                if any(isinstance(v, ast.Constant) and v.value in ("numba", "numpy")
                       for v in values):
                    return True
    return False


#: ``engine == ...``, ``self.engine_ != ...``, ``engine in (...)``, ``== "numba"``
_ENGINE_TEST = re.compile(r"""engine_?\s*(==|!=|\bin\b)\s*[("'\w]|[=!]=\s*["'](numba|numpy)["']""")


def test_one_module_chooses_the_engine():
    choosing = sorted(m for m, p in MODULES.items()
                      if _engine_comparisons(p) or _ENGINE_TEST.search(p.read_text("utf-8")))
    assert choosing == ["nlpfeat.kernels._engine"]


def test_no_module_is_over_the_line_limit():
    long = {m: n for m, p in MODULES.items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long


def test_text_is_a_face_over_wings():
    text = PACKAGE / "text"
    wings = [p for p in text.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    modules = [p for p in text.glob("*.py")]
    assert len(wings) >= 5
    assert len(modules) <= 4, [p.name for p in modules]
    assert (PACKAGE / "cli" / "__init__.py").exists()
    assert (PACKAGE / "datasets" / "__init__.py").exists()


@pytest.mark.parametrize("packages, forbidden", [
    # "kernels knows nothing of text" holds at run time, and the numeric core loads
    # neither the attention estimators nor numba (compiled code loads on first use)
    ("nlpfeat.kernels", ("nlpfeat.text", "nlpfeat.attention", "numba")),
    ("nlpfeat.attention", ("nlpfeat.text",)),
    ("nlpfeat, nlpfeat.kernels, nlpfeat.text", ("numba",)),
])
def test_importing_a_package_loads_nothing_it_does_not_need(packages, forbidden):
    code = (f"import sys, {packages}; "
            f"print(sorted(m for m in sys.modules if m in {forbidden!r} "
            f"or m.startswith(tuple(f + '.' for f in {forbidden!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out
