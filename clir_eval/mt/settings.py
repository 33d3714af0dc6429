"""The MT stage's settings, declared once: the config's ``mt:`` section and the MT task read this record."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from ..settings import SettingError, Settings, setting

DEFAULT_METRICS = ("bleu", "chrf1", "macrof1", "microf1")
MAX_BATCH = 4096


@dataclass(frozen=True)
class MTSettings(Settings):
    """The ``mt:`` section: reference and source files, metrics, tokenization, and where neural metrics run."""

    refs: tuple[str, ...] = setting((), "Reference files, line-aligned with every system's hypotheses.", input=True)
    metrics: tuple[str, ...] = setting(DEFAULT_METRICS, "MT metrics: registry names, e.g. bleu, chrf:beta=1.",
                                       nonempty="metric")
    tokenize: str = setting("13a", "sacrebleu tokenizer for BLEU, BLEU-SBP, MacroF, MicroF (13a, intl, zh, char, none, ...).")
    lowercase: bool = setting(False, "Case-insensitive scoring (all metrics).")
    source: str | None = setting(None, "Source segments, line-aligned with the references (COMET reads them).",
                                 input=True)
    device: str = setting("cpu", "Where neural metrics run: cpu, cuda or cuda:N.", key=False)
    batch_size: int = setting(16, "Segments per batch of the neural metrics (never changes a score).", ge=1,
                              le=MAX_BATCH, key=False)

    def check(self) -> None:
        d = self.device.strip().lower()
        if not (d in ("cpu", "cuda") or (d.startswith("cuda:") and d[5:].isdigit())):
            raise SettingError("device", self.device, f"device {self.device!r} is not cpu, cuda or cuda:N",
                               shows_value=True)
        self.set("device", d)
        from .base import load_metric  # sacrebleu: loaded when metrics are checked, not when the package is

        for i, spec in enumerate(self.metrics):
            try:
                load_metric(spec, tokenize=self.tokenize, lowercase=self.lowercase)
            except UserError as e:
                raise SettingError(f"metrics[{i}]", spec, str(e), shows_value=True) from None
