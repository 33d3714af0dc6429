"""Shared file helpers: text reading (plain or .gz, strict UTF-8, line-numbered errors)
and atomic writes (temp file + rename, so no half-written output is ever left)."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import itertools
import json
import os
import shutil
import stat
import sys
import tempfile
import unicodedata
import zlib
from pathlib import Path
from typing import IO, Iterator, Sequence

from .. import limits
from ..errors import UserError, os_error_message

PathLike = str | os.PathLike


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
BOM = "\ufeff"


def _not_regular(mode: int) -> str | None:
    """What a non-regular file is ("a FIFO (named pipe)", ...); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _open_regular(p: Path) -> IO[bytes]:
    """Open ``p`` for reading; a FIFO or device is refused at once (opened non-blocking, so a
    FIFO with no writer cannot hang the open)."""
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise UserError(f"file not found: {p}; check the path") from None
    except OSError as e:
        raise UserError(os_error_message(e, p)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise UserError(f"{p} is a directory, expected a file")
        raise UserError(f"{p} is {_not_regular(mode)}, not a regular file; save the data to a file and give its path")
    os.set_blocking(fd, True)
    return open(fd, "rb")


class InputFile:
    """A binary input file, plain or gzip (``.gz``), read within the bounds of :mod:`..limits`:
    a .gz may expand past :func:`~clir_eval.limits.input_bytes` only at a normal compression
    ratio (checked every megabyte from there on, so a bomb is refused after a few megabytes),
    and never past :func:`~clir_eval.limits.gzip_bytes`; :meth:`lines` refuses a line longer
    than :func:`~clir_eval.limits.line_bytes`."""

    _STEP = 1 << 20  # decompressed bytes between two checks of the ratio

    def __init__(self, path: PathLike):
        self.path = Path(path)
        self._raw = _open_regular(self.path)
        self.gz = self.path.suffix == ".gz"
        self._fh: IO[bytes] = gzip.GzipFile(fileobj=self._raw, mode="rb") if self.gz else self._raw
        self._bytes = 0
        self._limit = limits.input_bytes()
        self._ratio = limits.gzip_ratio()
        self._total = limits.gzip_bytes()
        self._next = min(self._limit, self._total)  # the next check

    def _count(self, n: int) -> None:
        if not self.gz:
            return
        self._bytes += n
        if self._bytes <= self._next:
            return
        self._next = self._bytes + self._STEP
        if self._bytes > self._total:
            raise UserError(
                f"{self.path}: expands to more than {self._total} bytes (the bound on any .gz input); check the "
                "file, or raise the bound with CLIR_EVAL_MAX_GZIP_BYTES"
            )
        if self._bytes > self._ratio * max(self._raw.tell(), 1):
            raise UserError(
                f"{self.path}: expands to more than {self._limit} bytes at over {self._ratio} times its compressed "
                f"size (a damaged or malicious .gz); check the file, or raise the bound with "
                f"CLIR_EVAL_MAX_INPUT_BYTES / CLIR_EVAL_MAX_GZIP_RATIO"
            )

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            return b"".join(iter(lambda: self.read(1 << 20), b""))
        data = self._fh.read(n)
        self._count(len(data))
        return data

    def seek(self, offset: int) -> None:
        """Seek a plain file to a byte offset (a .gz is read from the start instead)."""
        if self.gz:
            raise ValueError("seek on a .gz input")
        self._fh.seek(offset)

    def lines(self, first: int = 1) -> Iterator[tuple[int, bytes]]:
        """(1-based line number, raw line with its newline) for each line, numbered from ``first``."""
        limit = limits.line_bytes()
        for lineno in itertools.count(first):
            raw = self._fh.readline(limit + 1)
            if not raw:
                return
            self._count(len(raw))
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise UserError(
                    f"{self.path}:{lineno}: line longer than {limit} bytes; check this is a line-based text file, "
                    "or raise the bound with CLIR_EVAL_MAX_LINE_BYTES"
                )
            yield lineno, raw

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            self._raw.close()

    def __enter__(self) -> "InputFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


READ_ERRORS = (OSError, EOFError, gzip.BadGzipFile, zlib.error)


def open_binary(path: PathLike) -> InputFile:
    return InputFile(path)


_BOM_NOTED: set[str] = set()


def _note_bom(p: Path) -> None:
    """Say once per file that a byte-order mark was removed (it would otherwise join the first field)."""
    key = str(p.absolute())
    if key not in _BOM_NOTED:
        _BOM_NOTED.add(key)
        sys.stderr.write(f"note: {p}: removed the UTF-8 byte-order mark at the start of the file\n")


def iter_lines(path: PathLike, *, strip_newline: bool = True,
               span: "tuple[int, int | None, int] | None" = None) -> Iterator[tuple[int, str]]:  # fmt: skip
    """Yield (1-based line number, text) for each line of a plain or gzipped UTF-8 file.

    A UTF-8 byte-order mark at the start of the file is removed (with a note on stderr).
    ``span = (first, offset, count)``: only lines ``first .. first + count - 1``; ``offset`` is
    the byte offset of line ``first`` in the (uncompressed) file, used to seek in a plain file
    (None: the lines before are read and skipped)."""
    p = Path(path)
    with InputFile(p) as fh:
        try:
            lines: Iterator[tuple[int, bytes]]
            if span is not None:
                start, offset, count = span
                if offset is not None and not fh.gz:
                    fh.seek(offset)
                    lines = itertools.islice(fh.lines(start), count)
                else:
                    lines = itertools.islice(fh.lines(), start - 1, start - 1 + count)
            else:
                lines = fh.lines()
            for lineno, raw in lines:
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise UserError(
                        f"{p}:{lineno}: not valid UTF-8 (byte {e.start}); re-encode the file as UTF-8"
                    ) from None
                if lineno == 1 and line.startswith(BOM) and (span is None or span[0] == 1):
                    line = line[1:]
                    _note_bom(p)
                if strip_newline:
                    line = line.rstrip("\r\n")
                yield lineno, line
        except READ_ERRORS as e:
            raise UserError(f"{p}: cannot read ({_reason(e)}); check the file is complete") from None


def _reason(e: BaseException) -> str:
    if isinstance(e, zlib.error):
        return f"corrupt gzip data: {e}"
    return str(e)


def read_lines(path: PathLike) -> list[str]:
    """All lines of a text file (plain or .gz), newline stripped."""
    return [line for _, line in iter_lines(path)]


def read_bytes(path: PathLike, limit: int | None = None) -> bytes:
    """The file's (decompressed) bytes, or its first ``limit`` bytes, within the input bounds."""
    p = Path(path)
    with InputFile(p) as fh:
        try:
            return fh.read(-1 if limit is None else limit)
        except READ_ERRORS as e:
            raise UserError(f"{p}: cannot read ({_reason(e)}); check the file is complete") from None


def read_text(path: PathLike, limit: int | None = None) -> str:
    """The whole file (or its first ``limit`` bytes) as text (plain or .gz, strict UTF-8,
    a leading byte-order mark removed)."""
    p = Path(path)
    data = read_bytes(p, limit)
    try:
        text = data.decode("utf-8", errors="strict" if limit is None else "ignore")
    except UnicodeDecodeError as e:
        lineno = data[: e.start].count(b"\n") + 1
        raise UserError(f"{p}:{lineno}: not valid UTF-8; re-encode the file as UTF-8") from None
    if text.startswith(BOM):
        _note_bom(p)
        text = text[1:]
    return text


def check_target(p: Path, option: str | None = None) -> None:
    """An output path must be a regular file or not exist yet (a FIFO or device is never replaced)."""
    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):  # absent; the parent is checked on its own
        return
    except OSError as e:
        raise UserError(os_error_message(e, p, writing=True)) from None
    name = f"{option} {p}" if option else str(p)
    if stat.S_ISDIR(mode):
        raise UserError(f"{name} is an existing directory; give a file path")
    kind = _not_regular(mode)
    if kind:
        raise UserError(f"{name} is {kind}, not a regular file; give the path of a file to write")


def _check_parent(p: Path, what: str) -> None:
    """The directory an output goes into must exist (it is never created) and be a directory."""
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise UserError(f"{what}: the directory {parent} does not exist; create it first or fix the path")
    _probe_writable(parent, what)


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "w", *, parents: bool = True) -> Iterator[IO]:
    """Write to a temp file beside ``path`` and rename it into place on success.

    ``.gz`` paths are gzip-compressed. On any exception the temp file is removed and
    ``path`` is left untouched. A directory, FIFO or device in the way is refused (never
    replaced), as are an unwritable directory and a full disk (:class:`UserError` naming
    ``path``). Missing directories are created only with ``parents`` (files inside an output
    or cache directory); a user's ``--out`` file is written with ``parents=False`` after
    :func:`check_output_file`, so nothing outside it is ever created.
    """
    p = Path(path)
    check_target(p)
    parent = p.parent if str(p.parent) else Path(".")
    if parents and not parent.exists():
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(os_error_message(e, p, writing=True)) from None
    if not parent.is_dir():
        what = "does not exist" if not parent.exists() else "is not a directory"
        raise UserError(f"cannot write {p}: the directory {parent} {what}; fix the path")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=parent)
    except OSError as e:
        raise UserError(os_error_message(e, p, writing=True)) from None
    try:
        binary = "b" in mode
        with os.fdopen(fd, "wb") as raw:
            if p.suffix == ".gz":
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
                    fh = gz if binary else io.TextIOWrapper(gz, encoding="utf-8", newline="\n")
                    yield fh
                    if not binary:
                        fh.flush()
                        fh.detach()
            else:
                fh = raw if binary else io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
                yield fh
                if not binary:
                    fh.flush()
                    fh.detach()
        os.chmod(tmp, 0o666 & ~_umask())
        check_target(p)  # a FIFO or device put there while writing is not replaced either
        os.replace(tmp, p)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename in (None, tmp, str(p)):
            raise UserError(os_error_message(e, p, writing=True)) from None
        raise


def write_set(out_dir: PathLike, files: "dict[str, str | bytes]", *, last: str | None = None,
              stale: Sequence[str] = ()) -> None:  # fmt: skip
    """Replace several files of ``out_dir`` as one unit: all are written into a staging
    directory inside ``out_dir`` first, so a failure (a full disk, an interrupt) leaves the
    previous files byte-identical; only then is each renamed into place (renames need no
    space), ``last`` (e.g. results.json, whose presence says the set is complete) removed
    first and renamed last. ``stale``: files of an earlier set that this one does not replace,
    removed while ``last`` is absent (so a complete set never sits beside them)."""
    out = Path(out_dir)
    for name in files:
        check_target(out / name)
    try:
        stage = Path(tempfile.mkdtemp(prefix=".staging.", dir=out))
    except OSError as e:
        raise UserError(os_error_message(e, out, writing=True)) from None
    try:
        for name, data in files.items():
            with atomic_write(stage / name, "wb", parents=False) as fh:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        names = [n for n in files if n != last] + ([last] if last in files else [])
        if last in files:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(out / last)
        for name in stale:
            if name not in files:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(out / name)
        for name in names:
            check_target(out / name)
            os.replace(stage / name, out / name)
    except OSError as e:
        raise UserError(os_error_message(e, out, writing=True)) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _probe_writable(d: Path, what: str) -> None:
    """Create and remove a temp file in directory ``d`` (the real test, also for root)."""
    if not d.is_dir():
        raise UserError(f"{what}: {d} is a file, not a directory; fix the path")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".clir-eval-probe.", dir=d)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise UserError(f"{what}: {os_error_message(e, d, writing=True)}") from None


def check_output_file(path: PathLike, option: str = "--out") -> None:
    """Before any work: ``path`` must be a regular file or absent, in an existing writable directory."""
    p = Path(path)
    check_target(p, option)
    _check_parent(p, f"{option} {p}")


def check_output_dir(path: PathLike, option: str = "--out") -> None:
    """Before any work: ``path`` must be a writable directory, or creatable as one in an existing directory."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        kind = _not_regular(p.stat().st_mode)
        if kind:
            raise UserError(f"{option} {p} is {kind}, not a directory; give a directory path")
        raise UserError(f"{option} {p} is an existing file; give a directory path (or remove the file)")
    if p.is_dir():
        _probe_writable(p, f"{option} {p}")
    else:
        _check_parent(p, f"{option} {p}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path: PathLike, obj, *, indent: int | None = 1) -> None:
    """Atomically write JSON (UTF-8, keys in insertion order); ``indent=None``: compact (and written
    by the json module's C encoder, several times faster)."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False)  # the same text as json.dump, which never uses the C encoder
    with atomic_write(path) as fh:
        fh.write(text)
        fh.write("\n")


def safe_filename(name: str) -> str:
    """``name`` with every character but letters, digits and ``-_.+`` replaced by ``_``."""
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in name)


def file_checksum(path: PathLike, algo: str = "sha1") -> str:
    """Hex digest of the file's bytes (as stored, i.e. compressed for .gz)."""
    h = hashlib.new(algo)
    with _open_regular(Path(path)) as fh:  # a FIFO or device is refused, never read
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def text_checksum(*parts: str, algo: str = "sha1") -> str:
    """Stable hex digest of strings (used to key caches by signature)."""
    h = hashlib.new(algo)
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


MAX_NAME = 128


def check_system_name(name: str, where: str) -> str:
    """A system name usable in TSV cells and (via :func:`safe_filename`) file names:
    1-128 characters, no control or invisible format characters (tab, newline, ...)."""
    if not name or not name.strip():
        raise UserError(f"{where}: empty system name; give every system a name")
    if len(name) > MAX_NAME:
        raise UserError(f"{where}: system name of {len(name)} characters is too long; the maximum is {MAX_NAME}")
    bad = next((c for c in name if unicodedata.category(c)[0] == "C"), None)
    if bad is not None:
        raise UserError(
            f"{where}: system name {name!r} contains the control character {bad!r}; "
            "use letters, digits, spaces and punctuation only"
        )
    return name
