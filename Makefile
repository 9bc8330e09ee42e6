# Everyday commands (GNU make; nothing else to install). `make help` lists them.

CARGO ?= cargo
PY := .venv/bin/python

.PHONY: help setup test check fmt lint clippy doc test-rust test-python bench bench-curves fuzz run experiments

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -e 's/:.*## /\t/'

setup: ## Debian packages, .venv (Python deps, ruff, mypy), the extension and the release CLI
	./scripts/setup.sh

test: ## everything: setup, fmt, clippy, docs, Rust and Python tests (scripts/test.sh)
	./scripts/test.sh

fmt: ## format the Rust code
	$(CARGO) fmt --all

lint: clippy ## clippy -D warnings, cargo fmt --check, ruff and mypy
	$(CARGO) fmt --all -- --check
	.venv/bin/ruff check python/
	.venv/bin/mypy

clippy: ## clippy over the workspace, warnings are errors
	$(CARGO) clippy --workspace --all-targets -- -D warnings

doc: ## API docs; broken intra-doc links are errors
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

test-rust: ## Rust tests (nextest when installed); ../shared must be there unless CACHEPART_ALLOW_MISSING_SHARED=1
	if $(CARGO) nextest --version >/dev/null 2>&1; then $(CARGO) nextest run --workspace && $(CARGO) test --workspace --doc; else $(CARGO) test --workspace; fi

test-python: ## pytest (warnings are errors) over python/tests
	$(PY) -m pytest -q python/tests

bench: ## the benchmarks (scripts/bench.sh)
	./scripts/bench.sh

bench-curves: ## curve throughput and SHARDS accuracy, synthetic traces only
	$(CARGO) run --release -p cachepart-curves --example bench_curves -- --quick

fuzz: ## the fuzz targets (scripts/fuzz.sh)
	./scripts/fuzz.sh

run: ## the default job on the built-in scenario (chart in out/)
	./scripts/run-default.sh

experiments: ## every experiment file, results into docs/experiments/
	./scripts/run-experiments.sh
