#!/usr/bin/env bash
# Prints the benchmark figures of cachepart (not part of the tests: the
# machine is shared and noisy, so figures are reported, never asserted).
#   ./scripts/bench.sh            every benchmark
#   ./scripts/bench.sh optimal    only the exact solvers (figures program)
#   ./scripts/bench.sh policies   only LFOC/KPart decision time (criterion)
#   ./scripts/bench.sh trace      only trace write/read throughput (criterion)
#   ./scripts/bench.sh sim        only the cachegrind-mode simulator vs a reference loop
#   ./scripts/bench.sh sim-e2e    only the end-to-end figures on one real trace: sim cachegrind vs
#                                 natsim, --threads 1 vs 2, benchmark (b) on both mixes (~3 minutes)
#   ./scripts/bench.sh sim-instr  only benchmark (b)'s host instructions and host cache misses per simulated
#                                 access under callgrind (deterministic; needs valgrind, ~2 minutes)
#   ./scripts/bench.sh curves     only exact and SHARDS miss curves vs a reference loop and a bare scan
#   ./scripts/bench.sh capture    only trace capture speed, qemu and lackey routes (several minutes)
#   ./scripts/bench.sh online     only a 16-app simulator run under each online controller vs stock
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
if [[ $what == all || $what == sim ]]; then
  echo "== simulator, cachegrind-compatible mode, on a >100 M-access real trace vs a plain reference loop"
  cargo run -q --release -p cachepart-sim --example bench_sim
fi
if [[ $what == all || $what == sim-e2e ]]; then
  echo "== simulator end to end on one real trace: sim cachegrind vs natsim, --threads, benchmark (b)"
  scripts/bench/sim_e2e.sh
fi
if [[ $what == all || $what == sim-instr ]]; then
  echo "== benchmark (b), host instructions and host cache misses per simulated access (callgrind)"
  if ! command -v valgrind >/dev/null; then
    if [[ $(id -u) == 0 ]]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
    else
      echo "sim-instr: error: valgrind missing (apt-get install valgrind, as root)" >&2
      exit 1
    fi
  fi
  cargo build -q --release -p cachepart-sim --example bench_system
  python3 scripts/bench/sim_instr.py --accesses "${INSTR_ACCESSES:-1e7}" target/release/examples/bench_system
  python3 scripts/bench/sim_instr.py --accesses "${INSTR_ACCESSES:-1e7}" --mix walk target/release/examples/bench_system
fi
if [[ $what == all || $what == curves ]]; then
  echo "== miss-rate curves: exact vs a plain Fenwick loop, SHARDS 0.01 (with and without the reference sample) and a bare scan vs exact, SHARDS error"
  cargo run -q --release -p cachepart-curves --example bench_curves
fi
if [[ $what == all || $what == capture ]]; then
  echo "== trace capture speed: qemu plugin and lackey routes on xz, vs the bare program"
  cargo run -q --release -p cachepart-capture --example bench_capture -- ${CAPTURE_ARGS:-}
fi
if [[ $what == all || $what == online ]]; then
  echo "== a 16-app simulator run (16 x 10 M instructions) under each online controller vs stock"
  cargo build -q --release -p cachepart-cli
  python3 scripts/bench/online_overhead.py --repeat "${ONLINE_REPEAT:-3}"
fi
