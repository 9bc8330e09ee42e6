#!/usr/bin/env bash
# Full-mode simulator speed with flat page walks (today's model) against
# walks through the caches (`[tlb] walk = "hierarchy"`): the bench_system
# example (4 cores, 4 synthetic apps, Skylake TLBs, timing on) run
# alternately in both modes, `REPS` times each (default 2), on
# `ACCESSES` accesses (default 3e7), the apps replaying their `.cpt`
# files. Prints one table row per run and the best of each mode (M accesses per second of the simulating thread's CPU
# time, which a shared machine disturbs less than wall time).
#   ./scripts/bench-walks.sh [ACCESSES] [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
ACCESSES="${1:-3e7}"
REPS="${2:-2}"
cargo build -q --release -p cachepart-sim --example bench_system
BIN=target/release/examples/bench_system
echo "| walk | run | M accesses/s (thread CPU) | M accesses/s (wall) | page walks | walk loads L1D/L2/LLC/memory |"
echo "|---|---|---|---|---|---|"
declare -A best
for r in $(seq 1 "$REPS"); do
  for mode in flat hierarchy; do
    out=$("$BIN" --accesses "$ACCESSES" --walk "$mode")
    line=$(grep '^simulated' <<<"$out")
    wall=$(sed -E 's/.*: ([0-9.]+) M accesses\/s \(wall\).*/\1/' <<<"$line")
    cpu=$(sed -E 's/.*, ([0-9.]+) M accesses\/s \(simulating thread CPU\).*/\1/' <<<"$line")
    walks=$(grep '^page walks' <<<"$out" | sed -E 's/page walks ([0-9]+), walk loads served by L1D\/L2\/LLC\/memory (.*)/\1 | \2/')
    echo "| $mode | $r | $cpu | $wall | $walks |"
    if [[ -z "${best[$mode]:-}" ]] || awk "BEGIN{exit !($cpu > ${best[$mode]})}"; then
      best[$mode]=$cpu
    fi
  done
done
echo
echo "best: flat ${best[flat]} M accesses/s, hierarchy ${best[hierarchy]} M accesses/s" \
  "(hierarchy / flat = $(awk "BEGIN{printf \"%.3f\", ${best[hierarchy]} / ${best[flat]}}"))"
