"""Per-segment MT scores of the MT test set (item level): computed from the statistics the MT stage
already has, kept in a cache entry of their own beside the MT stage's, and equal to sacrebleu's own
sentence-level scores (one and two references)."""

from __future__ import annotations

import pytest
import sacrebleu

from clir_eval.mt.settings import MTSettings
from clir_eval.pipeline.cache import Cache
from clir_eval.pipeline.tasks import MTTask

HYPS = ["the cat sat on the mat", "a dog", "hello there world", "", "one two three four five six"]
REFS = [["the cat sat on a mat", "the dog", "hello world", "nothing here", "one two three four five"],
        ["a cat sat on the mat", "dogs", "hello there world", "", "six five four three two one"]]


def _files(tmp_path, nrefs: int):
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    refs = []
    for k in range(nrefs):
        refs.append(tmp_path / f"ref{k}.txt")
        refs[-1].write_text("\n".join(REFS[k]) + "\n", encoding="utf-8")
    return hyp, refs


@pytest.mark.parametrize("nrefs", [1, 2])
def test_segment_scores_equal_sacrebleus_sentence_scores(tmp_path, nrefs):
    from clir_eval.pipeline.stages import mt_segment_scores, mt_stage

    hyp, refs = _files(tmp_path, nrefs)
    task = MTTask("s", str(hyp), MTSettings(metrics=("bleu", "chrf", "chrf++", "ter"), refs=tuple(map(str, refs))),
                  segments=("bleu", "chrf", "chrf++", "ter"))
    cache = Cache(tmp_path / "cache")
    mt_stage(task, cache)
    seg = mt_segment_scores(task, cache)
    want = {"bleu": sacrebleu.BLEU(effective_order=True), "chrf": sacrebleu.CHRF(), "chrf++": sacrebleu.CHRF(word_order=2),
            "ter": sacrebleu.TER()}
    assert list(seg["scores"]) == list(want)
    for name, ref_metric in want.items():
        for i, h in enumerate(HYPS):
            assert seg["scores"][name][i] == pytest.approx(ref_metric.sentence_score(h, [r[i] for r in REFS[:nrefs]]).score,
                                                           abs=1e-9), (name, i)
    assert "eff:yes" in seg["signatures"]["bleu"] and f"nrefs:{nrefs}" in seg["signatures"]["ter"]


def test_segment_scores_are_kept_with_the_mt_stage_and_not_recomputed(tmp_path, monkeypatch):
    """The MT stage writes the segment entry from its own statistics; reading it back computes no
    statistics again; an MT entry cached without segments gets them when first asked for."""
    from clir_eval.pipeline import stages
    from clir_eval.pipeline.stages import mt_segment_scores, mt_stage

    hyp, refs = _files(tmp_path, 1)
    mt = MTSettings(metrics=("bleu", "chrf"), refs=(str(refs[0]),))
    calls = []
    real = stages.collect_stats  # the MT stage's own reference (imported at the top of pipeline/stages.py)
    monkeypatch.setattr(stages, "collect_stats", lambda *a, **k: calls.append(1) or real(*a, **k))
    task = MTTask("s", str(hyp), mt, segments=("chrf",))
    cache = Cache(tmp_path / "cache")
    out = mt_stage(task, cache)
    assert len(calls) == 1
    seg = mt_segment_scores(task, cache)
    assert len(calls) == 1 and list(seg["scores"]) == ["chrf"]  # read back, not recomputed
    other = Cache(tmp_path / "cache2")
    assert mt_stage(MTTask("s", str(hyp), mt), other) == out  # an earlier run without item level: same scores
    assert len(calls) == 2
    assert mt_segment_scores(task, other) == seg  # computed once, when first asked for
    assert len(calls) == 3
    mt_stage(task, other)
    assert len(calls) == 3
    more = MTTask("s", str(hyp), mt, segments=("bleu", "chrf"))  # other metrics: an entry of their own
    assert list(mt_segment_scores(more, other)["scores"]) == ["bleu", "chrf"] and len(calls) == 4


def test_segment_metrics_follow_the_item_level_section(tmp_path):
    from clir_eval.config.load import load_config
    from clir_eval.pipeline.run import _segment_metrics

    cfg = tmp_path / "c.yaml"
    text = ("name: x\nmt: {refs: [r.txt], metrics: [bleu, chrf1, macrof1]}\n"
            "systems: [{name: a, hyp: h.txt}, {name: b, hyp: h.txt}, {name: c, hyp: h.txt}]\n")
    (tmp_path / "r.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "h.txt").write_text("a\n", encoding="utf-8")
    for section, want in [("", ("bleu", "chrf1", "macrof1")), ("item_level: {enabled: false}\n", ()),
                          ("item_level: {metrics: [chrF1]}\n", ("chrf1",))]:
        cfg.write_text(text + section, encoding="utf-8")
        assert _segment_metrics(load_config(cfg)) == want, section


def test_item_level_files_of_an_earlier_run_are_removed_when_a_run_does_not_write_them(tmp_path):
    """A run with item level off into a directory that holds an earlier run's item-level files leaves
    no item_segments.tsv / item_documents.json / item_queries.json that its results.json does not describe."""
    from importlib.resources import files

    import yaml

    from clir_eval.config.load import load_config
    from clir_eval.pipeline.run import run_experiment
    from clir_eval.sources.demo import generate_demo

    data = tmp_path / "data"
    generate_demo(data, seed=13)
    cfg = yaml.safe_load(files("clir_eval").joinpath("data/demo.yaml").read_text(encoding="utf-8")
                         .replace("data_root: ../demo-out/data", f"data_root: {data}"))
    cfg["correlation"].update(bootstrap=0, permutation=0)
    cfg["item_level"] = {"bootstrap": 0, "permutation": 0}
    cfg["ir"]["measures"] = ["recip_rank"]
    out = tmp_path / "out"
    (tmp_path / "on.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    on = run_experiment(load_config(tmp_path / "on.yaml", data_root=str(data)), out, jobs=1, quiet=True)
    written = [on["item_segments"]["file"], on["item_level"]["documents_file"]["file"],
               on["item_level"]["queries_file"]["file"]]
    assert written[1:] == ["item_documents.json", "item_queries.json"] and all((out / f).is_file() for f in written)
    from clir_eval.io.item_matrix import read_documents_file, read_queries_file

    d, q = read_documents_file(out, on), read_queries_file(out, on)  # both matrices read back, checked
    assert len(d["documents"]) == on["item_level"]["items"]["documents"]["n"]
    assert len(q["queries"]) == on["item_level"]["items"]["queries"]["n"] > 0
    assert set(q["targets"]) == set(on["item_level"]["items"]["queries"]["targets"]) and q["metrics"]
    cfg["item_level"] = {"enabled": False}
    (tmp_path / "off.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    off = run_experiment(load_config(tmp_path / "off.yaml", data_root=str(data)), out, jobs=1, quiet=True)
    assert "item_segments" not in off and not any((out / f).exists() for f in written)
    assert (out / "results.json").is_file() and (out / "report.md").is_file()
