"""The kind names as Literal types (cachepart.kinds): what the wrappers
expose at run time, and that a type checker refuses a misspelt name."""

from __future__ import annotations

from typing import get_args

import pytest

import cachepart
import cachepart.curves as cc
from cachepart import kinds


def test_the_wrappers_tuples_are_the_literal_names():
    assert cc.KINDS == get_args(kinds.CurveKind)
    assert cc.AXES == get_args(kinds.Axis)


def test_the_core_refuses_every_name_outside_the_literal():
    # The literal's names are what the core accepts: one outside it is refused
    # with the names listed.
    for name in get_args(kinds.BuiltinSet):
        assert cachepart.profile.builtin_metrics_csv(name).startswith("BENCH")
    with pytest.raises(cachepart.UsageError, match="debian"):
        cachepart.profile.builtin_metrics_csv("debain")  # type: ignore[arg-type]


def test_mypy_refuses_a_misspelt_kind(tmp_path):
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "use.py"
    snippet.write_text(
        "import cachepart.curves as cc\n"
        "import cachepart.profile as cp\n"
        'cc.miss_curve("app.cpt", kind="shards")\n'
        'cc.miss_curve("app.cpt", kind="shard")\n'
        'cp.evaluate(bw_model="stall")\n'
    )
    out, _, status = api.run([str(snippet), "--no-incremental", "--cache-dir", str(tmp_path / "cache")])
    assert status == 1, out
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert [e.split(":")[1] for e in errors] == ["4", "5"], out
    assert "Literal" in errors[0] and "shard" in errors[0]
