"""The embedded demo's generated data: determinism, counts, alignment, and that the simulated
MT systems' errors order them as their profiles intend (on cheap proxies, not the pipeline)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import sacrebleu
from scipy.stats import kendalltau

from clir_eval.errors import UserError
from clir_eval.sources.demo import FUNCTION_WORDS, PROFILES, generate_demo, system_names

WORD = re.compile(r"\w+")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    generate_demo(out)
    return out


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def lines(path: Path) -> list[str]:
    return path.read_text("utf-8").split("\n")[:-1]


def all_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_byte_identical_across_processes(demo, tmp_path):
    """A fresh interpreter with another hash seed writes exactly the same bytes."""
    code = "import sys; from clir_eval.sources.demo import generate_demo; generate_demo(sys.argv[1])"
    env = dict(os.environ, PYTHONHASHSEED="12345")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, env=env)
    assert all_files(tmp_path) == all_files(demo)


def test_different_seed_differs(demo, tmp_path):
    paths = generate_demo(tmp_path, seed=14)
    for rel in ("english.jsonl", "source.jsonl", "queries.tsv", "qrels.txt", "systems/strong.jsonl", "mt/ref.en.txt"):
        assert (tmp_path / rel).read_bytes() != (demo / rel).read_bytes(), rel
    assert json.loads(paths["manifest"].read_text("utf-8"))["seed"] == 14


def test_vocabulary_is_generated_from_the_seed(demo, tmp_path):
    """Content words come from the seeded generator, not a fixed word list."""
    generate_demo(tmp_path, seed=99, n_docs=100, n_queries=10, n_systems=2)

    def content(root):
        return {w for d in jsonl(root / "english.jsonl") for w in WORD.findall(d["text"].lower())} - set(FUNCTION_WORDS)

    a, b = content(demo), content(tmp_path)
    assert len(a & b) < 0.2 * len(b)


def test_returned_paths_and_manifest(demo):
    manifest = json.loads((demo / "manifest.json").read_text("utf-8"))
    assert manifest["seed"] == 13
    assert manifest["parameters"]["n_docs"] == 400
    assert sorted(manifest["files"]) == sorted(all_files(demo))
    for name, meta in manifest["systems"].items():
        assert set(meta["profile"]) >= {"oov_base", "oov_rare", "func_err", "swap", "drop_sent", "trunc"}
        assert 0 <= meta["realised"]["sentences_dropped"] <= 1


def test_counts_ids_and_alignment(demo):
    english = jsonl(demo / "english.jsonl")
    ids = [d["id"] for d in english]
    assert len(ids) >= 300 and len(set(ids)) == len(ids)
    assert [d["id"] for d in jsonl(demo / "source.jsonl")] == ids
    names = system_names()
    assert len(names) >= 8
    assert sorted(p.stem for p in (demo / "systems").glob("*.jsonl")) == sorted(names)
    for name in names:
        assert [d["id"] for d in jsonl(demo / "systems" / f"{name}.jsonl")] == ids, name
    for mt in ("mt", "mt-in"):
        n = len(lines(demo / mt / "ref.en.txt"))
        assert n > 300
        assert len(lines(demo / mt / "src.xx.txt")) == n
        for name in names:
            assert len(lines(demo / mt / f"{name}.txt")) == n, (mt, name)
    # mt-in is the collection's own text, sentence per line (dropped sentences are empty lines).
    ref_in = [x for x in lines(demo / "mt-in" / "ref.en.txt") if x]
    assert " ".join(ref_in) == " ".join(d["text"] for d in english)
    for name in names:
        hyp_in = [x for x in lines(demo / "mt-in" / f"{name}.txt") if x]
        docs = [d["text"] for d in jsonl(demo / "systems" / f"{name}.jsonl") if d["text"]]
        assert " ".join(hyp_in) == " ".join(docs), name
    # The held-out MT test set is not collection text.
    assert not set(lines(demo / "mt" / "ref.en.txt")) & set(ref_in) - {""}


def test_queries_and_qrels(demo):
    queries = [line.split("\t") for line in lines(demo / "queries.tsv")]
    assert len(queries) >= 50 and all(len(q) == 2 for q in queries)
    assert len({q for q, _ in queries}) == len(queries)
    assert all(2 <= len(text.split()) <= 4 for _, text in queries)
    qrels: dict[str, dict[str, int]] = {}
    for line in lines(demo / "qrels.txt"):
        qid, zero, did, rel = line.split()
        assert zero == "0" and int(rel) > 0
        qrels.setdefault(qid, {})[did] = int(rel)
    assert set(qrels) == {q for q, _ in queries}
    assert all(len(rels) >= 2 for rels in qrels.values())
    docs = {d["id"]: set(WORD.findall(d["text"].lower())) for d in jsonl(demo / "english.jsonl")}
    for qid, text in queries:
        for did in qrels[qid]:
            assert docs[did] & set(text.split()), (qid, did)  # every relevant doc has a query word


def test_some_translation_is_empty_but_keeps_its_id(demo):
    empties = [(n, d["id"]) for n in system_names() for d in jsonl(demo / "systems" / f"{n}.jsonl") if not d["text"]]
    assert empties


def test_copied_tokens_are_source_words(demo):
    """Untranslated words are copied from the foreign side, not invented."""
    source_vocab = {w for d in jsonl(demo / "source.jsonl") for w in WORD.findall(d["text"].lower())}
    english_vocab = {w for d in jsonl(demo / "english.jsonl") for w in WORD.findall(d["text"].lower())}
    copier = Counter(w for d in jsonl(demo / "systems" / "copier.jsonl") for w in WORD.findall(d["text"].lower()))
    copied = {w for w in copier if w in source_vocab}
    assert copied and not source_vocab & english_vocab
    assert sum(copier[w] for w in copied) > 0.05 * sum(copier.values())


def rare_kept(demo: Path, name: str, max_freq: int = 3) -> float:
    """Fraction of rare reference-word occurrences (collection frequency <= max_freq) that
    appear in the system's translation of the same sentence, over kept sentences."""
    refs = lines(demo / "mt-in" / "ref.en.txt")
    freq = Counter(w for r in refs for w in WORD.findall(r.lower()))
    kept = total = 0
    for ref, hyp in zip(refs, lines(demo / "mt-in" / f"{name}.txt")):
        if not hyp:
            continue
        hyp_words = set(WORD.findall(hyp.lower()))
        for w in WORD.findall(ref.lower()):
            if freq[w] <= max_freq:
                total += 1
                kept += w in hyp_words
    return kept / total


def test_rare_word_preservation_follows_the_profiles(demo):
    manifest = json.loads((demo / "manifest.json").read_text("utf-8"))
    names = system_names()
    measured = {n: rare_kept(demo, n) for n in names}
    expected = {n: manifest["systems"][n]["expected_rare_kept"] for n in names}
    tau, _ = kendalltau([measured[n] for n in names], [expected[n] for n in names])
    assert tau >= 0.8, (tau, measured)
    assert max(measured, key=measured.get) == "strong"
    assert min(measured, key=measured.get) == "very-weak"


def test_fluent_and_literal_profiles_pull_bleu_and_rare_words_apart(demo):
    """The design that lets BLEU and MacroF1 disagree: the fluent system that loses rare words
    beats the literal one on BLEU, and loses to it on rare-word preservation."""
    ref = lines(demo / "mt" / "ref.en.txt")
    bleu = {n: sacrebleu.corpus_bleu(lines(demo / "mt" / f"{n}.txt"), [ref]).score for n in ("fluent-oov", "literal")}
    assert bleu["fluent-oov"] > bleu["literal"] + 20
    assert rare_kept(demo, "literal") > rare_kept(demo, "fluent-oov") + 0.1


def test_sentence_loss_follows_the_profiles(demo):
    names = system_names()
    lost = {n: sum(not x for x in lines(demo / "mt-in" / f"{n}.txt")) for n in names}
    p = PROFILES
    expected = {n: p[n].drop_sent + p[n].trunc * 0.5 + p[n].empty for n in names}
    tau, _ = kendalltau([lost[n] for n in names], [expected[n] for n in names])
    assert tau >= 0.7, (tau, lost)


def test_fewer_systems_and_bad_parameters(tmp_path):
    paths = generate_demo(tmp_path, n_docs=60, n_queries=5, n_systems=3)
    assert sorted(p.stem for p in paths["systems_dir"].glob("*.jsonl")) == sorted(system_names(3))
    with pytest.raises(UserError, match="n_systems"):
        generate_demo(tmp_path / "x", n_systems=len(PROFILES) + 1)
    with pytest.raises(UserError, match="n_docs"):
        generate_demo(tmp_path / "y", n_docs=5)
