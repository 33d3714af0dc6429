"""Lignos et al. 2019 Europarl CLIR configs (issue 6).

- The smoke config on ../shared/data/europarl-sample: the English text as a stand-in system
  gets RBO = MAP = 1, the untranslated Czech text much less.
- lignos2019_europarl_{cs,de}.yaml need the full Europarl release and the systems' Europarl
  translations, which are not public: they are validated with the sample day standing in
  for the release, and their translation plumbing (one release-layout directory or one JSONL
  file per system, picked by the ``europarl.translations`` template) is run end to end with
  fake "translations" (the English text for BPE-16k systems, the untranslated source for
  BPE-32k ones), with the MT section dropped (MT on News Commentary is what
  test_replication_table5.py runs) and one document per SPEAKER turn (the sample is one file).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
REPL = ROOT / "configs" / "replication"
SMOKE = REPL / "europarl_sample_smoke.yaml"
LIGNOS = {lang: REPL / f"lignos2019_europarl_{lang}.yaml" for lang in ("cs", "de")}
SAMPLE_FILE = "ep-11-06-23-014.txt"
MEASURES = {"rbo", "map", "ndcg", "P_10", "recall_10"}


def _need(shared_data: Path, *parts: str) -> None:
    for p in parts:
        if not (shared_data / p).exists():
            pytest.skip(f"{shared_data / p} not found (set CLIR_EVAL_DATA to the shared data)")


def _results(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture
def data_root(shared_data, tmp_path):
    """A data root holding the shared data, with the sample day as ``europarl-v7``."""
    _need(shared_data, "europarl-sample", "gov2-topics", "lignos2019/nc-test")
    root = tmp_path / "data"
    root.mkdir()
    for name in ("lignos2019", "gov2-topics"):
        (root / name).symlink_to(shared_data / name, target_is_directory=True)
    (root / "europarl-v7").symlink_to(shared_data / "europarl-sample", target_is_directory=True)
    return root


# --------------------------------------------------------------------------- smoke config
@pytest.mark.shared_data
def test_smoke_english_is_perfect_untranslated_is_not(shared_data, cli, tmp_path):
    _need(shared_data, "europarl-sample", "gov2-topics")
    out = tmp_path / "out"
    code, _, err = cli("run", SMOKE, "--out", out, "--data-root", shared_data, "-j", "1", "-q")
    assert code == 0, err
    res = _results(out)
    assert res["english"]["n_queries"] == 150 and res["english"]["n_docs"] == 719
    eng, src = res["systems"]["english-text"], res["systems"]["untranslated-cs"]
    assert set(eng["ir"]) == MEASURES
    assert eng["ir"]["rbo"] == pytest.approx(1.0, abs=1e-12)
    assert eng["ir"]["map"] == pytest.approx(1.0, abs=1e-12)
    assert eng["ir"]["ndcg"] == pytest.approx(1.0, abs=1e-12)
    for m in ("rbo", "map", "ndcg"):
        assert src["ir"][m] < 0.5 * eng["ir"][m], m
    assert eng["collection"] == src["collection"] == {"n_docs": 719, "n_empty_docs": 0}
    assert res["signature"]["relevance"].startswith("pseudo:top_k=100")
    assert any("Europarl documents: 719" in n and "granularity:speaker" in n for n in res["notes"])
    # stand-ins have no MT metrics: no (MT metric, IR measure) pair, so no correlation is made up
    assert res["correlations"] == [] and res["comparisons"] == []
    # ... and the reports say so first, with no caveat about MT metrics and no link to an absent section
    md = (out / "report.md").read_text(encoding="utf-8")
    assert md.split("\n\n")[1].startswith("**No correlations**: 2 systems; at least 3 needed. No MT metrics")
    assert "circularity" not in md
    page = (out / "report.html").read_text(encoding="utf-8")
    links = re.findall(r"href='#([^']+)'", re.search(r"Contents: (.*?)</p>", page).group(1))
    assert links and all(f"id='{a}'" in page for a in links)
    assert not {"verdicts", "tables", "heatmap", "scatter"} & set(links)


# --------------------------------------------------------------------------- Lignos configs
@pytest.mark.shared_data
@pytest.mark.parametrize("lang", ["cs", "de"])
def test_lignos_config_validates(lang, data_root, cli):
    code, out, err = cli("validate", LIGNOS[lang], "--data-root", data_root, "--format", "json")
    assert code == 0, err
    cfg = json.loads(out)
    assert len(cfg["systems"]) == 16
    assert {s["attrs"]["bpe"] for s in cfg["systems"]} == {"16000", "32000"}
    assert all(s["hyp"].endswith(f"/nc-test/{lang}-en/systems/{s['name']}.txt.gz") for s in cfg["systems"])
    assert cfg["mt"]["refs"][0].endswith(f"nc-test/{lang}-en/reference.en.txt.gz")
    e = cfg["europarl"]
    assert e["root"] == str(data_root / "europarl-v7") and e["granularity"] == "file"
    assert e["translations"] == f"{data_root}/lignos2019/europarl-translations/{lang}-en/nc{{size}}.bpe{{bpe}}"
    assert e["lang_systems"] == {f"source-{lang}": lang}
    assert [Path(f).name for f in cfg["queries"]["file"]] == [
        "topics.terabyte04.701-750.txt", "topics.terabyte05.751-800.txt", "topics.terabyte06.801-850.txt"]
    assert cfg["queries"]["fields"] == ["title"] and cfg["relevance"]["pseudo_top_k"] == 100
    assert cfg["ir"]["measures"] == ["rbo:p=0.98", "map", "ndcg", "P_10", "recall_10"]


@pytest.mark.shared_data
def test_lignos_config_without_the_release_says_what_is_missing(shared_data, cli):
    _need(shared_data, "lignos2019/nc-test")
    if (shared_data / "europarl-v7").exists():
        pytest.skip("a Europarl release is present in the shared data")
    code, _, err = cli("validate", LIGNOS["cs"], "--data-root", shared_data)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "europarl.root: directory not found" in err and "europarl-v7" in err


def _fake_translations(data_root: Path, shared_data: Path, lang: str, layout: str) -> None:
    """Per system under the config's translations path: the English text (BPE 16k) or the
    untranslated source (BPE 32k), as a release-layout directory or a JSONL file."""
    from clir_eval.sources.europarl import read_europarl

    sample = shared_data / "europarl-sample"
    tdir = data_root / "translations" / f"{lang}-en"
    text = {"16000": sample / "txt" / "en" / SAMPLE_FILE, "32000": sample / "txt" / lang / SAMPLE_FILE}
    for size in (25000, 50000, 75000, 100000, 125000, 150000, 175000, 200000):
        for bpe, src in text.items():
            name = f"nc{size}.bpe{bpe}"
            if layout == "release":
                d = tdir / name / "txt" / "en"
                d.mkdir(parents=True)
                shutil.copyfile(src, d / SAMPLE_FILE)
            else:
                docs = read_europarl([src], granularity="speaker")
                tdir.mkdir(parents=True, exist_ok=True)
                (tdir / f"{name}.jsonl").write_text(
                    "".join(json.dumps({"id": d, "text": t}, ensure_ascii=False) + "\n" for d, t in docs),
                    encoding="utf-8")


@pytest.mark.shared_data
@pytest.mark.parametrize("layout", ["release", "jsonl"])
def test_lignos_translations_plug_in_per_system(layout, data_root, shared_data, cli, tmp_path):
    lang = "cs"
    _fake_translations(data_root, shared_data, lang, layout)
    cfg = yaml.safe_load(LIGNOS[lang].read_text(encoding="utf-8"))
    del cfg["mt"]
    cfg["europarl"]["granularity"] = "speaker"
    suffix = ".jsonl" if layout == "jsonl" else ""
    cfg["europarl"]["translations"] = f"${{DATA_ROOT}}/translations/{lang}-en/nc{{size}}.bpe{{bpe}}{suffix}"
    config = tmp_path / "lignos_cs_fake.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = cli("run", config, "--out", out, "--data-root", data_root, "-j", "1", "-q")
    assert code == 0, err
    res = _results(out)
    systems = res["systems"]
    assert len(systems) == 17 and f"source-{lang}" in systems
    floor = systems[f"source-{lang}"]["ir"]
    assert floor["rbo"] < 0.5
    for name, s in systems.items():
        if name == f"source-{lang}":
            continue
        assert set(s["ir"]) == MEASURES and s["collection"] == {"n_docs": 719, "n_empty_docs": 0}
        if name.endswith(".bpe16000"):
            assert s["ir"]["rbo"] == pytest.approx(1.0, abs=1e-12) and s["ir"]["map"] == pytest.approx(1.0, abs=1e-12)
        else:  # the untranslated source, exactly as the stand-in scores it
            assert s["ir"] == pytest.approx(floor, abs=1e-12), name
        assert {"bleurt_mean", "bleurt_median"} <= set(s["mt"])
    # BLEURT vs RBO over the 16 MT systems (the stand-in has no MT score and is left out)
    c = next(c for c in res["correlations"] if c["mt_metric"] == "bleurt_mean" and c["ir_measure"] == "rbo")
    assert c["n"] == 16 and f"source-{lang}" not in c["systems"]


# --------------------------------------------------------------------------- external tables with stand-ins
def _table(tmp_path: Path):
    from clir_eval.sources.settings import ExternalTable

    f = tmp_path / "bleurt.tsv"
    f.write_text("System\tBLEURTMean\nnc.en-cs.025000.bpe16000.fconv\t-0.2\n", encoding="utf-8")
    return ExternalTable(str(f), "mt", {"BLEURTMean": "bleurt_mean"},
                         {"System": "nc.en-{lang}.{size:0>6}.bpe{bpe}.fconv"}, where="external[0]")


def test_external_table_skips_systems_that_cannot_fill_the_template(tmp_path):
    """A Europarl stand-in (attributes name, lang) has no row instead of failing the run."""
    from clir_eval.config.schema import SystemSpec
    from clir_eval.sources.materialize import table_scores

    mt_sys = SystemSpec("nc25000.bpe16000", attrs={"name": "nc25000.bpe16000", "lang": "cs", "size": "25000", "bpe": "16000"})
    stand_in = SystemSpec("source-cs", attrs={"name": "source-cs", "lang": "cs"})
    assert table_scores(_table(tmp_path), [mt_sys, stand_in]) == {"nc25000.bpe16000": {"bleurt_mean": -0.2}}


def test_external_table_template_no_system_can_fill_is_an_error(tmp_path):
    from clir_eval.config.schema import SystemSpec
    from clir_eval.errors import UserError
    from clir_eval.sources.materialize import table_scores

    systems = [SystemSpec(n, attrs={"name": n, "lang": "cs"}) for n in ("a", "b")]
    with pytest.raises(UserError, match=r"external\[0\]\.match: template .* cannot be filled for system 'a' \('size'\)"):
        table_scores(_table(tmp_path), systems)
