import pathlib
import subprocess

import pytest

import cachepart
import cachepart.curves as cc

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = ROOT / "target" / "release" / "cachepart"


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    if not CLI.exists():
        pytest.skip(f"{CLI} not built (run ./scripts/setup.sh)")
    d = tmp_path_factory.mktemp("traces")
    cfg = d / "ws.toml"
    # uniform random accesses over a 256 KiB working set
    cfg.write_text(
        'seed = 7\naccesses = 200000\n[pattern]\nclass = "cache-sensitive"\n'
        'working-set-bytes = 262144\ndistribution = "uniform"\n'
    )
    out = d / "ws.cpt"
    subprocess.run([str(CLI), "trace", "generate", str(cfg), str(out)], check=True, capture_output=True)
    return out


def test_exact_curve_shape(trace):
    df = cc.miss_curve(trace)
    assert list(df.columns) == ["size_bytes", "misses", "miss_ratio", "mpki"]
    assert df["misses"].is_monotonic_decreasing
    small = df.loc[df["size_bytes"] == 64 << 10, "miss_ratio"].iloc[0]
    # uniform over 256 KiB: a 64 KiB LRU cache hits about a quarter of the time
    assert 0.70 < small < 0.80
    big = df.loc[df["size_bytes"] >= 256 << 10, "misses"]
    assert (big == big.iloc[0]).all()  # only cold misses once it fits
    assert df.attrs["accesses"] == 200000


def test_shards_close_to_exact(trace):
    exact = cc.miss_curve(trace)
    est = cc.miss_curve(trace, kind="shards", rate=0.1)
    assert est.attrs["sampling"]["sampled_refs"] > 0
    assert cc.mean_absolute_error(exact, est) < 0.05


def test_shards_sample_index(trace, tmp_path):
    # A copy, so the module's trace keeps no index.
    t = tmp_path / "copy.cpt"
    t.write_bytes(trace.read_bytes())
    before = cc.miss_curve(t, kind="shards", rate=0.01)
    assert before.attrs["sampling"]["index"] is None
    summary = cc.build_shards_index(t)
    assert pathlib.Path(summary["path"]) == tmp_path / "copy.cpt.shards"
    assert 0 < summary["sampled_refs"] < summary["accesses"] == 200000
    after = cc.miss_curve(t, kind="shards", rate=0.01)
    assert after.attrs["sampling"]["index"] == summary["path"]
    # The index gives the pass's estimate exactly.
    assert after.equals(before)
    skipped = cc.miss_curve(t, kind="shards", rate=0.1)
    assert skipped.attrs["sampling"]["index"] is None
    assert "base rate" in skipped.attrs["sampling"]["index_skipped"]
    with pytest.raises(Exception, match="copy.cpt.shards"):
        pathlib.Path(summary["path"]).write_bytes(b"garbage" * 40)
        cc.miss_curve(t, kind="shards", rate=0.01)


def test_way_curve_and_plot(trace, tmp_path):
    ways = cc.miss_curve(trace, kind="set-associative", sets=256, ways=16)
    assert len(ways) == 16
    assert ways["misses"].is_monotonic_decreasing
    # each point says its way count (256 sets x 64 B per way)
    assert list(ways["ways"]) == list(range(1, 17))
    assert (ways["size_bytes"] == ways["ways"] * 256 * 64).all()
    colors = cc.miss_curve(trace, kind="colors", sets=256, ways=16)
    assert list(colors["colors"]) == list(range(1, len(colors) + 1))
    assert "ways" not in colors and "colors" not in cc.miss_curve(trace)
    out = tmp_path / "c.png"
    fig = cc.plot_curves({"ways": ways}, out)
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert fig.axes[0].get_xlabel() == "ways allotted"
    assert cc.plot_curves({"c": colors}).axes[0].get_xlabel() == "colors allotted"


def test_errors(tmp_path):
    bad = tmp_path / "x.cpt"
    bad.write_bytes(b"not a trace at all")
    with pytest.raises(cachepart.InputError, match="x.cpt"):
        cc.miss_curve(bad)
    # A malformed trace is a TraceError, still an InputError for old code.
    with pytest.raises(cachepart.TraceError, match=r"x\.cpt: ") as e:
        cc.miss_curve(bad)
    assert isinstance(e.value, cachepart.InputError)
    assert not isinstance(e.value, cachepart.SimulationError)
    with pytest.raises(cachepart.UsageError, match="curve kind"):
        cc.miss_curve(bad, kind="bogus")


TINY_PLATFORM = """name = "tiny"
cores = 1
core.l1i = { size-bytes = 4096, ways = 4, line-bytes = 64 }
core.l1d = { size-bytes = 4096, ways = 4, line-bytes = 64 }
llc = { size-bytes = 131072, ways = 8, line-bytes = 64 }
memory = { size-bytes = 67108864 }
"""


def test_plot_curves_paths(trace, tmp_path):
    df = cc.miss_curve(trace)
    for path, words in [
        (tmp_path, "is a directory"),
        (tmp_path / "nowhere" / "c.png", "does not exist"),
        (tmp_path / "c.nope", r"cannot write a \.nope chart"),
    ]:
        with pytest.raises(cachepart.UsageError, match=words):
            cc.plot_curves({"a": df}, path)
    assert list(tmp_path.iterdir()) == []
    cc.plot_curves({"a": df}, tmp_path / "c.pdf")
    assert (tmp_path / "c.pdf").read_bytes()[:4] == b"%PDF"
    assert [p.name for p in tmp_path.iterdir()] == ["c.pdf"]


def test_stall_curve_and_from_traces(trace, tmp_path):
    import cachepart.profile as cp

    plat = tmp_path / "tiny.toml"
    plat.write_text(TINY_PLATFORM)
    src = cc.stall_curve(trace, str(plat), instructions=100000)
    assert len(src) == 8 and src.attrs["axis"] == "ways"
    # 256 KiB working set, LLC of 16..128 KiB: fewer stalls with more ways
    assert src["stall_rate"].iloc[0] > src["stall_rate"].iloc[-1] > 0
    colors = cc.stall_curve(trace, str(plat), axis="colors", instructions=100000)
    assert list(colors["size"]) == [1, 2, 3, 4]
    out = tmp_path / "m.csv"
    df = cp.from_traces([trace], str(plat), names=["ws"], instructions=100000, path=out)
    assert list(df["NR_WAYS"]) == list(range(1, 9))
    assert (df["stalls_l2_miss"] <= 1).all()
    ev = cp.evaluate(["stock", "lfoc"], metrics=out, mixes=[["ws"]])
    assert set(ev["app"]) == {"ws"}
    # a warm-up leaves out the cold misses: with every way the 256 KiB set
    # no longer fits 128 KiB, but fewer misses are counted than cold
    warm = cp.from_traces([trace], str(plat), names=["ws"], instructions=100000, warmup=200000)
    assert list(warm["NR_WAYS"]) == list(range(1, 9))
    assert warm["llcmpki"].iloc[-1] < df["llcmpki"].iloc[-1]
    with pytest.raises(cachepart.InputError, match="warm-up"):
        cp.from_traces([trace], str(plat), warmup=10**12)
    with pytest.raises(cachepart.InputError, match="nowhere"):
        cc.stall_curve(trace, "nowhere")
    with pytest.raises(cachepart.UsageError, match="axis"):
        cc.stall_curve(trace, str(plat), axis="sets")


def test_bad_arguments_raise_cachepart_errors_only(trace):
    """Each bad argument raises a cachepart error naming it (never a
    KeyError, TypeError, AttributeError or OverflowError)."""
    df = cc.miss_curve(trace)
    cases = [
        (lambda: cc.miss_curve(None), "trace None"),
        (lambda: cc.miss_curve(5), "trace 5"),
        (lambda: cc.build_shards_index(None), "trace None"),
        (lambda: cc.stall_curve(None, "xeon-e5506"), "trace None"),
        (lambda: cc.miss_curve(trace, rate=0.5), "rate 0.5"),
        (lambda: cc.miss_curve(trace, kind="set-associative", max_lines=10), "max-lines 10"),
        (lambda: cc.miss_curve(trace, kind="set-associative", sets=2**32, ways=1024), "4294967296 sets x 1024 ways"),
        (lambda: cc.plot_curves({"a": df}, y="nope"), "no column 'nope'"),
        (lambda: cc.plot_curves([df]), "curves: expected a dict"),
        (lambda: cc.plot_curves({"a": 5}), "curves\\['a'\\]: expected a pandas DataFrame"),
        (lambda: cc.mean_absolute_error(df, df, column="nope"), "a: no column 'nope'"),
        (lambda: cc.mean_absolute_error(df, 2), "b: expected a pandas DataFrame"),
        # u32 arguments: pyo3's overflow named no argument and claimed 0 to 2**64 - 1
        (lambda: cc.miss_curve(trace, per_octave=2**32), "per_octave 4294967296: expected 1 to 1024"),
        (lambda: cc.miss_curve(trace, kind="set-associative", ways=2**32), "ways 4294967296: expected 1 to 1024"),
        (lambda: cc.build_shards_index(trace, exact_below=2**32), "exact_below 4294967296: expected 0 to 65536"),
        (lambda: cc.miss_curve(trace, per_octave=-1), "per_octave -1: expected 1 to 1024"),
        (lambda: cc.build_shards_index(trace, exact_below=-5), "exact_below -5: expected 0 to 65536"),
        # beyond 128 bits either way: still named, with the range (was 0 to 2**64 - 1)
        (lambda: cc.miss_curve(trace, per_octave=2**200), f"per_octave {2**200}: expected 1 to 1024"),
        (lambda: cc.miss_curve(trace, kind="set-associative", ways=-(2**200)), f"ways {-(2**200)}: expected 1 to 1024"),
        (lambda: cc.build_shards_index(trace, exact_below=2**200), f"exact_below {2**200}: expected 0 to 65536"),
        (lambda: cc.build_shards_index(trace, exact_below=-(2**200)), f"exact_below {-(2**200)}: expected 0 to 65536"),
        (lambda: cc.miss_curve(trace, per_octave=2**127), f"per_octave {2**127}: expected 1 to 1024"),
        (lambda: cc.miss_curve(trace, per_octave=-(2**127) - 1), f"per_octave {-(2**127) - 1}: expected 1 to 1024"),
        # past Python's limit on the digits of a decimal: in hexadecimal
        (lambda: cc.miss_curve(trace, per_octave=2**20000), f"per_octave {hex(2**20000)}: expected 1 to 1024"),
        # a bad option, not a bad trace (was a TraceError)
        (lambda: cc.build_shards_index(trace, line=3), "line size 3 bytes: expected a power of two"),
        (lambda: cc.build_shards_index(trace, exact_below=2**20), "exact-below-lines 1048576"),
    ]
    for f, match in cases:
        with pytest.raises(cachepart.UsageError, match=match):
            f()
    assert not pathlib.Path(f"{trace}.shards").exists()
    # The sampling options are the SHARDS curve's.
    assert len(cc.miss_curve(trace, kind="shards", rate=0.5)) > 0
