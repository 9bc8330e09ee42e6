#!/usr/bin/env bash
# Regenerates the built-in profile set (data/profiles/debian.csv) from
# scratch: makes deterministic inputs, captures nine Debian programs with
# valgrind lackey (`cachepart trace capture`), then runs each trace alone on
# the simulator at every way count (`cachepart profile from-trace`).
#
#   scripts/make-builtin-profiles.sh [WORKDIR]     (default: target/builtin-profiles)
#
# Environment:
#   CACHEPART   the cachepart binary (default: target/release/cachepart, built if missing)
#   PLATFORM    the simulated platform (default: platforms/xeon-gold-6138-small.toml)
#   SKIP_CAPTURE=1  reuse the traces already in WORKDIR
#   SKIP_PROFILE=1  capture only
#   TOOL        the capture route, lackey (default) or qemu (much faster)
#   WINDOW      instructions recorded per program (`trace capture
#               --instructions`; default 110000000, a tenth past the 10^8
#               that each profile run simulates, so the CSV is the same as
#               from whole runs); WINDOW=0 records whole runs
#
# The traces (up to hundreds of MB) stay in WORKDIR; only the CSV is committed.
# Needs: valgrind, xz-utils, bzip2, sqlite3, coreutils, grep, python3, mbw,
# sysbench (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${1:-target/builtin-profiles}
PLATFORM=${PLATFORM:-platforms/xeon-gold-6138-small.toml}
TOOL=${TOOL:-lackey}
WINDOW=${WINDOW:-110000000}
OUT=data/profiles/debian.csv
if [ -z "${CACHEPART:-}" ]; then
  CACHEPART=$ROOT/target/release/cachepart
  [ -x "$CACHEPART" ] || cargo build --release -q -p cachepart-cli
fi
PY=/usr/bin/python3
mkdir -p "$WORK"
cd "$WORK"
export LC_ALL=C

# --- deterministic inputs (seeded; the same bytes on every run) -----------
if [ ! -f words.txt ]; then
  "$PY" - <<'EOF'
import random
r = random.Random(20261122)
syll = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "an", "el", "or", "us", "ix", "em"]
def word():
    return "".join(r.choice(syll) for _ in range(r.randint(1, 4)))
# ~6 MB of text lines: random words with a skewed vocabulary.
vocab = [word() for _ in range(20000)]
with open("words.txt", "w") as f:
    size = 0
    while size < 6_000_000:
        line = " ".join(vocab[int(len(vocab) * r.random() ** 2)] for _ in range(r.randint(3, 9)))
        f.write(line + "\n")
        size += len(line) + 1
# 1.5 MB of random-key lines to sort (key, payload).
with open("sort.txt", "w") as f:
    for i in range(60000):
        f.write("%016x %s\n" % (r.getrandbits(64), vocab[r.randrange(len(vocab))]))
# sqlite workload: a table with an index, random inserts, indexed lookups.
with open("sqlite.sql", "w") as f:
    f.write("CREATE TABLE t(k INTEGER, v TEXT);\nCREATE INDEX tk ON t(k);\nBEGIN;\n")
    keys = [r.getrandbits(40) for _ in range(12000)]
    for k in keys:
        f.write("INSERT INTO t VALUES(%d, '%s');\n" % (k, vocab[r.randrange(len(vocab))] * 4))
    f.write("COMMIT;\n")
    for _ in range(6000):
        f.write("SELECT v FROM t WHERE k = %d;\n" % keys[r.randrange(len(keys))])
EOF
fi
head -c 120000 words.txt > xz-in.txt
head -c 300000 words.txt > bzip2-in.txt
head -c 6000000 words.txt > big.txt

capture() { # NAME CMD...
  local name=$1
  shift
  if [ -n "${SKIP_CAPTURE:-}" ] && [ -f "$name.cpt" ]; then return; fi
  echo "capture $name: $*" >&2
  local window=()
  [ "$WINDOW" = 0 ] || window=(--instructions "$WINDOW")
  "$CACHEPART" trace capture --tool "$TOOL" "${window[@]}" -o "$name.cpt" -- "$@" > /dev/null
}

# --- captures ------------------------------------------------------
capture xz xz -9 -T1 -c xz-in.txt
capture sort sort -S 64M sort.txt
capture sqlite3 sqlite3 -batch -init sqlite.sql :memory: .quit
capture bzip2 bzip2 -9 -c bzip2-in.txt
capture md5sum md5sum big.txt
capture grep grep -c -E 'ka(lo|mi)+ne' big.txt
capture python3 "$PY" -S -c 's=0
for i in range(150000): s += i*i % 7
print(s)'
# Two streaming programs: each sweeps buffers many times the LLC's size, so
# nothing it brings into the cache is used again from there.
# mbw's plain copy loop (b[i] = a[i], STREAM's copy kernel) over two 32 MiB
# arrays, 20 passes (compiled code, not glibc's CPU-dependent memcpy).
capture mbw mbw -q -n 20 -t1 32
# sysbench's sequential write test: one 32 MiB block rewritten 8 times.
capture sysbench sysbench memory --threads=1 --time=0 --rand-seed=1 \
  --memory-block-size=32M --memory-total-size=256M --memory-oper=write \
  --memory-access-mode=seq run

[ -n "${SKIP_PROFILE:-}" ] && exit 0

# --- profiles: every trace alone at 1..W ways --------------------------------
cd "$ROOT"
"$CACHEPART" profile from-trace --platform "$PLATFORM" --seed 1 \
  --base-cpi 0.5 --mlp 2 --instructions 100000000 \
  "$WORK/xz.cpt" "$WORK/sort.cpt" "$WORK/sqlite3.cpt" "$WORK/bzip2.cpt" \
  "$WORK/md5sum.cpt" "$WORK/grep.cpt" "$WORK/python3.cpt" \
  "$WORK/mbw.cpt" "$WORK/sysbench.cpt" \
  -o "$OUT"
echo "wrote $OUT" >&2
