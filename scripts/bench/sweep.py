"""What a sweep on Dask costs over calling the engine in a loop.

    .venv/bin/python scripts/bench/sweep.py [--count 40] [--batch 1,8]

Two workloads of profile runs, each planned from a sweep file written
here: ``short`` (mixes of 4 from the built-in Debian table; about a
millisecond per run) and ``long`` (mixes of 16 with repetition from the
same table under ucp-slowdown, whirlpool and lfoc+; tens of milliseconds).
For each: the engine called in a loop in this process (the reference),
then the sweep on a LocalCluster of 1 and of 2 worker processes (started
before the clock; its start-up is printed once), with results written to
a fresh directory each time. Prints one row per (workload, workers,
batch): wall seconds, runs per second, and the overhead per run and in
percent against the loop (1 worker; with 2 workers the speed-up instead).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from cachepart.sweep import plan as expand
from cachepart.sweep import run
from cachepart.sweep.execute import engine_call

WORKLOADS = {
    "short": ('["stock", "ucp", "kpart", "lfoc"]', "[4]", "false"),
    "long": ('["ucp-slowdown", "whirlpool", "lfoc+"]', "[16]", "true"),
}


def sweep_file(d: Path, name: str, count: int) -> Path:
    algs, apps, rep = WORKLOADS[name]
    p = d / f"{name}.toml"
    p.write_text(
        f'[sweep]\nname = "{name}"\n[base]\nmetrics = "builtin:debian"\n[axes]\nalgorithms = {algs}\n'
        f"[axes.random-mixes]\napps = {apps}\ncount = {count}\nseeds = [1]\nrepetition = {rep}\n"
    )
    return p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=40, help="mixes per workload (default 40)")
    ap.add_argument("--batch", default="1,8", help="runs per task to try (default 1,8)")
    args = ap.parse_args()
    batches = [int(b) for b in args.batch.split(",")]
    from distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        plans = {n: expand(sweep_file(d, n, args.count)) for n in WORKLOADS}
        loop: dict[str, float] = {}
        for n, p in plans.items():
            engine_call(p.runs[0])  # warm up
            t = time.perf_counter()
            for r in p.runs:
                engine_call(r)
            loop[n] = time.perf_counter() - t
        print(f"{'workload':8} {'runs':>5} {'ms/run':>7} {'workers':>7} {'batch':>5} {'wall s':>7} {'runs/s':>7} {'overhead':>18}")
        for n, p in plans.items():
            print(f"{n:8} {len(p.runs):5} {1000 * loop[n] / len(p.runs):7.2f} {'loop':>7} {'-':>5} {loop[n]:7.2f} {len(p.runs) / loop[n]:7.1f}")
        k = 0
        for workers in (1, 2):
            t = time.perf_counter()
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1")
            client = Client(cluster)
            print(f"# LocalCluster of {workers}: started in {time.perf_counter() - t:.2f} s")
            try:
                for n, p in plans.items():
                    for b in batches:
                        k += 1
                        t = time.perf_counter()
                        s = run(p, client=client, out=d / f"out{k}", batch=b, progress=False)
                        wall = time.perf_counter() - t
                        assert s.done == len(p.runs) and s.failed == 0
                        if workers == 1:
                            extra = f"{1000 * (wall - loop[n]) / len(p.runs):+6.2f} ms {100 * (wall / loop[n] - 1):+6.1f}%"
                        else:
                            extra = f"speed-up x{loop[n] / wall:.2f}"
                        print(f"{n:8} {len(p.runs):5} {'':7} {workers:7} {b:5} {wall:7.2f} {len(p.runs) / wall:7.1f} {extra:>18}")
            finally:
                client.close()
                cluster.close()


if __name__ == "__main__":
    main()
