"""Tests of examples/heads_study.py: its tasks, its separated model, its verdict rule."""
import importlib.util
import pathlib
import sys

import numpy as np
import pytest
from gradcheck_utils import numeric_grad, rel_error

PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "heads_study.py"


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("heads_study", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_lookup_target_is_the_typed_tokens_numbers(study):
    X, y = study.lookup(50, np.random.default_rng(0), width=2)
    assert X.shape == (50, 8, 4 + 2 + 8) and y.shape == (50, 8)
    assert (X[:, -1, 5] == 1).all() and (X[:, :-1, :5].sum(axis=-1) == 1).all()
    for s in range(50):
        for j in range(4):
            token = X[s, np.flatnonzero(X[s, :, j])[0]]
            assert np.array_equal(y[s, 2 * j:2 * j + 2], token[6 + 2 * j:8 + 2 * j])


def test_three_five_counts_and_target(study):
    X, y = study.three_five(40, np.random.default_rng(1), -1.0)
    assert (X[:, :-1, 0].sum(axis=1) == 3).all() and (X[:, :-1, 1].sum(axis=1) == 5).all()
    v = X[:, :-1, 3]
    assert np.allclose(y, (v * X[:, :-1, 0]).sum(axis=1) - (v * X[:, :-1, 1]).sum(axis=1))


def test_task_data_is_deterministic_per_seed_and_shared_by_models(study):
    a = study.task_data("3v5-diff", 3, 20, 10)
    b = study.task_data("3v5-diff", 3, 20, 10)
    c = study.task_data("3v5-diff", 4, 20, 10)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    assert [len(part) for part in a] == [20, 20, 10, 10]


def test_relative_error_is_one_for_the_mean(study):
    y = np.random.default_rng(0).normal(size=(200, 3)) * [1.0, 5.0, 0.1]
    assert study.relative_error(y, np.broadcast_to(y.mean(axis=0), y.shape)) == pytest.approx(1)
    assert study.relative_error(y, y) == 0.0


def test_separated_model_gradients(study):
    """Its backward, written in the example, against central differences."""
    rng = np.random.default_rng(0)
    net = study.SeparatedHeads(2, rng, d_model=4, dim_feedforward=6)
    X, y = study.three_five(5, rng, -1.0)

    def loss():
        return 0.5 * float(np.sum((net.forward(X) - y) ** 2))

    net.backward(net.forward(X) - y)
    grads = net.grads
    for name, param in net.params.items():
        index = np.arange(min(param.size, 12))
        assert rel_error(grads[name].flat[index], numeric_grad(loss, param, index)) < 1e-6, name


def test_separated_model_sees_kinds_in_keys_and_numbers_in_values(study):
    """The premise of the averaging bound: the weights do not depend on the numbers."""
    rng = np.random.default_rng(0)
    net = study.SeparatedHeads(1, rng)
    X, _ = study.three_five(6, rng, -1.0)
    net.forward(X)
    before = net.attn.attn_weights.copy()
    X[:, :-1, 3] *= 7.0
    net.forward(X)
    assert np.array_equal(net.attn.attn_weights, before)


def test_matched_feedforward_matches_the_deep_models_parameters(study):
    for n_in, n_out in [(10, 4), (14, 8)]:
        wide = study.encoder_settings("1x4", n_in, n_out)
        deep = study.encoder_settings("4x1", n_in, n_out)
        a, b = study.count_params(n_in, n_out, **wide), study.count_params(n_in, n_out, **deep)
        assert wide["dim_feedforward"] > study.FEEDFORWARD and abs(a - b) <= 2 * study.D_MODEL


@pytest.mark.parametrize(("a", "b", "expected"), [
    ([0.10, 0.11, 0.09], [0.50, 0.52, 0.49], "A better"),
    ([0.10, 0.30, 0.05], [0.12, 0.10, 0.20], "no difference within noise"),
    ([0.001, 0.0011, 0.0012], [0.004, 0.0041, 0.0043], "A lower, beyond noise but negligible"),
    ([0.5, 0.5, 0.5], [0.1, 0.1, 0.11], "B better"),
])
def test_verdict_rule(study, a, b, expected):
    verdict = study.compare(dict(enumerate(a)), dict(enumerate(b)), "A", "B")
    assert verdict.startswith(expected), verdict


def test_verdict_needs_two_paired_seeds(study):
    assert "no verdict" in study.compare({0: 0.1}, {0: 0.5, 1: 0.4}, "A", "B")


def test_bound_verdict(study):
    assert study.bound_verdict({0: 0.376, 1: 0.38}, 0.375).startswith("at the averaging bound")
    assert study.bound_verdict({0: 0.02, 1: 0.03}, 0.375).startswith("below the bound")
    assert study.bound_verdict({0: 0.9, 1: 0.8}, 0.375).startswith("above the bound")


def test_heads_verdict(study):
    assert study.heads_verdict([4, 4], 4) == "all heads distinct"
    assert study.heads_verdict([1, 1], 4) == "all heads alike"
    assert study.heads_verdict([2, 4], 4) == "some alike, some not"


@pytest.mark.slow    # trains the study's grid twice (10 s); .ci/run runs it
def test_csv_resumes_and_report_reads_it(study, tmp_path, capsys):
    path, out = tmp_path / "runs.csv", tmp_path / "out"
    argv = ["--seeds", "0", "--n-train", "40", "--n-test", "30", "--epochs", "1",
            "--csv", str(path), "--out", str(out)]
    rows = study.main(argv)
    assert len(rows) == len(study.RUNS) and {r["seed"] for r in rows} == {"0"}
    lines = path.read_text().splitlines()
    assert lines[0].split(",") == study.CSV_FIELDS
    capsys.readouterr()
    assert len(study.main(argv)) == len(rows)             # nothing left to run
    assert "(in csv)" in capsys.readouterr().out and path.read_text().splitlines() == lines
    study.main(["--report", str(path), "--out", str(out)])
    text = capsys.readouterr().out
    assert "### 4. heads as mixture components" in text and "fewer than 2 paired seeds" in text


def test_separated_fit_keeps_the_restart_with_the_lowest_training_error(study):
    Xtr, ytr, _, _ = study.task_data("3v5-diff", 0, 64, 1)
    predict, train_errors = study.fit_separated("sep-2h", Xtr, ytr, 0, 2)
    assert len(train_errors) == study.RESTARTS
    assert study.relative_error(ytr, predict(Xtr)) == pytest.approx(min(train_errors))
