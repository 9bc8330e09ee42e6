"""The kind names the library accepts, as ``typing.Literal`` types.

A parameter typed with one of these takes exactly the names listed; any
other name raises :class:`cachepart.UsageError` listing them. Each list is
the names of the Rust enum behind it, in its order (a test in
``crates/py/src/kinds.rs`` keeps them equal), so a type checker catches a
misspelt name before the call does:

>>> from typing import get_args
>>> from cachepart.kinds import CurveKind
>>> get_args(CurveKind)
('fully-associative', 'set-associative', 'colors', 'shards')
"""

from typing import Literal

#: The bandwidth model of the table-driven machine: KPart-style throttling
#: above the maximum bandwidth, or the queueing model on memory stalls.
BwModel = Literal["simple", "stalls"]

#: LFOC's class thresholds: the paper's or PBBCache's.
LfocPreset = Literal["paper", "pbbcache"]

#: The built-in data sets (metrics tables and their workloads).
BuiltinSet = Literal["debian", "parametric"]

#: Curve kinds: exact LRU at log-spaced sizes, at every way count, at every
#: color count, or the SHARDS estimate.
CurveKind = Literal["fully-associative", "set-associative", "colors", "shards"]

#: What a partition is counted in: LLC ways (CAT) or page colors.
Axis = Literal["ways", "colors"]

__all__ = ["Axis", "BuiltinSet", "BwModel", "CurveKind", "LfocPreset"]
