#!/usr/bin/env bash
# Ablation for docs/experiments/hw-compare.md ("gcc: the collector's
# trigger"): gcc 12's cc1 with its default garbage-collection trigger
# against the trigger of gcc 3.2, the gcc SPEC's 403.gcc is based on
# (ggc-page.c before 3.3: collect when the heap has grown 30% since the
# last collection, with a 4 MiB floor; gcc 12 exposes the same rule as
# `--param ggc-min-expand=30 --param ggc-min-heapsize=4096`, while its
# defaults on a machine with 1 GiB or more are 100 and 131072, i.e.
# collect when the heap has doubled, 128 MiB floor); and both that trigger
# and gcc 3.2's default inline limit (`-finline-limit=600`; gcc 12 turns
# it into max-inline-insns-single and -auto of 300, against its defaults
# of 70 and 15), for SPEC's note that 403.gcc was made to inline more and
# use more memory. Names: gcc-gc12-Ng (gcc 12's defaults), gcc-gc32-Ng,
# gcc-gc32-inline600-Ng, N the G instructions skipped.
#
#   scripts/experiments/hw_gcc_gc.sh [WORKDIR]   (default: target/hw-compare)
#
# Captures cc1 -O3 on hw_inputs.py's gcc-in.c under the three settings in the
# same windows (WARMUP + MEASURE instructions after each of SKIPS),
# profiles every window alone on the simulated Xeon Gold 6138 at 1..11
# ways with the platform's prefetchers (as hw_compare.sh does), and
# compares each with PBBCache's gcc06 row. Environment: CACHEPART, WARMUP
# [50000000], MEASURE [150000000], SKIPS ["8000000000 12000000000
# 16000000000"], OUT [docs/experiments]. The traces stay in
# WORKDIR (about 0.2 GB each); tables go to OUT/hw-compare-gcc-gc*.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
WORK=${1:-target/hw-compare}
WARMUP=${WARMUP:-50000000}
MEASURE=${MEASURE:-150000000}
SKIPS=${SKIPS:-8000000000 12000000000 16000000000}
OUT=${OUT:-docs/experiments}
if [ -z "${CACHEPART:-}" ]; then
  CACHEPART=$ROOT/target/release/cachepart
  [ -x "$CACHEPART" ] || cargo build --release -q -p cachepart-cli
fi
command -v qemu-x86_64 >/dev/null || { apt-get update -qq && apt-get install -y -qq qemu-user >/dev/null; }
mkdir -p "$WORK"
cd "$WORK"
[ -f gcc-in.c ] || /usr/bin/python3 "$ROOT/scripts/experiments/hw_inputs.py" .
CC1=$(gcc -print-prog-name=cc1)
WINDOW=$((WARMUP + MEASURE))
traces=()
map=()
for skip in $SKIPS; do
  g=$((skip / 1000000000))
  for gc in gc12 gc32 gc32-inline600; do
    name=gcc-$gc-${g}g
    case $gc in
      gc12) params=() ;;
      gc32) params=(--param ggc-min-expand=30 --param ggc-min-heapsize=4096) ;;
      gc32-inline600) params=(--param ggc-min-expand=30 --param ggc-min-heapsize=4096
        -finline-limit=600) ;;
    esac
    if [ ! -f "$name.cpt" ]; then
      echo "capture $name" >&2
      "$CACHEPART" trace capture -q --tool qemu --skip "$skip" --instructions "$WINDOW" \
        -o "$name.cpt" -- "$CC1" -quiet -O3 "${params[@]}" gcc-in.c -o /dev/null \
        > /dev/null < /dev/null
    fi
    traces+=("$WORK/$name.cpt")
    map+=("$name=gcc06")
  done
done
cd "$ROOT"
sim=$OUT/hw-compare-gcc-gc-sim.csv
"$CACHEPART" profile from-trace -q --platform xeon-gold-6138 --seed 1 --prefetchers platform \
  --warmup "$WARMUP" --instructions "$MEASURE" "${traces[@]}" -o "$sim"
measured=$ROOT/../shared/data/pbbcache/metrics.csv
m=$(IFS=,; echo "${map[*]}")
"$CACHEPART" profile compare "$measured" "$sim" --map "$m" | tee "$OUT/hw-compare-gcc-gc.txt"
