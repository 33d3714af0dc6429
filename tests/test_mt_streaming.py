"""mt-score in chunks (only summed statistics kept) gives exactly the in-memory scores."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from clir_eval.cli import main
from clir_eval.mt.base import collect_stats, iter_segment_chunks, load_metrics, stream_scores
from clir_eval.mt.typebased import type_stats

METRICS = ["bleu", "chrf1", "chrf:beta=2,word_order=2", "macrof1", "microf1", "macrof:beta=2", "bleu-sbp"]


def _corpus(rng: random.Random, n: int, vocab: int) -> list[str]:
    words = [f"w{i}" for i in range(vocab)] + ["The", "the", ",", "don't", "Ünïcode", "x.y"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(n)]


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
@pytest.mark.parametrize("nrefs", [1, 2])
def test_chunked_scores_equal_in_memory(tmp_path, size, nrefs):
    rng = random.Random(size * 10 + nrefs)
    n = 40
    hyp = _corpus(rng, n, 30)
    refs = [_corpus(rng, n, 40) for _ in range(nrefs)]
    hp = tmp_path / "hyp.txt"
    hp.write_text("\n".join(hyp) + "\n")
    rps = []
    for k, r in enumerate(refs):
        p = tmp_path / f"ref{k}.txt"
        p.write_text("\n".join(r) + "\n")
        rps.append(p)
    ms = load_metrics(METRICS)
    stats = collect_stats(ms, hyp, refs)
    whole = {m.name: m.score_stats(stats[m.name], nrefs) for m in ms}
    chunked = stream_scores(ms, iter_segment_chunks(hp, rps, size=size), nrefs)
    assert chunked is not None
    for name in whole:
        assert chunked[name].to_dict() == whole[name].to_dict(), name
    # the type totals themselves are identical, column order included
    acc = ms[3].accumulator()
    for h, r in iter_segment_chunks(hp, rps, size=size):
        acc.add(h, r)
    expected = np.asarray(type_stats(hyp, refs).matrix.sum(axis=0)).ravel()
    assert np.array_equal(acc.totals(), expected)


def test_cli_streams_and_agrees_with_the_bootstrap_path(tmp_path, capsys):
    """The plain command (streamed) and the bootstrap command (in memory) print the same scores."""
    rng = random.Random(5)
    hp, rp = tmp_path / "h.txt", tmp_path / "r.txt"
    hp.write_text("\n".join(_corpus(rng, 30, 20)) + "\n")
    rp.write_text("\n".join(_corpus(rng, 30, 20)) + "\n")
    args = ["mt-score", "--hyp", str(hp), "--ref", str(rp), "--metrics", "bleu,chrf1,macrof1,microf1"]
    assert main(args) == 0
    streamed = json.loads(capsys.readouterr().out)
    assert main(args + ["--bootstrap", "2"]) == 0
    memory = json.loads(capsys.readouterr().out)
    assert {k: v["score"] for k, v in streamed.items()} == {k: v["score"] for k, v in memory.items()}


@pytest.mark.parametrize("hyp, ref, message", [
    ("a\nb\nc\n", "a\nb\n", r"line count mismatch: .*h\.txt has 3 lines but .*r\.txt has 2"),
    ("a\nb\n", "a\nb\nc\nd\n", r"line count mismatch: .*h\.txt has 2 lines but .*r\.txt has 4"),
    ("", "a\n", r"h\.txt is empty"),
    ("a\n", "", r"r\.txt is empty"),
])
def test_chunked_reader_errors(tmp_path, hyp, ref, message):
    from clir_eval.errors import UserError

    hp, rp = tmp_path / "h.txt", tmp_path / "r.txt"
    hp.write_text(hyp)
    rp.write_text(ref)
    with pytest.raises(UserError, match=message):
        list(iter_segment_chunks(hp, [rp], size=1))


def test_sacrebleu_data_warning_once_not_once_a_chunk(tmp_path, capfd, caplog):
    """sacrebleu warns about tokenized periods per call; streamed in chunks it still warns once."""
    hp = tmp_path / "h.txt"
    hp.write_text("".join(f"line {i} .\n" for i in range(300)))
    ms = load_metrics(["bleu"])
    capfd.readouterr()
    with caplog.at_level("WARNING"):
        stream_scores(ms, iter_segment_chunks(hp, [hp], size=100), 1)
    out, err = capfd.readouterr()
    seen = (out + err + caplog.text).count("tokenized period")
    assert 1 <= seen <= 2  # the one warning, on stderr and/or in the captured log
    assert main(["mt-score", "--hyp", str(hp), "--ref", str(hp), "--metrics", "bleu"]) == 0
