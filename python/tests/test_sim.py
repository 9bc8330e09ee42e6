"""The simulator from Python: scenario runs as DataFrames."""

import json
import pathlib
import subprocess

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


def test_a_malformed_trace_raises_a_trace_error(tmp_path):
    (tmp_path / "bad.cpt").write_bytes(b"not a trace at all, not at all")
    bad = tmp_path / "bad.toml"
    bad.write_text('platform = "xeon-5160"\n[[app]]\nname = "a"\ntrace = "bad.cpt"\n')
    with pytest.raises(cachepart.TraceError, match=r"app\[0\] \(a\)\.trace: .*bad\.cpt: bad magic") as e:
        cs.run(bad)
    # Still an InputError, as before there was a TraceError.
    assert isinstance(e.value, cachepart.InputError)


STUCK = """platform = "xeon-5160"
seed = 7
interval-cycles = 200_000

[method]
kind = "restart"
completions = 1

[[app]]
name = "sensitive"
synth = { seed = 1, accesses = 20_000, pattern = { class = "cache-sensitive", working-set-bytes = 65_536 } }

[[app]]
name = "idle"
synth = { seed = 2, accesses = 8, pattern = { class = "streaming", array-bytes = 65_536 }, mix = { accesses-per-instr = 64.0 } }
"""


def test_a_simulation_failure_raises_simulation_error(tmp_path):
    # Eight accesses at 64 per instruction: no instruction, so the restart
    # method can not replay the app; the scenario itself is valid.
    s = tmp_path / "stuck.toml"
    s.write_text(STUCK)
    with pytest.raises(cachepart.SimulationError, match=r"^scenario stuck: app 1 \(idle\) finished: its trace made no progress") as e:
        cs.run(s)
    assert not isinstance(e.value, cachepart.InputError)
    assert isinstance(e.value, cachepart.CachepartError)


def test_bad_arguments_raise_cachepart_errors_only():
    for f, match in [
        (lambda: cs.run(None), "scenario None"),
        (lambda: cs.run(5), "scenario 5"),
        (lambda: cs.run(TINY, seed=-1), "seed -1"),
        (lambda: cs.run(TINY, seed="x"), "seed"),
        # was an AttributeError ('list' object has no attribute 'items')
        (lambda: cs.run(TINY, overrides=[("seed", 1)]), r"overrides \[\('seed', 1\)\]: expected a dict"),
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


CLI = ROOT / "target" / "release" / "cachepart"
EVENTS = ["Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw"]


@pytest.fixture(scope="module")
def uniform_trace(tmp_path_factory):
    if not CLI.exists():
        pytest.skip(f"{CLI} not built (run ./scripts/setup.sh)")
    d = tmp_path_factory.mktemp("cg")
    cfg = d / "u.toml"
    cfg.write_text(
        'seed = 3\naccesses = 100000\n[pattern]\nclass = "cache-sensitive"\n'
        'working-set-bytes = 262144\ndistribution = "uniform"\n'
    )
    out = d / "u.cpt"
    subprocess.run([str(CLI), "trace", "generate", str(cfg), str(out)], check=True, capture_output=True)
    return out


def test_cachegrind_equals_the_command_line(uniform_trace):
    got = cs.cachegrind(uniform_trace, i1="32768,8,64", d1=(32768, 8, 64), ll="131072,8,64")
    assert list(got) == EVENTS
    cli = subprocess.run(
        [str(CLI), "sim", "cachegrind", str(uniform_trace), "--format", "json"]
        + ["--I1", "32768,8,64", "--D1", "32768,8,64", "--LL", "131072,8,64"],
        check=True,
        capture_output=True,
    )
    assert got == json.loads(cli.stdout)
    # a data-only trace of 100,000 accesses over 256 KiB
    assert got["Ir"] == 0
    assert got["Dr"] + got["Dw"] == 100_000
    # a 32 KiB D1 misses most of a uniform 256 KiB working set, a 128 KiB LL fewer
    assert 0.8 < (got["D1mr"] + got["D1mw"]) / 100_000 < 0.95
    assert got["DLmr"] + got["DLmw"] < got["D1mr"] + got["D1mw"]


def test_cachegrind_defaults_and_platform(uniform_trace):
    default = cs.cachegrind(uniform_trace)
    explicit = cs.cachegrind(uniform_trace, i1="65536,2,64", d1="65536,2,64", ll="262144,8,64")
    assert default == explicit
    e5506 = cs.cachegrind(uniform_trace, platform="xeon-e5506")
    # its 4 MiB LLC holds the whole working set: only cold misses
    assert e5506["DLmr"] + e5506["DLmw"] == 262144 // 64
    assert e5506 == cs.cachegrind(uniform_trace, d1="32768,8,64", ll=(4 << 20, 16, 64), platform="xeon-e5506")


def test_cachegrind_refuses_in_cachegrinds_words(uniform_trace, tmp_path):
    with pytest.raises(cachepart.UsageError, match=r"--LL=1000,2,64: Cache set count is not a power of two\."):
        cs.cachegrind(uniform_trace, ll="1000,2,64")
    with pytest.raises(cachepart.UsageError, match="Cache line size is too small"):
        cs.cachegrind(uniform_trace, d1=(1024, 2, 8))
    with pytest.raises(cachepart.UsageError, match="platform xeon-gold-6138"):
        cs.cachegrind(uniform_trace, platform="xeon-gold-6138")
    with pytest.raises(cachepart.UsageError, match="i1"):
        cs.cachegrind(uniform_trace, i1=(1024, 2))  # type: ignore[arg-type]
    with pytest.raises(cachepart.InputError, match="missing.cpt"):
        cs.cachegrind(tmp_path / "missing.cpt")


def test_cachegrind_threads_give_the_same_totals(uniform_trace):
    caches = dict(i1="32768,8,64", d1="32768,8,64", ll="131072,8,64")
    one = cs.cachegrind(uniform_trace, **caches)
    assert cs.cachegrind(uniform_trace, threads=2, **caches) == one
    assert cs.cachegrind(uniform_trace, threads=4) == cs.cachegrind(uniform_trace)
    with pytest.raises(cachepart.UsageError, match="over 3 threads: the thread count must be a power of two"):
        cs.cachegrind(uniform_trace, threads=3)
    with pytest.raises(cachepart.UsageError, match="I1 has one set"):
        cs.cachegrind(uniform_trace, i1="1024,16,64", threads=2)


def test_cachegrind_decoders_give_the_same_totals(uniform_trace):
    one = cs.cachegrind(uniform_trace)
    assert cs.cachegrind(uniform_trace, decoders=3) == one
    assert cs.cachegrind(uniform_trace, threads=2, decoders=1) == one
    with pytest.raises(cachepart.UsageError, match="decoded on 1 to 256 threads, not 0"):
        cs.cachegrind(uniform_trace, decoders=0)
