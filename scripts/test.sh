#!/usr/bin/env bash
# Sets everything up, then runs every check and test: formatting, clippy,
# the API docs (no broken links),
# the Rust tests (unit, property, parity with PBBCache's reference outputs),
# ruff and mypy over python/, the Python tests (warnings are errors) and
# the type-stub check.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy -D warnings" >&2
cargo clippy -q --workspace --all-targets -- -D warnings
echo "== cargo doc (broken intra-doc links are errors)" >&2
RUSTDOCFLAGS="-D warnings" cargo doc -q --workspace --no-deps
echo "== Rust tests" >&2
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast
  cargo test -q --workspace --doc
else
  cargo test -q --workspace
fi
echo "== Python lint and types (ruff, mypy)" >&2
.venv/bin/ruff check python/
.venv/bin/mypy
echo "== Python tests" >&2
.venv/bin/python -m mypy.stubtest cachepart._core --ignore-missing-stub 2>&1 | tail -3
.venv/bin/python -m pytest -q python/tests
