#!/usr/bin/env bash
# Zhang et al. (USENIX ATC'09) Fig. 2, Fig. 3 and Table 2 on the simulated
# Xeon 5160: builds the release CLI, then runs the best-fairness search of
# every method on every pair (scripts/experiments/zhang_throttling.py) and
# writes docs/experiments/zhang-throttling*.{csv,png} (or OUT_DIR's).
#   ./scripts/experiments/zhang_throttling.sh [OUT_DIR] [extra options of the .py]
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-docs/experiments}"
shift || true
cargo build --release -p cachepart-cli
bin="${CARGO_TARGET_DIR:-target}/release/cachepart"
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
"$py" scripts/experiments/zhang_throttling.py --bin "$bin" --out "$out" "$@"
