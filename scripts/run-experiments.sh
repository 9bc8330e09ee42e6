#!/usr/bin/env bash
# Builds the release binary, captures the real program the experiments use
# (xz compressing a generated text file, through qemu-user; lackey when
# qemu is missing), then runs every experiment file under experiments/ and
# writes its table (CSV), figure (PNG) and write-up (markdown) to
# docs/experiments/ (or the directory given as the first argument).
#   ./scripts/run-experiments.sh [OUT_DIR] [EXPERIMENT.toml ...]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/experiments}"
shift || true
cargo build --release -p cachepart-cli
bin="${CARGO_TARGET_DIR:-target}/release/cachepart"

traces=out/experiment-traces
mkdir -p "$traces"
if [ ! -s "$traces/xz.cpt" ]; then
  # A deterministic 240 KB text input (68 M instructions under xz -1): its
  # dictionary and match-finder hash tables make a cache-hungry real program.
  seq 1 6000 | awk '{ printf "%d %x %o line of text number %d\n", $1, $1 * 7919, $1, $1 % 97 }' \
    > "$traces/xz-input.txt"
  tool=qemu
  command -v qemu-x86_64 >/dev/null || tool=lackey
  "$bin" trace capture --tool "$tool" -o "$traces/xz.cpt" -- \
    xz -1 -T1 -c "$traces/xz-input.txt" > /dev/null
fi

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  files=(experiments/*.toml)
fi
for f in "${files[@]}"; do
  "$bin" experiment run "$f" --out "$out"
done

# The table-driven experiments (Python, on PBBCache's measurements) when
# no experiment file was named.
if [ "$#" -eq 0 ]; then
  .venv/bin/python scripts/experiments/lfoc_fig2_fig3.py --out "$out"
  .venv/bin/python scripts/experiments/lfoc_fig6.py --out "$out"
  # The simulator under online controllers (about 40 minutes).
  .venv/bin/python scripts/experiments/lfoc_fig7.py --out "$out"
fi
