#!/usr/bin/env bash
# The LLC's share of the full simulator's simulating thread (benchmark (b)):
# builds bench_system with `--cfg cachepart_split_llc` (the LLC's part of the
# write-back path out of line) into target/split-llc, then runs
# scripts/bench/sim_instr.py --llc-share on it: host instructions, host-L1D
# and host-L2 misses per simulated access, in all and in the LLC part.
# That part is the shared work a conservative parallel run would keep on
# its clock thread (docs/sim.md, "The full mode: one simulating thread").
#
#   scripts/bench/llc_share.sh [sim_instr.py options, e.g. --accesses 1e7 --mix walk --LL 2097152,16,64]
#
# Needs valgrind (sim_instr.py says how to get it); the build takes a few
# minutes the first time (every crate is rebuilt with the flag).
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR=target/split-llc
RUSTFLAGS="--cfg cachepart_split_llc" cargo build --release -q -p cachepart-sim --example bench_system
exec python3 scripts/bench/sim_instr.py --llc-share "$@" "$CARGO_TARGET_DIR/release/examples/bench_system"
