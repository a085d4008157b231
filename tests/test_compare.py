"""nlpfeat.compare in-process: weight agreement, the torch model, input errors."""
import math
import sys

import numpy as np
import pytest

from nlpfeat.compare import run_comparison, weight_agreement


def test_weight_agreement_is_zero_for_equal_weights_and_positive_otherwise():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(6), size=4)
    Q = rng.dirichlet(np.ones(6), size=4)
    kl, corr = weight_agreement(P, P)
    assert kl == pytest.approx(0.0, abs=1e-12) and corr == pytest.approx(1.0)
    kl, _ = weight_agreement(P, Q)
    expected = np.mean(np.sum(P * np.log(P / Q), axis=1))
    assert kl == pytest.approx(expected, rel=1e-12) and kl > 0
    with pytest.raises(ValueError, match="do not match"):
        weight_agreement(P, Q[:, :3])


def test_with_torch_adds_a_pytorch_attention_model(tmp_path):
    pytest.importorskip("torch")
    rows = run_comparison(tasks=["sine"], models=["nw-gaussian", "torch-mha"], quick=True,
                          with_torch=True, plots=False, progress=False, out=str(tmp_path),
                          stream=open(tmp_path / "log.txt", "w"))
    torch_row = next(r for r in rows if r["model"] == "torch-mha")
    assert math.isfinite(torch_row["mean"])
    assert math.isfinite(torch_row["weight_kl"]) and -1 <= torch_row["weight_corr"] <= 1


def test_with_torch_without_torch_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r'pip install "nlpfeat\[torch\]"'):
        run_comparison(tasks=["sine"], with_torch=True, out=str(tmp_path), progress=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"tasks": ["nosuchtask"]}, "unknown task"),
    ({"models": ["nosuchmodel"]}, "unknown model"),
])
def test_unknown_names_are_rejected(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        run_comparison(out=str(tmp_path), progress=False, **kwargs)
