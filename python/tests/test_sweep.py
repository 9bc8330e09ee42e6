"""Sweeps: the file, the plan and its hashes, and runs on a real Dask
cluster started as separate processes (a scheduler and two workers on
127.0.0.1): results equal to serial runs, a worker killed mid-sweep, an
interrupted sweep resumed."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import cachepart
import cachepart.sweep as sw
from cachepart.sweep import store
from cachepart.sweep.__main__ import main
from cachepart.sweep.execute import serial
from cachepart.sweep.plan import canonical_json, content_hash

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sweeps"
DASK = Path(sys.executable).parent / "dask"

# 3 sizes x 20 mixes x 5 algorithms = 300 runs on the built-in Debian table
SWEEP = """
[sweep]
name = "t"
[base]
metrics = "{metrics}"
[axes]
algorithms = ["stock", "ucp", "kpart", "dunn", "lfoc"]
[axes.random-mixes]
apps = [3, 4, 5]
count = 20
seeds = [7]
"""


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture
def debian_csv(tmp_path: Path) -> Path:
    p = tmp_path / "debian.csv"
    p.write_text(cachepart.profile.builtin_metrics_csv("debian"))
    return p


# --- the file and the plan -------------------------------------------------


def test_plan_is_deterministic_and_hashes_follow_content_not_paths(tmp_path, debian_csv):
    f = write(tmp_path, SWEEP.format(metrics="debian.csv"))
    a, b = sw.plan(f), sw.plan(f)
    assert len(a.runs) == 300
    assert [r.hash for r in a.runs] == [r.hash for r in b.runs]
    assert [r.call for r in a.runs] == [r.call for r in b.runs]
    assert len({r.hash for r in a.runs}) == 300
    # the same table elsewhere, under another name: the same hashes
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(debian_csv, other / "copy.csv")
    moved = sw.plan(write(other, SWEEP.format(metrics="copy.csv")))
    assert [r.hash for r in moved.runs] != [r.hash for r in a.runs]  # the label "table" differs
    same_name = tmp_path / "again"
    same_name.mkdir()
    shutil.copy(debian_csv, same_name / "debian.csv")
    assert [r.hash for r in sw.plan(write(same_name, SWEEP.format(metrics="debian.csv"))).runs] == [
        r.hash for r in a.runs
    ]
    # one changed number in the table: every hash changes
    text = debian_csv.read_text().splitlines()
    text[1] = text[1][:-1] + ("1" if text[1][-1] != "1" else "2")
    debian_csv.write_text("\n".join(text) + "\n")
    changed = sw.plan(f)
    assert not {r.hash for r in changed.runs} & {r.hash for r in a.runs}


def test_hash_is_sha256_of_canonical_json():
    v = {"b": [1, 2.5, "x"], "a": {"d": None, "c": True}}
    assert canonical_json(v) == '{"a":{"c":true,"d":null},"b":[1,2.5,"x"]}'
    # pinned: a change of the canonical form would silently orphan every stored result
    assert content_hash(v) == "5ccd52c83105ca4ef6eac61e7eab5e37f4bcfdbd4574134c7ecce45dca7b34ca"


def test_random_mixes_are_fixed_by_seed_size_and_index(tmp_path):
    f = write(tmp_path, SWEEP.format(metrics="builtin:debian"))
    runs = sw.plan(f).runs
    first = runs[0]
    assert first.labels["mix"] == "r3-s7-0" and first.labels["algorithm"] == "stock"
    assert len(first.call["mixes"][0]) == 3 and len(set(first.call["mixes"][0])) == 3
    # same mix for every algorithm of the case
    assert all(r.call["mixes"] == first.call["mixes"] for r in runs[:5])
    again = sw.plan(write(tmp_path, SWEEP.format(metrics="builtin:debian").replace("seeds = [7]", "seeds = [8]"), "o.toml"))
    assert [r.call["mixes"] for r in again.runs] != [r.call["mixes"] for r in runs]


def test_random_mixes_of_a_size_and_seed_are_all_different():
    from cachepart.sweep.plan import random_mix, random_mixes

    names = [f"p{i}" for i in range(5)]
    # all 10 mixes of 3 out of 5: the independent draws repeat some
    draws = [tuple(sorted(random_mix(names, 3, 7, k))) for k in range(10)]
    assert len(set(draws)) < 10
    got = random_mixes(names, 3, 7, 10)
    assert len({tuple(sorted(m)) for m in got}) == 10
    # the draws before the first repeat are kept as they were
    first = next(i for i, d in enumerate(draws) if d in draws[:i])
    assert [tuple(sorted(m)) for m in got[:first]] == draws[:first]
    # with repetition, as multisets: all 35 of 3 out of 5
    got = random_mixes(names, 3, 7, 35, repetition=True)
    assert len({tuple(sorted(m)) for m in got}) == 35


def test_random_mixes_beyond_the_different_ones_are_refused_with_repetition_too(tmp_path):
    # 9 programs make C(17, 9) = 24310 multisets of 9: 24311 cannot all differ
    text = SWEEP.format(metrics="builtin:debian").replace("apps = [3, 4, 5]", "apps = [9]")
    text = text.replace("count = 20", "repetition = true\ncount = 24311")
    with pytest.raises(sw.SweepFileError) as e:
        sw.plan(write(tmp_path, text))
    assert "axes.random-mixes.count" in str(e.value) and "only 24310 different mixes" in str(e.value)


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (('"dunn"', '"dunn", "nope"'), "axes.algorithms[4]", "unknown algorithm 'nope'"),
        (("apps = [3, 4, 5]", "apps = [3, 12]"), "axes.random-mixes.apps", "has 9"),
        (("seeds = [7]", "seeds = [7, 7]"), "axes.random-mixes.seeds[1]", "repeated"),
        (("[axes]", '[axes]\nbw-model = ["simple", "fancy"]'), "axes.bw-model[1]", "fancy"),
        (("[axes]", "[axes]\nmax-bw = [35000, -1]"), "axes.max-bw[1]", "-1: expected a finite number of at least 0"),
        (("[axes]", "[axes]\nprefetch = [1]"), "axes.prefetch", "unknown axis"),
        (('metrics = "builtin:debian"', 'metrics = "missing.csv"'), "base.metrics", "no such file"),
        (("[axes]", '[axes]\nworkloads = ["nowhere.csv"]'), "axes.workloads[0]", "no such file"),
        (("[axes]", '[axes]\nlfoc-preset = ["paper", "other"]'), "axes.lfoc-preset[1]", "other"),
        # non-finite numbers: refused by their key, not a traceback from the hash's JSON
        (("[axes]", "[axes]\nmax-bw = [35000, inf]"), "axes.max-bw[1]", "inf: expected a finite number of at least 0"),
        (("[axes]", "[axes]\ntime-limit = [nan]"), "axes.time-limit[0]", "expected a finite number"),
        # values every run would fail on: tried on the engine once, before anything runs
        (("[axes]", "[axes]\nthreads = [1, 0]"), "axes.threads[1]", "expected at least 1 thread"),
        (("[axes]", "[axes]\nways = [11, 0]"), "axes.ways[1]", "expected 1 to 11"),
        (("[base]", "[base]\nmax-bw = 0"), "base.max-bw", "at least 1.0 MB/s"),
        # the same point twice, written two ways
        (("[axes]", "[axes]\nmax-bw = [35000, 35000.0]"), "axes.max-bw[1]", "repeated (as [0])"),
        # more draws than different mixes: the same mix under two names
        (("apps = [3, 4, 5]", "apps = [3, 9]"), "axes.random-mixes.count", "only 1 different mix of 9"),
        # a count with zeros too many: refused before the plan fills the memory
        (("count = 20", "count = 100_000_000"), "axes.random-mixes.count", "above the 1000000 one sweep may have"),
        (('name = "t"', 'name = "../t"'), "sweep.name", "without '/'"),
    ],
)
def test_bad_field_is_named_with_the_file(tmp_path, change, field, words):
    text = SWEEP.format(metrics="builtin:debian").replace(*change)
    f = write(tmp_path, text)
    with pytest.raises(sw.SweepFileError) as e:
        sw.plan(f)
    assert e.value.field == field
    assert str(e.value).startswith(f"{f}: {field}: ")
    assert words in str(e.value)
    assert isinstance(e.value, cachepart.InputError)


def test_a_binary_or_missing_sweep_file_is_named(tmp_path):
    f = tmp_path / "t.cpt"
    f.write_bytes(b"CPT1\x00\xe1\xff\xfe binary, not TOML")
    # was a bare UnicodeDecodeError naming no file
    with pytest.raises(sw.SweepFileError, match=r"t\.cpt: not valid TOML: not UTF-8 text \(byte 5"):
        sw.plan(f)
    with pytest.raises(cachepart.UsageError, match="sweep file None: expected a file path"):
        sw.plan(None)


def test_workload_files_are_read_by_the_engine_and_errors_name_them(tmp_path):
    (tmp_path / "w.csv").write_text("xz,sort\nbzip2,grep,md5sum\n")
    text = SWEEP.format(metrics="builtin:debian").replace("[axes]", '[axes]\nworkloads = ["w.csv"]')
    runs = sw.plan(write(tmp_path, text)).runs
    wl = [r for r in runs if r.labels["mix_source"] == "w.csv"]
    assert [r.call["mixes"][0] for r in wl[::5]] == [["xz", "sort"], ["bzip2", "grep", "md5sum"]]
    (tmp_path / "w.csv").write_text("xz,nosuchprogram\n")
    with pytest.raises(sw.SweepFileError) as e:
        sw.plan(write(tmp_path, text))
    assert e.value.field == "axes.workloads[0]" and "nosuchprogram" in str(e.value)


def test_examples_plan(pbb):
    assert len(sw.plan(EXAMPLES / "quick.toml").runs) == 60
    lfoc = sw.plan(EXAMPLES / "lfoc-static.toml")
    sizes = {len(r.call["mixes"][0]) for r in lfoc.runs}
    assert sizes == {8, 12, 16}


# --- a real cluster ----------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_worker(address: str, tmp: Path, name: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(DASK), "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
         "--host", "127.0.0.1", "--name", name, "--local-directory", str(tmp / name)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two workers, each its own process."""
    if not DASK.exists():
        pytest.skip(f"{DASK} not found (install dask[distributed])")
    from distributed import Client

    tmp = tmp_path_factory.mktemp("dask")
    address = f"tcp://127.0.0.1:{free_port()}"
    procs = [
        subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    ]
    procs += [start_worker(address, tmp, f"w{i}") for i in range(2)]
    try:
        with Client(address, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        yield address, tmp
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def each_once(out: Path, plan: sw.Plan) -> pd.DataFrame:
    df = sw.load(out)
    assert sorted(df["run"].unique()) == sorted(r.hash for r in plan.runs)
    assert not df.duplicated(["run", "app_index"]).any()
    assert len(df) == sum(len(r.call["mixes"][0]) for r in plan.runs)
    assert not list(out.rglob("*.tmp"))
    return df


def test_cluster_results_equal_serial_runs(cluster, tmp_path):
    address, _ = cluster
    plan = sw.plan(write(tmp_path, SWEEP.format(metrics="builtin:debian")))
    s = sw.run(plan, scheduler=address, out=tmp_path / "out", progress=False)
    assert (s.total, s.already_done, s.done, s.failed) == (300, 0, 300, 0)
    df = each_once(tmp_path / "out", plan)
    ref = serial(plan.runs)
    pd.testing.assert_frame_equal(df, ref, check_dtype=False)
    # tasks sized from the run time: a probe of one run per slot, then
    # tasks of many sub-millisecond runs, not one file per run
    files = store.result_files(tmp_path / "out")
    assert 4 <= len(files) <= 40, len(files)
    # one row per run and app, mix metrics on every row
    assert {"stp", "unfairness", "slowdown", "mix", "algorithm", "table"} <= set(df.columns)
    report = tmp_path / "r.html"
    sw.report(tmp_path / "out", report)
    html = report.read_text()
    assert html.count("data:image/png;base64,") == 3 and "http" not in html.split("<body>")[1]


def test_killed_worker_loses_and_doubles_nothing(cluster, tmp_path):
    address, tmp = cluster
    victim = start_worker(address, tmp, "victim")
    from distributed import Client

    with Client(address, timeout="30s") as c:
        c.wait_for_workers(3, timeout=60)
        # 1,500 runs: on a quiet machine 300 could all finish before the
        # watcher sees a third of them done
        text = SWEEP.format(metrics="builtin:debian").replace("count = 20", "count = 75").replace("apps = [3, 4, 5]", "apps = [4, 5]").replace("seeds = [7]", "seeds = [7, 8]")
        plan = sw.plan(write(tmp_path, text))
        out = tmp_path / "out"
        killed = []

        def kill_when_a_third_is_done() -> None:
            while len(store.done(out)) < len(plan.runs) // 3:
                time.sleep(0.005)
            victim.send_signal(signal.SIGKILL)
            killed.append(len(store.done(out)))

        t = threading.Thread(target=kill_when_a_third_is_done)
        t.start()
        # fixed tasks of 25 runs: sized from the run time, tasks of these
        # sub-millisecond runs would hold hundreds, and the kill could come
        # after the last one was handed out
        s = sw.run(plan, client=c, out=out, progress=False, batch=25)
        t.join()
    victim.wait()
    assert killed and killed[0] < len(plan.runs), "the worker was killed after the sweep ended"
    assert s.failed == 0 and s.done == len(plan.runs) == 1500
    each_once(out, plan)


def _sigint_as_default() -> None:
    # a job started with `&` from a non-interactive shell (a CI script)
    # inherits SIGINT ignored, and Python then keeps it ignored: the CLI
    # would never see the test's Ctrl-C
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_interrupted_sweep_resumes_without_redoing(cluster, tmp_path, sig):
    address, _ = cluster
    # 1,500 runs, one per task: on a quiet machine 300 could all finish
    # before the interrupt (2 seeds x 2 sizes x 75 mixes x 5 algorithms;
    # not 100 mixes of 3: the table has only 84 different ones)
    f = write(tmp_path, SWEEP.format(metrics="builtin:debian").replace("count = 20", "count = 75").replace("apps = [3, 4, 5]", "apps = [4, 5]").replace("seeds = [7]", "seeds = [7, 8]"))
    plan = sw.plan(f)
    out = tmp_path / "out"
    cli = subprocess.Popen(
        [sys.executable, "-m", "cachepart.sweep", "run", str(f), "--scheduler", address, "--out", str(out), "-q",
         "--batch", "1"],
        stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_as_default,
    )
    # counting the result files (one per run here) is cheap; reading them
    # all each time (store.done) slowed the loop as they grew
    while len(list((out / store.RUNS).glob("*.parquet"))) < 50 and cli.poll() is None:
        time.sleep(0.005)
    cli.send_signal(sig)
    _, err = cli.communicate(timeout=60)
    assert cli.returncode == 128 + sig, err
    assert ("interrupted" if sig == signal.SIGINT else "terminated") + ": finished runs are kept" in err
    before = {p.name: p.stat().st_mtime_ns for p in (out / store.RUNS).glob("*.parquet")}
    assert 50 <= len(before) < len(plan.runs)
    s = sw.run(plan, scheduler=address, out=out, progress=False)
    # a run that was executing when the client went away may have been
    # written since: done, not redone
    assert s.already_done >= len(before) and s.already_done + s.done == len(plan.runs) and s.failed == 0
    after = {p.name: p.stat().st_mtime_ns for p in (out / store.RUNS).glob("*.parquet")}
    assert {k: after[k] for k in before} == before
    each_once(out, plan)


def test_failed_run_is_recorded_and_the_sweep_goes_on(cluster, tmp_path):
    address, _ = cluster
    # `user` needs a plan: the engine refuses it; the other runs go on
    text = SWEEP.format(metrics="builtin:debian").replace('"lfoc"]', '"user"]').replace("count = 20", "count = 2")
    plan = sw.plan(write(tmp_path, text))
    s = sw.run(plan, scheduler=address, out=tmp_path / "out", progress=False)
    assert s.failed == 6 and s.done == 24
    fails = sw.load_failures(tmp_path / "out")
    assert len(fails) == 6 and set(fails["algorithm"]) == {"user"}
    assert all(e.startswith("UsageError") for e in fails["error"])
    assert sw.load(tmp_path / "out")["run"].nunique() == 24


def test_a_task_writes_one_file_and_a_retried_task_rewrites_nothing(tmp_path):
    """The store without Dask: a batch of runs is one file, a run of its
    own is HASH.parquet, a retried task skips its written file, a run
    held by two files (two sweeps at once) is loaded once."""
    from cachepart.sweep.execute import DONE, FAILED, SKIPPED, execute

    # 3 sizes x 1 mix x 5 algorithms; `user` (every fifth run) fails
    text = SWEEP.format(metrics="builtin:debian").replace('"lfoc"]', '"user"]').replace("count = 20", "count = 1")
    plan = sw.plan(write(tmp_path, text))
    assert len(plan.runs) == 15
    out = tmp_path / "out"
    want = [(r.hash, FAILED if r.labels["algorithm"] == "user" else DONE) for r in plan.runs[:8]]
    assert execute(plan.runs[:8], str(out)) == want
    [batch] = store.result_files(out)
    assert batch.name.startswith("batch-") and batch == store.task_path(out, [r.hash for r in plan.runs[:8]])
    stamp = batch.stat().st_mtime_ns
    assert execute(plan.runs[:8], str(out)) == [(h, SKIPPED if st == DONE else FAILED) for h, st in want]
    assert batch.stat().st_mtime_ns == stamp
    assert execute(plan.runs[8:9], str(out)) == [(plan.runs[8].hash, DONE)]
    assert store.result_path(out, plan.runs[8].hash).exists()
    execute(plan.runs[9:], str(out))
    execute(plan.runs[1:4], str(out))  # these three again, in a third file
    assert len(store.result_files(out)) == 4
    ok = [r for r in plan.runs if r.labels["algorithm"] != "user"]
    assert store.done(out) == {r.hash for r in ok}
    pd.testing.assert_frame_equal(sw.load(out), serial(plan.runs), check_dtype=False)
    assert set(sw.load_failures(out)["algorithm"]) == {"user"}


def test_rows_of_different_columns_share_a_file(tmp_path):
    import pyarrow.parquet as pq

    p = tmp_path / "r.parquet"
    store.write_rows([{"run": "a", "x": 1}, {"run": "b", "y": 2.5}], p)
    t = pq.read_table(p).to_pylist()
    assert t == [{"run": "a", "x": 1, "y": None}, {"run": "b", "x": None, "y": 2.5}]


def test_local_cluster_and_cli(tmp_path, capsys):
    """The default: a LocalCluster of worker processes, via the command line."""
    out = tmp_path / "out"
    assert main(["run", str(EXAMPLES / "quick.toml"), "--workers", "2", "--out", str(out), "-q"]) == 0
    assert "60 runs: 0 already done, 60 done now, 0 failed" in capsys.readouterr().err
    assert main(["run", str(EXAMPLES / "quick.toml"), "--workers", "2", "--out", str(out), "-q"]) == 0
    assert "60 runs: 60 already done, 0 done now, 0 failed" in capsys.readouterr().err
    assert main(["plan", str(EXAMPLES / "quick.toml")]) == 0
    assert capsys.readouterr().out.rstrip().endswith("60 runs")
    assert main(["report", str(out), "-o", str(tmp_path / "q.html")]) == 0
    assert (tmp_path / "q.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["plan", str(tmp_path / "none.toml")]) == 1
    assert "none.toml: can not read it" in capsys.readouterr().err


def test_sim_plan_hashes_the_scenario_and_the_files_it_names(tmp_path):
    runs = sw.plan(EXAMPLES / "sim-seeds.toml").runs
    assert [(r.labels["policy"], r.labels["seed"]) for r in runs] == [
        (p, s) for p in ("stock", "ucp", "lfoc") for s in (1, 2)
    ]
    assert runs[0].call == {"scenario": str((ROOT / "examples/scenarios/tiny.toml").resolve()), "policy": "stock", "seed": 1}
    # a scenario naming a file: the file's content is part of the hash
    (tmp_path / "plat.toml").write_text("x = 1\n")
    (tmp_path / "s.toml").write_text('platform = "plat.toml"\n')
    sweep = '[sweep]\nkind = "sim"\n[base]\nscenario = "s.toml"\n[axes]\nseed = [1]\n'
    first = sw.plan(write(tmp_path, sweep, "w.toml")).runs[0]
    assert set(first.content["scenario"]) == {"", "plat.toml"}
    (tmp_path / "plat.toml").write_text("x = 2\n")
    assert sw.plan(tmp_path / "w.toml").runs[0].hash != first.hash


def test_sim_platform_and_scenario_key_axes(tmp_path):
    """``platform`` and ``[axes.set]`` sweep scenario keys: each run calls
    the engine with them as overrides, and they reach the result."""
    tiny = (ROOT / "examples/scenarios/tiny.toml").resolve()
    sweep = (
        f'[sweep]\nkind = "sim"\n[base]\nscenario = "{tiny}"\nalone = false\n'
        '[axes]\nplatform = ["xeon-5160", "xeon-e5506"]\n[axes.set]\n"app.0.base-cpi" = [0.8, 1.6]\n'
    )
    runs = sw.plan(write(tmp_path, sweep)).runs
    assert len(runs) == 4 and len({r.hash for r in runs}) == 4
    assert runs[1].labels == {"scenario": "tiny.toml", "platform": "xeon-5160", "set.app.0.base-cpi": 1.6}
    assert runs[1].call == {
        "scenario": str(tiny), "alone": False, "overrides": {"platform": "xeon-5160", "app.0.base-cpi": 1.6},
    }
    df = serial(runs)
    cycles = {r.hash: df[(df["run"] == r.hash) & (df["app"] == "sensitive")]["cycles"].item() for r in runs}
    for platform in ("xeon-5160", "xeon-e5506"):
        low, high = (cycles[r.hash] for r in runs if r.labels["platform"] == platform)
        assert high > low  # base-cpi 1.6 takes more cycles than 0.8
    assert cycles[runs[0].hash] != cycles[runs[2].hash]  # the platform reached the engine

    # a platform file: resolved from the sweep file, its content hashed
    (tmp_path / "p.toml").write_text((ROOT / "platforms/xeon-5160.toml").read_text())
    with_file = sweep.replace('"xeon-e5506"]', '"p.toml"]')
    runs = sw.plan(write(tmp_path, with_file, "f.toml")).runs
    assert runs[2].call["overrides"]["platform"] == str(tmp_path / "p.toml")
    assert "platform" in runs[2].content["scenario"]
    (tmp_path / "p.toml").write_text((ROOT / "platforms/xeon-5160.toml").read_text() + "\n# edited\n")
    assert sw.plan(tmp_path / "f.toml").runs[2].hash != runs[2].hash

    # bad keys and files are named before anything runs
    for bad, field in (
        (sweep.replace('"app.0.base-cpi"', '"app..x"'), "axes.set.app..x[0]"),
        (sweep.replace('"xeon-e5506"', '"nope/p.toml"'), "axes.platform[1]"),
        (sweep.replace("[axes.set]", "[axes.colour]"), "axes.colour"),
    ):
        with pytest.raises(sw.SweepFileError) as e:
            sw.plan(write(tmp_path, bad, "bad.toml"))
        assert e.value.field == field, (field, str(e.value))


def test_table_and_scenario_axes_are_one_run_each_not_a_repeat(tmp_path, debian_csv):
    """``metrics`` and ``scenario`` as axes (the plan's outer loop) give one
    run per table or scenario, not one per pair of them refused as repeats."""
    (tmp_path / "param.csv").write_text(cachepart.profile.builtin_metrics_csv("parametric"))
    text = SWEEP.format(metrics="builtin:debian").replace('metrics = "builtin:debian"\n', "").replace(
        "[axes]", '[axes]\nmetrics = ["debian.csv", "param.csv"]'
    ).replace("count = 20", "count = 2")
    runs = sw.plan(write(tmp_path, text)).runs
    assert len(runs) == 2 * 3 * 2 * 5
    assert [r.labels["table"] for r in runs[:: 3 * 2 * 5]] == ["debian.csv", "param.csv"]
    tiny = ROOT / "examples/scenarios/tiny.toml"
    (tmp_path / "a.toml").write_text(tiny.read_text())
    (tmp_path / "b.toml").write_text(tiny.read_text().replace("seed = 7", "seed = 8"))
    sim = '[sweep]\nkind = "sim"\n[axes]\nscenario = ["a.toml", "b.toml"]\nseed = [1, 2]\n'
    runs = sw.plan(write(tmp_path, sim, "sim.toml")).runs
    assert [(r.labels["scenario"], r.labels["seed"]) for r in runs] == [
        ("a.toml", 1), ("a.toml", 2), ("b.toml", 1), ("b.toml", 2)
    ]


def test_sim_set_values_refused_before_anything_runs(tmp_path):
    """A scenario key given twice (quoted and dotted), a non-finite value, and
    too many runs are named by their key in the plan."""
    tiny = (ROOT / "examples/scenarios/tiny.toml").resolve()
    head = f'[sweep]\nkind = "sim"\n[base]\nscenario = "{tiny}"\n'
    for body, field, words in (
        ('[axes.set]\n"app.1.mlp" = [1.0, 2.0]\napp.1.mlp = [3.0]\n', "axes.set.app.1.mlp", "given twice"),
        ('[base.set]\n"app.1.mlp" = 2.0\n[base.set.app.1]\nmlp = 3.0\n', "base.set.app.1.mlp", "given twice"),
        ('[axes.set]\n"app.1.mlp" = [1.0, nan]\n', "axes.set.app.1.mlp[1]", "nan: expected a finite number"),
        ('[base.set]\ntiming = { dram-ns = inf }\n', "base.set.timing.dram-ns", "expected a finite number"),
        (
            "[axes]\nseed = [" + ", ".join(map(str, range(1000))) + "]\n[axes.set]\ninstructions = ["
            + ", ".join(map(str, range(1, 1002))) + "]\n",
            "axes",
            "1 scenarios x 1000 values of axes.seed x 1001 values of axes.set.instructions = 1001000 runs",
        ),
    ):
        with pytest.raises(sw.SweepFileError) as e:
            sw.plan(write(tmp_path, head + body))
        assert e.value.field == field and words in str(e.value), str(e.value)


def test_out_must_be_new_empty_or_this_sweeps(tmp_path):
    """``run`` refuses a results directory that is a file, another
    directory with files, or another sweep's results, before writing
    anything; it takes a new or empty one, and its own (resume)."""
    from cachepart.sweep.runner import check_out

    sweep = SWEEP.format(metrics="builtin:debian").replace("count = 20", "count = 1")
    plan = sw.plan(write(tmp_path, sweep))
    other = sw.plan(write(tmp_path, sweep.replace('name = "t"', 'name = "u"'), "u.toml"))
    (tmp_path / "file").write_text("keep\n")
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "mixes.csv").write_text("xz,sort\n")
    for out, words in (
        (tmp_path / "file", "exists and is not a directory"),
        (tmp_path / "inputs", "is not a results directory (no sweep.json) and holds other files (mixes.csv)"),
        (tmp_path, "is the directory of the sweep file"),
    ):
        with pytest.raises(cachepart.UsageError) as e:
            sw.run(plan, out=out, client=object())
        assert str(e.value).startswith(f"--out {out}: {words}"), str(e.value)
    assert (tmp_path / "file").read_text() == "keep\n"
    assert sorted(p.name for p in (tmp_path / "inputs").iterdir()) == ["mixes.csv"]
    check_out(tmp_path / "new", plan)
    (tmp_path / "empty").mkdir()
    check_out(tmp_path / "empty", plan)
    res = tmp_path / "res"
    store.write_json({"name": "t", "kind": "profile", "file": str(tmp_path / "s.toml"), "runs": 1}, res / store.INFO)
    check_out(res, plan)
    with pytest.raises(cachepart.UsageError) as e:
        check_out(res, other)
    assert "holds the results of the profile sweep 't'" in str(e.value) and "not of the profile sweep 'u'" in str(e.value)
    (res / store.INFO).write_text("{not json")
    with pytest.raises(cachepart.UsageError, match="sweep.json is not a sweep description"):
        check_out(res, plan)


def test_report_refuses_to_overwrite_what_it_reads(tmp_path, capsys):
    res = tmp_path / "res"
    sweep_file = write(tmp_path, SWEEP.format(metrics="builtin:debian"))
    store.write_json({"name": "t", "kind": "profile", "file": str(sweep_file), "runs": 0}, res / store.INFO)
    before = sweep_file.read_text()
    for dest, words in (
        (res / store.INFO, "is part of the results directory"),
        (res / "runs" / "x.html", "is part of the results directory"),
        (res, "is a directory"),
        (sweep_file, "is the sweep file of"),
    ):
        assert main(["report", str(res), "-o", str(dest)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: -o {dest}: {words}"), err
    assert sweep_file.read_text() == before
    assert (res / store.INFO).read_text().startswith("{")


def test_local_workers_are_bounded(capsys):
    from cachepart.sweep.runner import MAX_WORKERS_PER_CPU, _cpus

    most = MAX_WORKERS_PER_CPU * _cpus()
    with pytest.raises(SystemExit) as e:
        main(["run", str(EXAMPLES / "quick.toml"), "--workers", str(most + 1), "-q"])
    assert f"--workers {most + 1}: expected at most {most}" in str(e.value)


def test_missing_dask_is_named_with_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    assert main(["plan", str(EXAMPLES / "quick.toml")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: distributed is missing:") and "pip install 'dask[distributed]'" in err


def test_task_size_follows_the_measured_run_time():
    from cachepart.sweep.runner import TASK_SECONDS, next_batch

    # nothing measured yet: a probe of one run
    assert next_batch(0.0, 0, 1000, 4) == 1
    # 10 ms a run: half a second of work, 50 runs
    assert next_batch(0.1, 10, 1000, 4) == int(TASK_SECONDS / 0.01)
    # runs slower than the target: one run a task
    assert next_batch(3.0, 2, 1000, 4) == 1
    # near the end, an equal share per worker, rounded up, never more than left
    assert next_batch(0.001, 100, 10, 4) == 3
    assert next_batch(0.001, 100, 1, 4) == 1
    assert next_batch(0.001, 100, 0, 4) == 0


def test_local_workers_split_the_engine_threads(monkeypatch):
    import os

    from cachepart.sweep.runner import _client, _cpus, engine_threads

    monkeypatch.delenv("RAYON_NUM_THREADS", raising=False)
    assert engine_threads(1) == {"RAYON_NUM_THREADS": str(_cpus())}
    assert engine_threads(10 * _cpus()) == {"RAYON_NUM_THREADS": "1"}
    client, cluster = _client(None, 2)
    try:
        got = client.run(lambda: os.environ.get("RAYON_NUM_THREADS"))
    finally:
        client.close()
        cluster.close()
    assert sorted(got.values()) == [str(max(1, _cpus() // 2))] * 2
    # set by the user: inherited, not overridden
    monkeypatch.setenv("RAYON_NUM_THREADS", "3")
    assert engine_threads(2) == {}
