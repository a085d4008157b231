"""Smoke and parity tests of examples/warmup_init_study.py (the warm-up/init study)."""
import importlib.util
import pathlib

import numpy as np
import pytest

PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "warmup_init_study.py"


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("warmup_init_study", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_published_row_is_defined(study):
    assert len(study.ROWS) == 20
    for settings, published in study.ROWS.values():
        assert set(settings) <= set(study.BASE) and published


def test_target_has_variance_seven(study):
    _, t = study.make_batch(np.random.default_rng(0), 400, 10, 50, np.float64)
    assert t.var() == pytest.approx(7.0, rel=0.02)


def test_quick_run_prints_the_table(study, capsys):
    results = study.main(["--quick", "--steps", "2", "--eval-batches", "1"])
    out = capsys.readouterr().out
    assert set(results) == {"lr1e-3", "lr1e-3-warmup"}
    assert "published" in out and "REDUCED run" in out and "batch_first=False" in out


def test_numpy_and_torch_first_steps_agree(study):
    """Same weights and batches, dropout off: float64 losses equal to rounding."""
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        args = study.parse_args(["--quick", "--dtype", "float64"])
        cfg = {**study.BASE, **study.ROWS["init-xavier_uniform"][0], **args.overrides,
               "n_layers": 2, "d_model": 16, "dim_feedforward": 32}
        assert study.parity_probe(cfg, args, n_steps=3) < 1e-10
    finally:
        torch.set_num_threads(n)
