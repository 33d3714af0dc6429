#!/usr/bin/env bash
# The architecture study: document translation (DT) and query translation (QT) on the same WMT21 test sets
# (ru-en, is-en, en-is, de-fr: into English, and out of English and between two other languages), then each
# architecture pooled on its own, so the two leaderboards can be read side by side.
#
#   configs/study/run_architectures.sh [OUT]        # default OUT=out/architectures
#
# Writes OUT/<run> for the eight runs, OUT/pooled-dt and OUT/pooled-qt (clir-eval pool: report.md, report.html,
# report.json). Extra arguments after OUT go to both pool commands (e.g. --margin 0.05).
# The result and what it supports: docs/findings.md ("Does the best metric depend on the architecture?").
# DATA (or CLIR_EVAL_DATA) points at the data directory (default ../shared/data, from the repository root).
set -euo pipefail
OUT="${1:-out/architectures}"
DATA="${DATA:-${CLIR_EVAL_DATA:-../shared/data}}"
mkdir -p "$OUT"
PAIRS="ru_en is_en en_is de_fr"
for p in $PAIRS; do
  for a in dt qt; do
    clir-eval run "configs/study/wmt21_${p}_${a}.yaml" --out "$OUT/${p}-${a}" --data-root "$DATA" --quiet
  done
done
for a in dt qt; do
  clir-eval pool $(for p in $PAIRS; do echo "$OUT/${p}-${a}"; done) --out "$OUT/pooled-${a}" "${@:2}"
done
