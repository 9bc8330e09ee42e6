#!/usr/bin/env bash
# The simulator's cost per access in host instructions, counted by
# valgrind's callgrind inside the simulating loop only
# (`interleave::run_records*`: not the trace decoding threads, not the
# setup), for the four configurations of sim-timing.sh:
#   (a) no prefetchers, flat timing   (b) prefetchers, flat timing
#   (c) no prefetchers, the window    (d) prefetchers and the window
# on a real trace replayed on every core (default: the `xz -9` lackey
# trace of the cachegrind-mode benchmark, captured on first use).
# Instruction counts do not move with the machine's load, so this shows
# a change of a few percent that wall or CPU time on a shared machine
# cannot; they do not count the host's cache misses, which
# sim-timing.sh's CPU times include. About a minute per configuration.
#   [TRACE=FILE] [BIN=path/to/bench_system] ./scripts/bench/sim-timing-ir.sh [ACCESSES]
set -euo pipefail
cd "$(dirname "$0")/../.."
ACCESSES="${1:-2e6}"
command -v valgrind >/dev/null || { echo "sim-timing-ir: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
if [[ -z "${BIN:-}" ]]; then
  cargo build -q --release -p cachepart-sim --example bench_system
  BIN=target/release/examples/bench_system
fi
TRACE="${TRACE:-${TMPDIR:-/tmp}/cachepart-sim-bench-xz9.cpt}"
if [[ ! -f $TRACE ]]; then
  cargo run -q --release -p cachepart-sim --example bench_sim -- 1 >/dev/null
fi
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
declare -A flags=([a]="" [b]="--prefetchers" [c]="--window" [d]="--prefetchers --window")
declare -A what=([a]="no prefetchers, flat timing" [b]="prefetchers, flat timing"
  [c]="no prefetchers, window" [d]="prefetchers and window")
echo "trace: $TRACE on every core, $ACCESSES accesses"
echo "| config | accesses | instructions | per access | (a) / this |"
echo "|---|---|---|---|---|"
declare -A per
for c in a b c d; do
  # shellcheck disable=SC2086
  log=$(valgrind --tool=callgrind --toggle-collect='*interleave::run_records*' \
    --callgrind-out-file="$out_dir/cg.$c" "$BIN" --accesses "$ACCESSES" --trace "$TRACE" ${flags[$c]} 2>&1)
  ir=$(grep -oE 'Collected : [0-9]+' <<<"$log" | grep -oE '[0-9]+$')
  n=$(grep -oE 'simulated [0-9]+ accesses' <<<"$log" | grep -oE '[0-9]+')
  per[$c]=$(awk "BEGIN{printf \"%.1f\", $ir / $n}")
  echo "| ($c) ${what[$c]} | $n | $ir | ${per[$c]} | $(awk "BEGIN{printf \"%.3f\", ${per[a]} / ${per[$c]}}") |"
done
