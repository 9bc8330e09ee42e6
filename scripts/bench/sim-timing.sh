#!/usr/bin/env bash
# Full-mode simulator speed with the hardware prefetchers and the
# out-of-order window (docs/sim.md, "The out-of-order window") against
# today's model: the bench_system example (4 cores, Skylake TLBs, timing
# on) run in four configurations, alternating, `REPS` times each (default
# 3), on `ACCESSES` accesses (default 2e7):
#   (a) no prefetchers, flat timing (per-app mlp)
#   (b) prefetchers on (all four, MSR 0x1A4 word 0), flat timing
#   (c) no prefetchers, the out-of-order window
#   (d) prefetchers and the window
# on the 4 synthetic apps replaying their `.cpt` files, or with `TRACE` a
# real trace (`.cpt`) replayed on every core; `TRACE=xz` uses the `xz -9`
# lackey trace of the cachegrind-mode benchmark (captured by `bench_sim`
# under the temporary directory on first use: valgrind needed, a few
# minutes). Prints one table row per run, then the best and the median of
# each (M accesses per second of the simulating thread's CPU time, which a
# shared machine disturbs less than wall time) and their ratios to (a).
#   [TRACE=FILE|xz] ./scripts/bench/sim-timing.sh [ACCESSES] [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
ACCESSES="${1:-2e7}"
REPS="${2:-3}"
cargo build -q --release -p cachepart-sim --example bench_system
BIN=target/release/examples/bench_system
extra=()
if [[ -n "${TRACE:-}" ]]; then
  if [[ $TRACE == xz ]]; then
    TRACE="${TMPDIR:-/tmp}/cachepart-sim-bench-xz9.cpt"
    if [[ ! -f $TRACE ]]; then
      cargo run -q --release -p cachepart-sim --example bench_sim -- 1 >/dev/null
    fi
  fi
  extra=(--trace "$TRACE")
  echo "trace: $TRACE on every core"
else
  echo "trace: 4 synthetic apps (streaming, zipf, light, pointer-chase)"
fi
declare -A flags=([a]="" [b]="--prefetchers" [c]="--window" [d]="--prefetchers --window")
declare -A what=([a]="no prefetchers, flat timing" [b]="prefetchers, flat timing"
  [c]="no prefetchers, window" [d]="prefetchers and window")
echo "| config | run | M accesses/s (thread CPU) | M accesses/s (wall) |"
echo "|---|---|---|---|"
declare -A best all
for r in $(seq 1 "$REPS"); do
  for c in a b c d; do
    # shellcheck disable=SC2086
    out=$("$BIN" --accesses "$ACCESSES" "${extra[@]}" ${flags[$c]})
    line=$(grep '^simulated' <<<"$out")
    wall=$(sed -E 's/.*: ([0-9.]+) M accesses\/s \(wall\).*/\1/' <<<"$line")
    cpu=$(sed -E 's/.*, ([0-9.]+) M accesses\/s \(simulating thread CPU\).*/\1/' <<<"$line")
    echo "| ($c) ${what[$c]} | $r | $cpu | $wall |"
    all[$c]="${all[$c]:-} $cpu"
    if [[ -z "${best[$c]:-}" ]] || awk "BEGIN{exit !($cpu > ${best[$c]})}"; then
      best[$c]=$cpu
    fi
  done
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{v[NR]=$1} END{print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
declare -A med
for c in a b c d; do med[$c]=$(median "${all[$c]}"); done
echo
echo "| config | best M accesses/s (thread CPU) | best / (a) | median | median / (a) |"
echo "|---|---|---|---|---|"
for c in a b c d; do
  echo "| ($c) ${what[$c]} | ${best[$c]} | $(awk "BEGIN{printf \"%.3f\", ${best[$c]} / ${best[a]}}") | ${med[$c]} | $(awk "BEGIN{printf \"%.3f\", ${med[$c]} / ${med[a]}}") |"
done
