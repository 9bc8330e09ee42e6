#!/usr/bin/env bash
# The simulator against real hardware (issue 17, part 7): captures seven
# Debian programs whose upstreams are SPEC CPU2006 benchmarks, with inputs
# shaped like SPEC's reference inputs (scripts/experiments/hw_inputs.py),
# profiles each alone on the simulated Xeon Gold 6138 at 1..11 ways
# (`profile from-trace`), and compares the table with PBBCache's CAT
# measurements of the same benchmarks on a real Xeon Gold 6138
# (`profile compare`).
#
#   scripts/experiments/hw_compare.sh [WORKDIR]   (default: target/hw-compare)
#
# Environment (defaults in brackets):
#   CACHEPART   the cachepart binary [target/release/cachepart, built if missing]
#   WARMUP      instructions simulated before measuring [50000000]
#   MEASURE     instructions measured after the warm-up [150000000]
#   BASE_CPI, MLP   the alone runs' timing [1.0, 1.0: from-trace's defaults]
#   PREFETCHERS the simulated prefetchers, off|platform|WORD [platform: the
#               measured machine ran with its prefetchers on]
#   PLATFORM    the simulated machine [xeon-gold-6138; xeon-gold-6138-ooo
#               derives memory-level parallelism from the trace with the
#               out-of-order window, and then MLP must stay 1.0]
#   TOOL        the capture route, qemu|cpgrind [qemu; cpgrind is valgrind
#               with cachepart's own tool, which can mark dependent loads]
#   DEP_WINDOW  with TOOL=cpgrind: `--dep-window` (0: no dependency hints)
#               [256]
#   TAG         suffix of the output files (ablations) [none]
#   OUT         where the tables go [docs/experiments]
#   SKIP_CAPTURE=1  reuse the traces in WORKDIR
#
# Each program's window is cut by the capture itself (`trace capture --skip
# N --instructions WARMUP+MEASURE`): N leaves out its start-up (input
# generation, parsing), so the window is in the phase SPEC's run spends
# most of its time in (gcc's optimiser after 8 G instructions, Xalan's
# transform after 3 G; docs/experiments/hw-compare.md shows what earlier
# windows gave). The traces (GBs) stay in WORKDIR.
#
# Needs the Debian packages bzip2, gcc, perl, hmmer, gnugo, povray,
# povray-examples, xalan and qemu-user, or valgrind for TOOL=cpgrind
# (installed here when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
WORK=${1:-target/hw-compare}
WARMUP=${WARMUP:-50000000}
MEASURE=${MEASURE:-150000000}
BASE_CPI=${BASE_CPI:-1.0}
MLP=${MLP:-1.0}
PREFETCHERS=${PREFETCHERS:-platform}
PLATFORM=${PLATFORM:-xeon-gold-6138}
TOOL=${TOOL:-qemu}
DEP_WINDOW=${DEP_WINDOW:-256}
TAG=${TAG:-}
OUT=${OUT:-docs/experiments}
if [ -z "${CACHEPART:-}" ]; then
  CACHEPART=$ROOT/target/release/cachepart
  [ -x "$CACHEPART" ] || cargo build --release -q -p cachepart-cli
fi

need=()
for p in bzip2:bzip2 gcc:gcc perl:perl hmmsearch:hmmer /usr/games/gnugo:gnugo povray:povray \
  Xalan:xalan qemu-x86_64:qemu-user valgrind:valgrind; do
  command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done
[ -f /usr/share/doc/povray/examples/advanced/chess2.pov ] || need+=(povray-examples)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi

mkdir -p "$WORK"
cd "$WORK"
[ -f xalan.xsl ] || /usr/bin/python3 "$ROOT/scripts/experiments/hw_inputs.py" .
[ -f fam.hmm ] || hmmbuild -o /dev/null fam.hmm hmmer-aln.sto
CC1=$(gcc -print-prog-name=cc1)
WINDOW=$((WARMUP + MEASURE))

capture() { # NAME SKIP CMD...
  local name=$1 skip=$2
  shift 2
  if [ -n "${SKIP_CAPTURE:-}" ] && [ -f "$name.cpt" ]; then return; fi
  echo "capture $name (skip $skip): $*" >&2
  local tool=(--tool "$TOOL")
  if [ "$TOOL" = cpgrind ]; then tool+=(--dep-window "$DEP_WINDOW"); fi
  "$CACHEPART" trace capture -q "${tool[@]}" --skip "$skip" --instructions "$WINDOW" \
    -o "$name.cpt" -- "$@" > /dev/null < /dev/null
}

capture bzip2 1000000000 bzip2 -9 -c bzip2-in.bin
capture gcc 8000000000 "$CC1" -quiet -O3 gcc-in.c -o /dev/null
capture perl 1000000000 perl perl-in.pl
capture hmmer 200000000 hmmsearch --max --cpu 0 -o /dev/null fam.hmm hmmer-db.fa
capture gnugo 1000000000 /usr/games/gnugo --mode gtp --level 10 --gtp-input gnugo.gtp
capture povray 1000000000 povray +I/usr/share/doc/povray/examples/advanced/chess2.pov \
  +W320 +H240 -D +WT1 +O/dev/null
capture xalan 3000000000 Xalan -o /dev/null xalan-in.xml xalan.xsl

cd "$ROOT"
sim=$OUT/hw-compare-sim$TAG.csv
"$CACHEPART" profile from-trace -q --platform "$PLATFORM" --seed 1 \
  --base-cpi "$BASE_CPI" --mlp "$MLP" --prefetchers "$PREFETCHERS" \
  --warmup "$WARMUP" --instructions "$MEASURE" \
  "$WORK"/{bzip2,gcc,perl,hmmer,gnugo,povray,xalan}.cpt -o "$sim"
map=bzip2=bzip206,gcc=gcc06,perl=perlbench06,hmmer=hmmer06,gnugo=gobmk06,povray=povray06,xalan=xalancbmk06
measured=$ROOT/../shared/data/pbbcache/metrics.csv
"$CACHEPART" profile compare "$measured" "$sim" --map "$map" --format csv \
  -o "$OUT/hw-compare$TAG.csv"
"$CACHEPART" profile compare "$measured" "$sim" --map "$map" | tee "$OUT/hw-compare$TAG.txt"
