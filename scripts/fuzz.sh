#!/usr/bin/env bash
# Fuzzes the trace readers and the SHARDS sample index reader with cargo-fuzz (libFuzzer): every target for N
# seconds each (default 60), seeded with the kept corpus (fuzz/corpus/<target>,
# shared by the two binary targets, and the hand-made bad files of
# crates/trace/tests/corpus); new crashes are minimised into
# fuzz/artifacts/<target>/.
#
#   ./scripts/fuzz.sh [SECONDS] [TARGET...]
#
# cargo-fuzz needs nightly compiler flags; RUSTC_BOOTSTRAP=1 lets the stable
# toolchain accept them. New corpus entries go to fuzz/corpus-new/<target>
# (not kept). To refresh the kept corpus: merge corpus-new into a copy of it,
# minimise with `cargo fuzz cmin TARGET DIR`, then keep one small file per
# distinct outcome (`cargo run --example classify -- TARGET DIR/*` in fuzz/
# prints each file's outcome class and size).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(reader trace_file frame lackey din synth shards_index)
fi
export RUSTC_BOOTSTRAP=1
# Respect CARGO_TARGET_DIR when set (cargo-fuzz builds under fuzz/target otherwise).
# One rayon thread: the parallel index path is still exercised and the
# fuzzer does not compete with itself for cores.
export RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-1}

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked
fi

cd fuzz
status=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "corpus-new/$t" "artifacts/$t"
  seeds=("corpus/$t")
  case $t in
    # The two binary readers share their kept corpora.
    reader | trace_file) seeds=(corpus/reader corpus/trace_file ../crates/trace/tests/corpus) ;;
    lackey | din) seeds+=(../crates/trace/tests/corpus) ;;
  esac
  echo "== fuzzing $t for ${secs}s" >&2
  log="artifacts/$t/last-run.log"
  if cargo fuzz run "$t" "corpus-new/$t" "${seeds[@]}" -- \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^Done' "$log" >&2 || true
  else
    status=1
    echo "!! $t found a crash; see $log" >&2
    for crash in artifacts/"$t"/{crash,timeout,oom,leak}-*; do
      [ -e "$crash" ] || continue
      case $crash in *.min) continue ;; esac
      echo "== minimising $crash" >&2
      cargo fuzz tmin "$t" "$crash" -- -runs=2000 >"$crash.tmin.log" 2>&1 || true
      # tmin writes minimized-from-<hash> next to the crash.
      ls -t artifacts/"$t"/minimized-from-* 2>/dev/null | head -1 |
        xargs -r -I{} mv {} "$crash.min"
    done
  fi
done
exit $status
