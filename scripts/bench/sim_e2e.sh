#!/usr/bin/env bash
# The simulator's end-to-end figures from one run, on one real trace
# captured once: `cachepart sim cachegrind` against natsim, both whole
# processes (scripts/bench/cachegrind_natsim.py); `--threads 1` against 2
# (and 4 where the machine has 4 cores or more), with the speed-up and a
# check that every thread count prints the same totals
# (scripts/bench/cachegrind_threads.sh); benchmark (b), the full
# multicore simulator, on its synthetic 4-app mix and on the same real
# trace (the bench_system example); then a summary table. Capture speed is
# `./scripts/bench.sh capture` (CAPTURE_KIB=N runs a small qemu capture
# here as well).
#
#   ./scripts/bench.sh sim-e2e
#   scripts/bench/sim_e2e.sh
#   MB=0.35 REPS=7 RUNS=5 ACCESSES=1e8 scripts/bench/sim_e2e.sh
#
# Environment (defaults in brackets; the defaults keep the run to about 3
# minutes on 2 cores once built, half of it the lackey capture):
#   MB         gzip -9's input in MB; 0.1 MB is about 60 M references [0.15]
#   REPS       alternating runs of cachepart and natsim [5]
#   RUNS       runs per thread count [3]
#   THREADS    thread counts, the first the baseline ["1 2", "1 2 4" on 4+ cores]
#   ACCESSES   accesses of each benchmark (b) run [3e7]
#   CAPTURE_KIB  when set, also a qemu capture of xz -1 on this many KiB [unset]
#   SHARED     where natsim.c and lk2bin.c are [../shared]
#
# Needs valgrind, gcc and gzip (installed with apt-get when missing and
# run as root) and python3 (the standard library only). Scratch files (the
# traces, natsim's raw records, benchmark (b)'s synthetic traces) go to one
# directory under $TMPDIR, removed at the end, on failure and on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/../.."

MB=${MB:-0.15}
REPS=${REPS:-5}
RUNS=${RUNS:-3}
ACCESSES=${ACCESSES:-3e7}
if [[ -z ${THREADS:-} ]]; then
    THREADS="1 2"
    if (($(nproc) >= 4)); then THREADS="1 2 4"; fi
fi

need=()
command -v valgrind >/dev/null || need+=(valgrind)
command -v gcc >/dev/null || need+=(gcc)
command -v gzip >/dev/null || need+=(gzip)
if ((${#need[@]} > 0)); then
    if [[ $(id -u) == 0 ]]; then
        echo "sim-e2e: installing Debian packages: ${need[*]}" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    else
        echo "sim-e2e: error: ${need[*]} missing (apt-get install ${need[*]}, as root)" >&2
        exit 1
    fi
fi
python=python3
[[ -x .venv/bin/python ]] && python=.venv/bin/python

echo "sim-e2e: building the release CLI and the bench_system example" >&2
cargo build -q --release -p cachepart-cli
cargo build -q --release -p cachepart-sim --example bench_system
CACHEPART=$PWD/target/release/cachepart
export CACHEPART

work=$(mktemp -d "${TMPDIR:-/tmp}/cachepart-sim-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "load before: $(uptime)"
echo
echo "== cachepart sim cachegrind vs natsim, end to end (gzip -9 on $MB MB under lackey)"
"$python" scripts/bench/cachegrind_natsim.py --reps "$REPS" --mb "$MB" --work "$work/natsim" |
    tee "$work/natsim.txt"
trace=$(ls "$work"/natsim/gzip9-*mb.cpt)
rm -f "$work"/natsim/gzip9-*mb.bin # natsim's raw records: 8 bytes a reference

echo
echo "== cachepart sim cachegrind --threads: $THREADS on the same trace"
TRACE=$trace THREADS=$THREADS RUNS=$RUNS scripts/bench/cachegrind_threads.sh | tee "$work/threads.txt"

echo
echo "== benchmark (b): the full simulator, synthetic 4-app mix, $ACCESSES accesses"
TMPDIR=$work target/release/examples/bench_system --accesses "$ACCESSES" | tee "$work/b-synth.txt"
echo
echo "== benchmark (b): the full simulator, the real trace on every core, $ACCESSES accesses"
TMPDIR=$work target/release/examples/bench_system --accesses "$ACCESSES" --trace "$trace" |
    tee "$work/b-trace.txt"

if [[ -n ${CAPTURE_KIB:-} ]]; then
    echo
    echo "== capture speed: qemu route on xz -1 of $CAPTURE_KIB KiB"
    TMPDIR=$work cargo run -q --release -p cachepart-capture --example bench_capture -- \
        --kib "$CAPTURE_KIB" --no-lackey --qemu-kib 0 | tee "$work/capture.txt"
fi

# the summary, from the outputs above
refs=$(sed -n 's/.*, \([0-9,]*\) references.*/\1/p' "$work/natsim.txt" | head -1)
median=$(grep '^| median' "$work/natsim.txt")
field() { echo "$median" | awk -F'|' -v i="$1" '{ gsub(/[ *]/, "", $i); print $i }'; }
b_wall() { sed -n 's/.*: \([0-9.]*\) M accesses\/s (wall).*/\1/p' "$1"; }
echo
echo "== summary (load after: $(uptime | sed 's/.*load average/load average/'))"
printf '%-58s %s\n' "figure" "value"
printf '%-58s %s\n' "trace" "gzip -9 on $MB MB, $refs references"
printf '%-58s %s\n' "cachepart sim cachegrind, 1 thread, end to end" "$(field 3) s, $(field 4) M refs/s"
printf '%-58s %s\n' "natsim (gcc -O3 -march=native), end to end" "$(field 5) s, $(field 6) M refs/s"
printf '%-58s %s\n' "cachepart / natsim speed (target >= 1.0)" "$(field 7)x"
printf '%-58s %s\n' "CPU seconds, all threads: cachepart / natsim" "$(field 8) s / $(field 9) s"
# (cachegrind_threads.sh has stopped with an error if the totals differ)
while read -r n wall rate speedup; do
    [[ $n =~ ^[0-9]+$ ]] || continue
    what="--threads $n (baseline)"
    [[ $n == "${THREADS%% *}" ]] || what="--threads $n (totals equal to --threads ${THREADS%% *})"
    printf '%-58s %s\n' "$what" "$wall s, $rate M refs/s, ${speedup} speed-up"
done <"$work/threads.txt"
printf '%-58s %s\n' "benchmark (b), synthetic mix (target 50)" "$(b_wall "$work/b-synth.txt") M accesses/s wall"
printf '%-58s %s\n' "benchmark (b), the real trace on 4 cores" "$(b_wall "$work/b-trace.txt") M accesses/s wall"
if [[ -n ${CAPTURE_KIB:-} ]]; then
    printf '%-58s %s\n' "capture speed" "above (qemu route, xz -1 of $CAPTURE_KIB KiB)"
else
    printf '%-58s %s\n' "capture speed" "./scripts/bench.sh capture (or CAPTURE_KIB=256 here)"
fi
