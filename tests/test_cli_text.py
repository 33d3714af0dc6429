"""What the CLI says: commands in workflow order with whole one-line descriptions, help examples
that write only under demo-out/, and TSV floats without binary noise."""

from __future__ import annotations

import json
import re
import shlex

from clir_eval.cli.app import COMMANDS, first_sentence
from clir_eval.report.blocks import TSV_DECIMALS, tsv_float


def _listing(cli) -> list[tuple[str, str]]:
    code, out, err = cli("--help")
    assert code == 0, err
    body = out.split("Commands:\n", 1)[1]
    rows: list[list[str]] = []
    for line in body.splitlines():
        m = re.match(r"  (\S+)\s+(.*)", line)
        if m:
            rows.append([m.group(1), m.group(2)])
        elif line.strip() and rows:
            rows[-1][1] += " " + line.strip()
    return [(n, d) for n, d in rows]


def test_top_level_help_lists_commands_in_workflow_order_with_whole_descriptions(cli):
    rows = _listing(cli)
    names = [n for n, _ in rows]
    assert names == list(COMMANDS)
    assert names[:4] == ["demo", "validate", "run", "report"]
    for name, desc in rows:
        assert not desc.endswith("...") and desc[-1] in ".?", f"{name}: description cut: {desc!r}"
        assert len(desc) <= 62, f"{name}: keep the first paragraph of its help to one 80-column line ({len(desc)} chars)"


def test_no_arguments_prints_the_help(cli):
    code, out, err = cli()
    assert code == 0 and err == ""
    assert out.strip() == cli("--help")[1].strip() and "Commands:" in out


def test_first_sentence_keeps_et_al():
    assert first_sentence("MacroF as in Gowda et al. 2021 Fig. 1: frequent or rare?\n\nMore.") == \
        "MacroF as in Gowda et al. 2021 Fig. 1: frequent or rare?"


def test_help_examples_write_under_demo_out(cli):
    for name in COMMANDS:
        code, out, _ = cli(name, "--help")
        for line in out.splitlines():
            if line.strip().startswith("clir-eval "):
                argv = shlex.split(line.strip(), comments=True)
                for opt, val in zip(argv, argv[1:]):
                    if opt in ("--out", "--plot"):
                        assert val == "demo-out" or val.startswith("demo-out/"), f"{name} example writes {val}"


def test_tsv_float_drops_binary_noise():
    assert tsv_float(0.8672499999999999) == "0.86725"
    assert tsv_float(0.1 + 0.2) == "0.3"
    assert tsv_float(-0.0) == "0.0" and tsv_float(42.037316123456) == "42.037316123456"
    assert tsv_float(float("nan")) == "nan"


def test_ir_score_tsv_equals_json_at_tsv_precision(cli, tmp_path):
    """Every TSV value is the JSON value rounded to TSV_DECIMALS, written without noise."""
    run = tmp_path / "r.run"
    qrels = tmp_path / "q.txt"
    run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {10 - d} t\n" for q in range(7) for d in range(9)))
    qrels.write_text("".join(f"q{q} 0 d{d} 1\n" for q in range(7) for d in range(9) if (q * d + q) % 3 == 0))
    code, js, err = cli("ir-score", "--run", str(run), "--qrels", str(qrels), "--measures", "map,ndcg,P_5,recip_rank")
    assert code == 0, err
    code, tsv, err = cli("ir-score", "--run", str(run), "--qrels", str(qrels), "--measures", "map,ndcg,P_5,recip_rank",
                         "--format", "tsv")
    assert code == 0, err
    agg = json.loads(js)["aggregate"]
    got = {m: v for m, q, v in (ln.split("\t") for ln in tsv.splitlines()) if q == "all"}
    assert set(got) == set(agg)
    for m, v in got.items():
        assert float(v) == round(agg[m], TSV_DECIMALS)
        assert len(v.split(".")[-1]) <= TSV_DECIMALS, v
