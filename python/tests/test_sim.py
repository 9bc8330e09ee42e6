"""The simulator from Python: scenario runs as DataFrames."""

import pathlib

import pandas as pd
import pytest

import cachepart
import cachepart.sim as cs

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY = ROOT / "examples" / "scenarios" / "tiny.toml"


def test_run_gives_apps_samples_and_metrics():
    run = cs.run(TINY)
    assert list(run.apps["app"]) == ["sensitive", "streaming"]
    assert (run.apps["instructions"] >= 400_000).all()
    # Slowdown is IPC alone over IPC shared, as the report says.
    ratio = run.apps["ipc_alone"] / run.apps["ipc"]
    assert ratio.round(9).tolist() == run.apps["slowdown"].round(9).tolist()
    assert run.metrics is not None
    assert run.metrics["stp"] == pytest.approx((1 / run.apps["slowdown"]).sum())
    # The samples add up to the totals, app by app.
    per_app = run.samples.groupby("app")["instructions"].sum()
    assert per_app.tolist() == run.apps["instructions"].tolist()
    assert {"interval", "llc_misses", "memory_stall_cycles", "ipc"} <= set(run.samples.columns)
    # What online policies read: L2-miss stalls, LLCMPKC, and whether the app ran.
    assert run.samples["ran"].dtype == bool
    assert run.samples["ran"].any()
    ran = run.samples[run.samples["ran"]]
    assert (ran["instructions"] > 0).all()
    assert (run.samples["l2_miss_stall_cycles"] <= run.samples["cycles"]).all()
    assert (run.samples["l2_miss_stall_fraction"].between(0, 1)).all()
    expected_mpkc = (ran["llc_misses"] * 1000 / ran["cycles"]).round(9)
    assert ran["llc_mpkc"].round(9).tolist() == expected_mpkc.tolist()


def test_same_seed_same_result_and_overrides():
    a = cs.run(TINY)
    b = cs.run(TINY)
    pd.testing.assert_frame_equal(a.samples, b.samples)
    c = cs.run(TINY, policy="equal-part", alone=False)
    assert c.metrics is None
    assert sorted(c.apps["ways"]) == ["0xff", "0xff00"]


def test_parquet_samples_read_back_with_pandas(tmp_path):
    import subprocess

    exe = ROOT / "target" / "release" / "cachepart"
    if not exe.is_file():
        pytest.skip("release CLI not built (./scripts/setup.sh builds it)")
    out = tmp_path / "s.parquet"
    subprocess.run([str(exe), "sim", "run", str(TINY), "-q", "--samples", str(out)], check=True, capture_output=True)
    df = pd.read_parquet(out)
    run = cs.run(TINY)
    pd.testing.assert_frame_equal(df.reset_index(drop=True), run.samples, check_dtype=False)


def test_bad_scenario_raises_input_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('platform = "xeon-5160"\n[[app]]\nname = "a"\n')
    with pytest.raises(cachepart.InputError, match=r"app\[0\] \(a\)\.trace"):
        cs.run(bad)
    assert ("xeon-e5506", "COLORIS: 4 cores, 4 MiB 16-way L3, 64 colors") in cs.platforms()


def test_bad_arguments_raise_cachepart_errors_only():
    for f, match in [
        (lambda: cs.run(None), "scenario None"),
        (lambda: cs.run(5), "scenario 5"),
        (lambda: cs.run(TINY, seed=-1), "seed -1"),
        (lambda: cs.run(TINY, seed="x"), "seed"),
    ]:
        with pytest.raises(cachepart.UsageError, match=match):
            f()


def test_throttle_search_finds_the_fairest_duty_cycles(tmp_path):
    # The pair example, shortened: a sensitive program and a stream.
    text = (ROOT / "examples" / "scenarios" / "pair-throttle.toml").read_text()
    text = text.replace("cycles = 4_000_000", "cycles = 1_000_000")
    scenario = tmp_path / "pair.toml"
    scenario.write_text(text)
    s = cs.throttle(scenario)
    assert s.best_hybrid is None
    assert s.candidates["candidate"].nunique() == 15
    assert set(s.candidates["stage"]) == {"duty"}
    assert s.best_duty["unfairness_factor"] < s.default["unfairness_factor"]
    # The fairest setting is one of the candidates, and no candidate is fairer.
    assert s.candidates["unfairness_factor"].min() == pytest.approx(s.best_duty["unfairness_factor"])
    # Zhang's unfairness factor: CoV of normalised performance (1/slowdown).
    perf = [1 / x for x in s.best_duty["slowdowns"]]
    mean = sum(perf) / len(perf)
    cov = (sum((p - mean) ** 2 for p in perf) / len(perf)) ** 0.5 / mean
    assert s.best_duty["unfairness_factor"] == pytest.approx(cov)


def test_throttle_search_refuses_a_platform_without_modulation(tmp_path):
    text = (ROOT / "examples" / "scenarios" / "pair-throttle.toml").read_text()
    scenario = tmp_path / "pair.toml"
    scenario.write_text(text.replace('platform = "xeon-5160"', 'platform = "xeon-e5506"'))
    with pytest.raises(cachepart.InputError, match="no duty-cycle modulation"):
        cs.throttle(scenario)
