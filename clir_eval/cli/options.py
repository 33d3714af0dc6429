"""Command-line options read from the stages' settings records: default, help and bounds come from the
field's declaration (:mod:`clir_eval.settings`), and a value the record refuses is reported with its flag."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from ..errors import UserError
from ..settings import SettingError, check_value, default, field_type, rules

_UNSET: Any = object()


def setting_option(cls: type, name: str, flag: str = "", *aliases: str, value: Any = _UNSET, extra: str = "") -> Any:
    """``typer.Option`` of the settings field ``name`` of ``cls``: its default (or ``value``), its help text
    (then ``extra``, e.g. the known names) with the accepted range."""
    rule, kind = rules(cls)[name], field_type(cls, name)[0]
    bounds = rule.text(kind) if kind in (int, float) and not rule.choices else ""
    help_text = rule.help + (f" {extra}" if extra else "") + (
        f" Accepted: {bounds}." if bounds and bounds != "a finite number" else "")
    value = default(cls, name) if value is _UNSET else value
    if kind is tuple and value is not None:  # a list option is given as a comma list
        value = ",".join(map(str, value))
    return typer.Option(value, flag or "--" + name.replace("_", "-"), *aliases, help=help_text)


def build(cls: type, flags: dict[str, str] | None = None, **values: Any) -> Any:
    """The settings record from command-line values; a refused value is a UserError naming its flag."""
    try:
        return cls(**values)
    except SettingError as e:
        flag = (flags or {}).get(e.name, "--" + e.name.replace("_", "-"))
        raise UserError(f"{flag}: {e.reason}" if e.shows_value else f"{flag} {e.value!r} {e.reason}") from None


def check_option(cls: type, name: str, value: Any, flag: str = "") -> Any:
    """One option's value checked against field ``name`` of ``cls`` (a refused value: a UserError naming the flag)."""
    try:
        return check_value(cls, name, value)
    except SettingError as e:
        flag = flag or "--" + name.replace("_", "-")
        raise UserError(f"{flag}: {e.reason}" if e.shows_value else f"{flag} {e.value!r} {e.reason}") from None


def print_summary(results: dict, out: Path) -> None:
    """What `run` and `demo` print when a run has finished: on stdout the answer in a few short lines, the
    per-target table and where the reports are; on stderr the warnings, caveats and the pointer to design."""
    from ..report.tables import answer_lines, console_summary, console_warnings, design_pointer, no_correlations

    warnings = console_warnings(results)
    for line in answer_lines(results, no_correlations(results), len(warnings)):
        typer.echo(line)
    typer.echo(f"report: {Path(out) / 'report.html'}  (also report.md, report.tex, results.json, scores.tsv, correlations.tsv)")
    typer.echo(f"\n{results['name']}: {len(results['systems'])} systems, {len(results['correlations'])} correlations")
    for line in console_summary(results):
        typer.echo(line)
    sys.stdout.flush()
    for line in warnings:
        typer.echo(line, err=True)
    pointer = design_pointer(results, str(out))
    if pointer:
        typer.echo("note: " + pointer.replace("`", ""), err=True)
