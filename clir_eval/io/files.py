"""Shared file helpers: text reading (plain or .gz, strict UTF-8, line-numbered errors)
and atomic writes (temp file + rename, so no half-written output is ever left)."""

from __future__ import annotations

import contextlib
import gzip
import itertools
import hashlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

from ..errors import UserError, os_error_message

PathLike = str | os.PathLike


def _open_binary(path: PathLike) -> IO[bytes]:
    p = Path(path)
    if not p.exists():
        raise UserError(f"file not found: {p}; check the path")
    if p.is_dir():
        raise UserError(f"{p} is a directory, expected a file")
    if p.suffix == ".gz":
        return gzip.open(p, "rb")
    return open(p, "rb")


def iter_lines(path: PathLike, *, strip_newline: bool = True,
               span: "tuple[int, int | None, int] | None" = None) -> Iterator[tuple[int, str]]:  # fmt: skip
    """Yield (1-based line number, text) for each line of a plain or gzipped UTF-8 file.

    ``span = (first, offset, count)``: only lines ``first .. first + count - 1``; ``offset`` is
    the byte offset of line ``first`` in the (uncompressed) file, used to seek in a plain file
    (None: the lines before are read and skipped)."""
    p = Path(path)
    with _open_binary(p) as fh:
        lineno = 0
        lines: Iterator[bytes] = fh
        start = 1
        try:
            if span is not None:
                start, offset, count = span
                if offset is not None and not isinstance(fh, gzip.GzipFile):
                    fh.seek(offset)
                    lines = itertools.islice(fh, count)
                else:
                    lines = itertools.islice(fh, start - 1, start - 1 + count)
            for lineno, raw in enumerate(lines, start):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise UserError(
                        f"{p}:{lineno}: not valid UTF-8 (byte {e.start}); re-encode the file as UTF-8"
                    ) from None
                if strip_newline:
                    line = line.rstrip("\r\n")
                yield lineno, line
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            raise UserError(f"{p}: cannot read ({e}); check the file is complete") from None


def read_lines(path: PathLike) -> list[str]:
    """All lines of a text file (plain or .gz), newline stripped."""
    return [line for _, line in iter_lines(path)]


def read_text(path: PathLike) -> str:
    """The whole file as text (plain or .gz, strict UTF-8)."""
    p = Path(path)
    with _open_binary(p) as fh:
        try:
            data = fh.read()
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            raise UserError(f"{p}: cannot read ({e}); check the file is complete") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        lineno = data[: e.start].count(b"\n") + 1
        raise UserError(f"{p}:{lineno}: not valid UTF-8; re-encode the file as UTF-8") from None


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temp file beside ``path`` and rename it into place on success.

    ``.gz`` paths are gzip-compressed. On any exception the temp file is removed and
    ``path`` is left untouched; a directory in the way, an unwritable directory or a full
    disk is a :class:`UserError` naming ``path``.
    """
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{p} is a directory; give a file path for the output")
    try:
        if p.parent and not p.parent.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent or ".")
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
        os.replace(tmp, p)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename in (None, tmp, str(p)):
            raise UserError(os_error_message(e, p, writing=True)) from None
        raise


def _existing_ancestor(p: Path) -> Path:
    q = p.absolute()
    while not q.exists() and q != q.parent:
        q = q.parent
    return q


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
    """Before any work: ``path`` must not be a directory and must be creatable."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{option} {p} is an existing directory; give a file path")
    _probe_writable(_existing_ancestor(p.parent if str(p.parent) else Path(".")), f"{option} {p}")


def check_output_dir(path: PathLike, option: str = "--out") -> None:
    """Before any work: ``path`` must be a writable directory or creatable as one."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UserError(f"{option} {p} is an existing file; give a directory path (or remove the file)")
    _probe_writable(_existing_ancestor(p), f"{option} {p}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path: PathLike, obj, *, indent: int | None = 1) -> None:
    """Atomically write JSON (UTF-8, keys in insertion order)."""
    with atomic_write(path) as fh:
        json.dump(obj, fh, indent=indent, ensure_ascii=False)
        fh.write("\n")


def safe_filename(name: str) -> str:
    """``name`` with every character but letters, digits and ``-_.+`` replaced by ``_``."""
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in name)


def file_checksum(path: PathLike, algo: str = "sha1") -> str:
    """Hex digest of the file's bytes (as stored, i.e. compressed for .gz)."""
    h = hashlib.new(algo)
    with open(path, "rb") as fh:
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
    import unicodedata

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
