"""Entry point of the ``clir-eval`` command: wires the command modules and turns user
errors and faults (full disk, unwritable paths, out of memory) into one line
``error: ...`` with exit code 2; anything else is a bug: one line, exit 1, and the
traceback with ``--debug`` (or ``CLIR_EVAL_DEBUG=1``)."""

from __future__ import annotations

import os
import sys
import traceback

# One BLAS thread per process (set before numpy is imported; an explicit setting wins): the
# pipeline runs its parallel work in worker processes, and OpenBLAS's own threads only compete
# with them and spin on small matrix products (the demo's item-level statistics took 2x the
# CPU with 2 BLAS threads on 2 cores, and longer wall time).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import typer  # noqa: E402

try:  # typer >= 0.20 vendors click
    from typer._click import exceptions as click_exc
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import exceptions as click_exc

from .. import __version__
from .app import app, load_commands
from ..errors import UserError, os_error_message


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"clir-eval {__version__}")
        raise typer.Exit()


_DEBUG = {"on": False}


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show the traceback of an internal error."),
) -> None:
    """Which MT metric best predicts how useful an MT system is for CLIR?"""
    _DEBUG["on"] = debug


def _fail(message: str, code: int = 2) -> int:
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")
    sys.stderr.flush()
    return code


def _internal(e: BaseException) -> int:
    """A bug, not a user error: one line naming where it happened (traceback with --debug)."""
    if _DEBUG["on"] or os.environ.get("CLIR_EVAL_DEBUG"):
        traceback.print_exc()
    tb = traceback.extract_tb(e.__traceback__)
    where = f" at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return _fail(f"internal error ({type(e).__name__}: {e}){where}; this is a bug, please report it "
                 "(re-run with --debug for the traceback)", 1)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 2 user error)."""
    load_commands()
    _DEBUG["on"] = False
    try:
        rv = app(args=argv, prog_name="clir-eval", standalone_mode=False)
    except UserError as e:
        return _fail(str(e))
    except click_exc.NoArgsIsHelpError as e:  # plain `clir-eval`: the help, as --help prints it
        print(e.format_message())
        return 0
    except click_exc.UsageError as e:
        hint = f" (see 'clir-eval {e.ctx.info_name} --help')" if e.ctx and e.ctx.info_name != "clir-eval" else " (see 'clir-eval --help')"
        return _fail(e.format_message() + hint)
    except typer.Abort:
        return _fail("aborted")
    except typer.Exit as e:
        return e.exit_code
    except click_exc.ClickException as e:
        return _fail(e.format_message())
    except BrokenPipeError:
        return 0
    except OSError as e:
        return _fail(os_error_message(e))
    except MemoryError:
        return _fail("out of memory; use smaller inputs or resample counts, or a machine with more memory")
    except RecursionError:
        return _fail("input nested too deeply; check the input files for runaway nesting")
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as e:  # noqa: BLE001 - the last line of defence: no traceback for users
        return _internal(e)
    return rv if isinstance(rv, int) else 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
