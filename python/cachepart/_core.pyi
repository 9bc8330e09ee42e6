from typing import Any

from cachepart.kinds import Axis, BuiltinSet, BwModel, CurveKind, LfocPreset

__version__: str

class CachepartError(Exception): ...
class InputError(CachepartError): ...
class ConfigError(InputError): ...
class TraceError(InputError): ...
class SimulationError(CachepartError): ...
class ModelError(CachepartError): ...
class PolicyError(CachepartError): ...
class UsageError(CachepartError): ...
class ChartError(CachepartError): ...

def profile_evaluate(
    algorithms: list[str],
    metrics: str | None = None,
    workloads: str | None = None,
    mixes: list[list[str]] | None = None,
    ways: int | None = None,
    bw_model: BwModel = "simple",
    max_bw: float | None = None,
    plan: str | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
    lfoc_preset: LfocPreset = "paper",
    lfoc_max_streaming: int | None = None,
    lfoc_gaps_per_streaming: int | None = None,
    timings: bool = False,
    builtin: BuiltinSet = "debian",
) -> list[dict[str, Any]]:
    """Evaluates algorithms; returns the per-app rows as dicts.

    Kind parameters take the names of their type in :mod:`cachepart.kinds`; any other name
    raises ``UsageError`` listing them.
    """
def profile_classify(
    metrics: str | None = None,
    workloads: str | None = None,
    mixes: list[list[str]] | None = None,
    builtin: BuiltinSet = "debian",
    lfoc_preset: LfocPreset = "paper",
) -> list[dict[str, Any]]:
    """Classifies programs (LFOC Table 1); returns the rows as dicts.

    Kind parameters take the names of their type in :mod:`cachepart.kinds`; any other name
    raises ``UsageError`` listing them.
    """
def curves(
    trace: str,
    kind: CurveKind = "fully-associative",
    line: int = 64,
    ifetch: bool = False,
    min_size: int | None = None,
    max_size: int = 67108864,
    per_octave: int = 1,
    sets: int = 2048,
    ways: int = 16,
    page: int = 4096,
    rate: float | None = None,
    max_lines: int | None = None,
    adjust: bool = True,
    use_index: bool = True,
) -> str:
    """A miss-rate curve of a binary trace, as JSON text.

    ``kind`` takes the names of :data:`cachepart.kinds.CurveKind`; any other name raises
    ``UsageError`` listing them.
    """
def build_shards_index(trace: str, line: int = 64, ifetch: bool = False, exact_below: int = 256) -> str: ...
def stall_curve(
    trace: str,
    platform: str,
    axis: Axis = "ways",
    base_cpi: float = 1.0,
    mlp: float = 1.0,
    instructions: int | None = None,
    seed: int = 0,
) -> str:
    """The stall-rate curve of a trace on a simulated platform, as JSON text.

    ``axis`` takes the names of :data:`cachepart.kinds.Axis`; any other name raises
    ``UsageError`` listing them.
    """
def profile_from_traces(
    traces: list[str],
    platform: str,
    names: list[str] | None = None,
    base_cpi: float = 1.0,
    mlp: float = 1.0,
    instructions: int | None = None,
    warmup: int = 0,
    seed: int = 0,
) -> str: ...
def builtin_metrics_csv(set: BuiltinSet = "debian") -> str:
    """A built-in metrics table (PBBCache CSV text); another ``set`` raises ``UsageError``."""

def builtin_workloads(set: BuiltinSet = "debian") -> str:
    """A built-in set's workloads (one mix per line); another ``set`` raises ``UsageError``."""

def algorithms() -> list[str]: ...
def default_algorithms() -> list[str]: ...
def sim_run(
    scenario: str,
    seed: int | None = None,
    policy: str | None = None,
    alone: bool = True,
    set_keys: list[str] | None = None,
) -> tuple[str, str]: ...
def sim_platforms() -> list[tuple[str, str]]: ...
def sim_throttle(
    scenario: str,
    prefetchers: bool = False,
    keep: int = 3,
    max_runs: int = 512,
    seed: int | None = None,
    quantum: bool = False,
    quantum_run_cycles: int = 400000,
    coloring: bool = False,
) -> str: ...
def sim_cachegrind(
    trace: str,
    i1: str | None = None,
    d1: str | None = None,
    ll: str | None = None,
    platform: str | None = None,
    threads: int = 1,
    decoders: int | None = None,
) -> list[tuple[str, int]]: ...
