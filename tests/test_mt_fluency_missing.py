"""Without the optional LM libraries, lmppl and hfppl are one user error naming the extra to install
(runs whether or not kenlm/torch/transformers are installed: their import is made to fail)."""

from __future__ import annotations

import re

import pytest

from clir_eval.errors import UserError
from clir_eval.mt import fluency
from clir_eval.mt.base import load_metric


@pytest.mark.parametrize("spec, module, extra", [("lmppl:model=x.arpa", "kenlm", "[lm]"),
                                                 ("hfppl:model=.", "torch", "[hf]"),
                                                 ("hfppl:model=.", "transformers", "[hf]")])
def test_missing_library_is_a_user_error(monkeypatch, spec, module, extra):
    monkeypatch.setitem(__import__("sys").modules, module, None)  # import fails as if not installed
    monkeypatch.setattr(fluency, "_MODELS", {})
    monkeypatch.setattr(fluency, "_HF", {})
    with pytest.raises(UserError, match=re.escape(f"pip install 'clir-eval{extra}'")):
        load_metric(spec).segment_stats(["a b"], [["a b"]])


def test_hfppl_cli_error_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(fluency, "_HF", {})
    (tmp_path / "h.txt").write_text("a b\n")
    code, out, err = cli("mt-score", "--hyp", tmp_path / "h.txt", "--ref", tmp_path / "h.txt",
                         "--metrics", f"hfppl:model={tmp_path / 'no-such-dir'}")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert ("no-such-dir" in err and "not found" in err) or "needs torch and transformers" in err
