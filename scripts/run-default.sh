#!/usr/bin/env bash
# Sets everything up, then runs the main job on the built-in default data (the
# Debian profile set, docs/profiles.md; `--builtin parametric` for the other set):
# every policy and the exact fairness optimum on the built-in workloads,
# with the STP-versus-unfairness chart written to out/default-tradeoff.png.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
mkdir -p out
exec target/release/cachepart profile eval \
  -a stock,equal-part,ucp,ucp-slowdown,kpart,dunn,lfoc,opt-unf,optc-unf,optc-stp \
  --chart out/default-tradeoff.png "$@"
