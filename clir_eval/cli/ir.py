"""``clir-eval ir-score`` (IR measures of one run) and ``clir-eval pseudo-qrels``."""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

import typer

from ..errors import UserError
from ..io.files import atomic_write, check_output_file
from ..io.trec import read_qrels, read_run, write_qrels
from ..ir.evaluate import Evaluator, as_given, check_scoreable
from ..ir.measures import parse_measures
from ..ir.relevance import pseudo_qrels, pseudo_qrels_signature
from ..ir.settings import PSEUDO_TOP_K, ScoreSettings
from ..limits import MAX_DEPTH, check_max
from ..report.blocks import tsv_float
from .app import app
from .options import check_option, setting_option


def _cell(v: Any) -> str:
    return tsv_float(v) if isinstance(v, float) else str(v)


def render_tsv(result: dict[str, Any]) -> str:
    """trec_eval ``-q`` layout: ``measure<TAB>qid<TAB>value``, per query then ``all``."""
    lines = []
    for qid, vals in result["per_query"].items():
        for name, v in vals.items():
            lines.append(f"{name}\t{qid}\t{_cell(v)}")
    for name, v in result["aggregate"].items():
        lines.append(f"{name}\tall\t{_cell(v)}")
    return "\n".join(lines) + "\n"


def _emit(text: str, out: Optional[str]) -> None:
    if out:
        with atomic_write(out, parents=False) as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


@app.command("ir-score")
def ir_score_cmd(
    run: str = typer.Option(..., "--run", help="TREC run to score (.gz ok)."),
    qrels: Optional[str] = typer.Option(None, "--qrels", help="TREC qrels 'qid 0 docid rel' (.gz ok)."),
    reference_run: Optional[str] = typer.Option(
        None, "--reference-run", help="Reference (English-side) run: needed by rbo and by --pseudo-qrels."
    ),
    pseudo_k: Optional[int] = typer.Option(
        None, "--pseudo-qrels", help="Instead of --qrels: top-K of the reference run are the relevant documents."
    ),
    collection_size: Optional[int] = setting_option(ScoreSettings, "collection_size"),
    measures: str = setting_option(ScoreSettings, "measures"),
    trec_order: bool = typer.Option(
        False, "--trec-order", help="Re-sort runs by score desc, docid desc (trec_eval) instead of file order."
    ),
    fmt: str = typer.Option("json", "--format", help="json | tsv (trec_eval -q layout)."),
    out: Optional[str] = typer.Option(None, "--out", help="Write here instead of stdout."),
) -> None:
    """Score a TREC run with IR measures, per query and on average.

    The mean is over the qrels' queries: a qrels query missing from the run scores 0; run
    queries without qrels are ignored.

    \b
    Examples (after the 'clir-eval retrieve' examples):
      clir-eval ir-score --qrels demo-out/data/qrels.txt --run demo-out/copier.run --measures AP,nDCG@10,P@10,R@100
      clir-eval ir-score --pseudo-qrels 10 --reference-run demo-out/en.run --run demo-out/copier.run --measures "map,RBO(p=0.9)" --format tsv
    """
    if fmt not in ("json", "tsv"):
        raise UserError(f"--format must be json or tsv, got {fmt!r}")
    if (qrels is None) == (pseudo_k is None):
        raise UserError("give exactly one of --qrels FILE or --pseudo-qrels K (with --reference-run)")
    parsed = parse_measures(measures)  # every name checked before any file is read
    check_option(ScoreSettings, "collection_size", collection_size)
    if pseudo_k is not None:
        check_max(pseudo_k, MAX_DEPTH, "--pseudo-qrels")
    if out:
        check_output_file(out)
    ref = _ranked(read_run(reference_run, sort=trec_order), reference_run, "--reference-run") if reference_run else None
    if qrels is not None:
        judged = read_qrels(qrels)
        qrels_sig = f"qrels:{qrels}"
    else:
        if ref is None:
            raise UserError("--pseudo-qrels needs --reference-run (the run whose top-K documents are relevant)")
        judged = pseudo_qrels(ref, pseudo_k)  # type: ignore[arg-type]
        qrels_sig = pseudo_qrels_signature(pseudo_k)  # type: ignore[arg-type]
    system = read_run(run, sort=trec_order)
    check_scoreable(system, judged, f"--run {run}", qrels if qrels is not None else f"--pseudo-qrels {pseudo_k}")
    result = Evaluator(judged, parsed, reference_run=ref, collection_size=collection_size).evaluate(system)
    result = as_given(result, measures)  # the keys as the user wrote them; the canonical name starts each signature
    result["qrels"] = qrels_sig
    result["order"] = "trec_eval (score desc, docid desc)" if trec_order else "run file order"
    if fmt == "json":
        _emit(json.dumps(result, indent=1, ensure_ascii=False) + "\n", out)
    else:
        _emit(render_tsv(result), out)


@app.command("pseudo-qrels")
def pseudo_qrels_cmd(
    run: str = typer.Option(..., "--run", help="Reference (English-side) TREC run."),
    out: str = typer.Option(..., "--out", help="Qrels file to write (.gz ok)."),
    top_k: int = typer.Option(PSEUDO_TOP_K, "--top-k", help="Documents per query taken as relevant."),
    trec_order: bool = typer.Option(False, "--trec-order", help="Sort the run by score desc, docid desc first."),
) -> None:
    """Write the top-K documents of a reference run as pseudo-qrels.

    \b
    Examples (after the 'clir-eval retrieve' examples):
      clir-eval pseudo-qrels --run demo-out/en.run --top-k 10 --out demo-out/pseudo.qrels
    """
    check_max(top_k, MAX_DEPTH, "--top-k")
    check_output_file(out)
    write_qrels(out, pseudo_qrels(_ranked(read_run(run, sort=trec_order), run, "--run"), top_k))


def _ranked(run, path: str, option: str):
    """A reference run that pseudo-qrels are taken from must rank something."""
    if not run.ranking:
        raise UserError(f"{option} {path}: the run has no ranked documents; give the reference (English-side) "
                        "run that retrieve wrote")
    return run
