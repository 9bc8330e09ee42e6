#!/usr/bin/env bash
# Wall time of `cachepart sim cachegrind --threads N` for several N on one
# trace: a synthetic one made here (deleted at exit), or TRACE=FILE.cpt.
# Needs only bash and the release binary; checks that every thread count
# prints the same nine totals as the first.
#
#   scripts/bench/cachegrind_threads.sh
#   CACHEPART=/path/to/cachepart THREADS="1 2 4 8 16" RUNS=5 scripts/bench/cachegrind_threads.sh
#   TRACE=gzip.cpt scripts/bench/cachegrind_threads.sh
#
# Environment (defaults in brackets):
#   CACHEPART  the binary [target/release/cachepart]
#   TRACE      a .cpt trace to use instead of the synthetic one
#   ACCESSES   the synthetic trace's references [100000000]
#   THREADS    thread counts, the first is the baseline ["1 2 4 8"]; an
#              entry N/D runs --threads N --decoders D (e.g. "1 1/2 2 2/4"),
#              a bare N takes cachepart's default decoders
#   RUNS       runs per thread count; the median is printed [3]
#   GEOMETRY   cachegrind's options
#              ["--I1 32768,8,64 --D1 32768,8,64 --LL 2097152,16,64"]
set -euo pipefail

CACHEPART=${CACHEPART:-target/release/cachepart}
ACCESSES=${ACCESSES:-100000000}
THREADS=${THREADS:-"1 2 4 8"}
RUNS=${RUNS:-3}
GEOMETRY=${GEOMETRY:-"--I1 32768,8,64 --D1 32768,8,64 --LL 2097152,16,64"}

if [[ ! -x $CACHEPART ]]; then
    echo "error: $CACHEPART is not an executable (build it: cargo build --release -p cachepart-cli, or set CACHEPART)" >&2
    exit 2
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/cachepart-cg-threads.XXXXXX")
trap 'rm -rf "$dir"' EXIT

if [[ -z ${TRACE:-} ]]; then
    # a data-only trace: zipf-skewed references over 4 MiB, 30% stores
    cat >"$dir/gen.toml" <<EOF
seed = 7
accesses = $ACCESSES
[mix]
accesses-per-instr = 0.3
store-fraction = 0.3
[pattern]
class = "cache-sensitive"
working-set-bytes = 4194304
distribution = "zipf"
EOF
    echo "generating $ACCESSES references into $dir/synth.cpt" >&2
    "$CACHEPART" trace generate -q "$dir/gen.toml" "$dir/synth.cpt" >&2
    TRACE=$dir/synth.cpt
fi

# seconds of wall time of one run, its JSON left in $dir/out-N.json
# ($1 is N or N/D; the files are named after it with / as _)
one_run() {
    local n=${1%%/*} tag=${1//\//_} start end
    local decoders=()
    [[ $1 == */* ]] && decoders=(--decoders "${1#*/}")
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$CACHEPART" sim cachegrind "$TRACE" $GEOMETRY --threads "$n" "${decoders[@]}" --format json \
        >"$dir/out-$tag.json" 2>"$dir/err-$tag.txt" || {
        cat "$dir/err-$tag.txt" >&2
        exit 1
    }
    end=$(date +%s.%N)
    echo "$start $end" | awk '{ printf "%.3f\n", $2 - $1 }'
}

# the sum of Ir, Dr and Dw in a JSON summary
references() {
    awk -F'[:,]' '/"(Ir|Dr|Dw)"/ { s += $2 } END { printf "%d\n", s }' "$1"
}

echo "trace: $TRACE"
echo "geometry: $GEOMETRY"
echo "runs per thread count: $RUNS (median shown); uptime: $(uptime)"
printf '%8s %9s %10s %12s %9s\n' threads decoders wall_s M_refs/s speedup
base=""
base_json=""
for n in $THREADS; do
    tag=${n//\//_}
    dec=default
    [[ $n == */* ]] && dec=${n#*/}
    times=()
    for ((r = 0; r < RUNS; r++)); do
        times+=("$(one_run "$n")")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    if [[ -z $base_json ]]; then
        base_json=$dir/base.json
        cp "$dir/out-$tag.json" "$base_json"
        base=$median
    elif ! cmp -s "$base_json" "$dir/out-$tag.json"; then
        echo "error: --threads $n gave other totals than --threads ${THREADS%% *}:" >&2
        diff "$base_json" "$dir/out-$tag.json" >&2 || true
        exit 1
    fi
    refs=$(references "$dir/out-$tag.json")
    awk -v n="${n%%/*}" -v d="$dec" -v t="$median" -v b="$base" -v r="$refs" \
        'BEGIN { printf "%8d %9s %10.3f %12.1f %8.2fx\n", n, d, t, r / t / 1e6, b / t }'
done
echo "uptime after: $(uptime)"
