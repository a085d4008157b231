"""Sphinx configuration of nlpfeat's documentation site.

Build it with ``python -m sphinx -W -b html docs docs/_build/html`` (see the README).
The API reference is generated from each subpackage's ``__all__``, so that a new public
estimator appears without editing this site; the gallery shows every script of
``examples/`` and runs only the quick ones (``NLPFEAT_DOCS_RUN_EXAMPLES`` selects which,
a regular expression on the file name), showing the figures they write.
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import nlpfeat  # noqa: E402

project = "nlpfeat"
author = "the nlpfeat developers"
copyright = "the nlpfeat developers, BSD-3-Clause"
release = version = nlpfeat.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_gallery_src", "sg_execution_times.rst", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]
html_theme = "pydata_sphinx_theme"
html_theme_options = {"navigation_with_keys": False, "show_prev_next": False,
                      "show_toc_level": 2}   # "On this page" lists the methods too
html_title = f"nlpfeat {release}"
html_static_path = ["_static"]
html_css_files = ["nlpfeat.css"]
# Docutils' "smart quotes" turn ``--with-torch`` into an en dash and straight quotes into
# curly ones, so that a command copied from the page no longer runs: keep the text as typed.
smartquotes = False

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
myst_heading_anchors = 3
# The gallery's configuration holds callables (the scraper), which Sphinx cannot pickle
# into its environment cache; it only means a full rebuild when they change.
suppress_warnings = ["myst.header", "config.cache"]

# ----------------------------------------------------------------------------- API pages
SECTIONS = [
    ("nlpfeat.text", "Text features"),
    ("nlpfeat.kernels", "Kernel regression"),
    ("nlpfeat.attention", "Neural attention (numpy)"),
    ("nlpfeat.attention.layers", "Attention layers"),
    ("nlpfeat.attention.functional", "Attention functions"),
    ("nlpfeat.attention.optim", "Optimisers and initialisation"),
    ("nlpfeat.text.tokenize", "Tokenizers"),
    ("nlpfeat.datasets", "Datasets"),
    ("nlpfeat.viz", "Figures"),
    ("nlpfeat.compare", "The comparison"),
    ("nlpfeat", "Saving models", ["trusted_types"]),   # the top level's own names
]


def _public(module_name):
    import importlib

    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if obj is None or not callable(obj) or type(obj).__name__ == "module":
            continue
        out.append((name, obj))
    return out


def _write_api():
    lines = ["API reference", "=============", "",
             "Every public estimator, function and class, by public module (generated from",
             "each module's ``__all__``). The estimators are also importable from the top",
             "level, e.g. ``from nlpfeat import NadarayaWatsonRegressor``.", ""]
    seen = set()   # an object exported by two modules (attention and attention.layers)
    for module_name, title, *names in SECTIONS:   # gets one page, under the first
        lines += [title, "-" * len(title), "", f".. currentmodule:: {module_name}", "",
                  ".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        listed = _public(module_name)
        if names:                                  # a module's chosen names only
            listed = [(name, obj) for name, obj in listed if name in names[0]]
        for name, obj in listed:
            if id(obj) not in seen:
                seen.add(id(obj))
                lines.append(f"   {name}")
        lines.append("")
    (HERE / "api.rst").write_text("\n".join(lines), encoding="utf-8")
    # autosummary writes a page per listed name; pages left from an earlier list (a name
    # that moved or was removed) would be orphans, a warning under -W
    shutil.rmtree(HERE / "generated", ignore_errors=True)


_write_api()

# ----------------------------------------------------------------------------- gallery
def _gallery_sources():
    """Copies of ``examples/`` whose docstrings open with an rST title.

    The scripts' docstrings start with a one-line summary, as any Python module's; the
    gallery needs that line as a page title, so the copies underline it. The scripts
    themselves stay plain Python.
    """
    import ast

    target = HERE / "_gallery_src"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    shutil.copy(ROOT / "examples" / "README.rst", target / "README.rst")
    for script in sorted((ROOT / "examples").glob("*.py")):
        if script.name.startswith("_"):
            continue
        text = script.read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(text), clean=False)
        if docstring:
            title = docstring.strip().splitlines()[0].strip()
            start = text.index(title)
            text = (text[:start] + title + "\n" + "=" * len(title) + "\n"
                    + text[start + len(title):])
        (target / script.name).write_text(text, encoding="utf-8")
    return target


_FIGURES = Path(tempfile.mkdtemp(prefix="nlpfeat-docs-figures-"))


class FiguresWritten:
    """A sphinx-gallery scraper for examples that save their figures with ``--out``.

    The examples write PNG files instead of leaving pyplot figures open (so that they run
    the same from a shell); after each executed block this scraper moves the PNG files
    that appeared in the ``--out`` folder into the gallery and returns their rST.
    """

    def __repr__(self):
        return "FiguresWritten"

    def __call__(self, block, block_vars, gallery_conf):
        from sphinx_gallery.scrapers import figure_rst

        pngs = sorted(_FIGURES.rglob("*.png"))
        image_names = []
        for png, target in zip(pngs, block_vars["image_path_iterator"]):
            shutil.move(str(png), target)
            image_names.append(target)
        return figure_rst(image_names, gallery_conf["src_dir"])


def _argv(gallery_conf, script_vars):
    """The quick form of an example: ``--quick``, and ``--out`` where the script takes it."""
    import re

    source = Path(script_vars["src_file"]).read_text(encoding="utf-8")
    options = set(re.findall(r"add_argument\(\s*\"(--[a-z-]+)\"", source))
    argv = ["--quick"]
    if "--out" in options:
        argv += ["--out", str(_FIGURES)]
    return argv


# sphinx-gallery keeps an example's output while the script is unchanged, so that what a
# build shows would depend on the builds before it (a script run by an earlier build
# would show its output in a build that runs only some); start from nothing instead.
shutil.rmtree(HERE / "auto_examples", ignore_errors=True)

from sphinx_gallery.sorting import FileNameSortKey  # noqa: E402

sphinx_gallery_conf = {
    "examples_dirs": str(_gallery_sources()),
    "gallery_dirs": "auto_examples",
    "filename_pattern": os.environ.get("NLPFEAT_DOCS_RUN_EXAMPLES", r"/[^_/][^/]*\.py$"),
    "image_scrapers": (FiguresWritten(),),
    "reset_argv": _argv,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": FileNameSortKey,   # a class: sphinx-gallery 0.15 takes no name
    "show_memory": False,
    "plot_gallery": "True",
}
