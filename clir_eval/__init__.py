"""clir_eval: which MT metric best predicts how useful an MT system is for CLIR.

The Python API (docs/python-api.md)::

    import clir_eval
    res = clir_eval.run("demo-out/demo.yaml", out="demo-out")   # or a dict, or a Config
    res.verdicts, res.correlations, res.item_level              # as in results.json
    clir_eval.load("demo-out")                                  # a finished run
    clir_eval.correlate("demo-out/scores.tsv", x="bleu,macrof1", y="map")
    clir_eval.score_mt(hyps, [refs], ["bleu", "macrof1"])
    clir_eval.score_ir("qrels.txt", "run.txt", ["map", "P_10"])
    clir_eval.pool(["out/ru-en", "out/is-en"]).to_dict()        # finished runs pooled (docs/pooling.md)

``import clir_eval`` imports nothing else: each name loads :mod:`clir_eval.api` on first use.
"""

from importlib import import_module

from .version import __version__

# name -> the module that defines it (loaded on first access); adding a name is one line here
_API = {"run": "api", "load": "api", "correlate": "api", "score_mt": "api", "score_ir": "api", "Results": "api",
        "pool": "pooling", "PoolResult": "pooling"}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'clir_eval' has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_API[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
