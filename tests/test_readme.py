"""Every code block of the README and of the user guide's pages works as written.

The README's first screen holds the two commands and a Pipeline; the user guide's pages
(``docs/guide/*.md``, on the site beside the README) hold the rest, and are read the same
way, so they are checked the same way:

- A ```python block runs as a script (``python block.py``) in a subprocess, in an empty
  temporary folder, and must exit 0: it may use only the bundled data and the files it
  writes itself. A block guarded by ``if __name__ == "__main__":`` (the Dask block, whose
  local cluster starts worker processes that re-import the script) runs as that script.
- A block that imports an optional dependency needs the extra that provides it
  (``setup.cfg``) named in a ``pip install`` line of a ```bash block of the same section,
  before it: the reader installs what the block needs where the block is.
- A ```bash block is checked, not run: its ``pip install`` lines name extras that
  ``setup.cfg`` declares; its ``nlpfeat`` lines name a subcommand and options the parser
  has (a concrete line, without ``[`` or ``|``, is parsed whole by that parser, so its
  values and choices are checked too); ``python examples/NAME.py`` lines name a script and
  options it takes; the docs build line is the one ``tests/test_docs.py`` runs; a command
  this test does not know fails, so that a new kind of line gets a check.
"""
import ast
import configparser
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs" / "guide").glob("*.md"))]
#: import names of distributions whose name differs
IMPORT_NAMES = {"dask[distributed]": ["dask", "distributed"]}
#: commands a bash block may hold that other tests run (the suite itself, the venv)
KNOWN = {"pytest", "python3 -m venv .venv", ". .venv/bin/activate"}
DOCS_BUILD = "python -m sphinx -W -b html docs docs/_build/html"


def _blocks():
    """(section, language, code) of every fenced block, in order; a section is a
    document's name and the title of its ``#`` or ``##`` heading."""
    blocks = []
    for document in DOCUMENTS:
        text, section = document.read_text(encoding="utf-8"), document.name
        for match in re.finditer(r"^(##? [^\n]*)$|^```(\w*)\n(.*?)^```$", text, re.M | re.S):
            if match.group(1):
                section = f"{document.name}: {match.group(1).lstrip('#').strip()}"
            else:
                blocks.append((section, match.group(2), match.group(3)))
    return blocks


def _extras():
    """extra -> the import names it installs."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    extras = {}
    for extra, requirements in cfg["options.extras_require"].items():
        names = set()
        for requirement in requirements.split():
            distribution = re.split(r"[<>=!~; ]", requirement)[0]
            names.update(IMPORT_NAMES.get(distribution, [distribution.split("[")[0]]))
        extras[extra] = names
    return extras


def _optional_imports(code):
    optional = set().union(*_extras().values())
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names & optional


def _commands(code):
    """The commands of a bash block: lines without comments, split at ``&&``."""
    for line in code.splitlines():
        line = line.split("   #")[0].split("  #")[0].strip()
        if line and not line.startswith("#"):
            yield from (part.strip() for part in line.split("&&"))


def _installed_extras(command):
    words = shlex.split(command)
    extras = set()
    for word in words[2:]:
        match = re.fullmatch(r"(?:\.|nlpfeat)\[([\w,\s]+)\]", word)
        if match:
            extras.update(e.strip() for e in match.group(1).split(","))
    return extras


PYTHON_BLOCKS = [(s, code) for s, lang, code in _blocks() if lang == "python"]
BASH_BLOCKS = [(s, code) for s, lang, code in _blocks() if lang == "bash"]


def test_the_readme_has_its_blocks():
    assert len(PYTHON_BLOCKS) >= 3 and len(BASH_BLOCKS) >= 2
    assert BASH_BLOCKS[0][0].startswith("README.md")
    first = next(iter(_commands(BASH_BLOCKS[0][1])))
    assert first.startswith("pip install -e"), "the README opens with the install command"


@pytest.mark.parametrize("index", [
    # a block that starts a Dask cluster (15 CPU-s) runs in .ci/run's slow pass
    pytest.param(i, marks=pytest.mark.slow) if "Client(" in code or "LocalCluster(" in code
    else i for i, (_, code) in enumerate(PYTHON_BLOCKS)])
def test_python_block_runs_as_written(index, tmp_path):
    section, code = PYTHON_BLOCKS[index]
    script = tmp_path / f"readme_block_{index}.py"
    script.write_text(code, encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, script.name], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (f"block {index} ({section!r}) failed:\n{code}\n"
                                  f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_installs_what_it_imports(index):
    section, code = PYTHON_BLOCKS[index]
    needed = _optional_imports(code)
    if not needed:
        return
    position = next(i for i, block in enumerate(_blocks()) if block == (section, "python", code))
    installed = set()
    for other_section, lang, other in _blocks()[:position]:
        if lang == "bash" and other_section == section:
            for command in _commands(other):
                if command.startswith("pip install"):
                    installed |= _installed_extras(command)
    extras = _extras()
    provided = set().union(*(extras[e] for e in installed if e in extras)) if installed else set()
    missing = needed - provided
    assert not missing, (f"block {index} ({section!r}) imports {sorted(missing)}: "
                         f"put `pip install -e \".[EXTRA]\"` with the extra that provides "
                         f"it before the block, in its section")


def _check_cli(command):
    from nlpfeat.cli import build_parser

    words = shlex.split(command)[1:]
    subcommand = words[0]
    parser = build_parser(subcommand)
    sub = next(a for a in parser._actions if a.dest == "command").choices[subcommand]
    known = {option for action in sub._actions for option in action.option_strings}
    for word in re.findall(r"(?<![\w\"'])(--?[a-z][a-z-]*)", command.split(subcommand, 1)[1]):
        assert word in known, f"{command!r}: nlpfeat {subcommand} has no option {word}"
    if not re.search(r"[\[|]|\.\.\.", command):   # a concrete line, not a synopsis
        try:
            parser.parse_args(words)
        except SystemExit as exc:
            raise AssertionError(f"{command!r} does not parse (exit {exc.code})") from None


def _examples_test():
    """tests/test_examples.py, which knows how to read a script's options."""
    spec = importlib.util.spec_from_file_location("_examples_test",
                                                  ROOT / "tests" / "test_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_example(command):
    words = shlex.split(command)
    script = ROOT / words[1]
    assert script.is_file(), f"{command!r}: no {words[1]}"
    options = _examples_test()._options(script.read_text(encoding="utf-8"))
    for word in words[2:]:
        if word.startswith("--"):
            assert word in options, f"{command!r}: the script takes no {word}"


@pytest.mark.parametrize("index", range(len(BASH_BLOCKS)))
def test_bash_block_names_what_exists(index, capsys):
    _, code = BASH_BLOCKS[index]
    extras = _extras()
    for command in _commands(code):
        if command.startswith("pip install"):
            installed = _installed_extras(command)
            assert installed and installed <= set(extras), (command, sorted(extras))
        elif command.startswith("nlpfeat "):
            _check_cli(command)
        elif command.startswith("python examples/"):
            _check_example(command)
        elif command.startswith("python -m sphinx"):
            assert command == DOCS_BUILD, command
            docs_test = (ROOT / "tests" / "test_docs.py").read_text(encoding="utf-8")
            assert '"-W"' in docs_test and '"html", str(ROOT / "docs")' in docs_test
        else:
            assert command in KNOWN, f"bash line {command!r}: no check knows it"
