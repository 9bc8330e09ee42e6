"""The sweep file: parsing and checking a TOML sweep description.

A sweep file names a *base* (a profile evaluation, or a simulator scenario),
the *axes* it is repeated over, and what to *record*. This module owns the
file format only: it reads the file, checks every field's type and value
(file fields must exist; algorithm names must be cachepart's), and returns a
:class:`SweepSpec`. Expanding it into runs is :mod:`cachepart.sweep.plan`.
Every error is a :class:`SweepFileError` naming the file and the field
(``axes.algorithms[2]``).

Keys are kebab-case, as in scenario files. See docs/sweeps.md for the format.
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Union

from cachepart import _core, _guard

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

PathLike = Union[str, "os.PathLike[str]"]

#: The kinds of base a sweep can have.
KINDS = ("profile", "sim")
#: ``metrics`` values naming a built-in table rather than a file.
BUILTIN_PREFIX = "builtin:"


class SweepFileError(_core.InputError):
    """A sweep file that can not be read or has a bad field. ``file`` and
    ``field`` say where (``field`` is None for a file that is not TOML)."""

    def __init__(self, file: PathLike, field: str | None, message: str) -> None:
        self.file = os.fspath(file)
        self.field = field
        where = f"{self.file}: {field}" if field else self.file
        super().__init__(f"{where}: {message}")


def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v: object) -> bool:
    return (isinstance(v, (int, float))) and not isinstance(v, bool)


def _check_int(v: object) -> str | None:
    return None if _int(v) and v >= 0 else "expected a whole number of at least 0"  # type: ignore[operator]


def _check_number(v: object) -> str | None:
    # nan and inf are refused here: they can not be hashed (canonical JSON)
    # and no option takes them
    ok = _number(v) and math.isfinite(v) and v >= 0  # type: ignore[arg-type,operator]
    return None if ok else "expected a finite number of at least 0"


def _check_str(v: object) -> str | None:
    return None if isinstance(v, str) and v else "expected a non-empty string"


def _check_bool(v: object) -> str | None:
    return None if isinstance(v, bool) else "expected true or false"


def _check_path(v: object) -> str | None:
    return None if isinstance(v, str) and v else "expected a file path (a string)"


#: The options of a profile base: sweep-file key -> (Python keyword of
#: :func:`cachepart.profile.evaluate`, type check). ``metrics`` is a file
#: or ``builtin:NAME``.
PROFILE_OPTIONS: dict[str, tuple[str, Callable[[object], str | None]]] = {
    "metrics": ("metrics", _check_path),
    "ways": ("ways", _check_int),
    "bw-model": ("bw_model", _check_str),
    "max-bw": ("max_bw", _check_number),
    "plan": ("plan", _check_str),
    "time-limit": ("time_limit", _check_number),
    "threads": ("threads", _check_int),
    "lfoc-preset": ("lfoc_preset", _check_str),
    "lfoc-max-streaming": ("lfoc_max_streaming", _check_int),
    "lfoc-gaps-per-streaming": ("lfoc_gaps_per_streaming", _check_int),
}

def _check_toml(v: object) -> str | None:
    if isinstance(v, float) and not math.isfinite(v):
        # the scenario's --set refuses it too, and a run's hash can not hold it
        return f"expected a finite number ({v!r} is not; a value set here must be finite)"
    if isinstance(v, (bool, int, float, str)):
        return None
    if isinstance(v, list):
        return next((p for p in map(_check_toml, v) if p), None)
    if isinstance(v, dict):
        return next((p for p in map(_check_toml, v.values()) if p), None)
    return "expected a TOML value (string, number, boolean, array or table)"


#: The options of a simulator base: sweep-file key -> (keyword of
#: :func:`cachepart.sim.run` or ``scenario``, type check). ``platform``
#: (a built-in name or a platform file) and ``set.KEY`` (any key of the
#: scenario, written ``[base.set]`` / ``[axes.set]``) become
#: :func:`cachepart.sim.run`'s ``overrides``.
SIM_OPTIONS: dict[str, tuple[str, Callable[[object], str | None]]] = {
    "scenario": ("scenario", _check_path),
    "seed": ("seed", _check_int),
    "policy": ("policy", _check_str),
    "alone": ("alone", _check_bool),
    "platform": ("platform", _check_str),
}
#: The prefix of the option that sets one scenario key.
SET_PREFIX = "set."
_KEY_PART = re.compile(r"^[A-Za-z0-9_-]+$")

#: Keys of ``[record]`` per kind.
RECORD_KEYS = {"profile": ("timings",), "sim": ("samples",)}


@dataclass(frozen=True)
class RandomMixes:
    """``[axes.random-mixes]``: ``count`` mixes of each size in ``apps``
    for each seed in ``seeds``, drawn from the programs of the run's
    metrics table, without repetition unless ``repetition`` (then a
    program may appear several times in a mix, as in LFOC's study)."""

    apps: tuple[int, ...]
    count: int
    seeds: tuple[int, ...]
    repetition: bool = False


@dataclass(frozen=True)
class SweepSpec:
    """A checked sweep file. Paths are absolute (relative ones are taken
    from the sweep file's directory); option keys are kebab-case."""

    path: Path
    name: str
    kind: str
    #: The base's options (one value each).
    base: dict[str, Any]
    #: The option axes: key -> the values it takes, in file order.
    axes: dict[str, list[Any]]
    #: Profile sweeps: the algorithms (one run each).
    algorithms: tuple[str, ...] = ()
    #: Profile sweeps: workload files (every mix of each is a run).
    workloads: tuple[Path, ...] = ()
    #: Profile sweeps: generated mixes.
    random_mixes: RandomMixes | None = None
    #: ``[record]``: what each run keeps beyond its per-app rows.
    record: dict[str, bool] = field(default_factory=dict)


def _flatten(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A ``[set]`` table's keys, dotted: ``{"timing": {"x": 1}}`` gives
    ``("timing.x", 1)``; a dotted TOML key gives the same."""
    out: list[tuple[str, Any]] = []
    for k, v in table.items():
        if isinstance(v, dict):
            out.extend(_flatten(v, f"{prefix}{k}."))
        else:
            out.append((prefix + k, v))
    return out


def _is_path(value: str) -> bool:
    """Whether a ``platform`` value names a file (else a built-in name)."""
    return "/" in value or value.endswith(".toml")


def _resolve(base_dir: Path, value: str) -> str:
    if value.startswith(BUILTIN_PREFIX):
        return value
    p = Path(os.path.expanduser(value))
    return str(p if p.is_absolute() else (base_dir / p).resolve())


def _check_file(file: Path, where: str, value: str) -> None:
    if value.startswith(BUILTIN_PREFIX):
        return
    if not os.path.isfile(value):
        raise SweepFileError(file, where, f"no such file {value!r}")


def load(path: PathLike) -> SweepSpec:
    """Reads and checks a sweep file; raises :class:`SweepFileError`
    naming the file and the field on the first problem."""
    file = Path(_guard.path(path, "sweep file"))
    try:
        with open(file, "rb") as f:
            doc = tomllib.load(f)
    except OSError as e:
        raise SweepFileError(file, None, f"can not read it: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        # a binary file (a trace, a results file) given by mistake
        raise SweepFileError(file, None, f"not valid TOML: not UTF-8 text (byte {e.start}: {e.reason})") from None
    except tomllib.TOMLDecodeError as e:
        raise SweepFileError(file, None, f"not valid TOML: {e}") from None
    return from_dict(doc, file)


def from_dict(doc: dict[str, Any], file: Path) -> SweepSpec:
    """Checks a parsed sweep document (``file`` names it in errors and
    anchors its relative paths)."""
    file = Path(file)
    base_dir = file.resolve().parent
    unknown = sorted(set(doc) - {"sweep", "base", "axes", "record"})
    if unknown:
        raise SweepFileError(file, unknown[0], "unknown section (expected sweep, base, axes, record)")
    sweep = _table(doc, "sweep", file)
    for k in sweep:
        if k not in ("kind", "name"):
            raise SweepFileError(file, f"sweep.{k}", "unknown key (expected kind, name)")
    kind = sweep.get("kind", "profile")
    if kind not in KINDS:
        raise SweepFileError(file, "sweep.kind", f"{kind!r}: expected one of {', '.join(KINDS)}")
    name = sweep.get("name", file.stem)
    if not isinstance(name, str) or not name:
        raise SweepFileError(file, "sweep.name", "expected a non-empty string")
    if "/" in name or "\0" in name or name in (".", ".."):
        # it names the default results directory, NAME-results, here
        raise SweepFileError(file, "sweep.name", f"{name!r}: expected a name without '/' (the default results directory is NAME-results)")
    options = PROFILE_OPTIONS if kind == "profile" else SIM_OPTIONS
    path_keys = ("metrics",) if kind == "profile" else ("scenario",)

    def option(key: str, value: object, where: str) -> object:
        if kind == "sim" and key.startswith(SET_PREFIX):
            name = key[len(SET_PREFIX):]
            if not all(_KEY_PART.match(part) for part in name.split(".")):
                raise SweepFileError(file, where, f"{name!r}: expected a dotted scenario key such as lfoc-online.window-instructions")
            problem = _check_toml(value)
            if problem:
                raise SweepFileError(file, where, f"{value!r}: {problem}")
            return value
        if kind == "sim" and key == "platform" and isinstance(value, str) and _is_path(value):
            value = _resolve(base_dir, value)
            _check_file(file, where, value)
            return value
        if key not in options:
            raise SweepFileError(file, where, f"unknown option for a {kind} sweep (expected one of {', '.join(options)})")
        problem = options[key][1](value)
        if problem:
            raise SweepFileError(file, where, f"{value!r}: {problem}")
        if key in path_keys:
            assert isinstance(value, str)
            value = _resolve(base_dir, value)
            _check_file(file, where, value)
        return value

    base_doc = dict(_table(doc, "base", file))
    axes_doc = dict(_table(doc, "axes", file))
    if kind == "sim":
        # [base.set] and [axes.set]: one option per scenario key.
        for section, d in (("base", base_doc), ("axes", axes_doc)):
            sets = d.pop("set", {})
            if not isinstance(sets, dict):
                raise SweepFileError(file, f"{section}.set", "expected a table of scenario keys ([" + section + ".set])")
            for k, v in _flatten(sets):
                if SET_PREFIX + k in d:
                    # "a.b" = ... and a.b = ... (or [section.set.a]) are two
                    # TOML keys but one scenario key: one would be lost
                    raise SweepFileError(file, f"{section}.set.{k}", "given twice (as a quoted dotted key and as a table): give it once")
                d[SET_PREFIX + k] = v
    base = {k: option(k, v, f"base.{k}") for k, v in base_doc.items()}

    algorithms: tuple[str, ...] = ()
    workloads: tuple[Path, ...] = ()
    random_mixes = None
    if kind == "profile":
        algorithms = tuple(_algorithms(axes_doc.pop("algorithms", None), file))
        workloads = tuple(Path(p) for p in _workload_files(axes_doc.pop("workloads", None), file, base_dir))
        rm = axes_doc.pop("random-mixes", None)
        if rm is not None:
            random_mixes = _random_mixes(rm, file)
        if not workloads and random_mixes is None:
            raise SweepFileError(file, "axes", "a profile sweep needs mixes: axes.workloads or axes.random-mixes")
    axes: dict[str, list[Any]] = {}
    for k, values in axes_doc.items():
        where = f"axes.{k}"
        if k not in options and not (kind == "sim" and k.startswith(SET_PREFIX)):
            special = ", algorithms, workloads, random-mixes" if kind == "profile" else ", set"
            raise SweepFileError(file, where, f"unknown axis for a {kind} sweep (expected one of {', '.join(options)}{special})")
        if not isinstance(values, list) or not values:
            raise SweepFileError(file, where, "expected a non-empty list of values")
        if k in base:
            raise SweepFileError(file, where, f"also set in base.{k}: give it in one place")
        checked = [option(k, v, f"{where}[{i}]") for i, v in enumerate(values)]
        _no_repeats(checked, file, where)
        axes[k] = checked
    if kind == "sim" and "scenario" not in base and "scenario" not in axes:
        raise SweepFileError(file, "base.scenario", "a sim sweep needs a scenario file (base.scenario or axes.scenario)")

    record_doc = _table(doc, "record", file)
    record: dict[str, bool] = {}
    for k, v in record_doc.items():
        if k not in RECORD_KEYS[kind]:
            raise SweepFileError(file, f"record.{k}", f"unknown key for a {kind} sweep (expected {', '.join(RECORD_KEYS[kind])})")
        if not isinstance(v, bool):
            raise SweepFileError(file, f"record.{k}", f"{v!r}: expected true or false")
        record[k] = v
    return SweepSpec(
        path=file,
        name=name,
        kind=kind,
        base=base,
        axes=axes,
        algorithms=algorithms,
        workloads=workloads,
        random_mixes=random_mixes,
        record=record,
    )


def _table(doc: dict[str, Any], key: str, file: Path) -> dict[str, Any]:
    t = doc.get(key, {})
    if not isinstance(t, dict):
        raise SweepFileError(file, key, "expected a table ([" + key + "])")
    return t


def _same_key(v: object) -> object:
    """What makes two values the same point of an axis: equal numbers
    (``1000`` and ``1000.0``) are, a number and a boolean are not; lists
    and tables compare element by element."""
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float)):
        return ("number", v)
    if isinstance(v, list):
        return ("list", tuple(_same_key(x) for x in v))
    if isinstance(v, dict):
        return ("table", tuple((k, _same_key(v[k])) for k in sorted(v)))
    return ("other", repr(v))


def _no_repeats(values: list[Any], file: Path, where: str) -> None:
    seen: dict[object, int] = {}
    for i, v in enumerate(values):
        k = _same_key(v)
        if k in seen:
            raise SweepFileError(file, f"{where}[{i}]", f"{v!r} is repeated (as [{seen[k]}])")
        seen[k] = i


def _algorithms(value: object, file: Path) -> list[str]:
    where = "axes.algorithms"
    if value is None:
        raise SweepFileError(file, where, "missing: a profile sweep needs a list of algorithms")
    if not isinstance(value, list) or not value:
        raise SweepFileError(file, where, "expected a non-empty list of algorithm names")
    known = set(_core.algorithms())
    for i, a in enumerate(value):
        if not isinstance(a, str):
            raise SweepFileError(file, f"{where}[{i}]", f"{a!r}: expected an algorithm name (a string)")
        if a not in known:
            raise SweepFileError(
                file, f"{where}[{i}]", f"unknown algorithm {a!r} (known: {', '.join(sorted(known))})"
            )
    _no_repeats(value, file, where)
    return value


def _workload_files(value: object, file: Path, base_dir: Path) -> list[str]:
    where = "axes.workloads"
    if value is None:
        return []
    if not isinstance(value, list) or not value:
        raise SweepFileError(file, where, "expected a non-empty list of workload files")
    out = []
    for i, p in enumerate(value):
        if not isinstance(p, str) or not p:
            raise SweepFileError(file, f"{where}[{i}]", f"{p!r}: expected a file path (a string)")
        r = _resolve(base_dir, p)
        if r.startswith(BUILTIN_PREFIX):
            raise SweepFileError(file, f"{where}[{i}]", "expected a file (built-in workloads are not an axis)")
        _check_file(file, f"{where}[{i}]", r)
        out.append(r)
    _no_repeats(out, file, where)
    return out


def _random_mixes(value: object, file: Path) -> RandomMixes:
    where = "axes.random-mixes"
    if not isinstance(value, dict):
        raise SweepFileError(file, where, "expected a table with apps, count and seeds")
    for k in value:
        if k not in ("apps", "count", "seeds", "repetition"):
            raise SweepFileError(file, f"{where}.{k}", "unknown key (expected apps, count, seeds, repetition)")
    apps = value.get("apps")
    if not isinstance(apps, list) or not apps or not all(_int(a) and a >= 1 for a in apps):
        raise SweepFileError(file, f"{where}.apps", f"{apps!r}: expected a non-empty list of mix sizes >= 1")
    _no_repeats(apps, file, f"{where}.apps")
    count = value.get("count")
    if not _int(count) or count < 1:  # type: ignore[operator]
        raise SweepFileError(file, f"{where}.count", f"{count!r}: expected a whole number >= 1")
    seeds = value.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(_int(s) and s >= 0 for s in seeds):
        raise SweepFileError(file, f"{where}.seeds", f"{seeds!r}: expected a non-empty list of seeds >= 0")
    _no_repeats(seeds, file, f"{where}.seeds")
    repetition = value.get("repetition", False)
    if not isinstance(repetition, bool):
        raise SweepFileError(file, f"{where}.repetition", f"{repetition!r}: expected true or false")
    return RandomMixes(apps=tuple(apps), count=int(count), seeds=tuple(seeds), repetition=repetition)  # type: ignore[arg-type]
