"""Entry point of the ``clir-eval`` command: wires the command modules and turns user
errors and faults (full disk, unwritable paths, out of memory) into one line
``error: ...`` with exit code 2; Ctrl-C and SIGTERM into one line ``error: interrupted`` /
``error: terminated`` (exit 130 / 143); anything else is a bug: one line, exit 1, and the
traceback with ``--debug`` (or ``CLIR_EVAL_DEBUG=1``)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback

# One BLAS thread per process (set before numpy is imported; an explicit setting wins): the
# pipeline runs its parallel work in worker processes, and OpenBLAS's own threads only compete
# with them and spin on small matrix products (the demo's item-level statistics took 2x the
# CPU with 2 BLAS threads on 2 cores, and longer wall time).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import typer  # noqa: E402
from click import exceptions as click_exc  # noqa: E402 - typer's own classes (pinned: typer uses click)

from ..errors import UserError, os_error_message  # noqa: E402
from ..version import __version__  # noqa: E402
from .app import app, group  # noqa: E402


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


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that clean-up runs as for Ctrl-C."""


def _terminate(signum, frame) -> None:
    raise Terminated()


def _invoke(argv: list[str]):
    """Parse and run one command with click's public API (not ``main``: typer's and click's turn
    Ctrl-C into a silent exit)."""
    cmd = group()
    with cmd.make_context("clir-eval", argv) as ctx:
        return cmd.invoke(ctx)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 2 user error, 130 Ctrl-C, 143 SIGTERM)."""
    _DEBUG["on"] = False
    argv = sys.argv[1:] if argv is None else list(argv)
    on_term = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        on_term = signal.signal(signal.SIGTERM, _terminate)
    try:
        rv = _invoke(argv)
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
    except Terminated:
        return _fail("terminated", 128 + signal.SIGTERM)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as e:  # noqa: BLE001 - the last line of defence: no traceback for users
        return _internal(e)
    finally:
        if on_term is not None:
            signal.signal(signal.SIGTERM, on_term)
    return rv if isinstance(rv, int) else 0


def entry() -> None:
    code = main()
    with contextlib.suppress(ValueError, OSError):  # the work is done: a late Ctrl-C/SIGTERM changes nothing
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(code)


if __name__ == "__main__":
    entry()
