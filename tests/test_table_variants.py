"""Score-table variants seen in published TSVs: trailing tabs/commas, grouping by two columns."""

from __future__ import annotations

import json
import math

import pytest

from clir_eval.errors import UserError
from clir_eval.io.tables import read_table


def test_trailing_tab_on_every_row_is_no_field(tmp_path):
    p = tmp_path / "t.tsv"
    p.write_text("system\tbleu\tmap\t\nA\t10\t0.3\t\nB\t12\t\t\nC\t9\t0.2\t\t\n", encoding="utf-8")
    t = read_table(p)
    assert t.columns == ("system", "bleu", "map")
    assert t.rows == (("A", "10", "0.3"), ("B", "12", ""), ("C", "9", "0.2"))
    assert math.isnan(t.numbers("map")[1])


def test_trailing_comma_csv_and_real_extra_fields_still_rejected(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("system,bleu,\nA,10,\nB,12\n", encoding="utf-8")
    assert read_table(p).rows == (("A", "10"), ("B", "12"))
    p.write_text("system,bleu\nA,10,x\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"t\.csv:2: 3 comma-separated fields, but the header has 2"):
        read_table(p)
    p.write_text("system,,bleu\nA,1,10\n", encoding="utf-8")
    with pytest.raises(UserError, match="empty column name"):
        read_table(p)


def test_correlate_group_by_two_columns(tmp_path, cli):
    rows = []
    for lang in ("lt", "ps"):
        for dom in ("In", "InExt"):
            for k in range(4):
                sign = 1 if (lang, dom) != ("ps", "InExt") else -1
                rows.append(f"{lang}\t{dom}\tsys{k}\t{10 + k}\t{0.1 * (k if sign > 0 else 4 - k):.2f}")
    p = tmp_path / "t.tsv"
    p.write_text("lang\tdomain\tsystem\tbleu\tmap\n" + "\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = cli("correlate", "--table", p, "--x", "bleu", "--y", "map", "--group-by", "lang,domain")
    assert code == 0, err
    res = {r["group"]: r for r in json.loads(out)}
    assert list(res) == ["lt/In", "lt/InExt", "ps/In", "ps/InExt"]
    assert all(r["n"] == 4 for r in res.values())
    assert res["ps/In"]["tau"] == pytest.approx(1.0) and res["ps/InExt"]["tau"] == pytest.approx(-1.0)
    code, _, err = cli("correlate", "--table", p, "--x", "bleu", "--y", "map", "--group-by", "lang,domian")
    assert code == 2 and "no column 'domian'" in err
