"""Regenerate the README figures in docs/ from the code in this repository.

Runs three examples at full size and copies four of their figures here:

* ``sine_fits.png``: every model's fitted curve on the sine task, from
  :func:`nlpfeat.compare.run_comparison` (via ``examples/compare_attention.py``);
* ``attention_heatmaps.png``: Nadaraya-Watson weights next to the weights of learned
  Gaussian, additive and scaled dot-product scores (``examples/compare_attention.py``);
* ``fat_cat_heads.png``: the hand-built "noun -> article" head over "the fat cat sat on
  the mat", with and without position (``examples/fat_cat_attention.py``);
* ``binned_error_time.png``: binned Nadaraya-Watson's error against the grid size and
  its time against n beside the exact path (``examples/binned_million.py``).

Usage (a few minutes on 2 cores; needs matplotlib)::

    python docs/make_figures.py
    python docs/make_figures.py --quick --docs figs   # smoke run, small sizes
"""
import argparse
import os
import runpy
import shutil
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")
MAX_BYTES = 300_000

#: docs/ name -> (example script, figure it writes under its --out folder)
FIGURES = {
    "sine_fits.png": ("compare_attention.py", os.path.join("compare_sine", "sine_fits.png")),
    "attention_heatmaps.png": ("compare_attention.py", "compare_attention_heatmaps.png"),
    "fat_cat_heads.png": ("fat_cat_attention.py", "fat_cat_article_heads.png"),
    "binned_error_time.png": ("binned_million.py", "binned_error_time.png"),
}


def run_example(script, out, quick):
    """Run an example's ``main`` in this process with ``--out out``."""
    main = runpy.run_path(os.path.join(EXAMPLES, script), run_name="nlpfeat_example")["main"]
    main(["--out", out] + (["--quick"] if quick else []))


def shrink(path):
    """Re-save a PNG with an adaptive 256-colour palette if it is over MAX_BYTES."""
    if os.path.getsize(path) <= MAX_BYTES:
        return
    from PIL import Image  # installed with matplotlib

    with Image.open(path) as image:
        image.convert("RGB").quantize(colors=256).save(path, optimize=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", default=HERE, help="where to copy the figures (default: docs/)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    with tempfile.TemporaryDirectory() as tmp:
        for script in dict.fromkeys(script for script, _ in FIGURES.values()):
            print(f"--- {script}")
            run_example(script, os.path.join(tmp, script), args.quick)
        os.makedirs(args.docs, exist_ok=True)
        for name, (script, figure) in FIGURES.items():
            target = os.path.join(args.docs, name)
            shutil.copyfile(os.path.join(tmp, script, figure), target)
            shrink(target)
            print(f"wrote {target} ({os.path.getsize(target) / 1000:.0f} kB)")


if __name__ == "__main__":
    main()
