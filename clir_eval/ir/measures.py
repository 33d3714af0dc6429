"""IR measures (what is measured): canonical, parameterised measure strings and their registry.

How each is computed is in :mod:`clir_eval.ir.providers` (pytrec_eval, RBO, QWV), named by
each measure's ``provider``; :mod:`clir_eval.ir.evaluate` runs them. A measure computed by an
existing provider is one class here plus one ``REGISTRY`` line.

Measure strings and their canonical output names
    trec_eval measures by their trec_eval name: ``map``, ``ndcg``, ``ndcg_cut_10``, ``P_10``,
    ``recall_100``, ``Rprec``, ``recip_rank``, ``gm_map``, ``bpref``, ``success_1`` ...
    (any cutoff; ``P.10`` / ``P@10`` / ``p_10`` are read as ``P_10``).
    ``rbo[:p=0.98,variant=ext|min|res,depth=N]``, ``aqwv[:beta=40,cutoff=10|threshold=T,
    include_norel=false]``, ``mqwv[:beta=40,max_cutoff=N,include_norel=false]``.
    The canonical name keeps only the parameters that differ from their defaults, in the
    order declared here: ``rbo:p=0.98`` -> ``rbo``, ``rbo:variant=min,p=0.9`` ->
    ``rbo:p=0.9,variant=min``. Full settings are in each measure's ``signature``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable, ClassVar, Iterable, Mapping

from .. import lazylibs
from ..errors import UserError
from ..limits import MAX_DEPTH
from ..params import Param, format_spec, parse_params, parse_spec, split_list
from ..version import __version__
from .rbo import VARIANT as RBO_VARIANT
from .rbo import VARIANTS as RBO_VARIANTS
from .rbo import P as RBO_P


def _version(module, dist: str) -> str:
    """A library's version: its ``__version__`` (importing and reading package metadata costs ≈ 10-20 ms)."""
    v = getattr(module, "__version__", None)
    if isinstance(v, str) and v:
        return v
    return lazylibs.importlib_metadata().version(dist)


_IMPL_OWN = f"impl:clir_eval-{__version__}"


@lru_cache(maxsize=None)
def _impl_trec() -> str:
    return f"impl:pytrec_eval-terrier-{_version(lazylibs.pytrec_eval(), 'pytrec-eval-terrier')}"


# trec_eval measures (computed by pytrec_eval; any of its measures is accepted by name).
TREC_MEASURES: dict[str, str] = {
    "map": "mean average precision (trec_eval)",
    "gm_map": "geometric mean average precision (trec_eval)",
    "ndcg": "nDCG over the whole ranking (trec_eval)",
    "ndcg_cut_K": "nDCG at cutoff K, e.g. ndcg_cut_10 (trec_eval)",
    "P_K": "precision at K, e.g. P_10 (trec_eval)",
    "recall_K": "recall at K, e.g. recall_100 (trec_eval)",
    "map_cut_K": "AP at cutoff K (trec_eval)",
    "success_K": "1 if a relevant document is in the top K (trec_eval)",
    "Rprec": "precision at R = number of relevant documents (trec_eval)",
    "recip_rank": "reciprocal rank of the first relevant document (trec_eval)",
    "bpref": "bpref (trec_eval); other trec_eval measures are accepted by name too",
}
IR_MEASURES_NAMES = {
    "AP, AP@K, nDCG@K, P@K, R@K, RR, ...": "ir_measures names: those trec_eval computes are keyed by their trec_eval name "
                                           "(AP@100 -> map_cut_100), others (RBP(rel=1), Judged@20, RR@10, P(rel=2)@5) "
                                           "are computed by ir_measures and keyed by its name",
}


class Measure:
    """One parsed measure: ``name`` is its canonical output key, ``signature`` its settings."""

    family: ClassVar[str] = ""
    help: ClassVar[str] = ""  # one line for the list of known measures
    provider: ClassVar[str] = ""  # key of clir_eval.ir.providers.PROVIDERS that computes it
    params_decl: ClassVar[tuple[Param, ...]] = ()
    needs_reference: ClassVar[bool] = False
    needs_collection_size: ClassVar[bool] = False

    def __init__(self, name: str, params: Mapping[str, Any]):
        self.name = name
        self.params = dict(params)

    @property
    def signature(self) -> str:
        items = "|".join(f"{k}:{_sig(v)}" for k, v in self.params.items())
        return f"{self.family}|{items}|{_IMPL_OWN}" if items else f"{self.family}|{_IMPL_OWN}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and type(self) is type(other) and self.name == other.name

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    @classmethod
    def from_spec(cls, spec: str, raw: Mapping[str, str]) -> "Measure":
        given = parse_params(raw, cls.params_decl, spec=spec, what="measure", owner=cls.family)
        values = {p.name: given.get(p.name, p.default) for p in cls.params_decl}
        shown = {p.name: given[p.name] for p in cls.params_decl if p.name in given and given[p.name] != p.default}
        m = cls(format_spec(cls.family, shown), values)
        m.validate(spec, raw)
        return m

    def validate(self, spec: str, raw: Mapping[str, str]) -> None:
        """Cross-parameter checks (raise UserError)."""


def _sig(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return format_spec("", {"x": v})[3:]


class TrecMeasure(Measure):
    """A trec_eval measure computed by pytrec_eval; ``name`` is pytrec_eval's output key."""

    family = "trec_eval"
    provider = "pytrec_eval"

    @property
    def signature(self) -> str:
        return f"{self.name}|{_impl_trec()}|order:run|rel:>=1|missing:empty-ranking"


class RBO(Measure):
    family = "rbo"
    help = "rank-biased overlap vs. the reference run: rbo:p=0.98,variant=ext|min|res,depth=N or RBO(p=0.98)"
    provider = "rbo"
    needs_reference = True
    params_decl = (
        Param("p", float, RBO_P, "persistence (weight of the top ranks)", gt=0, lt=1),
        Param("variant", str, RBO_VARIANT, "extrapolated, lower bound (min) or residual (res)", choices=RBO_VARIANTS),
        Param("depth", int, None, "evaluation depth (default: the runs' depth)", ge=1, le=MAX_DEPTH),
    )

    @property
    def signature(self) -> str:
        p = self.params
        depth = p["depth"] if p["depth"] is not None else "run"
        return f"rbo|p:{_sig(p['p'])}|variant:{p['variant']}|depth:{depth}|vs:reference-run|queries:reference-run|ties:run-order|{_IMPL_OWN}"


class AQWV(Measure):
    family = "aqwv"
    help = ("actual query-weighted value: aqwv:beta=40,cutoff=10 (or threshold=T),include_norel=false or "
            "AQWV(beta=40,cutoff=10)")
    provider = "qwv"
    needs_collection_size = True
    params_decl = (
        Param("beta", float, 40.0, "weight of false alarms", ge=0),
        Param("cutoff", int, 10, "decision set: the top cutoff documents", ge=0, le=MAX_DEPTH),
        Param("threshold", float, None, "decision set: documents scoring at least this"),
        Param("include_norel", bool, False, "count queries without relevant documents"),
    )

    def validate(self, spec: str, raw: Mapping[str, str]) -> None:
        if "threshold" in raw and "cutoff" in raw:
            raise UserError(f"measure {spec!r}: give either cutoff or threshold, not both")

    @property
    def signature(self) -> str:
        p = self.params
        decision = f"threshold:{_sig(p['threshold'])}" if p["threshold"] is not None else f"cutoff:{p['cutoff']}"
        norel = "include" if p["include_norel"] else "skip"
        return f"aqwv|beta:{_sig(p['beta'])}|{decision}|norel:{norel}|{_IMPL_OWN}"


class MQWV(Measure):
    family = "mqwv"
    help = "maximum QWV over global cutoffs 0..max_cutoff: mqwv:beta=40,max_cutoff=N or MQWV(max_cutoff=N)"
    provider = "qwv"
    needs_collection_size = True
    params_decl = (
        Param("beta", float, 40.0, "weight of false alarms", ge=0),
        Param("max_cutoff", int, None, "largest cutoff tried (default: the run depth)", ge=0, le=MAX_DEPTH),
        Param("include_norel", bool, False, "count queries without relevant documents"),
    )

    @property
    def signature(self) -> str:
        p = self.params
        mc = p["max_cutoff"] if p["max_cutoff"] is not None else "run-depth"
        norel = "include" if p["include_norel"] else "skip"
        return f"mqwv|beta:{_sig(p['beta'])}|cutoffs:0..{mc}|norel:{norel}|{_IMPL_OWN}"


REGISTRY: dict[str, type[Measure]] = {m.family: m for m in (RBO, AQWV, MQWV)}
KNOWN_MEASURES: dict[str, str] = {**TREC_MEASURES, **{name: m.help for name, m in REGISTRY.items()}, **IR_MEASURES_NAMES}

# trec_eval families pytrec_eval computes, by lower-case name; families that need a parameter
# after the name take a positive integer cutoff, or (iprec_at_recall) a recall level in [0, 1].
# Nothing else is ever passed to pytrec_eval (an unchecked string can abort it in C).
_NOT_NUMERIC = {"runid", "relstring", "Rprec_mult"}
_TREC_CUTOFF = {"P", "recall", "ndcg_cut", "map_cut", "success", "relative_P"}
_TREC_LEVEL = {"iprec_at_recall"}
_TREC_PARAMETRIC = _TREC_CUTOFF | _TREC_LEVEL
_INT_RE = re.compile(r"^[0-9]+$")
_LEVEL_RE = re.compile(r"^(0(\.[0-9]{1,2})?|1(\.0{1,2})?|\.[0-9]{1,2})$")


@lru_cache(maxsize=None)
def _trec_families() -> dict[str, str]:
    return {m.lower(): m for m in lazylibs.pytrec_eval().supported_measures if m not in _NOT_NUMERIC}


@lru_cache(maxsize=None)
def _trec_key(name: str) -> str:
    """pytrec_eval's output key for an already validated single-measure name."""
    res = lazylibs.pytrec_eval().RelevanceEvaluator({"q": {"d": 1}}, {name}).evaluate({"q": {"d": 1.0}})
    (key,) = res["q"]
    return key


def _trec_measure(spec: str, fam: str, param: str | None) -> TrecMeasure:
    """A validated trec_eval family + parameter -> TrecMeasure (UserError otherwise)."""
    if param is None:
        if fam in _TREC_PARAMETRIC:
            raise UserError(f"measure {spec!r} needs a cutoff, e.g. '{fam}_10'")
        return TrecMeasure(_trec_key(fam), {})
    if fam in _TREC_CUTOFF:
        if not _INT_RE.match(param) or int(param) < 1:
            raise UserError(f"bad cutoff in measure {spec!r}: the cutoff must be a whole number >= 1, e.g. '{fam}_10'")
        if len(param) > 12 or int(param) > MAX_DEPTH:
            raise UserError(f"bad cutoff in measure {spec!r}: {param} is above the largest depth {MAX_DEPTH}; "
                            f"use a cutoff up to the run depth, e.g. '{fam}_1000'")
        return TrecMeasure(_trec_key(f"{fam}.{int(param)}"), {})
    if fam in _TREC_LEVEL:
        if not _LEVEL_RE.match(param):
            raise UserError(f"bad recall level in measure {spec!r}: write a level in [0, 1] with at most 2 decimals, e.g. '{fam}_0.50'")
        return TrecMeasure(_trec_key(f"{fam}.{float(param)}"), {})
    hint = {"map": "map_cut_K or AP@K", "ndcg": "ndcg_cut_K or nDCG@K", "recip_rank": "RR@K"}.get(fam, fam)
    raise UserError(f"measure {spec!r}: {fam} takes no cutoff or parameter here; write {hint}")


def _parse_trec(spec: str) -> TrecMeasure:
    fam = _trec_families().get(spec.lower())
    if fam is not None:
        return _trec_measure(spec, fam, None)
    for i in sorted((i for i, ch in enumerate(spec) if ch in "_.@"), reverse=True):  # longest family first
        fam = _trec_families().get(spec[:i].lower())
        if fam is not None and spec[i + 1:]:
            return _trec_measure(spec, fam, spec[i + 1:])
    raise UserError(f"unknown measure {spec!r}; known: {', '.join(KNOWN_MEASURES)} "
                    "and ir_measures names (AP, AP@100, nDCG@10, P@10, R@1000, RR, RBP(rel=1), Judged@20, ...)")


# ----------------------------------------------------------------- ir_measures names

@lru_cache(maxsize=None)
def ir_measures_version() -> str:
    return _version(lazylibs.ir_measures(), "ir-measures")


# ir_measures providers used for measures pytrec_eval (as configured here) does not compute:
# pure-Python or Python-package ones that need no external program or download.
IR_MEASURES_PROVIDERS = ("pytrec_eval", "judged", "msmarco", "cwl_eval", "compat")


class IRMeasure(Measure):
    """A measure of the ir_measures library that trec_eval's defaults do not give (e.g.
    ``RBP(rel=1)``, ``Judged@20``, ``RR@10``, ``P(rel=2)@10``), computed by ir_measures with
    the provider named in the signature; ``name`` is ir_measures' canonical string."""

    family = "ir_measures"
    provider = "ir_measures"

    def __init__(self, name: str, params: Mapping[str, Any]):
        super().__init__(name, params)
        self.measure = params["measure"]
        self.via = params["provider"]

    @property
    def signature(self) -> str:
        return (f"{self.name}|impl:ir_measures-{ir_measures_version()}/{self.via}|order:run|"
                "missing:empty-ranking(0)|agg:mean")


def _check_ir_params(spec: str, m) -> None:
    """ir_measures checks parameter names only; values that could reach a C library are checked here."""
    for key, v in m.params.items():
        if isinstance(v, (dict, list)):
            raise UserError(f"measure {spec!r}: parameter {key} takes a mapping or list, which is not supported here")
        if key == "cutoff" and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise UserError(f"bad cutoff in measure {spec!r}: the cutoff must be a whole number >= 1, e.g. 'P@10'")
        if key == "cutoff" and v > MAX_DEPTH:
            raise UserError(f"bad cutoff in measure {spec!r}: {v} is above the largest depth {MAX_DEPTH}; "
                            "use a cutoff up to the run depth, e.g. 'P@1000'")
        if key == "rel" and (isinstance(v, bool) or not isinstance(v, int)):
            raise UserError(f"measure {spec!r}: rel must be a whole number (the minimum relevance label)")
        if key == "p" and not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1):
            raise UserError(f"measure {spec!r}: p must be in (0, 1)")
        if key == "recall" and not (isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1):
            raise UserError(f"measure {spec!r}: recall must be in [0, 1]")
        if key == "judged_only" and not isinstance(v, bool):
            raise UserError(f"measure {spec!r}: judged_only must be True or False")


_IRM_TO_TREC: dict[str, Callable[[Any], str | None]] = {
    "AP": lambda c: "map" if c is None else f"map_cut_{c}",
    "P": lambda c: None if c is None else f"P_{c}",
    "R": lambda c: None if c is None else f"recall_{c}",
    "RR": lambda c: "recip_rank" if c is None else None,
    "nDCG": lambda c: "ndcg" if c is None else f"ndcg_cut_{c}",
    "Success": lambda c: None if c is None else f"success_{c}",
    "Rprec": lambda c: "Rprec", "Bpref": lambda c: "bpref", "infAP": lambda c: "infAP",
    "NumQ": lambda c: "num_q", "NumRel": lambda c: "num_rel", "SetP": lambda c: "set_P",
    "SetR": lambda c: "set_recall", "SetAP": lambda c: "set_map",
}


def _irm_trec_name(m) -> str | None:
    """The trec_eval name of an ir_measures measure when pytrec_eval with its defaults
    (relevance level 1, all documents) computes exactly it, else None."""
    params = dict(m.params)
    if m.NAME == "NumRet":
        return "num_rel_ret" if params.pop("rel", None) == 1 and not params else ("num_ret" if not params else None)
    if params.pop("rel", 1) != 1 or params.pop("judged_only", False):
        return None
    if m.NAME == "nDCG" and params.pop("dcg", "log2") != "log2":
        return None
    cutoff = params.pop("cutoff", None)
    if m.NAME == "IPrec" and set(params) == {"recall"} and cutoff is None:
        return f"iprec_at_recall_{params['recall']:.2f}"
    if m.NAME == "SetF" and params.pop("beta", 1.0) == 1.0 and cutoff is None and not params:
        return "set_F"
    if params or m.NAME not in _IRM_TO_TREC:
        return None
    return _IRM_TO_TREC[m.NAME](cutoff)


def _ir_measures_provider(spec: str, m) -> str:
    ir_measures = lazylibs.ir_measures()
    names = [p.NAME for p in ir_measures.DefaultPipeline.providers if p.supports(m)]
    usable = [n for n in IR_MEASURES_PROVIDERS if n in names and ir_measures.providers.registry[n].is_available()]
    if usable:
        return usable[0]
    hint = "; ".join(f"{n}: {ir_measures.providers.registry[n].install_instructions()}" for n in names) or "none known"
    raise UserError(f"measure {spec!r} is an ir_measures measure, but no provider usable here computes it "
                    f"(providers: {hint})")


def _parse_ir_measures(spec: str) -> Measure | None:
    """An ir_measures measure string -> TrecMeasure (when trec_eval computes it) or IRMeasure;
    None when ir_measures does not know the name."""
    ir_measures = lazylibs.ir_measures()
    try:
        m = ir_measures.parse_measure(spec)
    except NameError:
        return None
    except (ValueError, TypeError, AssertionError, SyntaxError) as e:
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*[(@]", spec):
            return None
        raise UserError(f"bad measure {spec!r}: {e}; write ir_measures' form Name(param=value)@cutoff, e.g. 'RBP(rel=1)'") from None
    _check_ir_params(spec, m)
    if m.NAME in ("P", "R", "Success") and "cutoff" not in m.params:
        raise UserError(f"measure {spec!r} needs a cutoff, e.g. '{m.NAME}@10'")
    trec = _irm_trec_name(m)
    if trec is not None:
        return _parse_trec(trec)
    return IRMeasure(str(m), {"measure": m, "provider": _ir_measures_provider(spec, m)})


_OWN_STYLE_RE = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_]*)\((?P<args>[^()]*)\)$")
_COLON_RE = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9_.@+-]*)\s*:")


# The ir_measures measure names that are also trec_eval names here: the only plain names for which
# the order "ir_measures names before trec_eval names" matters (a test checks this list against
# the installed ir_measures). Any other name trec_eval reads is parsed without importing ir_measures.
IR_MEASURES_TREC_NAMES = frozenset({"MAP", "Bpref", "BPref", "infAP", "nDCG", "NDCG", "Rprec", "RPrec"})
_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_measure(spec: str) -> Measure:
    """One measure string -> Measure (UserError on anything that is not exactly one known measure).

    Tried in order: the harness's own measures (``rbo:p=0.9`` or ``RBO(p=0.9)``), ir_measures
    names (``nDCG@10``; exact case), trec_eval names (``ndcg_cut_10``; any case)."""
    spec = spec.strip()
    own = _OWN_STYLE_RE.match(spec)
    if own and own["name"].lower() in REGISTRY:
        args = [a.strip().replace("'", "").replace('"', "") for a in own["args"].split(",")]
        raw_spec = f"{own['name']}:{','.join(a for a in args if a)}" if any(args) else own["name"]
        name, raw = parse_spec(raw_spec, what="measure")
        return REGISTRY[name.lower()].from_spec(spec, raw)
    colon = _COLON_RE.match(spec)
    if colon or spec.lower() in REGISTRY:
        name, raw = parse_spec(spec, what="measure")
        if name.lower() in REGISTRY:
            return REGISTRY[name.lower()].from_spec(spec, raw)
        raise UserError(
            f"trec_eval measure {name!r} takes no parameters (in {spec!r}); write a cutoff into the name, e.g. 'P_10'"
        )
    if _IDENTIFIER_RE.fullmatch(spec) and spec not in IR_MEASURES_TREC_NAMES:
        try:  # ir_measures does not know this name (importing it costs ≈ 12 ms of start-up)
            return _parse_trec(spec)
        except UserError:
            pass
    irm = _parse_ir_measures(spec)
    if irm is not None:
        return irm
    return _parse_trec(spec)


def parse_measures(specs: str | Iterable[str | Measure]) -> list[Measure]:
    """Measure strings (a list, or one comma-separated string) -> unique Measures, in order."""
    if isinstance(specs, str):
        specs = split_list(specs)
    out: list[Measure] = []
    for s in specs:
        m = s if isinstance(s, Measure) else parse_measure(s)
        if m not in out:
            out.append(m)
    if not out:
        raise UserError("no measures given; e.g. --measures map,ndcg,P_10")
    return out
