"""The migration page's calls bind to the real signatures, nlpfeat's and the peers'.

``docs/migration.md`` sets each peer's call beside nlpfeat's in tables. Every code span
of a table's first two columns that parses as Python is walked, and each call in it is
bound (``inspect.Signature.bind``) to the object it names: a misspelt or renamed parameter,
a missing required argument or one positional argument too many fails. nlpfeat's column
is always checked; a peer's column is checked where that peer is installed (skipped, and
reported as skipped, where it is not). A name the page uses that the tables below do not
know fails too, so a new row cannot escape the check.
"""
import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "migration.md"

#: name on the page -> "module:qualified name", per peer (the first column)
PEERS = {
    "sklearn": {
        "CountVectorizer": "sklearn.feature_extraction.text:CountVectorizer",
        "TfidfVectorizer": "sklearn.feature_extraction.text:TfidfVectorizer",
        "HashingVectorizer": "sklearn.feature_extraction.text:HashingVectorizer",
        "TfidfTransformer": "sklearn.feature_extraction.text:TfidfTransformer",
        "LatentDirichletAllocation": "sklearn.decomposition:LatentDirichletAllocation",
        "NMF": "sklearn.decomposition:NMF",
        "TruncatedSVD": "sklearn.decomposition:TruncatedSVD",
        "GridSearchCV": "sklearn.model_selection:GridSearchCV",
    },
    "gensim": {
        "TfidfModel": "gensim.models:TfidfModel",
        "LogEntropyModel": "gensim.models:LogEntropyModel",
        "OkapiBM25Model": "gensim.models:OkapiBM25Model",
        "LdaModel": "gensim.models:LdaModel",
        "LsiModel": "gensim.models:LsiModel",
        "Nmf": "gensim.models:Nmf",
        "CoherenceModel": "gensim.models:CoherenceModel",
        "Phrases": "gensim.models:Phrases",
        "Word2Vec": "gensim.models:Word2Vec",
    },
    "nltk": {
        "BigramCollocationFinder": "nltk.collocations:BigramCollocationFinder",
        "TrigramCollocationFinder": "nltk.collocations:TrigramCollocationFinder",
        "BigramAssocMeasures": "nltk.collocations:BigramAssocMeasures",
        "finder": "nltk.collocations:BigramCollocationFinder",
    },
    "statsmodels": {
        "KernelReg": "statsmodels.nonparametric.kernel_regression:KernelReg",
    },
    "torch": {
        "MultiheadAttention": "torch.nn:MultiheadAttention",
        "TransformerEncoderLayer": "torch.nn:TransformerEncoderLayer",
        "mha": "torch.nn:MultiheadAttention.forward",
        "module": "torch.nn:Module",
    },
}
#: attributes of a peer's object whose type the class does not say (instance attributes)
ATTRIBUTE_TYPES = {"wv": "gensim.models:KeyedVectors"}
#: names of the nlpfeat column that are not nlpfeat's own, and the page's variables
NLPFEAT_EXTRA = {
    "GridSearchCV": "sklearn.model_selection:GridSearchCV",
    "mha": "nlpfeat.attention:MultiHeadAttention",
    "collocations": "nlpfeat.text:Collocations",
}
#: methods that return the estimator itself
RETURNS_SELF = {"fit", "partial_fit", "set_params", "from_words"}


def _load(spec):
    module_name, qualname = spec.split(":")
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _nlpfeat_names():
    names = {}
    for module_name in ("nlpfeat", "nlpfeat.text", "nlpfeat.kernels", "nlpfeat.attention",
                        "nlpfeat.attention.layers"):
        module = importlib.import_module(module_name)
        for name in module.__all__:
            names[name] = getattr(module, name)
    names.update({name: _load(spec) for name, spec in NLPFEAT_EXTRA.items()})
    return names


def _rows():
    """(section, peer cell, nlpfeat cell) of every table row with calls."""
    section, rows = None, []
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("| `") and section != "Known differences from scikit-learn and gensim":
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            rows.append((section, cells[0], cells[1]))
    return rows


def _calls(cell):
    for span in re.findall(r"`([^`]+)`", cell):
        try:
            tree = ast.parse(span, mode="eval")
        except SyntaxError:
            continue  # a fragment such as ``.chi_sq``, not a call
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                yield span, node


class _Resolver:
    def __init__(self, names):
        self.names = names

    def target(self, func):
        """The object a call's ``func`` names, and whether it needs a ``self``."""
        if isinstance(func, ast.Name):
            obj = self.names.get(func.id)
            if obj is None:
                raise LookupError(f"unknown name {func.id!r}: add it to the test's tables")
            return obj, inspect.isfunction(obj) and "." in obj.__qualname__
        if isinstance(func, ast.Attribute):
            owner = self.type_of(func.value)
            static = inspect.getattr_static(owner, func.attr)
            method = getattr(owner, func.attr)
            unbound = inspect.isfunction(static) and not isinstance(static, staticmethod)
            return method, unbound
        raise LookupError(f"cannot resolve {ast.unparse(func)}")

    def type_of(self, node):
        """The class of what ``node`` evaluates to."""
        if isinstance(node, ast.Name):
            obj = self.names.get(node.id)
            if obj is None:
                raise LookupError(f"unknown name {node.id!r}: add it to the test's tables")
            return obj if inspect.isclass(obj) else type(obj)
        if isinstance(node, ast.Attribute):
            if node.attr in ATTRIBUTE_TYPES:
                return _load(ATTRIBUTE_TYPES[node.attr])
            return getattr(self.type_of(node.value), node.attr)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in RETURNS_SELF:
                return self.type_of(node.func.value)
            obj, _ = self.target(node.func)
            if inspect.isclass(obj):
                return obj
        raise LookupError(f"the type of {ast.unparse(node)} is unknown")


def _check_cell(resolver, cell):
    checked = 0
    for span, call in _calls(cell):
        obj, needs_self = resolver.target(call.func)
        signature = inspect.signature(obj)
        args = [None] * (len(call.args) + needs_self)
        kwargs = {kw.arg: None for kw in call.keywords}
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise AssertionError(f"{span!r}: {ast.unparse(call)} does not bind to "
                                 f"{obj.__qualname__}{signature}: {exc}") from None
        checked += 1
    return checked


def test_the_page_is_in_the_site():
    index = (PAGE.parent / "index.rst").read_text(encoding="utf-8")
    assert "\n   migration\n" in index
    assert len(_rows()) >= 25


def test_every_nlpfeat_call_binds_to_its_signature():
    resolver = _Resolver(_nlpfeat_names())
    for section, _, cell in _rows():
        assert _check_cell(resolver, cell) > 0, f"{section}: no nlpfeat call in {cell!r}"


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_every_peer_call_binds_to_its_signature(peer):
    pytest.importorskip(peer)
    section_of = {"sklearn": "scikit-learn", "torch": "PyTorch"}
    resolver = _Resolver({name: _load(spec) for name, spec in PEERS[peer].items()})
    rows = [cell for section, cell, _ in _rows() if section == section_of.get(peer, peer)]
    assert rows, peer
    for cell in rows:
        assert _check_cell(resolver, cell) > 0, f"{peer}: no call in {cell!r}"
