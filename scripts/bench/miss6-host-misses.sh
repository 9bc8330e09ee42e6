#!/usr/bin/env bash
# Host instructions and host cache misses per simulated access of
# benchmark (b) (`bench_system`), counted by callgrind's cache model on
# the simulating thread only (`--toggle-collect` on `run_interval_with`;
# the trace decoders and the setup are not counted), for one or more
# builds. The model's caches are the host's: a 48 KiB 12-way L1D and a
# 1 MiB 16-way L2 (callgrind's "LL"), 64-byte lines. Counts do not move
# with the machine's load, so a change of a few percent shows here that
# wall time on a shared machine cannot. callgrind's cache model ignores
# prefetch instructions: a build that hides misses by prefetching shows
# its extra instructions here and its gain only in time (sim-timing.sh,
# `bench_system`'s own figures).
#
#   scripts/bench/miss6-host-misses.sh BIN [BIN...] [-- BENCH_ARGS...]
#   scripts/bench/miss6-host-misses.sh /tmp/main-bench target/release/examples/bench_system
#   scripts/bench/miss6-host-misses.sh target/release/examples/bench_system -- --mix light,light,light,light
#
# Environment (defaults in brackets):
#   ACCESSES   simulated accesses per run [1e7: about a minute per build
#              on an idle core]
#
# Prints, per build: simulated accesses, then per access the host
# instructions (Ir), L1D read and write misses (D1mr, D1mw) and L2 read
# and write misses (DLmr, DLmw).
set -euo pipefail
command -v valgrind >/dev/null || { echo "miss6-host-misses: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
bins=()
while [[ $# -gt 0 && $1 != -- ]]; do
  bins+=("$1")
  shift
done
[[ ${1:-} == -- ]] && shift
[[ ${#bins[@]} -gt 0 ]] || { echo "usage: $0 BIN [BIN...] [-- BENCH_ARGS...]" >&2; exit 2; }
ACCESSES="${ACCESSES:-1e7}"
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
printf '%-50s %10s %8s %7s %7s %7s %7s\n' build accesses Ir D1mr D1mw DLmr DLmw
for i in "${!bins[@]}"; do
  bin=${bins[$i]}
  [[ -x $bin ]] || { echo "miss6-host-misses: $bin: not an executable" >&2; exit 1; }
  valgrind --tool=callgrind --separate-threads=yes --cache-sim=yes \
    --D1=49152,12,64 --LL=1048576,16,64 --toggle-collect='*run_interval_with*' \
    --callgrind-out-file="$out_dir/cg.$i" "$bin" --accesses "$ACCESSES" "$@" \
    >"$out_dir/log.$i" 2>&1 || { echo "miss6-host-misses: $bin failed:" >&2; tail "$out_dir/log.$i" >&2; exit 1; }
  n=$(grep -o 'simulated [0-9]* accesses' "$out_dir/log.$i" | awk '{print $2}')
  # The simulating thread is the one whose profile counted events.
  best=""
  best_ir=0
  for f in "$out_dir/cg.$i"-*; do
    ir=$(awk '/^summary:/ {print $2}' "$f")
    if [[ -n $ir && $ir -gt $best_ir ]]; then
      best=$f
      best_ir=$ir
    fi
  done
  [[ -n $best ]] || { echo "miss6-host-misses: $bin: no thread profile" >&2; exit 1; }
  awk -v n="$n" -v b="$bin" '/^events:/ { for (k = 2; k <= NF; k++) col[$k] = k }
    /^summary:/ { printf "%-50s %10d %8.1f %7.3f %7.3f %7.3f %7.3f\n", b, n,
      $col["Ir"] / n, $col["D1mr"] / n, $col["D1mw"] / n, $col["DLmr"] / n, $col["DLmw"] / n }' "$best"
done
