"""What a sweep on Dask costs over calling the engine in a loop.

    .venv/bin/python scripts/bench/sweep.py [--count 100] [--batch 1,8,auto]
        [--workers 1,2] [--workloads short,long,longer] [--no-share] [--interleave K]

Four workloads of profile runs, each planned from a sweep file written
here: ``short`` (mixes of 4 from the built-in Debian table under four
heuristics; about 0.1 ms per run on a quiet machine), ``long`` (the exact
STP optimum, ``optc-stp``, on mixes of 8 with repetition from the same
table; about 2 ms), ``longer`` (the same on mixes of 11; about 6-9 ms) and
``longest`` (mixes of 12; about 20 ms; all on the 2-core VM).
For each: the engine called in a loop in this process
(``cachepart.profile.evaluate_records`` on each run's arguments: the
reference),
then the sweep on a LocalCluster of each size in ``--workers`` (started
before the clock; its start-up is printed once), with results written to
a fresh directory each time. Prints one row per (workload, workers,
batch): wall seconds, runs per second, and the overhead per run and in
percent against the loop (1 worker; with more workers the speed-up instead),
then the same from CPU time: the CPU seconds of every process of the
sweep (this one, which holds the LocalCluster's scheduler, and each
worker) against the loop's. On a shared machine the wall-clock figures
move with the other tenants' load (they can even come out negative);
CPU time is what the sweep itself spends, and moves much less.
The engine is itself parallel (the exact optima use rayon): the loop
uses one thread per CPU and each worker the CPUs over the workers (as
:func:`cachepart.sweep.run` sets them) unless ``RAYON_NUM_THREADS`` is
set, which then holds for both; with ``RAYON_NUM_THREADS=1`` the
overhead is the sweep's alone and the speed-up that of the workers.
``--interleave K`` instead alternates the loop, the sweep on one worker
and the same loop run inside that worker, K times per workload, and
prints the median overheads: whether a worker's extra time is Dask's or
the engine's own in a worker process.
Last, without Dask: the worker's own share, a batch's
:func:`cachepart.sweep.execute.execute` (engine, rows, result files) in
this process against the loop, in CPU time (best of three), per batch
size.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from cachepart.profile import evaluate_records
from cachepart.sweep import plan as expand
from cachepart.sweep import run
from cachepart.sweep.execute import execute
from cachepart.sweep.runner import _client as local_client

WORKLOADS = {
    "short": ('["stock", "ucp", "kpart", "lfoc"]', "[4]", "false"),
    "long": ('["optc-stp"]', "[8]", "true"),
    "longer": ('["optc-stp"]', "[11]", "true"),
    "longest": ('["optc-stp"]', "[12]", "true"),
}


def sweep_file(d: Path, name: str, count: int) -> Path:
    algs, apps, rep = WORKLOADS[name]
    p = d / f"{name}.toml"
    p.write_text(
        f'[sweep]\nname = "{name}"\n[base]\nmetrics = "builtin:debian"\n[axes]\nalgorithms = {algs}\n'
        f"[axes.random-mixes]\napps = {apps}\ncount = {count}\nseeds = [1]\nrepetition = {rep}\n"
    )
    return p


def _warm() -> None:
    import pyarrow.parquet  # noqa: F401

    import cachepart.sweep.execute  # noqa: F401


def _cpu(client: Any) -> float:
    """CPU seconds used so far by this process and every worker."""
    return time.process_time() + sum(client.run(time.process_time).values())


def _worker_share(plans: dict[str, Any], batches: list[int | None], d: Path) -> None:
    print("# the worker's share, without Dask: execute() in this process, CPU time, best of 3")
    print(f"{'workload':8} {'batch':>5} {'loop ms/run':>11} {'execute ms/run':>14} {'overhead':>18}")
    k = 0
    for n, p in plans.items():
        for b in batches:
            size = b or 64
            loop = share = float("inf")
            calls = [r.call for r in p.runs]
            for _ in range(3):
                loop = min(loop, _engine_loop(calls)[1])
                k += 1
                c = time.process_time()
                for i in range(0, len(p.runs), size):
                    execute(p.runs[i : i + size], str(d / f"share{k}"))
                share = min(share, time.process_time() - c)
            per = 1000 / len(p.runs)
            extra = f"{per * (share - loop):+6.2f} ms {100 * (share / loop - 1):+6.1f}%"
            print(f"{n:8} {size:5} {per * loop:11.2f} {per * share:14.2f} {extra:>18}")


def _engine_loop(calls: list[dict[str, Any]]) -> tuple[float, float]:
    """The engine in a loop, wherever this runs (a worker): wall and CPU
    seconds of this process."""
    t, c = time.perf_counter(), time.process_time()
    for call in calls:
        evaluate_records(**call)
    return time.perf_counter() - t, time.process_time() - c


def _interleaved(plans: dict[str, Any], rounds: int, d: Path) -> None:
    """Loop, sweep and the engine loop inside the worker, alternating on
    one warm LocalCluster of one worker, ``rounds`` times per workload;
    medians of the overheads (a shared machine's load moves between
    measurements taken minutes apart, less between neighbours)."""
    import statistics

    client, cluster = local_client(None, 1)
    client.run(_warm)
    print("# interleaved: loop here, sweep on 1 worker (tasks sized from the run time), the same loop inside the worker")
    print(f"{'workload':8} {'round':>5} {'loop ms':>8} {'sweep ms':>8} {'overhead':>9} {'CPU overhead':>12} {'worker loop ms':>14} {'worker/here':>11}")
    try:
        for n, p in plans.items():
            calls = [r.call for r in p.runs]
            _engine_loop(calls[:1])
            client.submit(_engine_loop, calls[:1], pure=False).result()
            ov, ovc, eng = [], [], []
            for k in range(rounds):
                lw, lc = _engine_loop(calls)
                c0 = _cpu(client)
                t = time.perf_counter()
                s = run(p, client=client, out=d / f"il-{n}-{k}", progress=False)
                sw = time.perf_counter() - t
                sc = _cpu(client) - c0
                assert s.done == len(p.runs) and s.failed == 0
                ww, _ = client.submit(_engine_loop, calls, pure=False).result()
                ov.append(sw / lw - 1)
                ovc.append(sc / lc - 1)
                eng.append(ww / lw)
                per = 1000 / len(calls)
                print(
                    f"{n:8} {k + 1:5} {per * lw:8.2f} {per * sw:8.2f} {100 * ov[-1]:+8.1f}% {100 * ovc[-1]:+11.1f}%"
                    f" {per * ww:14.2f} {eng[-1]:11.3f}"
                )
            med = statistics.median
            print(
                f"{n:8} {'med':>5} {'':8} {'':8} {100 * med(ov):+8.1f}% {100 * med(ovc):+11.1f}% {'':14} {med(eng):11.3f}"
            )
    finally:
        client.close()
        cluster.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100, help="mixes per workload (default 100: 400 short runs, 100 long)")
    ap.add_argument("--batch", default="1,8,auto", help="runs per task to try (default 1,8,auto)")
    ap.add_argument("--workers", default="1,2", help="LocalCluster sizes to try (default 1,2)")
    ap.add_argument("--workloads", default="short,long,longer", help=f"which workloads, of {','.join(WORKLOADS)} (default short,long,longer)")
    ap.add_argument("--no-share", action="store_true", help="skip the worker's share without Dask")
    ap.add_argument(
        "--interleave",
        type=int,
        metavar="K",
        help="instead: K rounds of loop, sweep on one worker and the loop inside the worker, alternating (medians)",
    )
    args = ap.parse_args()
    batches = [None if b == "auto" else int(b) for b in args.batch.split(",")]
    sizes = [int(w) for w in args.workers.split(",")]
    chosen = args.workloads.split(",")
    unknown = [w for w in chosen if w not in WORKLOADS]
    if unknown:
        ap.error(f"--workloads: unknown {', '.join(unknown)}; expected some of {', '.join(WORKLOADS)}")

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        plans = {n: expand(sweep_file(d, n, args.count)) for n in chosen}
        if args.interleave:
            _interleaved(plans, args.interleave, d)
            return
        loop: dict[str, float] = {}
        loop_cpu: dict[str, float] = {}
        for n, p in plans.items():
            calls = [r.call for r in p.runs]
            _engine_loop(calls[:1])  # warm up
            loop[n], loop_cpu[n] = _engine_loop(calls)
        rayon = os.environ.get("RAYON_NUM_THREADS")
        print(f"# engine threads: the loop {rayon or 'one per CPU'}, each worker {rayon or 'the CPUs over the workers'}")
        print(
            f"{'workload':8} {'runs':>5} {'ms/run':>7} {'workers':>7} {'batch':>5} {'wall s':>7} {'runs/s':>7} {'overhead':>18}"
            f" {'CPU s':>7} {'CPU overhead':>18}"
        )
        for n, p in plans.items():
            print(
                f"{n:8} {len(p.runs):5} {1000 * loop[n] / len(p.runs):7.2f} {'loop':>7} {'-':>5} {loop[n]:7.2f}"
                f" {len(p.runs) / loop[n]:7.1f} {'':18} {loop_cpu[n]:7.2f}"
            )
        k = 0
        for workers in sizes:
            t = time.perf_counter()
            # the cluster `run` starts (its engine threads split between the workers)
            client, cluster = local_client(None, workers)
            print(f"# LocalCluster of {workers}: started in {time.perf_counter() - t:.2f} s")
            # the workers' first imports (pandas, pyarrow, cachepart: seconds)
            # are start-up too: warm them before the clock
            client.run(_warm)
            try:
                for n, p in plans.items():
                    for b in batches:
                        k += 1
                        c = _cpu(client)
                        t = time.perf_counter()
                        s = run(p, client=client, out=d / f"out{k}", batch=b, progress=False)
                        wall = time.perf_counter() - t
                        cpu = _cpu(client) - c
                        assert s.done == len(p.runs) and s.failed == 0
                        if workers == 1:
                            extra = f"{1000 * (wall - loop[n]) / len(p.runs):+6.2f} ms {100 * (wall / loop[n] - 1):+6.1f}%"
                        else:
                            extra = f"speed-up x{loop[n] / wall:.2f}"
                        extra_cpu = f"{1000 * (cpu - loop_cpu[n]) / len(p.runs):+6.2f} ms {100 * (cpu / loop_cpu[n] - 1):+6.1f}%"
                        print(
                            f"{n:8} {len(p.runs):5} {'':7} {workers:7} {b or 'auto':>5} {wall:7.2f} {len(p.runs) / wall:7.1f}"
                            f" {extra:>18} {cpu:7.2f} {extra_cpu:>18}"
                        )
            finally:
                client.close()
                cluster.close()
        if not args.no_share:
            _worker_share(plans, batches, d)


if __name__ == "__main__":
    main()
