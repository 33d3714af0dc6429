"""Upper bounds on every size a user can type (resample counts, depths, YAML expansion,
metric parameters) and on input files (decompressed size, line length), checked before
anything is allocated. The input-file bounds can be raised through environment variables."""

from __future__ import annotations

import os

from .errors import UserError

MAX_RESAMPLES = 100_000  # bootstrap / permutation / CI resamples
MAX_DEPTH = 100_000  # documents kept per query, pseudo-qrels top-k
MAX_SEED = 2**32 - 1  # numpy's legacy seed range; seeds are 0..MAX_SEED
# The default seeds, one name per meaning: every seeded default reads one of these.
RUN_SEED = 13  # a run's `seed` (correlation.seed defaults to it), and what a command seeds on its own for a
#                study: design's simulation, pool's threshold bootstrap, the demo's generated data
TABLE_SEED = 0  # resampling a score table that comes with no config seed (correlate --seed)
QUERY_SEED = 0  # sampling generated queries (queries.generate: keywords:...,seed=)
SACREBLEU_SEED = 12345  # sacrebleu's own default, so mt-compare and mt-score --bootstrap resample as sacrebleu does
MAX_JOBS = 1024
MAX_KEYWORDS = 1_000  # generated keyword queries: words per query
MAX_DECIMALS = 15  # rounding of scores before correlating
MAX_CONFIG_BYTES = 4 * 2**20
MAX_YAML_NODES = 100_000  # scalars + collections after expanding aliases
MAX_INPUT_BYTES = 2**20  # a .gz input may expand past this only at a normal compression ratio
MAX_GZIP_RATIO = 100  # ... namely at most this many bytes of text per compressed byte
MAX_GZIP_BYTES = 64 * 2**30  # and never past this, whatever its ratio
MAX_MEMORY_BYTES = 4 * 2**30  # the estimated peak memory of a computation that grows with its input and options
MAX_LINE_BYTES = 64 * 2**20  # one line of any text input
MAX_PARAM_INT = 1_000  # integer metric/measure parameters unless the registry declares its own bound
MAX_NGRAM_ORDER = 20  # BLEU order, chrF character and word orders
MAX_PARAM_FLOAT = 1e15  # float metric/measure parameters unless the registry declares its own bound
MAX_ENV_BYTES = 2**50  # the largest value of a byte bound set through the environment (1 PiB)


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise UserError(f"environment variable {name}={raw!r} must be a positive integer") from None
    if value < 1:
        raise UserError(f"environment variable {name}={raw!r} must be a positive integer")
    if value > MAX_ENV_BYTES:
        raise UserError(f"environment variable {name}={raw!r} is too large; the maximum is {MAX_ENV_BYTES} (2**50)")
    return value


def input_bytes() -> int:
    """Decompressed bytes a .gz input may reach before its compression ratio is checked
    (``CLIR_EVAL_MAX_INPUT_BYTES`` overrides)."""
    return _env_int("CLIR_EVAL_MAX_INPUT_BYTES", MAX_INPUT_BYTES)


def memory_bytes() -> int:
    """Memory a computation may be estimated to need before it starts; more is refused up front,
    naming the bound (``CLIR_EVAL_MAX_MEMORY_BYTES`` overrides)."""
    return _env_int("CLIR_EVAL_MAX_MEMORY_BYTES", MAX_MEMORY_BYTES)


def gzip_bytes() -> int:
    """Decompressed bytes no .gz input may pass, whatever its ratio (``CLIR_EVAL_MAX_GZIP_BYTES`` overrides)."""
    return _env_int("CLIR_EVAL_MAX_GZIP_BYTES", MAX_GZIP_BYTES)


def gzip_ratio() -> int:
    """Largest decompressed/compressed ratio of a .gz input past :func:`input_bytes`
    (``CLIR_EVAL_MAX_GZIP_RATIO`` overrides)."""
    return _env_int("CLIR_EVAL_MAX_GZIP_RATIO", MAX_GZIP_RATIO)


def line_bytes() -> int:
    """Longest line of a text input in bytes (``CLIR_EVAL_MAX_LINE_BYTES`` overrides)."""
    return _env_int("CLIR_EVAL_MAX_LINE_BYTES", MAX_LINE_BYTES)


def check_max(value: int, maximum: int, what: str) -> int:
    """``value`` unless it exceeds ``maximum`` (a UserError naming ``what`` and the bound)."""
    if value > maximum:
        raise UserError(f"{what}: {value} is too large; the maximum is {maximum}")
    return value


def check_seed(value: int, what: str = "--seed") -> int:
    """A random seed in 0..MAX_SEED (a UserError naming ``what`` otherwise)."""
    if not 0 <= value <= MAX_SEED:
        raise UserError(f"{what}: {value} is not a valid seed; use an integer from 0 to {MAX_SEED}")
    return value
