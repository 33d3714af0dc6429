"""The typer app and its command map; each command module registers its commands on ``app``.

The CLI only wires stages together: every command parses options, calls the stage module, and
prints/writes the result. A command's module is imported only when that command runs (click's
lazy-group pattern over the static map :data:`COMMANDS`), so ``--help``, ``--version`` and each
command import only what they use. Only typer's and click's public API is used.
"""

from __future__ import annotations

import importlib
from difflib import get_close_matches
from typing import NamedTuple

import click
import typer
from typer.core import TyperCommand, TyperGroup


class Entry(NamedTuple):
    """Where a command is defined (the module that registers it with ``@app.command(NAME)``) and
    the first paragraph of its help, which the top-level help lists without importing the module
    (tests/test_cli_startup.py checks both against the registered command)."""

    module: str
    summary: str


# Every command, in the order the top-level help lists them: the order of a user's work (try it,
# check a config, run it, re-render), then the single-stage tools in pipeline order (MT,
# retrieval, IR, correlation, export). Registering a command is one line here.
COMMANDS: dict[str, Entry] = {
    "demo": Entry("clir_eval.cli.demo", "Generate a simulated experiment (12 MT systems) and run it."),
    "validate": Entry("clir_eval.cli.run", "Check a config and open every input, without running it."),
    "run": Entry("clir_eval.cli.run", "Run an experiment: MT, retrieval, IR, correlations, reports."),
    "report": Entry("clir_eval.cli.run", "Re-render a finished run's reports from its results.json."),
    "design": Entry("clir_eval.cli.design", "Power of a run's questions at other study sizes."),
    "pool": Entry("clir_eval.cli.pool", "Pool finished runs: a metric leaderboard, CLIR thresholds."),
    "correlate": Entry("clir_eval.cli.correlate", "Correlate the columns of a score table."),
    "mt-score": Entry("clir_eval.cli.mt", "Score one system against one or more references."),
    "mt-compare": Entry("clir_eval.cli.mt", "Compare systems with a baseline, with significance tests."),
    "mt-buckets": Entry("clir_eval.cli.mt", "MacroF per bucket of reference word frequency."),
    "favoritism": Entry("clir_eval.cli.favoritism", "Segments each metric credits most to one system over another."),
    "retrieve": Entry("clir_eval.cli.retrieve", "Rank documents for each query with BM25 and write a TREC run."),
    "pseudo-qrels": Entry("clir_eval.cli.ir", "Write the top-K documents of a reference run as pseudo-qrels."),
    "ir-score": Entry("clir_eval.cli.ir", "Score a TREC run with IR measures, per query and on average."),
    "mtme-export": Entry("clir_eval.cli.mtme", "Export a run's scores as mt-metrics-eval score files."),
}


def first_sentence(text: str | None) -> str:
    """The first paragraph of a help text on one line: the command's description in listings."""
    para = (text or "").split("\n\n")[0].replace("\b", "")
    return " ".join(para.split())


class LazyGroup(TyperGroup):
    """The top-level group: commands of :data:`COMMANDS` are imported on first use (click's
    documented lazy-loading pattern); the listing in ``--help`` comes from the map."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(dict.fromkeys([*COMMANDS, *self.commands]))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name].module)
            cmd = typer.main.get_command(app)
            found = cmd.commands.get(cmd_name) if isinstance(cmd, click.Group) else None
            if found is None:
                raise RuntimeError(f"{COMMANDS[cmd_name].module} registers no command {cmd_name!r}")
            self.commands[cmd_name] = found
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command with its whole first paragraph (click cuts it at ~45 characters or at 'et al.')."""
        rows = []
        for name in self.list_commands(ctx):
            if name in COMMANDS:
                rows.append((name, COMMANDS[name].summary))
            elif not self.commands[name].hidden:
                rows.append((name, first_sentence(self.commands[name].help)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and args[0] not in self.list_commands(ctx) and not args[0].startswith("-"):
            hint = get_close_matches(args[0], self.list_commands(ctx))
            also = f" Did you mean {', '.join(repr(m) for m in hint)}?" if hint else ""
            ctx.fail(f"No such command {args[0]!r}.{also}")
        return super().resolve_command(ctx, args)


def _name(p: click.Parameter) -> str:
    return p.metavar or (p.name or "").upper()


class PlainCommand(TyperCommand):
    """A command whose usage line names its arguments plainly: ``clir-eval run CONFIG [OPTIONS]``."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        args = [_name(p) if p.required else f"[{_name(p)}]"
                for p in self.get_params(ctx) if p.param_type_name == "argument"]
        formatter.write_usage(ctx.command_path, " ".join([*args, "[OPTIONS]"]))


class App(typer.Typer):
    """The typer app, with plain help (no boxes, no ``<bool>``) and plain usage lines."""

    def command(self, *args, cls=None, **kwargs):
        return super().command(*args, cls=cls or PlainCommand, **kwargs)


app = App(
    name="clir-eval",
    cls=LazyGroup,
    rich_markup_mode=None,
    help="Which MT metric best predicts how useful an MT system is for CLIR?",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # every command inherits it: -h is --help
)


def group() -> click.Group:
    """The click group of the app (its commands load lazily)."""
    cmd = typer.main.get_command(app)
    assert isinstance(cmd, click.Group)
    return cmd
