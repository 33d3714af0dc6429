"""The output directory: checked and locked before work starts; reports first, results.json last."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Mapping

try:
    import fcntl
except ImportError:  # pragma: no cover - no flock (Windows): runs and caches are not locked
    fcntl = None

from .. import report
from ..errors import UserError
from ..io.files import check_target, write_set
from ..io.item_matrix import FILE as DOCUMENTS_FILE
from ..io.item_matrix import QUERIES_FILE
from ..io.results import RunResults
from .item_level import SEGMENTS_FILE

LOCK_FILE = ".clir-eval.lock"
CACHE_LOCK_FILE = ".clir-eval-cache.lock"
_HELD: dict[str, int] = {}  # shared caches this process holds (a run's per-direction runs reuse its lock)


def _writable_dir(path: Path, flag: str, shown: Any, parents: bool) -> Path:
    """Create ``path`` (a directory, writable) or raise a one-line error naming ``flag`` and ``shown``."""
    if path.exists() and not path.is_dir():
        raise UserError(f"{flag} {shown}: exists and is not a directory; choose another path")
    try:
        path.mkdir(parents=parents, exist_ok=True)
    except OSError as e:
        if isinstance(e, FileNotFoundError) and not parents:
            raise UserError(f"{flag} {shown}: the directory {path.parent} does not exist; create it first or fix the path") from None
        raise UserError(f"{flag} {shown}: cannot create the directory ({e.strerror}); choose another path") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"{flag} {shown}: directory is not writable; choose another path or fix its permissions")
    return path


def prepare_out(out_dir: str | os.PathLike) -> Path:
    """Create ``out_dir`` (a directory, writable; its parent must exist) and return it."""
    out = Path(out_dir)
    return _writable_dir(out, "--out", out, parents=False)


@contextlib.contextmanager
def claimed_out(out_dir: str | os.PathLike) -> Iterator[Path]:
    """:func:`prepare_out` and :func:`locked` together: a run refused or failed inside leaves no
    trace of the claim -- the lock file it created is removed, and so is ``out_dir`` itself when
    this call created it: all of it after a refusal (a UserError: the user fixes the input and
    starts again), only while empty otherwise (an interrupted run's cache entries stay, to resume)."""
    out = Path(out_dir)
    new = not os.path.lexists(out)
    prepare_out(out)
    try:
        with locked(out):
            _check_outputs(out)
            yield out
    except BaseException as e:
        if new and isinstance(e, UserError):
            shutil.rmtree(out, ignore_errors=True)
        elif new:
            _remove_empty_dirs(out)
        raise


def _check_outputs(out: Path) -> None:
    """Before any work: the files a run replaces are regular files or absent (a FIFO or
    directory named results.json is refused now, not after the whole run)."""
    for name in ("results.json", *report.REPORT_FILES):
        check_target(out / name)


def _remove_empty_dirs(top: Path) -> None:
    """Remove ``top`` and the directories below it that are empty (bottom up); files stay."""
    for dirpath, _dirs, _files in sorted(os.walk(top), key=lambda w: -len(w[0])):
        with contextlib.suppress(OSError):
            os.rmdir(dirpath)


def _stamp(fd: int) -> None:
    """Record who holds a lock file (shown to a run that finds it taken)."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode(), 0)


def _open_lock(path: Path, flag: str, shown: Any) -> tuple[int, bool]:
    """Open (creating it) the lock file ``path``: never through a symbolic link (O_NOFOLLOW, so a
    link planted there cannot make a run write outside its directory), and only a regular file.
    Returns the descriptor and whether this call created the file."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    flags = os.O_RDWR | nofollow | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        try:
            return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            pass
        except OSError as e:
            raise UserError(f"{flag} {shown}: cannot create the lock file {path} ({e.strerror}); "
                            "check the directory's permissions") from None
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            continue  # removed meanwhile by the run that held it
        except OSError as e:
            if os.path.islink(path):
                raise UserError(f"{flag} {shown}: the lock file {path} is a symbolic link; clir-eval never writes "
                                "through one -- remove the link and re-run") from None
            raise UserError(f"{flag} {shown}: cannot open the lock file {path} ({e.strerror}); remove it and re-run") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise UserError(f"{flag} {shown}: the lock file {path} is not a regular file; remove it and re-run")
        os.set_blocking(fd, True)
        return fd, False
    raise UserError(f"{flag} {shown}: cannot create the lock file {path}; re-run")  # pragma: no cover


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the open file ``fd`` (a lock file removed and re-created by
    another run while this one waited for it is not the lock any more)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


@contextlib.contextmanager
def _hold(path: Path, flag: str, shown: Any, busy) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the lock file ``path``; ``busy(fd, holder)`` is called when
    another process holds it and must either raise or return after blocking on the lock. The
    file is removed on release when this call created it (the directory is left as found)."""
    while True:
        fd, created = _open_lock(path, flag, shown)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
                busy(fd, holder)
            if _same_file(fd, path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        _stamp(fd)
        yield
    finally:
        if created and _same_file(fd, path):
            with contextlib.suppress(OSError):
                os.unlink(path)  # still holding the lock: a run that opened it meanwhile re-opens
        os.close(fd)


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``out`` for the run; another run into it fails with a clear error.

    The lock is an ``flock`` on ``out/.clir-eval.lock``: the kernel releases it when the
    process ends however it ends, so a killed run never leaves a stale lock behind."""
    if fcntl is None:  # pragma: no cover - no flock (Windows): unlocked
        yield
        return

    def busy(fd: int, holder: str) -> None:
        raise UserError(
            f"--out {out}: another clir-eval run is writing into this directory ({holder}); "
            "wait for it to finish or choose another --out"
        )

    with _hold(out / LOCK_FILE, "--out", out, busy):
        yield


def prepare_cache(cache_dir: str | os.PathLike) -> Path:
    """Create a shared cache directory (``--cache``/``$CLIR_EVAL_CACHE``), writable; return its absolute path."""
    return _writable_dir(Path(cache_dir).absolute(), "--cache", cache_dir, parents=True)


def prepare_default_cache(out: Path) -> Path:
    """``out/cache``, the cache of a run without ``--cache``: never a symbolic link (that would
    write outside ``--out``)."""
    cache = out / "cache"
    if os.path.islink(cache):
        raise UserError(f"--out {out}: {cache} is a symbolic link; clir-eval writes only inside --out -- remove "
                        "the link, or pass the directory it points to as --cache")
    return prepare_cache(cache)


@contextlib.contextmanager
def cache_locked(root: Path, log) -> Iterator[None]:
    """Hold the shared cache ``root`` for the run: runs that share a cache take turns (a second
    one waits, saying so, then reuses what the first finished). An ``flock`` as for ``--out``:
    released by the kernel however a run ends, so a killed run never blocks the cache."""
    key = str(root)
    if fcntl is None:  # pragma: no cover - no flock (Windows): unlocked
        yield
        return
    if _HELD.get(key):
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return

    def busy(fd: int, holder: str) -> None:
        log(f"--cache {root}: another clir-eval run is using this cache ({holder}); waiting for it to finish")
        fcntl.flock(fd, fcntl.LOCK_EX)

    with _hold(root / CACHE_LOCK_FILE, "--cache", root, busy):
        _HELD[key] = 1
        try:
            yield
        finally:
            _HELD.pop(key, None)


def write_outputs(results: RunResults, out: Path, t_start: float, progress: Any = None,
                  extra: Mapping[str, str] | None = None) -> RunResults:
    """Write the reports and results.json as one set (all written aside first, so a failure
    leaves the previous set byte-identical; results.json is replaced last, so a run stopped
    during the swap leaves no results.json). Reports are not re-rendered when results.json
    already holds the same results. ``progress`` (a :class:`.progress.Progress`) shows the
    reports being rendered; ``extra`` (file name: text) are more files of the set. Returns the
    record as written (its timing completed with the reports' and the total)."""
    t0 = time.perf_counter()
    target = out / "results.json"
    previous = _previous_results(target)
    data = results.to_dict()
    unchanged = previous is not None and _without_timing(previous) == _without_timing(json.loads(json.dumps(data)))
    files: dict[str, str] = dict(extra or {})
    if not (unchanged and all((out / f).exists() for f in report.REPORT_FILES)):
        stage = progress.stage("reports", list(report.REPORT_FILES)) if progress is not None else None
        files.update(report.render_reports(data, on_done=stage))
    results = replace(results, timing={**results.timing, "report": round(time.perf_counter() - t0, 3),
                                       "total": round(time.perf_counter() - t_start, 3)})
    files["results.json"] = results.to_json()
    write_set(out, files, last="results.json")
    for name in _optional_files():  # a previous run's item-level files that this run's results.json does not describe
        if name not in files:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                (out / name).unlink()
    return results


def _optional_files() -> tuple[str, ...]:
    """The files a run writes only with some settings (item level), and those ``clir-eval design`` adds (they
    describe the previous results): removed when a run does not write them."""
    return (SEGMENTS_FILE, DOCUMENTS_FILE, QUERIES_FILE, "design.json", "design.html", "design.png")


def _previous_results(path: Path) -> dict | None:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # never opened: a FIFO would block (write_set refuses it)
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _without_timing(results: Mapping[str, Any]) -> Any:
    return {k: v for k, v in results.items() if k != "timing"} if isinstance(results, Mapping) else results
