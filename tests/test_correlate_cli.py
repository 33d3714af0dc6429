"""``clir-eval correlate``: output formats and the bad-input contract (exit 2, one line)."""

from __future__ import annotations

import json

import pytest

TABLE = (
    "system\tlang\tBLEU\tchrF\tMAP\n"
    "s1\tcs\t10\t0.40\t0.20\n"
    "s2\tcs\t12\t0.45\t0.30\n"
    "s3\tcs\t14\t0.43\t0.25\n"
    "s4\tcs\t16\t0.50\t0.40\n"
    "s1\tde\t20\t0.50\t0.50\n"
    "s2\tde\t21\t0.52\t0.45\n"
)


@pytest.fixture
def table(tmp_path):
    p = tmp_path / "scores.tsv"
    p.write_text(TABLE)
    return p


def _user_error(code, out, err):
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_json_contract(cli, table):
    code, out, err = cli("correlate", "--table", table, "--x", "BLEU,chrF", "--y", "MAP", "--group-by", "lang",
                         "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert isinstance(rows, list) and len(rows) == 4
    for r in rows:
        assert {"group", "x", "y", "tau", "p_value", "n", "significant"} <= set(r)
    cs_bleu = rows[0]
    assert (cs_bleu["group"], cs_bleu["x"], cs_bleu["y"], cs_bleu["n"]) == ("cs", "BLEU", "MAP", 4)
    assert cs_bleu["tau"] == pytest.approx(2 / 3)  # BLEU increasing, MAP [.2,.3,.25,.4]
    assert cs_bleu["p_value"] == pytest.approx(1 / 3) and cs_bleu["significant"] is False
    assert rows[1]["x"] == "chrF" and rows[1]["tau"] == pytest.approx(1.0)  # same order as MAP
    de = rows[2]
    assert de["group"] == "de" and de["tau"] is None and de["n"] == 2 and "fewer than 3" in de["reason"]


def test_no_group_is_null(cli, table):
    code, out, _ = cli("correlate", "--table", table, "--x", "BLEU", "--y", "MAP", "--filter", "lang=cs")
    assert code == 0
    (row,) = json.loads(out)
    assert row["group"] is None and row["n"] == 4


def test_methods_variants(cli, table):
    for args, key in [(("--method", "pearson"), "pearson"), (("--method", "spearman"), "spearman"),
                      (("--variant", "c"), "kendall"), (("--variant", "acc23"), "kendall")]:
        code, out, err = cli("correlate", "--table", table, "--x", "BLEU", "--y", "MAP", "--filter", "lang=cs", *args)
        assert code == 0, err
        (row,) = json.loads(out)
        assert row["method"] == key
    assert row["variant"] == "acc23" and row["tau"] == pytest.approx(5 / 6) and row["p_value"] is None


def test_rounding_option(cli, table):
    base = ("correlate", "--table", table, "--x", "chrF", "--y", "MAP", "--filter", "lang=cs")
    _, out, _ = cli(*base)
    assert json.loads(out)[0]["tau"] == pytest.approx(1.0)
    # chrF to 1 decimal: .40 .45 .43 .50 -> .4 .5 .4 .5 (half up), ties change tau-b
    _, out, _ = cli(*base, "--round", "chrF=1")
    row = json.loads(out)[0]
    assert row["tau"] == pytest.approx(4 / (2 * 6 ** 0.5))  # con 4, x ties 2: 4/sqrt(4*6)
    assert row["rounding"] == {"chrF": 1}
    # "--round 1" rounds MAP too: .2 .3 .3 .4 -> con 3, x ties 2, y ties 1: 3/sqrt(4*5)
    _, out2, _ = cli(*base, "--round", "1")
    assert json.loads(out2)[0]["tau"] == pytest.approx(3 / 20 ** 0.5)


def test_tsv_and_md(cli, table, tmp_path):
    code, out, _ = cli("correlate", "--table", table, "--x", "BLEU,chrF", "--y", "MAP", "--group-by", "lang",
                       "--format", "tsv")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split("\t")[:7] == ["group", "x", "y", "tau", "p_value", "n", "significant"]
    assert len(lines) == 5
    assert lines[1].split("\t")[6] == "false"
    code, out, _ = cli("correlate", "--table", table, "--x", "BLEU,chrF", "--y", "MAP", "--group-by", "lang",
                       "--format", "md", "--label", "cs=Czech,chrF=chrF1")
    assert code == 0
    assert "| Group | Measure | BLEU | chrF1 |" in out
    assert "| Czech | MAP | ×.667 | **×1.000** |" in out
    assert "| de | MAP | n/a | n/a |" in out
    assert "| BLEU | n/a | n/a | 0/1 | 0 |" in out and "| chrF1 | n/a | n/a | 0/1 | 1 |" in out
    assert "de, MAP vs BLEU: fewer than 3" in out
    # without --verdicts nothing above the table ranks the metrics: the caption must not point there
    assert "verdicts above" not in out and "Bold is a point estimate" in out
    dest = tmp_path / "out" / "c.md"
    dest.parent.mkdir()  # an output's directory is never created
    code, out2, _ = cli("correlate", "--table", table, "--x", "BLEU,chrF", "--y", "MAP", "--group-by", "lang",
                        "--format", "md", "--label", "cs=Czech,chrF=chrF1", "--out", dest)
    assert code == 0 and out2 == "" and dest.read_text() == out


def test_ci_option(cli, table):
    code, out, _ = cli("correlate", "--table", table, "--x", "chrF", "--y", "MAP", "--filter", "lang=cs",
                       "--ci", "100", "--seed", "3")
    (row,) = json.loads(out)
    assert row["ci_low"] == pytest.approx(1.0) and row["ci_high"] == pytest.approx(1.0)
    assert row["seed"] == 3 and row["ci_resamples"] == 100


def test_missing_column(cli, table):
    err = _user_error(*cli("correlate", "--table", table, "--x", "BLUE", "--y", "MAP"))
    assert "'BLUE'" in err and "system, lang, BLEU, chrF, MAP" in err


def test_missing_file(cli, tmp_path):
    err = _user_error(*cli("correlate", "--table", tmp_path / "none.tsv", "--x", "a", "--y", "b"))
    assert "file not found" in err and "none.tsv" in err


def test_non_numeric_cell(cli, tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text(TABLE.replace("0.25", "n.a."))
    err = _user_error(*cli("correlate", "--table", p, "--x", "BLEU", "--y", "MAP"))
    assert "bad.tsv:4:" in err and "'n.a.'" in err


def test_fewer_than_three_rows_is_null_not_error(cli, tmp_path):
    p = tmp_path / "two.csv"
    p.write_text("a,b\n1,2\n2,3\n")
    code, out, _ = cli("correlate", "--table", p, "--x", "a", "--y", "b")
    assert code == 0
    (row,) = json.loads(out)
    assert row["tau"] is None and row["n"] == 2 and row["significant"] is None and row["reason"]


@pytest.mark.parametrize(
    "extra,needle",
    [
        (("--method", "kendal"), "unknown correlation method"),
        (("--variant", "d"), "unknown Kendall variant"),
        (("--format", "xml"), "unknown --format"),
        (("--alpha", "2"), "--alpha"),
        (("--filter", "lang=xx"), "no rows left"),
        (("--filter", "nope=1"), "no column 'nope'"),
        (("--round", "BLEU=x"), "bad rounding"),
        (("--group-by", "nope"), "no column 'nope'"),
    ],
)
def test_bad_options(cli, table, extra, needle):
    err = _user_error(*cli("correlate", "--table", table, "--x", "BLEU", "--y", "MAP", *extra))
    assert needle in err


def test_required_options(cli, table):
    _user_error(*cli("correlate", "--table", table, "--x", "BLEU"))
