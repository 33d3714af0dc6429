"""The stage cache: self-verifying entries under ``OUT/cache/<stage>/`` and the one function that keys them.

An entry is its payload files ``<name>-<key>.<ext>`` plus a manifest
``<name>-<key>.manifest.json`` written last: the cache format, the key, what the key was
computed from (every setting, each input file's content checksum, upstream keys, tool
versions) and each payload file's size and SHA-1. A payload without a manifest is an
unfinished entry (a run killed mid-write) and is recomputed; an entry whose manifest or
payload does not verify is recomputed with a note, never used. Each entry also carries its
own key inside its payload: a JSON payload holds it beside the value, an entry of other
files gets a stamp (key and the files' SHA-1s), so a payload copied from another entry is
refused even when the manifest was edited to match. A payload that is not a regular file (a
directory, a FIFO) is never opened: the entry is recomputed and the thing removed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import shutil
import stat
from dataclasses import fields, is_dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from .. import version
from ..io.files import file_checksum, safe_filename, text_checksum, write_json

CACHE_FORMAT = "clir-eval-cache/1"
STAMP = "stamp"  # the payload that carries the key of an entry of non-JSON files


def _not_regular(path: Path) -> str | None:
    """What ``path`` is when it exists but is not a regular file (never opened: a FIFO would block)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


@functools.lru_cache(maxsize=None)
def _library_versions() -> tuple[tuple[str, str], ...]:
    out = [("python", platform.python_version())]
    for pkg in ("sacrebleu", "rank-bm25", "pytrec-eval-terrier", "numpy", "scipy"):
        try:
            out.append((pkg, metadata.version(pkg)))
        except metadata.PackageNotFoundError:
            out.append((pkg, "absent"))
    return tuple(out)


def tool_versions() -> dict[str, str]:
    """clir_eval's version, Python's and the scoring libraries' (part of every key and signature)."""
    return {"clir_eval": version.__version__, **dict(_library_versions())}


@functools.lru_cache(maxsize=1024)
def _checksum(path: str, mtime_ns: int, size: int, inode: int) -> str:
    return file_checksum(path)


def content_checksum(path: str | os.PathLike) -> str:
    """SHA-1 of a file's bytes (memoised per path, modification time, size and inode)."""
    st = os.stat(path)
    return _checksum(str(path), st.st_mtime_ns, st.st_size, st.st_ino)


def _keyed(value: Any, is_input: bool = False) -> Any:
    if value is None:
        return None
    if is_input:
        return [content_checksum(v) for v in value] if isinstance(value, (list, tuple)) else content_checksum(value)
    if hasattr(type(value), "STAGE"):
        return cache_key(value)
    if is_dataclass(value):
        return _keyed_fields(value)
    if isinstance(value, (list, tuple)):
        return [_keyed(v) for v in value]
    return value


def key_inputs(task: Any) -> dict[str, Any]:
    """What a task's key hashes: its stage, the tool versions, every keyed setting, each input
    file's content checksum and each upstream task's key."""
    return {"stage": task.STAGE, "versions": tool_versions(), "task": _keyed_fields(task)}


def _keyed_fields(record: Any) -> dict[str, Any]:
    """A task's or an embedded record's fields: inputs by content, fields marked ``key: False`` left out."""
    return {f.name: _keyed(getattr(record, f.name), bool(f.metadata.get("input")))
            for f in fields(record) if f.metadata.get("key", True)}


def cache_key(task: Any) -> str:
    """The key of a stage task's output (a hash of :func:`key_inputs`); every key comes from here."""
    return text_checksum(json.dumps(key_inputs(task), sort_keys=True, ensure_ascii=False))[:16]


class Cache:
    """Stage entries under ``root``; ``notes`` collects the entries that failed verification."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.notes: list[str] = []

    def entry(self, task: Any) -> "Entry":
        """Where ``task``'s output lives."""
        return Entry(self, task)

    def child(self) -> "Cache":
        """The same cache with its own notes (one per unit of parallel work)."""
        return Cache(self.root)


class Entry:
    """One task's cached output: payload files by extension, sealed by a manifest."""

    def __init__(self, cache: Cache, task: Any):
        self.cache = cache
        self.stage = task.STAGE
        self.system = task.system
        self.inputs = key_inputs(task)
        self.key = text_checksum(json.dumps(self.inputs, sort_keys=True, ensure_ascii=False))[:16]
        d = cache.root / self.stage
        d.mkdir(parents=True, exist_ok=True)
        self.base = d / f"{safe_filename(self.system)}-{self.key}"
        self.manifest = self.base.with_name(self.base.name + ".manifest.json")

    def path(self, ext: str) -> Path:
        return self.base.with_name(f"{self.base.name}.{ext}")

    def verified(self, *exts: str) -> bool:
        """True when the entry is sealed and every payload file matches its manifest; a
        damaged entry is noted (and later overwritten), an unsealed one is just absent."""
        if not self.manifest.exists():
            return False
        why = self._problem(exts)
        if why is None:
            return True
        self.failed(why)
        return False

    def failed(self, why: str) -> None:
        """Note that this entry did not verify (``why``) and is recomputed."""
        self.cache.notes.append(
            f"cache: the {self.stage} entry of {self.system} ({self.base.name}) failed verification ({why}); "
            "it was recomputed"
        )

    def _problem(self, exts: tuple[str, ...]) -> str | None:
        kind = _not_regular(self.manifest)
        if kind:
            return f"the manifest is {kind}"
        try:
            m = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return "unreadable manifest"
        if not isinstance(m, dict) or m.get("format") != CACHE_FORMAT:
            return f"not a {CACHE_FORMAT} manifest"
        if m.get("key") != self.key or m.get("inputs") != self.inputs:
            return "manifest of another key"
        files = m.get("files")
        sha1s = {}
        for ext in exts + ((STAMP,) if self._stamped(exts) else ()):
            want = files.get(ext) if isinstance(files, dict) else None
            if not isinstance(want, dict):
                return f"manifest lacks the .{ext} file"
            kind = _not_regular(self.path(ext))
            if kind:
                return f"the .{ext} payload is {kind}"
            try:  # streamed: an entry may hold files larger than is worth reading into memory
                size, sha1 = self.path(ext).stat().st_size, file_checksum(self.path(ext))
            except OSError:
                return f".{ext} file missing or unreadable"
            if size != want.get("bytes") or sha1 != want.get("sha1"):
                return f".{ext} file changed since it was written"
            sha1s[ext] = sha1
        return self._own_key_problem(exts, sha1s)

    @staticmethod
    def _stamped(exts: tuple[str, ...]) -> bool:
        return tuple(exts) != ("json",)

    def _own_key_problem(self, exts: tuple[str, ...], sha1s: dict[str, str]) -> str | None:
        """The key the payload itself carries must be this entry's (not another entry's, copied)."""
        try:
            if not self._stamped(exts):
                own = json.loads(self.path("json").read_text(encoding="utf-8"))
                ok = isinstance(own, dict) and own.get("cache_key") == self.key and "value" in own
            else:
                own = json.loads(self.path(STAMP).read_text(encoding="utf-8"))
                ok = (isinstance(own, dict) and own.get("cache_key") == self.key
                      and own.get("files") == {e: sha1s[e] for e in exts})
        except (OSError, ValueError, UnicodeDecodeError):
            ok = False
        return None if ok else "the payload carries another entry's key"

    def unseal(self) -> None:
        """Remove the manifest before new payload files are written, and anything in the place
        of a payload file that is not a regular file (a directory or FIFO put there)."""
        for p in [self.manifest, *self.base.parent.glob(self.base.name + ".*")]:
            kind = _not_regular(p)
            if kind == "a directory" and p.suffix != ".index":  # an index directory is the payload
                shutil.rmtree(p, ignore_errors=True)
            elif kind and kind != "a directory":
                with contextlib.suppress(OSError):
                    p.unlink()
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            self.manifest.unlink()

    def seal(self, *exts: str) -> None:
        """Write the manifest over the payload files as they are now (call after writing them);
        an entry of other files than one JSON payload first gets its stamp (key and SHA-1s)."""
        files = {}
        for ext in exts:
            path = self.path(ext)
            files[ext] = {"file": path.name, "bytes": path.stat().st_size, "sha1": file_checksum(path)}
        if self._stamped(exts):
            write_json(self.path(STAMP), {"cache_key": self.key, "files": {e: f["sha1"] for e, f in files.items()}})
            path = self.path(STAMP)
            files[STAMP] = {"file": path.name, "bytes": path.stat().st_size, "sha1": file_checksum(path)}
        write_json(self.manifest, {"format": CACHE_FORMAT, "key": self.key, "inputs": self.inputs, "files": files})

    def load_json(self) -> Any | None:
        """The verified JSON payload, or None (absent or damaged)."""
        if not self.verified("json"):
            return None
        return json.loads(self.path("json").read_text(encoding="utf-8"))["value"]

    def save_json(self, obj: Any) -> None:
        """Write the JSON payload (with this entry's key beside it) and seal it."""
        self.unseal()
        write_json(self.path("json"), {"cache_key": self.key, "value": obj}, indent=None)  # read by the harness only
        self.seal("json")


# --------------------------------------------------------------------------- materialised sources
def _file_manifest(path: Path) -> Path:
    return path.with_name(path.name + ".manifest.json")


def seal_file(path: Path) -> None:
    """Write the manifest (size and SHA-1) of a materialised source file beside it."""
    path = Path(path)
    meta = {"format": CACHE_FORMAT, "file": path.name, "bytes": path.stat().st_size, "sha1": file_checksum(path)}
    write_json(_file_manifest(path), meta)


def file_problem(path: Path) -> str | None:
    """Why a materialised source file cannot be trusted (None when it matches its manifest);
    ``"unsealed"`` when it has no manifest (written by a killed run or an older version)."""
    path = Path(path)
    kind = _not_regular(path) or _not_regular(_file_manifest(path))
    if kind:
        return f"{kind} in the place of the file or its manifest"
    try:
        m = json.loads(_file_manifest(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "unsealed"
    except (OSError, ValueError, UnicodeDecodeError):
        return "unreadable manifest"
    if not isinstance(m, dict) or m.get("format") != CACHE_FORMAT or m.get("file") != path.name:
        return f"not a {CACHE_FORMAT} manifest of this file"
    try:
        if path.stat().st_size != m.get("bytes") or file_checksum(path) != m.get("sha1"):
            return "file changed since it was written"
    except OSError:
        return "file missing or unreadable"
    return None
