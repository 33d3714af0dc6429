"""Europarl v7 source-release reader: cleaning rules, granularities, alignment, errors."""

from __future__ import annotations

import gzip
import re

import pytest

from clir_eval.errors import UserError
from clir_eval.sources.europarl import (
    align_collections,
    clean_line,
    europarl_files,
    parse_file,
    read_europarl,
    read_europarl_aligned,
    reader_signature,
)

SAMPLE_LANGS = ("cs", "de", "en")

INLINE = """<CHAPTER ID="3">
Opening of the sitting
<SPEAKER ID="1" NAME="President">
(The sitting was opened at 9 a.m.)
<SPEAKER ID="2" NAME="Jan Novak" LANGUAGE="CS">
(CS) (Abbreviated) Madam President, the ECB (European Central Bank) matters.<BRK>
<P>
Second paragraph.
<BRK>
<SPEAKER ID="2" NAME="Anna Berg">
Written explanation.
<CHAPTER ID=4>
Next item
<SPEAKER ID=2 NAME="Jan Novak">
Another turn.
"""


def write(path, text, gz=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.fixture
def inline_root(tmp_path):
    write(tmp_path / "txt" / "en" / "ep-00-01-17.txt", INLINE)
    return tmp_path


def test_clean_line_rules():
    assert clean_line("<SPEAKER ID=\"7\" NAME=\"X\">") is None
    assert clean_line("<P>") is None
    assert clean_line("<CHAPTER ID=1>") is None
    assert clean_line("(DE) Herr Präsident!") == "Herr Präsident!"
    assert clean_line("(The sitting was opened at 9 a.m.)") == ""
    assert clean_line("(PL) (Abbreviated) text") == "text"
    assert clean_line("a (kept) parenthetical") == "a (kept) parenthetical"
    assert clean_line("one<BRK>two") == "one two"


def test_inline_speaker_granularity(inline_root):
    docs = dict(read_europarl(inline_root, "en", "speaker"))
    # turn 1 is only a parenthetical -> no text -> dropped; SPEAKER id 2 repeats in chapter 3
    assert list(docs) == ["ep-00-01-17:3:2", "ep-00-01-17:3:2-2", "ep-00-01-17:4:2"]
    assert docs["ep-00-01-17:3:2"] == (
        "Madam President, the ECB (European Central Bank) matters.\nSecond paragraph.")
    assert docs["ep-00-01-17:3:2-2"] == "Written explanation."
    assert docs["ep-00-01-17:4:2"] == "Another turn."
    for text in docs.values():
        assert "<" not in text and "(CS)" not in text and "Opening of the sitting" not in text


def test_inline_file_granularity_keeps_titles(inline_root):
    docs = read_europarl(inline_root, "en", "file")
    assert [d for d, _ in docs] == ["ep-00-01-17"]
    assert docs[0][1].split("\n") == [
        "Opening of the sitting",
        "Madam President, the ECB (European Central Bank) matters.",
        "Second paragraph.",
        "Written explanation.",
        "Next item",
        "Another turn.",
    ]


def test_turn_metadata(inline_root):
    parsed = parse_file(inline_root / "txt" / "en" / "ep-00-01-17.txt")
    assert [(t.chapter, t.speaker, t.occurrence, t.name) for t in parsed.turns] == [
        ("3", "1", 1, "President"), ("3", "2", 1, "Jan Novak"),
        ("3", "2", 2, "Anna Berg"), ("4", "2", 1, "Jan Novak")]


@pytest.mark.parametrize("granularity", ["file", "speaker"])
def test_fewer_than_three_lines_skips_file(tmp_path, granularity):
    d = tmp_path / "en"
    write(d / "ep-01-01-01.txt", '<CHAPTER ID="1">\n<SPEAKER ID="1">\none\n<P>\n(FR)\ntwo\n')
    write(d / "ep-01-01-02.txt", '<CHAPTER ID="1">\n<SPEAKER ID="1">\none\n<P>\ntwo\n<P>\nthree\n')
    docs = read_europarl(tmp_path, "en", granularity)
    assert [d.split(":")[0] for d, _ in docs] == ["ep-01-01-02"]
    assert docs[0][1] == "one\ntwo\nthree"
    assert [d for d, _ in read_europarl(tmp_path, "en", granularity, min_lines=2)][0].startswith(
        "ep-01-01-01")


def test_min_turn_lines(tmp_path):
    text = ('<CHAPTER ID="1">\n<SPEAKER ID="1">\na\n<P>\nb\n<P>\nc\n'
            '<SPEAKER ID="2">\nd\n')
    write(tmp_path / "ep-02-02-02.txt", text)
    assert [d for d, _ in read_europarl(tmp_path)] == ["ep-02-02-02:1:1", "ep-02-02-02:1:2"]
    assert [d for d, _ in read_europarl(tmp_path, min_turn_lines=3)] == ["ep-02-02-02:1:1"]


def test_sources_gz_list_and_plain_dir(tmp_path):
    text = '<CHAPTER ID="1">\n<SPEAKER ID="9">\nx\ny\nz\n'
    gz = write(tmp_path / "de" / "ep-03-03-03-001.txt.gz", text, gz=True)
    plain = write(tmp_path / "other" / "ep-03-03-03-002.txt", text)
    write(tmp_path / "de" / "README", "not a Europarl file")
    assert read_europarl(tmp_path, "de") == [("ep-03-03-03-001:1:9", "x\ny\nz")]
    assert read_europarl([gz, plain], granularity="file") == [
        ("ep-03-03-03-001", "x\ny\nz"), ("ep-03-03-03-002", "x\ny\nz")]
    assert [f.name for f in europarl_files(tmp_path / "other")] == ["ep-03-03-03-002.txt"]


def test_errors(tmp_path):
    with pytest.raises(UserError, match="not found"):
        read_europarl(tmp_path / "missing", "en")
    (tmp_path / "empty" / "txt" / "en").mkdir(parents=True)
    with pytest.raises(UserError, match="no Europarl files"):
        read_europarl(tmp_path / "empty", "en")
    bad = tmp_path / "bad" / "txt" / "en" / "ep-04-04-04.txt"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b'<CHAPTER ID="1">\nok\n\xff\xfe broken\n')
    with pytest.raises(UserError, match=r"ep-04-04-04\.txt:3: not valid UTF-8"):
        read_europarl(tmp_path / "bad", "en")
    with pytest.raises(UserError, match="granularity"):
        read_europarl(tmp_path / "bad", "en", granularity="paragraph")
    with pytest.raises(UserError, match="not found"):
        read_europarl([tmp_path / "nope.txt"])
    write(tmp_path / "dup" / "ep-05-05-05.txt", "x\n")
    write(tmp_path / "dup" / "ep-05-05-05.txt.gz", "x\n", gz=True)
    with pytest.raises(UserError, match="both .txt and .txt.gz"):
        read_europarl(tmp_path / "dup")


def test_align_collections_reports_dropped():
    a = [("d1", "a1"), ("d2", "a2"), ("d3", "a3")]
    b = [("d3", "b3"), ("d1", "b1"), ("d4", "b4")]
    result = align_collections({"cs": a, "en": b})
    assert result.common == ["d1", "d3"]
    assert result.collections == {"cs": [("d1", "a1"), ("d3", "a3")],
                                  "en": [("d3", "b3"), ("d1", "b1")]}
    assert result.dropped == {"cs": ["d2"], "en": ["d4"]}
    assert "cs: kept 2, dropped 1 (e.g. d2)" in result.summary()
    with pytest.raises(UserError, match="do not line up"):
        align_collections({"cs": a, "en": b}, strict=True)
    with pytest.raises(UserError, match="duplicate docid"):
        align_collections({"cs": a + [("d1", "again")], "en": b})


def test_signature_names_settings():
    assert reader_signature("file", min_lines=3) == (
        "europarl-v7-source|granularity:file|min_lines:3|drop:markup,brk,leading-paren")
    assert "min_turn_lines:1" in reader_signature("speaker")


# --- the shared sample day (ep-11-06-23-014, cs/de/en) -------------------------------

def _speaker_tags(path):
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines()
               if line.startswith("<SPEAKER"))


def test_sample_719_turns_aligned(shared_data):
    root = shared_data / "europarl-sample"
    docs = {lang: read_europarl(root, lang, "speaker") for lang in SAMPLE_LANGS}
    for lang in SAMPLE_LANGS:
        assert len(docs[lang]) == 719
        assert len(docs[lang]) == _speaker_tags(root / "txt" / lang / "ep-11-06-23-014.txt")
        assert len({d for d, _ in docs[lang]}) == 719
        for _, text in docs[lang]:
            assert text and not re.search(r"^<|<BRK>|^\([A-Z]{2}\) ", text, re.M)
    ids = [[d for d, _ in docs[lang]] for lang in SAMPLE_LANGS]
    assert ids[0] == ids[1] == ids[2]
    aligned = read_europarl_aligned(root, SAMPLE_LANGS, strict=True)
    assert len(aligned.common) == 719 and not any(aligned.dropped.values())
    en = dict(docs["en"])
    raw = (root / "txt" / "en" / "ep-11-06-23-014.txt").read_text(encoding="utf-8").splitlines()
    # the file's first two turns, read here from the data itself: the text line after each
    # SPEAKER tag (the second with its "(XX) " language marker, which the reader drops)
    first, second = [raw[i + 1] for i, line in enumerate(raw) if line.startswith("<SPEAKER")][:2]
    assert raw[0] == '<CHAPTER ID="014">' and raw[2].startswith('<SPEAKER ID="200"') and raw[4].startswith('<SPEAKER ID="202"')
    assert en["ep-11-06-23-014:014:200"] == first
    assert re.match(r"\([A-Z]{2}\) ", second) and en["ep-11-06-23-014:014:202"].startswith(second[5:])


def test_sample_file_granularity(shared_data):
    root = shared_data / "europarl-sample"
    for lang in SAMPLE_LANGS:
        docs = read_europarl(root, lang, "file")
        assert [d for d, _ in docs] == ["ep-11-06-23-014"]
        raw = (root / "txt" / lang / "ep-11-06-23-014.txt").read_text(encoding="utf-8")
        n_text = sum(1 for line in raw.splitlines() if line and not line.startswith("<"))
        # full-line parentheticals ("(Abbreviated in accordance with Rule 170 ...)") vanish
        assert 3 <= len(docs[0][1].split("\n")) <= n_text


def test_sample_per_turn_minimum_three_breaks_alignment(shared_data):
    """Why min_turn_lines defaults to 1: a per-turn minimum of 3 loses most turns and the
    surviving ids differ across languages."""
    root = shared_data / "europarl-sample"
    ids = {lang: {d for d, _ in read_europarl(root, lang, min_turn_lines=3)}
           for lang in SAMPLE_LANGS}
    assert all(len(v) < 719 / 2 for v in ids.values())
    assert ids["cs"] != ids["en"]
