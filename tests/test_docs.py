"""The documentation site: built with warnings as errors, then opened in a real browser.

The build runs Sphinx on ``docs/`` as the README says (numpydoc API pages generated from
each public module's ``__all__``, the README as the user guide, the migration page, the
sphinx-gallery of ``examples/``), executing every example in its quick form as the
published site does. The build and the checks on it are marked slow (``.ci/run`` runs
them after the README's test command, with the ``docs-test`` extra; the README's command
keeps the cheap check that every public name has a docstring example,
``tests/test_docstrings.py``): every public name has an API page with an example, each gallery
page shows what its script printed and the figures it writes, and headless Chromium opens
a gallery page, the API page of ``NadarayaWatsonRegressor`` and the migration page at
1280 x 900 and checks that they render (code blocks, figures loaded, the signature) and
that the API page's title and "On this page" are not clipped.

CI installs Chromium and its driver (``.ci/run``); elsewhere the browser checks skip when
they are missing, and under ``CI`` a missing browser fails.
"""
import html
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_docstrings import _documented, _public_modules

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("sphinx")
pytest.importorskip("sphinx_gallery")
pytest.importorskip("numpydoc")
pytest.importorskip("myst_parser")

#: every example (the site's own default)
ALL_EXAMPLES = r"/[^_/][^/]*\.py$"
WIDTH, HEIGHT = 1280, 900


def _build(out, examples):
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore",
               NLPFEAT_DOCS_RUN_EXAMPLES=examples)
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q",
                           "-b", "html", str(ROOT / "docs"), str(out)],
                          capture_output=True, text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The published site, built once for the module's checks."""
    return _build(tmp_path_factory.mktemp("html"), ALL_EXAMPLES)


@pytest.mark.slow
def test_every_public_name_has_an_api_page_with_an_example(site):
    api = (site / "api.html").read_text(encoding="utf-8")
    modules = _public_modules()
    assert {"nlpfeat.text", "nlpfeat.kernels", "nlpfeat.attention.layers"} <= set(modules)
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in _documented(module):
            # an object two modules export has one page, under the first that lists it
            pages = [site / "generated" / f"{other}.{name}.html" for other in modules
                     if getattr(importlib.import_module(other), name, None) is getattr(module, name)]
            page = next((p for p in pages if p.exists()), None)
            assert page is not None, f"{module_name}.{name} has no API page"
            assert page.name in api, f"{name} is not on the API index"
            text = page.read_text(encoding="utf-8")
            assert "Examples" in text and "&gt;&gt;&gt;" in text, f"{name}: no example"
    assert (site / "user_guide.html").exists() and (site / "concepts.html").exists()
    guide = (site / "user_guide.html").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs" / "guide").glob("*.md")):
        assert (site / "guide" / f"{page.stem}.html").exists(), page.name
        assert f'href="guide/{page.stem}.html' in guide, f"the user guide links no {page.name}"


def _pages(site):
    return [p for p in site.rglob("*.html") if "_static" not in p.parts]


@pytest.mark.slow
def test_no_page_turns_a_double_hyphen_into_a_dash(site):
    """Smart quotes are off: ``--with-torch`` stays two hyphens, copied commands run."""
    dash = re.compile(r"[\u2013\u2014](?=[a-z])")
    for page in _pages(site):
        text = page.read_text(encoding="utf-8")
        found = dash.findall(text)
        assert not found, f"{page.relative_to(site)}: an en/em dash before a word"
    guide = html.unescape("".join(p.read_text(encoding="utf-8")
                                  for p in (site / "guide").glob("*.html")))
    for option in ("--with-torch", "--quick", "--dask-workers", "--skip-blank"):
        assert option in guide, option
    assert "\u201c" not in (site / "migration.html").read_text(encoding="utf-8")


def _browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not (chromium and driver_path):
        if os.environ.get("CI"):
            pytest.fail("CI must install chromium and chromium-driver (see .ci/run)")
        pytest.skip("headless Chromium and chromedriver are not installed")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 f"--window-size={WIDTH},{HEIGHT}"):
        options.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")   # never let selenium fetch a driver
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = _browser()
    driver.set_window_size(WIDTH, HEIGHT)
    yield driver
    driver.quit()


def _open(browser, page):
    browser.get(page.as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    return browser


def _code_blocks(browser):
    from selenium.webdriver.common.by import By

    return [b for b in browser.find_elements(By.CSS_SELECTOR, "div.highlight pre")
            if b.text.strip()]


#: JavaScript: the elements of a selector that are cut off (content wider than the box,
#: or a box reaching outside the viewport), as "tag: text".
CLIPPED = """
const out = [];
for (const el of document.querySelectorAll(arguments[0])) {
    const box = el.getBoundingClientRect();
    if (box.width === 0) continue;
    if (el.scrollWidth > el.clientWidth + 1 || box.left < 0 || box.right > window.innerWidth + 0.5)
        out.push(el.tagName + ": " + el.textContent.trim().slice(0, 60)
                 + " (" + el.scrollWidth + " > " + el.clientWidth + ", right " + box.right + ")");
}
return out;
"""


@pytest.mark.slow
def test_api_page_shows_the_signature_and_the_example_unclipped(site, browser):
    from selenium.webdriver.common.by import By

    _open(browser, site / "generated" / "nlpfeat.kernels.NadarayaWatsonRegressor.html")
    assert browser.execute_script("return window.innerWidth") == WIDTH
    signature = browser.find_element(By.CSS_SELECTOR, "dl.py.class > dt").text
    assert "NadarayaWatsonRegressor(" in signature
    for parameter in ("kernel", "bandwidth", "metric"):
        assert parameter in signature
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "Examples" in body and ">>> " in body and "NadarayaWatsonRegressor" in body
    assert _code_blocks(browser), "no code block"
    title = browser.find_element(By.CSS_SELECTOR, "article h1")
    assert "NadarayaWatsonRegressor" in title.text
    toc = browser.find_elements(By.CSS_SELECTOR, ".bd-sidebar-secondary .nav-link")
    assert len(toc) >= 3 and any("predict" in link.text for link in toc), "no 'On this page'"
    for selector in ("article h1", ".bd-sidebar-secondary", ".bd-sidebar-secondary .nav-link",
                     ".bd-sidebar-secondary .onthispage"):
        clipped = browser.execute_script(CLIPPED, selector)
        assert not clipped, f"clipped at {WIDTH} px: {clipped}"


def _figures_loaded(browser):
    from selenium.webdriver.common.by import By

    images = browser.find_elements(By.CSS_SELECTOR, "img.sphx-glr-single-img, "
                                                    "img.sphx-glr-multi-img")
    return [browser.execute_script("return arguments[0].complete && "
                                   "arguments[0].naturalWidth", img) for img in images]


@pytest.mark.slow
def test_gallery_page_shows_its_code_output_and_figure(site, browser):
    from selenium.webdriver.common.by import By

    _open(browser, site / "auto_examples" / "fat_cat_attention.html")
    assert "fat cat" in browser.title.lower()
    assert _code_blocks(browser), "no code block"
    output = browser.find_elements(By.CSS_SELECTOR, "div.sphx-glr-script-out pre")
    assert output and "POS + position" in output[0].text, "the script's output is missing"
    widths = _figures_loaded(browser)
    assert widths and all(w and w > 200 for w in widths), widths


@pytest.mark.slow
def test_migration_page_renders_its_tables(site, browser):
    from selenium.webdriver.common.by import By

    _open(browser, site / "migration.html")
    assert "Coming from scikit-learn" in browser.find_element(By.CSS_SELECTOR, "article h1").text
    tables = browser.find_elements(By.CSS_SELECTOR, "article table")
    assert len(tables) >= 6
    text = browser.find_element(By.TAG_NAME, "article").text
    for pair in (("CountVectorizer(", "BagOfWords("), ("Phrases(", "Collocations("),
                 ("BigramCollocationFinder", "Collocations("),
                 ("KernelReg(", 'var_type="cco"'), ("CoherenceModel(", "coherence_scorer("),
                 ("MultiheadAttention(", "MultiHeadAttention(")):
        assert all(part in text for part in pair), pair
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="migration.html"' in index


def _figures_of_examples():
    spec = importlib.util.spec_from_file_location("_examples_test", ROOT / "tests" / "test_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SCRIPTS, module.FIGURES


@pytest.mark.slow
def test_every_example_runs_in_the_gallery_with_its_figures(site):
    """The published site: every example executed (quick form), its output and figures."""
    full = site
    scripts, figures = _figures_of_examples()
    for script in scripts:
        page = (full / "auto_examples" / script.replace(".py", ".html")).read_text(
            encoding="utf-8")
        output = re.search(r'<div class="sphx-glr-script-out[^"]*">.*?<pre>(.*?)</pre>', page,
                           re.S)
        assert output and output.group(1).strip(), f"{script}: no output on its page"
        n_images = len(re.findall(r'<img [^>]*class\s*=\s*"sphx-glr-(?:single|multi)-img', page))
        assert n_images >= len(figures.get(script, [])), (script, n_images)
    index = (full / "auto_examples" / "index.html").read_text(encoding="utf-8")
    assert index.count("sphx-glr-thumbcontainer") == len(scripts)
