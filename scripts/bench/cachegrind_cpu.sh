#!/usr/bin/env bash
# CPU time (user + system) and wall time of `cachepart sim cachegrind
# --threads N` for two or more builds on one trace, the builds
# alternating within each round; prints the medians per build and thread
# count, and checks that every run printed the same totals. CPU seconds
# per reference is the figure a small shared machine can compare (its
# wall times move with other jobs).
#
#   scripts/bench/cachegrind_cpu.sh TRACE.cpt BIN_A BIN_B [BIN...]
#   ROUNDS=5 THREADS="1 2" scripts/bench/cachegrind_cpu.sh gzip9.cpt /tmp/main-cachepart target/release/cachepart
#
# Environment (defaults in brackets):
#   ROUNDS     rounds; each runs every build at every thread count once [5]
#   THREADS    thread counts ["1 2"]
#   GEOMETRY   cachegrind's options
#              ["--I1 32768,8,64 --D1 32768,8,64 --LL 2097152,16,64"]
#
# Needs GNU time (/usr/bin/time, Debian's `time` package).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-"1 2"}
GEOMETRY=${GEOMETRY:-"--I1 32768,8,64 --D1 32768,8,64 --LL 2097152,16,64"}

if (($# < 2)); then
    echo "usage: $0 TRACE.cpt BIN [BIN...]" >&2
    exit 2
fi
trace=$1
shift
[[ -x /usr/bin/time ]] || {
    echo "error: /usr/bin/time is missing (apt-get install time)" >&2
    exit 1
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/cachepart-cg-cpu.XXXXXX")
trap 'rm -rf "$dir"' EXIT

echo "trace: $trace"
echo "geometry: $GEOMETRY"
echo "uptime before: $(uptime)"
for ((r = 1; r <= ROUNDS; r++)); do
    for t in $THREADS; do
        for ((b = 1; b <= $#; b++)); do
            bin=${!b}
            # shellcheck disable=SC2086
            /usr/bin/time -f "$b $t %e %U %S" -a -o "$dir/times" \
                "$bin" sim cachegrind "$trace" $GEOMETRY --threads "$t" --format json \
                >"$dir/out.json" 2>"$dir/err.txt" || {
                cat "$dir/err.txt" >&2
                exit 1
            }
            if [[ ! -f $dir/want.json ]]; then
                cp "$dir/out.json" "$dir/want.json"
            elif ! cmp -s "$dir/want.json" "$dir/out.json"; then
                echo "error: $bin --threads $t printed other totals:" >&2
                diff "$dir/want.json" "$dir/out.json" >&2 || true
                exit 1
            fi
        done
    done
done
echo "uptime after: $(uptime)"
refs=$(awk -F'[:,]' '/"(Ir|Dr|Dw)"/ { s += $2 } END { printf "%d\n", s }' "$dir/want.json")
echo "references: $refs; every run printed the same totals"
printf '%-4s %-40s %7s %8s %7s %7s %7s %9s\n' build binary threads wall_s user_s sys_s cpu_s ns_cpu/ref
for ((b = 1; b <= $#; b++)); do
    for t in $THREADS; do
        awk -v b="$b" -v t="$t" -v bin="${!b}" -v refs="$refs" '
            function median(a, n,   i, j, x) {
                for (i = 2; i <= n; i++) {
                    x = a[i]
                    for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
                    a[j + 1] = x
                }
                return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
            }
            $1 == b && $2 == t { n++; w[n] = $3; u[n] = $4; s[n] = $5; c[n] = $4 + $5 }
            END {
                cpu = median(c, n)
                printf "%-4d %-40s %7d %8.3f %7.2f %7.2f %7.2f %9.2f\n", b, bin, t,
                    median(w, n), median(u, n), median(s, n), cpu, cpu / refs * 1e9
            }' "$dir/times"
    done
done
