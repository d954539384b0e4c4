#!/bin/sh
# bench.compare_plot: `compare.py plot` makes an SVG of a regret matrix and one of a
# training run from small reports (bench/tests/plot_*.json), and refuses a mix.
# Exits 77 (skipped) when matplotlib is missing.
set -u
compare=$1 tests=$2 out=$3
mkdir -p "$out"
for kind in regret train; do
  rm -f "$out/$kind.svg"
  /usr/bin/python3 "$compare" plot --out "$out/$kind.svg" "$tests/plot_$kind.json"
  rc=$?
  [ $rc = 77 ] && exit 77
  [ $rc = 0 ] || { echo "plot of plot_$kind.json failed ($rc)"; exit 1; }
  grep -q "<svg" "$out/$kind.svg" || { echo "$out/$kind.svg is not an SVG"; exit 1; }
done
if /usr/bin/python3 "$compare" plot --out "$out/mix.svg" "$tests/plot_regret.json" "$tests/plot_train.json"; then
  echo "a regret matrix and a training run plotted together"; exit 1
fi
echo "both plots written"
