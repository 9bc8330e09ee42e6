"""cachepart: compare and enforce last-level-cache partitioning policies.

The Rust core does the work; this package turns its results into pandas
DataFrames and plots.

>>> import cachepart.profile as cp
>>> df = cp.evaluate(algorithms=["stock", "lfoc"])   # built-in default data
"""

from cachepart import curves, kinds, profile, sim
from cachepart._core import (
    CachepartError,
    ChartError,
    ConfigError,
    InputError,
    ModelError,
    PolicyError,
    SimulationError,
    TraceError,
    UsageError,
    __version__,
    algorithms,
)

__all__ = [
    "CachepartError",
    "ChartError",
    "ConfigError",
    "InputError",
    "ModelError",
    "PolicyError",
    "SimulationError",
    "TraceError",
    "UsageError",
    "__version__",
    "algorithms",
    "curves",
    "kinds",
    "profile",
    "sim",
]
