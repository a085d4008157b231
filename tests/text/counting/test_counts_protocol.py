"""The Counts protocol of the counting engine, and the declared border of the Dask glue."""
import ast
import pathlib

import pytest

import nlpfeat
from nlpfeat.text._counting import Counts
from nlpfeat.text._counting._ngram_counts import NgramCounts
from nlpfeat.text._counting._pair_counts import PairCounts
from nlpfeat.text._counting._term_counts import TermCounts, count_terms
from nlpfeat.text._counting._vocabulary import count_chunks

ROOT = pathlib.Path(nlpfeat.__file__).parent
DOCS = [["new", "york", "city"], ["new", "york"], ["big", "city"]]


@pytest.mark.parametrize("counts", [TermCounts(), PairCounts(2), NgramCounts(2, 2)],
                         ids=["TermCounts", "PairCounts", "NgramCounts"])
def test_every_counting_class_follows_the_protocol(counts):
    assert isinstance(counts, Counts)


def _batches(kind, docs, start):
    if kind == "TermCounts":
        counts = TermCounts()
        for chunk in count_chunks(docs, counts.vocabulary, learn=True, start=start):
            counts.add(chunk, start)
        return counts
    counts = PairCounts(2) if kind == "PairCounts" else NgramCounts(2, 2)
    return counts.add(docs, start)


@pytest.mark.parametrize("kind", ["TermCounts", "PairCounts", "NgramCounts"])
def test_add_then_merge_equals_one_add(kind):
    merged = _batches(kind, DOCS[:1], 0).merge(_batches(kind, DOCS[1:], 1))
    whole = _batches(kind, DOCS, 0)
    assert merged.n_documents == whole.n_documents == 3
    parts = merged.split(2)
    assert len(parts) == 2 and parts[0] is not None


def test_term_counts_split_into_disjoint_shards():
    counts = count_terms(DOCS, TermCounts())
    parts = counts.split(3)
    assert sum(p.n_terms for p in parts) == counts.n_terms


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [alias.name for alias in node.names]


def test_estimators_import_only_the_declared_names_of_the_dask_glue():
    from nlpfeat.text import _dask

    for path in (ROOT / "text").rglob("*.py"):
        if "_dask" in path.parts:
            continue
        for module, names in _imports(path):
            assert not module.startswith("nlpfeat.text._dask."), (path, module)
            if module == "nlpfeat.text._dask":
                assert set(names) <= set(_dask.__all__), (path, names)


def test_the_dask_glue_calls_no_private_method_of_an_estimator():
    for path in (ROOT / "text" / "_dask").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "estimator"):
                assert not node.attr.startswith("_") or node.attr.startswith("__"), (
                    path, node.attr)


def test_the_counting_engine_imports_no_estimator_and_no_sklearn():
    for path in (ROOT / "text" / "_counting").glob("*.py"):
        for module, _ in _imports(path):
            assert not module.startswith("sklearn"), (path, module)
            if module.startswith("nlpfeat"):
                assert module.startswith(("nlpfeat.text._counting", "nlpfeat._chunking",
                                          "nlpfeat.text._base._documents")), (path, module)
