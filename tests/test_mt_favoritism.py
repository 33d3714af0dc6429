"""Favoritism (Gowda et al. 2021 §4.1): leave-one-out δ from sufficient statistics equals re-scoring the
corpus without the segment (sacrebleu for BLEU/chrF, the text for MacroF/MicroF/4-GRR); CLI contract."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import sacrebleu

from clir_eval.cli import main
from clir_eval.mt.base import load_metric
from clir_eval.mt.favoritism import favoritism, leave_one_out, top_segments

WORDS = "the a of cat dog sat on mat rare1 rare2 rare3 blue red house runs".split()


def _corpus(seed: int, n: int = 25):
    rng = random.Random(seed)
    ref = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(n)]
    hyp = [" ".join(w for w in r.split() if rng.random() > 0.3) + (" dog" if rng.random() < 0.3 else "") for r in ref]
    hyp[3] = ""  # an empty hypothesis
    return hyp, ref


def _without(lst, i):
    return lst[:i] + lst[i + 1:]


@pytest.mark.parametrize("spec", ["bleu", "chrf1", "macrof1", "microf1", "macrof:beta=2", "4grr", "wrr", "ter", "bleu-sbp"])
def test_leave_one_out_equals_rescoring_without_the_segment(spec):
    hyp, ref = _corpus(5)
    m = load_metric(spec)
    loo = leave_one_out(m, m.segment_stats(hyp, [ref]))
    for i in range(len(hyp)):
        if spec == "bleu":
            expect = sacrebleu.corpus_bleu(_without(hyp, i), [_without(ref, i)]).score
        elif spec == "chrf1":
            expect = sacrebleu.corpus_chrf(_without(hyp, i), [_without(ref, i)], beta=1).score
        else:
            expect = load_metric(spec).corpus_score(_without(hyp, i), [_without(ref, i)]).score
        assert loo[i] == pytest.approx(expect, abs=1e-9), (spec, i)


def test_macrof1_leave_one_out_drops_types_that_only_occur_in_that_segment():
    hyp = ["a b", "c d", "zzz"]
    ref = ["a b", "c x", "yyy"]
    m = load_metric("macrof1")
    loo = leave_one_out(m, m.segment_stats(hyp, [ref]))
    # without segment 2 the types are a, b, c, d, x: F = 1, 1, 1, 0, 0 -> 60
    assert loo[2] == pytest.approx(60.0)
    # without segment 0: c, d, x, zzz, yyy all F=1 except d, x, zzz, yyy -> (1 + 0 + 0 + 0 + 0) / 5
    assert loo[0] == pytest.approx(20.0)


def test_favoritism_is_delta_a_minus_delta_b_and_top_is_sorted():
    hyp_a, ref = _corpus(1)
    hyp_b, _ = _corpus(2)
    m = load_metric("bleu")
    f = favoritism(m, m.segment_stats(hyp_a, [ref]), m.segment_stats(hyp_b, [ref]))
    full_a = sacrebleu.corpus_bleu(hyp_a, [ref]).score
    i = 7
    assert f.delta_a[i] == pytest.approx(full_a - sacrebleu.corpus_bleu(_without(hyp_a, i), [_without(ref, i)]).score)
    assert np.allclose(f.values, f.delta_a - f.delta_b)
    top = top_segments(f.values, 5)
    mags = [abs(f.values[j]) for j in top]
    assert mags == sorted(mags, reverse=True) and mags[0] == np.abs(f.values).max()


def test_top_segments_breaks_ties_by_segment_index():
    assert top_segments(np.array([1.0, -2.0, 2.0, 0.5]), 3) == [1, 2, 0]


def _write(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def test_cli_json_contract(tmp_path, capsys):
    hyp_a, ref = _corpus(1)
    hyp_b, _ = _corpus(2)
    a, b, r = _write(tmp_path, "a.txt", hyp_a), _write(tmp_path, "b.txt", hyp_b), _write(tmp_path, "r.txt", ref)
    assert main(["favoritism", "--hyp", a, "--hyp", b, "--ref", r, "--metrics", "bleu,macrof1", "--top", "4",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["bleu", "macrof1"]
    for name, rows in out.items():
        assert len(rows) == 4
        mags = [abs(x["favoritism"]) for x in rows]
        assert mags == sorted(mags, reverse=True)
        for x in rows:
            assert x["favoritism"] == pytest.approx(x["delta_a"] - x["delta_b"])
            assert x["hyp_a"] == hyp_a[x["segment"]] and x["reference"] == ref[x["segment"]]
            other = "macrof1" if name == "bleu" else "bleu"
            in_other = x["segment"] in [y["segment"] for y in out[other]]
            assert x["only_this_metric"] == (not in_other)
    m = load_metric("macrof1")
    f = favoritism(m, m.segment_stats(hyp_a, [ref]), m.segment_stats(hyp_b, [ref]))
    assert out["macrof1"][0]["favoritism"] == pytest.approx(f.values[top_segments(f.values, 1)[0]])


def test_cli_tsv_and_errors(tmp_path, capsys):
    hyp_a, ref = _corpus(1)
    a, r = _write(tmp_path, "a.txt", hyp_a), _write(tmp_path, "r.txt", ref)
    short = _write(tmp_path, "s.txt", hyp_a[:-1])
    assert main(["favoritism", "--hyp", a, "--hyp", a, "--ref", r, "--metrics", "4grr", "--top", "3",
                 "--format", "tsv", "--src", r]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("metric\trank\tsegment\tfavoritism") and len(lines) == 4
    assert all(float(x.split("\t")[3]) == 0.0 for x in lines[1:])  # a system against itself
    for args, msg in ((["--hyp", a], "exactly two"), (["--hyp", a, "--hyp", short], "line count"),
                      (["--hyp", a, "--hyp", a, "--top", "0"], "--top"), (["--hyp", a, "--hyp", a, "--format", "xml"], "--format")):
        assert main(["favoritism", *args, "--ref", r]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and msg in err
