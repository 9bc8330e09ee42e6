#!/usr/bin/env bash
# Sets up everything cachepart needs on a fresh Debian machine of this kind:
# Debian packages (fonts for charts), a Python virtualenv with the Python
# dependencies, the Python extension (maturin) and the release CLI.
# Idempotent: quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# A clean build and test run writes about 5 GiB (target/, .venv, pip's cache).
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [ -n "$free_kib" ] && [ "$free_kib" -lt $((6 * 1024 * 1024)) ]; then
  echo "setup: warning: only $((free_kib / 1024)) MiB free on the disk of $PWD; a clean build and test run needs about 5 GiB (pip and cargo fail with 'No space left on device' below that)" >&2
fi

need_apt=()
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
# valgrind (lackey, cachegrind) captures real programs' traces and is the peer the
# simulator is checked against; xz and sqlite3 are the real programs it runs.
command -v valgrind >/dev/null || need_apt+=(valgrind)
command -v xz >/dev/null || need_apt+=(xz-utils)
command -v sqlite3 >/dev/null || need_apt+=(sqlite3)
# bzip2, mbw and sysbench are programs of the built-in profile set
# (scripts/make-builtin-profiles.sh); mbw and sysbench are its streaming ones.
command -v bzip2 >/dev/null || need_apt+=(bzip2)
command -v mbw >/dev/null || need_apt+=(mbw)
command -v sysbench >/dev/null || need_apt+=(sysbench)
# qemu-user runs programs under cachepart's own TCG plugin (`trace capture --tool qemu`),
# which gcc builds on first use (qemu-user-static cannot load plugins).
command -v qemu-x86_64 >/dev/null || need_apt+=(qemu-user)
command -v gcc >/dev/null || need_apt+=(gcc)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian packages: ${need_apt[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: warning: missing Debian packages ${need_apt[*]} (run as root to install); charts and the tests against valgrind need them" >&2
  fi
fi

# chromium (headless) opens a sweep's HTML report in a test and screenshots it;
# installed without its recommends (no desktop, no sound).
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian's chromium (headless report test)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "setup: warning: chromium is missing (run as root to install); the report screenshot test needs it" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  python3 -m venv .venv
fi
# dask[distributed], pyarrow and tqdm run sweeps (cachepart.sweep, docs/sweeps.md).
# pycachesim is the peer simulator the sim crate's tests compare against.
if ! .venv/bin/python -c "import maturin, pandas, matplotlib, pytest, hypothesis, mypy, cachesim, pyarrow, distributed, tqdm, PIL" 2>/dev/null || ! [ -x .venv/bin/ruff ]; then
  echo "setup: installing Python packages into .venv" >&2
  .venv/bin/pip install -q --disable-pip-version-check --no-cache-dir "maturin>=1.5,<2" "pandas>=2" "matplotlib>=3.7" "pytest>=7" "hypothesis>=6" "mypy>=1.8" "pycachesim>=0.3" "pyarrow>=14" "dask[distributed]>=2024.1" "tqdm>=4.60" "pillow>=9" "ruff>=0.4"
fi

echo "setup: building the Python extension (release)" >&2
if ! VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" .venv/bin/maturin develop --release -q >.venv/maturin.log 2>&1 \
   || ! .venv/bin/python -c "import cachepart"; then
  cat .venv/maturin.log >&2
  echo "setup: the Python extension failed to build (log above)" >&2
  exit 1
fi

echo "setup: building the CLI (release)" >&2
cargo build --release -q -p cachepart-cli
echo "setup: done (CLI: target/release/cachepart, Python: .venv/bin/python -c 'import cachepart')" >&2
