"""Memory-aware scheduling: build estimates from collection sizes and the number of concurrent builds."""

import gzip

from clir_eval.pipeline.memory import (
    BUILD_BYTES_PER_TEXT_BYTE,
    WORKER_BASE_BYTES,
    available_memory,
    bound_jobs,
    build_memory,
    text_size,
)

GIB = 2**30


def test_text_size_reads_gzip_trailer(tmp_path):
    text = ("doc\tsome words here\n" * 5000).encode()
    plain, gz = tmp_path / "c.tsv", tmp_path / "c.tsv.gz"
    plain.write_bytes(text)
    gz.write_bytes(gzip.compress(text))
    assert gz.stat().st_size < len(text) // 10
    assert text_size(plain) == text_size(gz) == len(text)
    assert build_memory(gz) == int(len(text) * BUILD_BYTES_PER_TEXT_BYTE) + WORKER_BASE_BYTES


def test_bound_jobs_keeps_jobs_when_builds_fit():
    assert bound_jobs(2, [1 * GIB, 1 * GIB, 3 * GIB], 8 * GIB) == (2, None)
    assert bound_jobs(4, [], 1 * GIB) == (4, None)
    assert bound_jobs(4, [9 * GIB], None) == (4, None)


def test_bound_jobs_lowers_jobs_with_a_note():
    jobs, note = bound_jobs(4, [5 * GIB] * 16, 11 * GIB)
    assert jobs == 2
    assert "2 index build(s) at a time instead of --jobs 4" in note and "5.0 GiB" in note and "11.0 GiB" in note
    # never below one build, even when one does not fit
    assert bound_jobs(2, [17 * GIB, 17 * GIB], 10 * GIB)[0] == 1
    # fewer builds than jobs: no note when they all fit
    assert bound_jobs(8, [1 * GIB, 1 * GIB], 4 * GIB) == (8, None)


def test_available_memory_is_positive_or_unknown():
    m = available_memory()
    assert m is None or m > 0
