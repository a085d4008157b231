"""The documentation site: built with warnings as errors, then opened in a real browser.

The build runs Sphinx on ``docs/`` as the README says (numpydoc API pages generated from
each subpackage's ``__all__``, the README as the user guide, the sphinx-gallery of
``examples/`` running only the quick script that draws figures). Headless Chromium then
loads the API page of ``NadarayaWatsonRegressor`` and a gallery page, as a reader would.
CI installs Chromium and its driver (``.ci/run``); elsewhere the browser checks skip
when they are missing, and under ``CI`` a missing browser fails.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("sphinx")
pytest.importorskip("sphinx_gallery")
pytest.importorskip("numpydoc")
pytest.importorskip("myst_parser")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q",
                           "-b", "html", str(ROOT / "docs"), str(out)],
                          capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out


def test_the_site_builds_with_every_public_name(site):
    import nlpfeat

    api = (site / "api.html").read_text(encoding="utf-8")
    for module in (nlpfeat.text, nlpfeat.kernels, nlpfeat.attention):
        for name in module.__all__:
            if callable(getattr(module, name)):
                assert name in api, name
    assert (site / "user_guide.html").exists() and (site / "concepts.html").exists()


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
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")   # never let selenium fetch a driver
    return webdriver.Chrome(service=Service(driver_path), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = _browser()
    yield driver
    driver.quit()


def test_api_page_shows_the_signature_and_the_example(site, browser):
    from selenium.webdriver.common.by import By

    page = site / "generated" / "nlpfeat.kernels.NadarayaWatsonRegressor.html"
    browser.get(page.as_uri())
    signature = browser.find_element(By.CSS_SELECTOR, "dl.py.class > dt").text
    assert "NadarayaWatsonRegressor(" in signature
    for parameter in ("kernel", "bandwidth", "metric"):
        assert parameter in signature
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "Examples" in body and ">>> " in body and "NadarayaWatsonRegressor" in body


def test_gallery_page_shows_its_figure(site, browser):
    from selenium.webdriver.common.by import By

    browser.get((site / "auto_examples" / "fat_cat_attention.html").as_uri())
    assert "fat cat" in browser.title.lower() or "fat cat" in browser.page_source.lower()
    images = browser.find_elements(By.CSS_SELECTOR, "img.sphx-glr-single-img, "
                                                    "img.sphx-glr-multi-img")
    assert images, "the gallery page shows no figure"
    widths = [browser.execute_script("return arguments[0].complete && "
                                     "arguments[0].naturalWidth", img) for img in images]
    assert all(w and w > 200 for w in widths), widths
