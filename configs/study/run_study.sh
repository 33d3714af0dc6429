#!/usr/bin/env bash
# The pooled study: every real-data experiment the project ships, run, then pooled in one command.
#
#   configs/study/run_study.sh [OUT]        # default OUT=out/study; about 5 minutes on 2 cores
#
# Runs (one collection each, its own systems):
#   WMT21 ru-en and is-en (documents, headline queries), WMT21 de-en and cs-en (sentences, GOV2 titles,
#   pseudo-qrels), Lignos et al. nc-test cs-en and de-en (MT recomputed, Table 5's published Europarl IR
#   scores and BLEURT), CLSSTS 2020 Lithuanian, Pashto, Bulgarian "In" (Table 4's published scores).
# Then: clir-eval pool (all nine) --out OUT/pooled (report.md, report.html, report.json, thresholds_*.png), and
# the five runs with published BLEURT scores (nc-test, CLSSTS) --out OUT/pooled-bleurt, where BLEURT is ranked.
# Extra arguments after OUT go to both pool commands (e.g. --margin 0.05).
# The result and what it supports: docs/findings.md ("Pooled over every shipped collection").
# DATA (or CLIR_EVAL_DATA) points at the data directory (default ../shared/data, from the repository root).
set -euo pipefail
OUT="${1:-out/study}"
DATA="${DATA:-${CLIR_EVAL_DATA:-../shared/data}}"
mkdir -p "$OUT"
run() { clir-eval run "$1" --out "$OUT/$2" --data-root "$DATA" --quiet; }
run configs/wmt21_ru_en.yaml wmt21-ru-en
run configs/wmt21_is_en.yaml wmt21-is-en
run configs/wmt21_de_en_sentences.yaml wmt21-de-en
run configs/study/wmt21_cs_en_sentences.yaml wmt21-cs-en
run configs/replication/gowda2021_table5_cs.yaml nc-cs-en
run configs/replication/gowda2021_table5_de.yaml nc-de-en
run configs/study/clssts_lt_in.yaml clssts-lt-in
run configs/study/clssts_ps_in.yaml clssts-ps-in
run configs/study/clssts_bg_in.yaml clssts-bg-in
clir-eval pool "$OUT"/wmt21-ru-en "$OUT"/wmt21-is-en "$OUT"/wmt21-de-en "$OUT"/wmt21-cs-en "$OUT"/nc-cs-en \
  "$OUT"/nc-de-en "$OUT"/clssts-lt-in "$OUT"/clssts-ps-in "$OUT"/clssts-bg-in --out "$OUT/pooled" "${@:2}"
clir-eval pool "$OUT"/nc-cs-en "$OUT"/nc-de-en "$OUT"/clssts-lt-in "$OUT"/clssts-ps-in "$OUT"/clssts-bg-in \
  --out "$OUT/pooled-bleurt" "${@:2}"
