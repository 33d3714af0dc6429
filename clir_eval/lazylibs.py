"""Third-party libraries that are slow to import, or optional, loaded on first use (as ir_measures'
``lazylibs`` module does).

A command's start-up is what its imports cost: ``clir-eval --help`` must not pay for scipy's
statistics, sacrebleu, pytrec_eval or matplotlib, and reading a config must not load a stage's
libraries. Every other import sits at the top of its module; these libraries are reached through the
functions here, called where the library is used (``lazylibs.scipy_stats().pearsonr(...)``), so
which library a code path loads is visible at the call and decided in one place.
``tests/test_imports_at_top.py`` checks that no other module imports inside a function.

An optional library (the ``[neural]``, ``[lm]``, ``[hf]``, ``[ray]`` extras, ir_datasets, pandas) raises
ImportError from its function; the caller turns that into a UserError naming the extra to install.
A second call costs a dictionary look-up (Python keeps imported modules in ``sys.modules``).
"""

from __future__ import annotations

from types import ModuleType

# Libraries used by the stages (dependencies of clir-eval).


def numpy() -> ModuleType:
    """numpy where a light command's imports reach it: the run reader (``io.trec``, which ``retrieve --help``
    imports) parses with numpy only when it reads a run."""
    import numpy

    return numpy


def importlib_metadata() -> ModuleType:
    """The standard library's package metadata reader (≈ 10-20 ms to import), for a library without a
    ``__version__``."""
    import importlib.metadata

    return importlib.metadata


def scipy() -> ModuleType:
    """scipy itself (its version); its submodules load on first attribute access."""
    import scipy

    return scipy


def scipy_stats() -> ModuleType:
    import scipy.stats

    return scipy.stats


def scipy_sparse() -> ModuleType:
    import scipy.sparse

    return scipy.sparse


def scipy_special() -> ModuleType:
    import scipy.special

    return scipy.special


def sacrebleu() -> ModuleType:
    import sacrebleu

    return sacrebleu


def pytrec_eval() -> ModuleType:
    import pytrec_eval

    return pytrec_eval


def ir_measures() -> ModuleType:
    import ir_measures

    return ir_measures


def rank_bm25() -> ModuleType:
    import rank_bm25

    return rank_bm25


def stemmer() -> ModuleType:
    """PyStemmer (the Snowball stemmers)."""
    import Stemmer

    return Stemmer


def matplotlib() -> ModuleType:
    """matplotlib itself (colormaps, rc_context) with the submodules the figures draw with (cm, colors, lines,
    patches, ticker)."""
    import matplotlib
    import matplotlib.cm
    import matplotlib.colors
    import matplotlib.lines
    import matplotlib.patches
    import matplotlib.ticker

    return matplotlib


def matplotlib_pyplot() -> ModuleType:
    """matplotlib's pyplot with the non-interactive Agg backend (plots are written to files, never shown)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def ft2font() -> ModuleType:
    """matplotlib's FreeType binding alone (the text of :mod:`clir_eval.io.raster`'s PNGs: no pyplot, no renderer)."""
    import matplotlib.ft2font

    return matplotlib.ft2font


def matplotlib_data_path() -> str:
    """The folder of matplotlib's own data (its fonts)."""
    import matplotlib

    return matplotlib.get_data_path()


def rich_progress() -> ModuleType:
    import rich.progress

    return rich.progress


def rich_console() -> ModuleType:
    import rich.console

    return rich.console


def rich_text() -> ModuleType:
    import rich.text

    return rich.text


def yaml() -> ModuleType:
    import yaml

    return yaml


# Optional libraries: extras and tools a user installs for one feature.


def ir_datasets() -> ModuleType:
    import ir_datasets

    return ir_datasets


def ir_datasets_util() -> ModuleType:
    import ir_datasets.util

    return ir_datasets.util


def pandas() -> ModuleType:
    import pandas

    return pandas


def ray() -> ModuleType:
    import ray

    return ray


def torch() -> ModuleType:
    import torch

    return torch


def transformers() -> ModuleType:
    import transformers

    return transformers


def transformers_logging() -> ModuleType:
    from transformers.utils import logging

    return logging


def kenlm() -> ModuleType:
    import kenlm

    return kenlm


def comet_models() -> ModuleType:
    from comet import models

    return models


def bleurt_pytorch() -> ModuleType:
    import bleurt_pytorch

    return bleurt_pytorch


def lightning_utilities() -> ModuleType:
    from pytorch_lightning import utilities

    return utilities


def packaging_version() -> ModuleType:
    from packaging import version

    return version
