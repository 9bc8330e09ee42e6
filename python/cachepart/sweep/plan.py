"""The plan: a checked sweep file expanded into runs, each with a content hash.

Expansion is deterministic: the same file and the same input contents give
the same runs in the same order with the same hashes, on any machine. A
run's hash is the SHA-256 of the canonical JSON (sorted keys, no spaces) of
everything that determines its result: cachepart's version, the kind, the
*contents* (SHA-256) of its input files rather than their paths, the
mix, the algorithm or policy, every option, what is recorded, and the
labels its result rows carry. Moving the input files elsewhere keeps the
hashes; editing one changes them.

Order: metrics table (or scenario), then mix, then the option axes in file
order, then the algorithm. Random mixes are drawn without the ``random``
module: mix ``k`` of size ``n`` under seed ``s`` is the ``n`` programs of
the table with the smallest ``sha256("s:n:k:name")`` or, with repetition,
program ``sha256("s:n:k:j") mod P`` of the ``P`` sorted names at each
position ``j``; so a mix depends on nothing but those values and the
table's program names. The ``count`` mixes of a size and seed are the
first ``count`` different ones among draws ``k = 0, 1, 2, ...``: a draw
holding the same programs as an earlier one (in any order) is skipped,
so no mix is run, and counted in every mean, twice under two names.

Checks that need the engine run here, before anything is submitted: the
metrics tables and workload files are read by cachepart's own readers
(their errors name the file and line), mix sizes must fit the table, and
each ``bw-model`` and ``lfoc-preset`` value is tried once.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachepart import _core
from cachepart.sweep.spec import (
    BUILTIN_PREFIX,
    PROFILE_OPTIONS,
    SET_PREFIX,
    SIM_OPTIONS,
    SweepFileError,
    SweepSpec,
)
from cachepart.sweep.spec import load as load_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Bumped when the meaning of a run's content changes (old results are
#: then not reused).
PLAN_FORMAT = 1
#: Profile options whose values the plan tries on the engine once each
#: (per table: the ways it covers differ), so that a value every run
#: would fail on (``ways = 0``, ``max-bw = 0``, ``threads = 0``, an
#: unknown ``bw-model``) is refused before anything runs. ``plan`` is
#: left to the runs: it names the programs of each mix.
PROBED = (
    "ways",
    "bw-model",
    "max-bw",
    "time-limit",
    "threads",
    "lfoc-preset",
    "lfoc-max-streaming",
    "lfoc-gaps-per-streaming",
)
#: The most runs one sweep file may expand to: the plan holds every run
#: in memory (a few kilobytes each) before anything is submitted, so a
#: count typed with three zeros too many is refused rather than filling
#: the memory. Split a larger study into several sweep files.
MAX_RUNS = 1_000_000


@dataclass(frozen=True)
class Run:
    """One run of a sweep: what to call and what identifies it."""

    #: SHA-256 (hex) of ``content``'s canonical JSON.
    hash: str
    #: Position in the plan.
    index: int
    kind: str
    #: Everything that determines the result (hashed).
    content: dict[str, Any]
    #: Keyword arguments of the engine call (with file paths).
    call: dict[str, Any]
    #: Columns every result row of this run carries (part of ``content``).
    labels: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """A sweep's runs, in order."""

    spec: SweepSpec
    runs: list[Run]


def canonical_json(value: object) -> str:
    """The JSON text that is hashed: sorted keys, no whitespace, ASCII."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def content_hash(value: object) -> str:
    """SHA-256 (hex) of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


class _FileHashes:
    """SHA-256 of input files, each read once per plan."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        if path not in self._seen:
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            self._seen[path] = h.hexdigest()
        return self._seen[path]


def expand(spec_or_path: SweepSpec | str | os.PathLike[str]) -> Plan:
    """The runs of a sweep (a :class:`SweepSpec` or a sweep file path)."""
    spec = spec_or_path if isinstance(spec_or_path, SweepSpec) else load_spec(spec_or_path)
    runs = _profile_runs(spec) if spec.kind == "profile" else _sim_runs(spec)
    seen: dict[str, int] = {}
    for r in runs:
        if r.hash in seen:
            raise SweepFileError(
                spec.path,
                "axes",
                f"runs {seen[r.hash]} and {r.index} are the same run ({r.labels}): remove the repeated value",
            )
        seen[r.hash] = r.index
    return Plan(spec=spec, runs=runs)


def random_mix(names: Sequence[str], size: int, seed: int, k: int, repetition: bool = False) -> list[str]:
    """Mix ``k`` of ``size`` programs under ``seed`` (see the module doc)."""
    if repetition:
        pool = sorted(set(names))
        return [pool[int(hashlib.sha256(f"{seed}:{size}:{k}:{j}".encode()).hexdigest(), 16) % len(pool)] for j in range(size)]

    def rank(name: str) -> str:
        return hashlib.sha256(f"{seed}:{size}:{k}:{name}".encode()).hexdigest()

    return sorted(set(names), key=lambda n: (rank(n), n))[:size]


def random_mixes(names: Sequence[str], size: int, seed: int, count: int, repetition: bool = False) -> list[list[str]]:
    """The first ``count`` different mixes of ``size`` programs under
    ``seed``: draws ``0, 1, 2, ...`` of :func:`random_mix`, skipping one
    that holds the same programs as an earlier draw (in any order). The
    caller checks that the table has ``count`` different mixes."""
    seen: set[tuple[str, ...]] = set()
    out: list[list[str]] = []
    k = 0
    while len(out) < count:
        mix = random_mix(names, size, seed, k, repetition)
        k += 1
        key = tuple(sorted(mix))
        if key not in seen:
            seen.add(key)
            out.append(mix)
    return out


def _option_combinations(spec: SweepSpec, outer: str) -> list[dict[str, Any]]:
    """Every combination of the option axes but ``outer`` (``metrics`` or
    ``scenario``: the plan's outer loop, one table or scenario at a time)."""
    keys = [k for k in spec.axes if k != outer]
    return [dict(zip(keys, values)) for values in itertools.product(*(spec.axes[k] for k in keys))]


def _check_size(spec: SweepSpec, field: str, factors: list[tuple[str, int]]) -> None:
    """Refuses a plan of more than :data:`MAX_RUNS` runs before it is
    built; ``factors`` say what multiplies to its size."""
    total = math.prod(n for _, n in factors)
    if total > MAX_RUNS:
        what = " x ".join(f"{n} {name}" for name, n in factors)
        raise SweepFileError(
            spec.path,
            field,
            f"{what} = {total} runs, above the {MAX_RUNS} one sweep may have (split it into several sweep files)",
        )


def _axes_size(spec: SweepSpec, outer: str) -> list[tuple[str, int]]:
    return [(f"values of axes.{k}", len(v)) for k, v in spec.axes.items() if k != outer]


def _engine_error(spec: SweepSpec, field: str, e: Exception) -> SweepFileError:
    return SweepFileError(spec.path, field, str(e))


def _table_label(metrics: str) -> str:
    return metrics if metrics.startswith(BUILTIN_PREFIX) else os.path.basename(metrics)


def _table_kwargs(metrics: str) -> dict[str, Any]:
    if metrics.startswith(BUILTIN_PREFIX):
        return {"builtin": metrics[len(BUILTIN_PREFIX):]}
    return {"metrics": metrics}


def _profile_runs(spec: SweepSpec) -> list[Run]:
    import cachepart.profile as cp

    files = _FileHashes()
    tables = spec.axes.get("metrics", [spec.base.get("metrics", "builtin:debian")])
    table_field = "axes.metrics" if "metrics" in spec.axes else "base.metrics"
    rm = spec.random_mixes
    if rm is not None:
        _check_size(
            spec,
            "axes.random-mixes.count",
            [
                ("tables", len(tables)),
                ("seeds", len(rm.seeds)),
                ("sizes", len(rm.apps)),
                ("mixes", rm.count),
                *_axes_size(spec, "metrics"),
                ("algorithms", len(spec.algorithms)),
            ],
        )
    else:
        _check_size(spec, "axes", [("tables", len(tables)), *_axes_size(spec, "metrics"), ("algorithms", len(spec.algorithms))])
    combos = _option_combinations(spec, "metrics")
    engine = _core.__version__
    runs: list[Run] = []
    for ti, table in enumerate(tables):
        tfield = f"{table_field}[{ti}]" if table_field == "axes.metrics" else table_field
        if table.startswith(BUILTIN_PREFIX):
            try:
                text = _core.builtin_metrics_csv(table[len(BUILTIN_PREFIX):])
            except _core.CachepartError as e:
                raise _engine_error(spec, tfield, e) from None
            table_id = {"builtin": table[len(BUILTIN_PREFIX):], "sha256": hashlib.sha256(text.encode()).hexdigest()}
        else:
            table_id = {"sha256": files(table)}
        try:
            names = sorted(cp.classify(**_table_kwargs(table))["app"].unique())
        except _core.CachepartError as e:
            raise _engine_error(spec, tfield, e) from None
        _probe(spec, table, names[0])
        mixes: list[tuple[dict[str, Any], list[str]]] = []
        for wi, wfile in enumerate(spec.workloads):
            try:
                df = cp.evaluate(algorithms=["stock"], workloads=wfile, **_table_kwargs(table))
            except _core.CachepartError as e:
                raise _engine_error(spec, f"axes.workloads[{wi}]", e) from None
            for wname, g in df.groupby("workload", sort=False):
                mixes.append(
                    (
                        {"mix": f"{wfile.stem}:{wname}", "mix_source": wfile.name, "mix_seed": None},
                        list(g.sort_values("app_index")["app"]),
                    )
                )
        if rm is not None:
            for size in rm.apps:
                if size > len(names) and not rm.repetition:
                    raise SweepFileError(
                        spec.path,
                        "axes.random-mixes.apps",
                        f"mixes of {size} programs, but {_table_label(table)} has {len(names)} (set repetition = true?)",
                    )
                # mixes as sets of programs, or as multisets with repetition
                distinct = math.comb(len(names) + size - 1, size) if rm.repetition else math.comb(len(names), size)
                if rm.count > distinct:
                    # more draws than mixes: some would be the same mix twice
                    # under two names, counted twice in every mean
                    raise SweepFileError(
                        spec.path,
                        "axes.random-mixes.count",
                        f"{rm.count} mixes of {size} programs, but {_table_label(table)} has {len(names)} programs: "
                        f"only {distinct} different mix{'es' if distinct != 1 else ''} of {size}"
                        + (" (lower count)" if rm.repetition else " (lower count, or set repetition = true)"),
                    )
        _check_size(
            spec,
            "axes.workloads" if spec.workloads else "axes.random-mixes.count",
            [
                ("tables", len(tables)),
                ("mixes", len(mixes) + (rm.count * len(rm.seeds) * len(rm.apps) if rm else 0)),
                *_axes_size(spec, "metrics"),
                ("algorithms", len(spec.algorithms)),
            ],
        )
        if rm is not None:
            for seed in rm.seeds:
                for size in rm.apps:
                    for k, apps in enumerate(random_mixes(names, size, seed, rm.count, rm.repetition)):
                        mixes.append(({"mix": f"r{size}-s{seed}-{k}", "mix_source": "random", "mix_seed": seed}, apps))
        for labels, apps in mixes:
            for combo in combos:
                options = {**spec.base, **combo}
                options.pop("metrics", None)
                kwargs = {PROFILE_OPTIONS[k][0]: v for k, v in options.items()}
                axis_labels = {PROFILE_OPTIONS[k][0]: v for k, v in combo.items() if k != "metrics"}
                for alg in spec.algorithms:
                    row_labels = {
                        **labels,
                        "table": _table_label(table),
                        **axis_labels,
                        "algorithm": alg,
                    }
                    content = {
                        "format": PLAN_FORMAT,
                        "engine": engine,
                        "kind": "profile",
                        "table": table_id,
                        "apps": apps,
                        "algorithm": alg,
                        "options": kwargs,
                        "record": spec.record,
                        "labels": row_labels,
                    }
                    call = {
                        "algorithms": [alg],
                        "mixes": [apps],
                        **_table_kwargs(table),
                        **kwargs,
                        "timings": spec.record.get("timings", False),
                    }
                    runs.append(Run(content_hash(content), len(runs), "profile", content, call, row_labels))
    return runs


def _probe(spec: SweepSpec, table: str, app: str) -> None:
    """Tries each bw-model and lfoc-preset value once on the engine."""
    import cachepart.profile as cp

    for key in PROBED:
        if key in spec.axes:
            places = [(f"axes.{key}[{i}]", v) for i, v in enumerate(spec.axes[key])]
        elif key in spec.base:
            places = [(f"base.{key}", spec.base[key])]
        else:
            continue
        for where, value in places:
            try:
                cp.evaluate(algorithms=["stock"], mixes=[[app]], **_table_kwargs(table), **{PROFILE_OPTIONS[key][0]: value})
            except _core.UsageError as e:
                raise _engine_error(spec, where, e) from None


def scenario_inputs(scenario: str, files: _FileHashes | None = None) -> dict[str, str]:
    """SHA-256 of a scenario file and of every file it names (any string
    value that is a file relative to the scenario's directory, or an
    absolute one): ``{"": scenario's hash, "VALUE": file's hash, ...}``."""
    files = files or _FileHashes()
    out = {"": files(scenario)}
    with open(scenario, "rb") as f:
        doc = tomllib.load(f)
    base = Path(scenario).parent

    def walk(v: object) -> None:
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str) and v:
            p = base / v
            if p.is_file():
                out[v] = files(str(p))

    walk(doc)
    return out


def _sim_runs(spec: SweepSpec) -> list[Run]:
    files = _FileHashes()
    scenarios = spec.axes.get("scenario", [spec.base.get("scenario")])
    _check_size(spec, "axes", [("scenarios", len(scenarios)), *_axes_size(spec, "scenario")])
    combos = _option_combinations(spec, "scenario")
    engine = _core.__version__
    runs: list[Run] = []
    for si, scenario in enumerate(scenarios):
        where = f"axes.scenario[{si}]" if "scenario" in spec.axes else "base.scenario"
        try:
            inputs = scenario_inputs(scenario, files)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise SweepFileError(spec.path, where, f"{scenario}: {e}") from None
        for combo in combos:
            options = {**spec.base, **combo}
            options.pop("scenario", None)
            # platform and set.KEY are scenario keys: sim.run's overrides
            overrides = {k[len(SET_PREFIX):]: v for k, v in options.items() if k.startswith(SET_PREFIX)}
            if "platform" in options:
                overrides = {"platform": options["platform"], **overrides}
            kwargs: dict[str, Any] = {
                SIM_OPTIONS[k][0]: v for k, v in options.items() if k in SIM_OPTIONS and k != "platform"
            }
            if overrides:
                kwargs["overrides"] = overrides
            labels = {
                "scenario": os.path.basename(scenario),
                **{
                    (k if k.startswith(SET_PREFIX) else SIM_OPTIONS[k][0]): v
                    for k, v in combo.items()
                    if k != "scenario"
                },
            }
            platform = overrides.get("platform")
            platform_file = (
                {"platform": files(platform)} if isinstance(platform, str) and os.path.isfile(platform) else {}
            )
            content = {
                "format": PLAN_FORMAT,
                "engine": engine,
                "kind": "sim",
                "scenario": {**inputs, **platform_file},
                "options": kwargs,
                "record": spec.record,
                "labels": labels,
            }
            call = {"scenario": scenario, **kwargs}
            runs.append(Run(content_hash(content), len(runs), "sim", content, call, labels))
    return runs
