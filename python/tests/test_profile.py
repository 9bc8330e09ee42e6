
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cachepart
import cachepart.profile as cp

BUILTIN_APPS = sorted({line.split(",")[0] for line in cp.builtin_metrics_csv().splitlines()[1:]})


def test_evaluate_builtin_default():
    df = cp.evaluate(["stock", "ucp", "lfoc", "optc-unf"])
    assert isinstance(df, pd.DataFrame)
    assert set(df["algorithm"]) == {"stock", "ucp", "lfoc", "optc-unf"}
    assert {"workload", "app", "cluster", "ways", "slowdown", "stp", "unfairness", "antt"} <= set(df.columns)
    s = cp.summary(df)
    # the exact fairness optimum is at least as fair as every heuristic
    for _w, g in s.groupby("workload"):
        best = g.loc[g["algorithm"] == "optc-unf", "unfairness"].iloc[0]
        assert (g["unfairness"] >= best - 1e-3).all(), g
    opt = df[df["algorithm"] == "optc-unf"]
    assert opt["proven_optimal"].all()


def test_deterministic():
    a = cp.evaluate(["kpart", "lfoc", "opt-stp"])
    b = cp.evaluate(["kpart", "lfoc", "opt-stp"])
    pd.testing.assert_frame_equal(a, b)


def test_rows_come_as_dicts_in_the_cli_column_order():
    # the same row struct as `cachepart profile eval --format csv|json`
    cols = (
        "workload,algorithm,n_apps,app_index,app,cluster,mask,ways,effective_ways,slowdown_nobw,"
        "speedup,slowdown,stp,antt,unfairness,unfairness_cov,jain,gmean_speedup,gmean_ipc,proven_optimal"
    ).split(",")
    rows = cp.evaluate_records(["ucp", "optc-stp"])
    assert rows and all(list(r) == cols for r in rows), list(rows[0])
    assert list(cp.evaluate(["ucp"]).columns) == cols
    timed = cp.evaluate_records(["ucp"], timings=True)
    assert list(timed[0]) == [*cols, "decision_seconds"]
    assert list(cp.classify().columns)[:3] == ["app", "code", "class"]


def test_classify_builtin():
    df = cp.classify(builtin="parametric")
    assert set(df["class"]) <= {"light", "streaming", "sensitive"}
    cls = dict(zip(df["app"], df["class"]))
    assert cls["stream-hi"] == "streaming"
    assert cls["sens-mid"] == "sensitive"
    assert cls["light-a"] == "light"
    # the Debian set (the default) has all three classes; mbw and sysbench stream
    debian = cp.classify()
    deb = dict(zip(debian["app"], debian["class"]))
    assert set(deb.values()) == {"light", "streaming", "sensitive"}, deb
    assert deb["mbw"] == deb["sysbench"] == "streaming", deb


def test_errors_are_cachepart_exceptions(tmp_path):
    with pytest.raises(cachepart.UsageError, match="unknown algorithm"):
        cp.evaluate(["nope"])
    with pytest.raises(cachepart.InputError, match="unknown program"):
        cp.evaluate(["stock"], mixes=[["stream-hi", "nosuchapp"]], builtin="parametric")
    with pytest.raises(cachepart.UsageError, match="built-in data set"):
        cp.evaluate(["stock"], builtin="nosuchset")
    bad = tmp_path / "m.csv"
    bad.write_text("BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps\na,1,x,1,1,1\n")
    with pytest.raises(cachepart.InputError, match=r"m\.csv:2 column ipc"):
        cp.evaluate(["stock"], metrics=bad, mixes=[["a"]])
    with pytest.raises(cachepart.PolicyError, match="need at least"):
        cp.evaluate(["equal-part"], mixes=[BUILTIN_APPS * 2])
    assert issubclass(cachepart.InputError, cachepart.CachepartError)


def test_user_plan():
    df = cp.evaluate(
        ["user"], mixes=[["stream-hi", "sens-mid", "light-a"]], plan="0x1=0;0x7fe=1,2", builtin="parametric"
    )
    assert list(df["ways"]) == [1, 10, 10]
    assert df["cluster"].tolist() == [0, 1, 1]


def test_plot_tradeoff(tmp_path):
    df = cp.evaluate(["stock", "ucp", "lfoc"])
    out = tmp_path / "t.png"
    cp.plot_tradeoff(df, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(cachepart.UsageError, match="stock"):
        cp.tradeoff(df[df["algorithm"] != "stock"])
    # the format follows the extension; without one, a PNG at exactly that
    # path (matplotlib alone would write chart.png beside it)
    cp.plot_tradeoff(df, tmp_path / "t.svg")
    assert (tmp_path / "t.svg").read_bytes().startswith(b"<?xml")
    cp.plot_tradeoff(df, tmp_path / "chart")
    assert (tmp_path / "chart").read_bytes()[:4] == b"\x89PNG"
    # written through a temporary file renamed into place: none is left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chart", "t.png", "t.svg"]


def test_plot_tradeoff_refuses_bad_paths_before_drawing(tmp_path):
    df = cp.evaluate(["stock", "lfoc"])
    for path, words in [
        # a directory was saved as DIR.png beside it
        (tmp_path, "is a directory"),
        (tmp_path / "nowhere" / "t.png", "does not exist"),
        (tmp_path / "t.xyz", r"cannot write a \.xyz chart \(expected one of: .*png"),
    ]:
        with pytest.raises(cachepart.UsageError, match=words):
            cp.plot_tradeoff(df, path)
    assert list(tmp_path.iterdir()) == []
    assert not tmp_path.with_name(tmp_path.name + ".png").exists()


def test_plot_tradeoff_refuses_an_extension_before_it_draws(tmp_path, monkeypatch):
    """An extension matplotlib cannot write is refused before the chart's
    data is even computed (the check used to run when saving)."""

    def no_drawing(df):
        raise AssertionError("drew the chart before checking the path")

    monkeypatch.setattr(cp, "tradeoff", no_drawing)
    with pytest.raises(cachepart.UsageError, match=r"cannot write a \.xyz chart"):
        cp.plot_tradeoff(cp.evaluate(["stock", "lfoc"]), tmp_path / "t.xyz")
    assert list(tmp_path.iterdir()) == []


def test_plot_tradeoff_checks_its_path_once(tmp_path, monkeypatch):
    """``path`` is checked once, before drawing; saving the figure does
    not check it again."""
    from cachepart import _guard

    checked = []
    real = _guard.output

    def counting(value, name, inputs=()):
        checked.append(value)
        return real(value, name, inputs)

    monkeypatch.setattr(_guard, "output", counting)
    monkeypatch.setattr(cp, "output", counting)
    out = tmp_path / "t.png"
    cp.plot_tradeoff(cp.evaluate(["stock", "lfoc"]), out)
    assert checked == [out]
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_from_traces_checks_its_output_before_running(tmp_path):
    """``path`` is refused before any trace runs, and an input is never
    clobbered (the CSV used to overwrite a trace given as ``path``)."""
    trace = tmp_path / "t.cpt"
    trace.write_bytes(b"CPT1 not really a trace, but an input all the same")
    before = trace.read_bytes()
    link = tmp_path / "link.cpt"
    link.symlink_to(trace)
    for path, words in [
        (trace, r"t\.cpt: is also an input"),
        (link, r"link\.cpt: is also an input"),
        (tmp_path, "is a directory"),
        (tmp_path / "nowhere" / "m.csv", "does not exist"),
    ]:
        with pytest.raises(cachepart.UsageError, match=words):
            cp.from_traces([trace], "xeon-e5506", path=path)
    assert trace.read_bytes() == before
    # a failing run leaves no output, whole or partial
    with pytest.raises(cachepart.TraceError):
        cp.from_traces([trace], "xeon-e5506", path=tmp_path / "m.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.cpt", "t.cpt"]


def test_reference_rows(pbb):
    # a few rows of PBBCache's reference outputs (the Rust parity test covers all)
    ref = pd.read_csv(pbb / "ref" / "tidy_results.csv")
    ref = ref[(ref["tag"] == "simple_b35000") & (ref["set"] == "input_workloads") & (ref["workload_id"] == "W1")]
    apps = ref[ref["algorithm"] == "ucp"].sort_values("bench_id")["app"].tolist()
    df = cp.evaluate(
        ["ucp", "lfoc", "kpart"],
        metrics=pbb / "metrics.csv",
        mixes=[apps],
        max_bw=35000,
        lfoc_preset="pbbcache",
    )
    for alg in ["ucp", "lfoc", "kpart"]:
        r = ref[ref["algorithm"] == alg].sort_values("bench_id")
        o = df[df["algorithm"] == alg]
        assert o["ways"].tolist() == r["ways"].tolist()
        assert (abs(o["slowdown"].to_numpy() - r["slowdown"].to_numpy()) < 6e-6).all()


def test_lfoc_presets(pbb):
    paper = cp.classify(metrics=pbb / "metrics.csv")
    pbbc = cp.classify(metrics=pbb / "metrics.csv", lfoc_preset="pbbcache")
    streaming = {p: set(d[d["class"] == "streaming"]["app"]) for p, d in [("paper", paper), ("pbb", pbbc)]}
    # Table 1's threshold (10) admits every program PBBCache's (14) does, and more
    assert streaming["pbb"] < streaming["paper"]
    assert cp.classify(metrics=pbb / "metrics.csv").equals(paper)
    with pytest.raises(cachepart.UsageError, match="paper, pbbcache"):
        cp.evaluate(["lfoc"], lfoc_preset="papr")
    with pytest.raises(cachepart.UsageError, match="paper, pbbcache"):
        cp.classify(lfoc_preset="pbb")


def test_builtin_sets():
    debian = {line.split(",")[0] for line in cp.builtin_metrics_csv("debian").splitlines()[1:]}
    parametric = {line.split(",")[0] for line in cp.builtin_metrics_csv("parametric").splitlines()[1:]}
    assert "xz" in debian and "sens-mid" in parametric and not debian & parametric
    df = cp.evaluate(["stock", "lfoc"], builtin="parametric")
    assert set(df["app"]) <= parametric


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(BUILTIN_APPS), min_size=1, max_size=7))
def test_invariants_on_random_mixes(apps):
    df = cp.evaluate(["stock", "ucp-slowdown", "lfoc", "optc-stp"], mixes=[apps])
    for _alg, g in df.groupby("algorithm"):
        assert len(g) == len(apps)
        assert (g["ways"] >= 1).all() and (g["ways"] <= 11).all()
        # shares of a cluster never exceed its ways
        for _, c in g.groupby("cluster"):
            assert c["effective_ways"].sum() <= c["ways"].iloc[0] + 1e-9
        assert g["unfairness"].iloc[0] >= 1.0 - 1e-12
        assert g["stp"].iloc[0] <= len(apps) * 1.01
    s = cp.summary(df).set_index("algorithm")
    assert s.loc["optc-stp", "stp"] >= s["stp"].max() - 1e-3


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(max_bw=-5), "max-bw"),
        (dict(max_bw=0.0), "max-bw"),
        (dict(time_limit=1e300, algorithms=["optc-unf"]), "time-limit"),
        (dict(threads=0, algorithms=["optc-unf"]), "threads 0"),
        (dict(plan="0x3=0", algorithms=["stock"]), "plan"),
        (dict(ways=-1), "ways"),
        (dict(threads=2**70, algorithms=["optc-unf"]), "threads"),
        (dict(mixes="xz,sort"), "mixes"),
        (dict(mixes=["xz,sort"]), "mixes[0]"),
        # nothing to run is refused, as a workloads file without a workload
        (dict(mixes=[]), "mixes []: no mix given"),
        (dict(mixes=[["xz"], []]), "mixes[1]: an empty mix"),
    ],
)
def test_bad_options_raise_usage_errors(kwargs, words):
    kwargs.setdefault("algorithms", ["stock"])
    with pytest.raises(cachepart.UsageError, match=words.replace("[", r"\[").replace("]", r"\]")):
        cp.evaluate(**kwargs)


def test_classify_refuses_empty_mixes():
    # not an empty frame, silently
    for mixes, words in [([], "no mix given"), ([[]], r"mixes\[0\]: an empty mix")]:
        with pytest.raises(cachepart.UsageError, match=words):
            cp.classify(mixes=mixes)


def test_huge_lfoc_parameters_do_not_overflow():
    # 2**63 light apps per gap overflowed LFOC's room count: an internal
    # error (a panic) in debug builds, a wrapped count in release ones.
    # Any count above the mix's apps admits them all, as 1000 does.
    mixes = [BUILTIN_APPS]
    want = cp.evaluate(["lfoc", "lfoc+"], mixes=mixes, lfoc_max_streaming=1000, lfoc_gaps_per_streaming=1000)
    for big in [2**63, 2**64 - 1]:
        got = cp.evaluate(["lfoc", "lfoc+"], mixes=mixes, lfoc_max_streaming=big, lfoc_gaps_per_streaming=big)
        pd.testing.assert_frame_equal(got, want)


def test_bad_metrics_raise_input_errors(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps\na,1,1.0,2,-2,200\na,2,1.5,1,1,100\n")
    with pytest.raises(cachepart.InputError, match="llcmpkc"):
        cp.evaluate(["stock"], metrics=p, mixes=[["a"]])


def test_default_algorithms_match_the_cli():
    df = cp.evaluate(mixes=[BUILTIN_APPS[:2]])
    assert list(dict.fromkeys(df["algorithm"])) == cachepart._core.default_algorithms()
    assert "optc-stp" in cachepart._core.default_algorithms()


def test_low_bandwidth_gives_no_speedup():
    mix = [BUILTIN_APPS[:3]]
    prev = cp.summary(cp.evaluate(["stock"], mixes=mix))
    for max_bw in [10000.0, 1000.0, 1.0]:
        s = cp.summary(cp.evaluate(["stock"], mixes=mix, max_bw=max_bw))
        assert (s["antt"] < float("inf")).all() and (s["stp"] > 0).all(), s
        # a lower limit never speeds anything up (simple model, per app)
        assert (s["antt"].to_numpy() >= prev["antt"].to_numpy()).all(), (s, prev)
        assert (s["stp"].to_numpy() <= prev["stp"].to_numpy()).all(), (s, prev)
        prev = s


def test_bad_argument_types_raise_cachepart_errors_only(tmp_path):
    w = tmp_path / "w.json"
    w.write_text('[{"name": "x", "aps": ["a"]}]')
    for f, exc, match in [
        (lambda: cp.evaluate(metrics=5), cachepart.UsageError, "metrics 5"),
        (lambda: cp.evaluate(algorithms=5), cachepart.UsageError, "algorithms 5"),
        (lambda: cp.evaluate(algorithms=["stock", 3]), cachepart.UsageError, "3 is not an algorithm"),
        (lambda: cp.evaluate(workloads=w), cachepart.InputError, r"workloads\[0\]: unknown key `aps`"),
        (lambda: cp.from_traces(None, platform="xeon-e5506"), cachepart.UsageError, "traces None"),
        (lambda: cp.from_traces("a.cpt", platform="xeon-e5506"), cachepart.UsageError, "a list of file paths"),
        (lambda: cp.summary(5), cachepart.UsageError, "df: expected a pandas DataFrame"),
        (lambda: cp.tradeoff(pd.DataFrame({"x": [1]})), cachepart.UsageError, "no column 'workload'"),
    ]:
        with pytest.raises(exc, match=match):
            f()


def test_option_refusals_use_the_clis_words(tmp_path):
    # The CLI refuses the same values with the same words
    # (crates/cli/tests/same_words.rs): the checks live in the facade.
    m = tmp_path / "m.csv"
    m.write_text(cp.builtin_metrics_csv())
    for f, words in [
        (
            lambda: cp.from_traces(["a.cpt", "b.cpt"], platform="xeon-5160", names=["x"]),
            "name: 1 names for 2 traces: give one per trace, or none",
        ),
        (
            lambda: cp.evaluate(["stock"], metrics=m),
            "metrics: a metrics file was given without workloads or mixes: say which mixes to run",
        ),
        (
            lambda: cp.evaluate(["optc-unf"], time_limit=-1),
            "time-limit -1.0: expected a positive number of seconds, at most 31536000 (one year)",
        ),
    ]:
        with pytest.raises(cachepart.UsageError) as e:
            f()
        assert str(e.value) == words
