"""Smoke and parity tests of examples/warmup_init_study.py (the warm-up/init study)."""
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "warmup_init_study.py"


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("warmup_init_study", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module        # so that --jobs can pickle its functions
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


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


def test_numpy_and_torch_first_steps_agree(study, torch_one_thread):
    """Same weights and batches, dropout off: float64 losses equal to rounding."""
    args = study.parse_args(["--quick", "--dtype", "float64"])
    cfg = {**study.BASE, **study.ROWS["init-xavier_uniform"][0], **args.overrides,
           "n_layers": 2, "d_model": 16, "dim_feedforward": 32}
    assert study.parity_probe(cfg, args, n_steps=3) < 1e-10


def test_default_is_the_short_run_and_full_is_the_table(study):
    short = study.parse_args([])
    assert short.rows == study.QUICK["rows"] and short.overrides["n_layers"] == 2
    assert short.steps == 500
    full = study.parse_args(["--full"])
    assert full.rows == list(study.ROWS) and full.overrides == {} and full.steps == 1000
    picked = study.parse_args(["--rows", "lr1e-4", "--warmup", "0.1"])
    assert picked.rows == ["lr1e-4"] and picked.overrides == {"warmup": 0.1}


def test_csv_is_written_per_run_and_resumed(study, tmp_path, capsys):
    path = tmp_path / "rows.csv"
    argv = ["--quick", "--steps", "2", "--eval-batches", "1", "--csv", str(path)]
    first = study.main(argv)
    lines = path.read_text().splitlines()
    assert lines[0].split(",") == study.CSV_FIELDS and len(lines) == 3
    assert {line.split(",")[0] for line in lines[1:]} == set(first)
    capsys.readouterr()
    again = study.main(argv)                      # nothing left to run
    assert again == {} and "(in csv)" in capsys.readouterr().out
    assert path.read_text().splitlines() == lines
    study.main(argv + ["--seed", "1"])            # another seed is another run
    assert len(path.read_text().splitlines()) == 5


def test_identical_configurations_run_once(study, tmp_path, capsys):
    path = tmp_path / "rows.csv"
    results = study.main(["--quick", "--rows", "lr1e-3-warmup", "init-default", "--steps", "2",
                          "--eval-batches", "1", "--csv", str(path)])
    assert results["init-default"] == results["lr1e-3-warmup"]
    assert "same configuration as lr1e-3-warmup" in capsys.readouterr().out
    assert path.read_text().splitlines()[2].endswith(",0,same configuration as lr1e-3-warmup")


def test_jobs_give_the_serial_results(study, tmp_path):
    argv = ["--quick", "--steps", "2", "--eval-batches", "1", "--rows", "lr1e-3",
            "lr1e-3-warmup", "lr1e-4", "init-default"]
    serial = study.main(argv + ["--csv", str(tmp_path / "a.csv")])
    parallel = study.main(argv + ["--jobs", "2", "--csv", str(tmp_path / "b.csv")])
    assert parallel == serial and len(serial) == 4
    a = sorted(line.rsplit(",", 3)[0] for line in (tmp_path / "a.csv").read_text().splitlines())
    b = sorted(line.rsplit(",", 3)[0] for line in (tmp_path / "b.csv").read_text().splitlines())
    assert a == b                                  # same records, up to order and timing


def test_report_gives_mean_range_and_a_verdict_per_row(study, tmp_path):
    path = str(tmp_path / "runs.csv")
    base = {"dtype": "float32", "steps": 1000, "eval_batches": 200, "adam_eps": 1e-8,
            "first_loss": "", "seconds": 1, "note": ""}

    def add(row, backend, seed, loss):
        cfg = {**study.BASE, **study.ROWS[row][0]}
        study.csv_append(path, {**base, "row": row, "backend": backend, "seed": seed,
                                "n_layers": cfg["n_layers"], "d_model": cfg["d_model"],
                                "dim_feedforward": cfg["dim_feedforward"],
                                "batch": cfg["batch"], "lr": cfg["lr"],
                                "warmup": cfg["warmup"], "init": cfg["init"],
                                "published": study.ROWS[row][1], "eval_loss": loss})

    for seed, loss in enumerate([3.49, 3.51, 3.50]):          # published 3.37: collapsed
        add("lr1e-3", "numpy", seed, loss)
    add("lr1e-3", "torch", 0, 0.05)                            # another regime than numpy
    for seed, loss in enumerate([3.5, 0.1, 3.5]):              # published 0.10: trained
        add("lr1e-3-warmup", "numpy", seed, loss)
    add("lr1e-4", "numpy", 0, 2.0)                             # published 0.56: trained
    lines = {line.split(" | ")[0][2:]: line for line in study.report(path).splitlines()[2:]}
    assert lines["lr1e-3"] == ("| lr1e-3 | 3.37 | 3.500 (3.490-3.510), 3 | 0.050 (other regime "
                               "than numpy) | reproduces (collapsed) |")
    assert "**reproduces in only 1 of 3 seeds** (collapsed, trained, collapsed)" \
        in lines["lr1e-3-warmup"]
    assert "**does not reproduce** (partial)" in lines["lr1e-4"]
    assert lines["batch64"] == "| batch64 | 0.037 | not run | | |"
