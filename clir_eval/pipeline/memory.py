"""Memory-aware scheduling: estimated index-build memory per collection and the concurrent builds it allows."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Iterable

# Peak RSS of one index build over the collection's uncompressed size, measured with the
# default analyzer and the sparse backend (a 40k-document, 28 MiB synthetic JSONL collection:
# 217 MiB above the interpreter's start; the 1M documents: 5.6 GiB); rounded up.
BUILD_BYTES_PER_TEXT_BYTE = 8.0
WORKER_BASE_BYTES = 200 * 2**20  # a worker's interpreter with numpy/scipy/sacrebleu imported


def text_size(path: str | os.PathLike) -> int:
    """Uncompressed bytes of a collection file (a .gz file's size from its trailer, mod 4 GiB)."""
    p = Path(path)
    size = p.stat().st_size
    if p.suffix != ".gz" or size < 18:
        return size
    with open(p, "rb") as fh:
        if fh.read(2) != b"\x1f\x8b":
            return size
        fh.seek(-4, os.SEEK_END)
        isize = struct.unpack("<I", fh.read(4))[0]
    return max(isize, size)  # ISIZE wraps at 4 GiB; never estimate below the compressed size


def build_memory(path: str | os.PathLike) -> int:
    """Estimated peak bytes of a worker building the BM25 index of one collection file."""
    return int(text_size(path) * BUILD_BYTES_PER_TEXT_BYTE) + WORKER_BASE_BYTES


def available_memory() -> int | None:
    """Bytes available to new processes (``MemAvailable`` on Linux), None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def bound_jobs(jobs: int, builds: Iterable[int], available: int | None) -> tuple[int, str | None]:
    """Workers allowed when the largest pending index builds must fit in ``available`` bytes,
    and a note when that is fewer than ``jobs``."""
    sizes = sorted(builds, reverse=True)
    if available is None or not sizes or jobs <= 1:
        return jobs, None
    fit, used = 0, 0
    for need in sizes[:jobs]:
        if fit and used + need > available:
            break
        fit, used = fit + 1, used + need
    if fit >= min(jobs, len(sizes)):
        return jobs, None
    gib = 2**30
    return fit, (
        f"memory: {fit} index build(s) at a time instead of --jobs {jobs} (largest build needs about "
        f"{sizes[0] / gib:.1f} GiB, {available / gib:.1f} GiB available)"
    )
