"""Start-up: ``--help``/``--version`` import nothing heavy; commands are found from source exactly as registered."""

import subprocess
import sys

import pytest

HEAVY = ("numpy", "scipy", "sacrebleu", "pytrec_eval", "matplotlib")


def _imported_after(args: list[str]) -> tuple[list[str], str]:
    code = (
        "import sys\nfrom clir_eval.cli import main\n"
        f"rc = main({args!r})\n"
        f"print('rc', rc, 'imported:', *[m for m in {HEAVY!r} if m in sys.modules])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    head, _, tail = proc.stdout.rpartition("rc ")
    rc, _, mods = tail.partition(" imported:")
    assert rc.strip() == "0", proc.stdout
    return mods.split(), head


@pytest.mark.parametrize("args", [["--version"], ["--help"], []])
def test_top_level_imports_nothing_heavy(args):
    mods, _ = _imported_after(args)
    assert mods == []


def test_help_lists_every_command_without_importing_them():
    from clir_eval.cli.app import COMMANDS

    mods, out = _imported_after(["--help"])
    assert len(COMMANDS) >= 10
    for name, entry in COMMANDS.items():
        assert f"  {name} " in out and entry.summary in " ".join(out.split())
    assert not any(m.startswith("clir_eval.cli.") for m in mods)


def test_retrieve_help_imports_no_metric_libraries():
    mods, out = _imported_after(["retrieve", "--help"])
    assert "--docs" in out
    assert not {"scipy", "sacrebleu", "pytrec_eval", "matplotlib"} & set(mods)


def test_command_map_equals_registered_commands():
    """Each command of the static map is registered by the module the map names, under that name,
    with that first paragraph of help; no module registers a command the map does not list."""
    code = (
        "import importlib, json, typer\n"
        "from clir_eval.cli.app import COMMANDS, app, first_sentence\n"
        "out = {}\n"
        "for mod in dict.fromkeys(e.module for e in COMMANDS.values()):\n"
        "    before = set(typer.main.get_command(app).commands)\n"
        "    importlib.import_module(mod)\n"
        "    group = typer.main.get_command(app)\n"
        "    for n in set(group.commands) - before:\n"
        "        out[n] = [mod, first_sentence(group.commands[n].help), group.commands[n].hidden]\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import json

    from clir_eval.cli.app import COMMANDS

    registered = json.loads(proc.stdout)
    assert registered == {n: [e.module, e.summary, False] for n, e in COMMANDS.items()}


def test_cli_uses_no_private_typer_or_click_names():
    """typer's and click's public API only: no ``typer._x``/``click._x`` module or attribute."""
    import re
    from pathlib import Path

    pkg = Path(__file__).resolve().parent.parent / "clir_eval"
    for path in pkg.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\b(typer|click)\._", text), f"{path}: private typer/click name"
        assert not re.search(r"from (typer|click)(\.\w+)*\._", text), f"{path}: private typer/click module"


def _imported_by(args: list[str], cwd) -> set[str]:
    """Modules of interest loaded after running one command to completion in a fresh interpreter."""
    watch = (*HEAVY, "scipy.stats", "scipy.special", "scipy.sparse", "pydantic", "ir_measures")
    code = (
        "import sys\nfrom clir_eval.cli import main\n"
        f"rc = main({args!r})\n"
        f"print('rc', rc, 'imported:', *[m for m in {watch!r} if m in sys.modules])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    rc, _, mods = proc.stdout.rpartition("rc ")[2].partition(" imported:")
    assert rc.strip() == "0", proc.stdout + proc.stderr
    return set(mods.split())


def _mt_files(tmp_path):
    (tmp_path / "hyp.txt").write_text("the cat sat on the mat\na dog barked\n", encoding="utf-8")
    (tmp_path / "ref.txt").write_text("the cat sat on a mat\nthe dog barked\n", encoding="utf-8")


def test_mt_score_without_resampling_does_not_import_scipy_stats(tmp_path):
    _mt_files(tmp_path)
    mods = _imported_by(["mt-score", "--hyp", "hyp.txt", "--ref", "ref.txt", "--metrics", "bleu,chrf1,macrof1,microf1"], tmp_path)
    assert "sacrebleu" in mods  # the check sees the work's own imports
    assert not {"scipy.stats", "pytrec_eval", "matplotlib"} & mods


def test_mt_score_bootstrap_imports_scipy_special_not_scipy_stats(tmp_path):
    """The bias-corrected interval's normal quantiles come from scipy.special (clir_eval.stats.norm_ppf)."""
    _mt_files(tmp_path)
    mods = _imported_by(["mt-score", "--hyp", "hyp.txt", "--ref", "ref.txt", "--metrics", "bleu", "--bootstrap", "20"], tmp_path)
    assert "scipy.special" in mods and "scipy.stats" not in mods


def test_ir_score_and_retrieve_import_only_their_stage(tmp_path):
    (tmp_path / "docs.tsv").write_text("d1\tthe cat sat\nd2\ta dog barked\nd3\tcats and dogs\n", encoding="utf-8")
    (tmp_path / "q.tsv").write_text("q1\tcat\nq2\tdog\n", encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    mods = _imported_by(["retrieve", "--docs", "docs.tsv", "--queries", "q.tsv", "--out", "run.txt"], tmp_path)
    assert not {"scipy.stats", "sacrebleu", "pytrec_eval", "matplotlib"} & mods
    mods = _imported_by(["ir-score", "--qrels", "qrels.txt", "--run", "run.txt", "--measures", "map,ndcg,P_10"], tmp_path)
    assert "pytrec_eval" in mods
    assert not {"scipy", "sacrebleu", "matplotlib", "pydantic", "ir_measures"} & mods


def test_a_bad_integer_option_is_one_error_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "clir_eval", "ir-score", "--qrels", "q", "--run", "r",
                           "--collection-size", "abc"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert "'--collection-size'" in proc.stderr and "'abc' is not a valid integer" in proc.stderr


def test_pipeline_modules_import_no_stage_libraries():
    """What a spawned worker and the config loader import before any stage runs."""
    code = (
        "import sys\nimport clir_eval.pipeline.stages, clir_eval.pipeline.shards, clir_eval.config.load, "
        "clir_eval.correlation.significance, clir_eval.cli.run\n"
        "print(*[m for m in ('scipy.stats', 'sacrebleu', 'pytrec_eval', 'matplotlib') if m in sys.modules])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == []


def test_a_plain_queries_path_is_told_from_an_ir_datasets_export_without_importing_it():
    code = ("import sys\nfrom clir_eval.sources.irds import is_export\n"
            "print(is_export('/data/queries.tsv'), 'ir_datasets' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"]


def test_the_verdicts_caption_imports_no_numeric_library():
    """Re-rendering a report needs no numpy/scipy: the verdicts caption reads its threshold from
    the correlation settings, not from the statistics driver."""
    code = ("import sys\nfrom clir_eval.report.verdicts import verdict_tests\n"
            "text = verdict_tests([{'alpha': 0.05, 'method': 'kendall', 'discriminability': {'pairs_separated': 1, "
            "'pairs': 3, 'queries': 4, 'test': 'paired randomization over queries'}}])\n"
            f"print('10%' in text, *[m for m in {HEAVY!r} if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True"]


def test_kendall_correlations_and_verdicts_do_not_import_scipy_stats(tmp_path):
    """Kendall's τ with p-values, bootstrap CIs and PERM-BOTH verdicts (the demo's, pool's and a run's tests)
    load scipy.special, not scipy.stats (≈ 1.3 CPU-s); Pearson's test does load it."""
    import numpy as np

    rng = np.random.default_rng(0)
    rows = ["system\tbleu\tchrf\tmap\tndcg"]
    for i in range(12):
        base = rng.normal()
        rows.append(f"s{i}\t{base + rng.normal(0, .5):.2f}\t{base + rng.normal(0, .5):.1f}\t{base:.3f}\t{rng.random():.1f}")
    (tmp_path / "t.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["correlate", "--table", "t.tsv", "--x", "bleu,chrf", "--y", "map,ndcg", "--ci", "200", "--verdicts",
            "--out", "o.json"]
    mods = _imported_by(args, tmp_path)
    assert "numpy" in mods and "scipy.stats" not in mods
    assert "scipy.stats" in _imported_by([*args[:-1], "p.json", "--method", "pearson"], tmp_path)
