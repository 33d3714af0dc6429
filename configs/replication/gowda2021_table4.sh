#!/usr/bin/env bash
# Table 4 of Gowda et al. 2021 ("Macro-Average: Rare Types Are Important Too"):
# Kendall tau-b between MT metrics and CLSSTS 2020 / MATERIAL IR scores (mAQWV, MAP), per
# language (2B Lithuanian, 2C Pashto, 2S Bulgarian) and domain (In = ANALYSIS rows,
# In+Ext = DEVANALYSIS rows; the DEV rows are not used). x = not significant (p >= 0.05).
# --verdicts: metric ranking per row with PERM-BOTH significance clusters (Holm over each row's 15 metric pairs).
# Data: github thammegowda/007-mt-eval-macro (justifs/material/tables), shared copy at
# ../shared/data/clssts2020/system_scores.tsv; set DATA to another copy's parent directory.
# Expected output and notes: configs/replication/gowda2021_table4.md.
# tests/test_replication_table4.py runs exactly this command.
set -euo pipefail
DATA="${DATA:-${CLIR_EVAL_DATA:-../shared/data}}"
clir-eval correlate \
  --table "$DATA/clssts2020/system_scores.tsv" \
  --filter 'expt~^2[BCS]-(DEV)?ANALYSIS-QUERY1$' \
  --group-by expt \
  --x BLEU,MacroF1,MicroF1,ChrF1,BLEURTMean,BLEURTMedian \
  --y mAQWV,MAP \
  --method kendall --variant b --alpha 0.05 --verdicts --seed 13 \
  --label '2B-ANALYSIS-QUERY1=LT In,2B-DEVANALYSIS-QUERY1=LT In+Ext,2C-ANALYSIS-QUERY1=PS In,2C-DEVANALYSIS-QUERY1=PS In+Ext,2S-ANALYSIS-QUERY1=BG In,2S-DEVANALYSIS-QUERY1=BG In+Ext,mAQWV=AQWV,ChrF1=chrF1,BLEURTMean=BLEURTmean,BLEURTMedian=BLEURTmedian' \
  --format "${FORMAT:-md}" "$@"
