#!/usr/bin/env bash
# Prints the benchmark figures of cachepart (not part of the tests: the
# machine is shared and noisy, so figures are reported, never asserted).
#   ./scripts/bench.sh            every benchmark
#   ./scripts/bench.sh optimal    only the exact solvers (figures program)
#   ./scripts/bench.sh policies   only LFOC/KPart decision time (criterion)
#   ./scripts/bench.sh trace      only trace write/read throughput (criterion)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
crit=(-- --warm-up-time 1 --measurement-time 3)

if [[ $what == all || $what == optimal ]]; then
  echo "== exact solvers vs PBBCache (median of fixed-seed mixes; PBBCache seconds from ref/)"
  cargo run -q --release -p cachepart-profile --example bench_optimal -- "${OPT_SIZES:-4,6,8,10,12,14,16}"
fi
if [[ $what == all || $what == policies ]]; then
  echo "== LFOC and KPart decision time, 4..11 apps (criterion)"
  cargo bench -q -p cachepart-policy --bench decide "${crit[@]}" 2>&1 | grep -E "^(lfoc|kpart|decide)|time:" || true
fi
if [[ $what == all || $what == trace ]]; then
  echo "== trace format throughput and size (criterion)"
  cargo bench -q -p cachepart-trace --bench trace "${crit[@]}" 2>&1 | grep -E "time:|thrpt:|bytes" || true
fi
