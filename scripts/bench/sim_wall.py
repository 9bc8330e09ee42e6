#!/usr/bin/env python3
"""Wall and simulating-thread CPU time of the full multicore simulator
(benchmark (b), `bench_system`), builds compared in paired, alternating runs.

On a shared machine the time of one run moves with what the neighbours do to
the host's L3 and memory (on the 2-core CI VM, one build ran anywhere from 8
to 16 M accesses/s within minutes, while a pure ALU loop varied by 2%), so a
figure from a few runs of each build says little. Here every round runs each
binary once, in an order that alternates from round to round (A B, then B A),
so that both see the same conditions; the figure of merit is the median over
rounds of each binary's time per access divided by the first binary's in the
same round, with the number of rounds it was faster in and a 95% bootstrap
interval of that median (a fixed seed: the same runs give the same interval),
for the wall time and for the simulating thread's CPU time (which leaves out
the trace decoders' threads where they compete for the same cores).

    scripts/bench/sim_wall.py [--rounds 20] [--accesses 5e6]
                              [--mix synthetic|walk|NAME,...] [--extra ARGS]
                              BASE [BIN ...]

BASE and BIN are built `bench_system` binaries (`cargo build --release -p
cachepart-sim --example bench_system`, copied aside per build). The simulated
lines of every run (per-app instructions, IPC, MPKI, occupancy, TLB misses)
are checked equal to the first run's: a build that changes results is refused,
not timed. Host instructions per access, which do not move with the load, come
from `sim_instr.py`.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
from pathlib import Path

from sim_instr import MIXES, TIMED

RATE = re.compile(
    r"simulated (\d+) accesses in ([0-9.]+) s wall, ([0-9.]+) s CPU of the simulating thread"
    r".*?: ([0-9.]+) M accesses/s \(wall\), ([0-9.]+) M accesses/s \(simulating thread CPU\)"
)


def run_once(binary: Path, args: list[str]) -> tuple[float, float, list[str]]:
    """One run: microseconds per access (wall, simulating-thread CPU) and
    the simulated lines."""
    p = subprocess.run([str(binary), *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{binary}: exited {p.returncode}:\n{(p.stdout + p.stderr)[-2000:]}")
    m = RATE.search(p.stdout)
    if not m:
        sys.exit(f"{binary}: no 'simulated N accesses in ... M accesses/s' line in its output")
    simulated = [l for l in p.stdout.splitlines() if not TIMED.match(l)]
    return 1.0 / float(m.group(4)), 1.0 / float(m.group(5)), simulated


def bootstrap_median(ratios: list[float], seed: int = 1, draws: int = 2000) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of the median of `ratios`."""
    rng = random.Random(seed)
    meds = sorted(
        statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(draws)
    )
    return meds[int(0.025 * draws)], meds[int(0.975 * draws) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binaries", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--accesses", default="5e6")
    ap.add_argument("--mix", default="synthetic", help="synthetic, walk, or 4 app names")
    ap.add_argument("--extra", default="", help="more bench_system arguments, e.g. '--window'")
    a = ap.parse_args()
    if a.rounds < 2:
        sys.exit("--rounds: expected at least 2")
    for b in a.binaries:
        if not b.is_file():
            sys.exit(f"{b}: no such binary (cargo build --release -p cachepart-sim --example bench_system)")
    mix = MIXES.get(a.mix, ["--mix", a.mix])
    args = ["--accesses", a.accesses, *mix, *a.extra.split()]
    bins = a.binaries
    wall: dict[Path, list[float]] = {b: [] for b in bins}
    cpu: dict[Path, list[float]] = {b: [] for b in bins}
    first = None
    for r in range(a.rounds):
        print(f"round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
        for b in bins if r % 2 == 0 else bins[::-1]:
            w, c, simulated = run_once(b, args)
            if first is None:
                first = (b, simulated)
            elif simulated != first[1]:
                diff = [f"  {x!r} != {y!r}" for x, y in zip(first[1], simulated) if x != y]
                sys.exit(f"{b}: simulated results differ from {first[0]}:\n" + "\n".join(diff[:10]))
            wall[b].append(w)
            cpu[b].append(c)
    base = bins[0]
    print(f"bench_system {' '.join(args)}; {a.rounds} alternating rounds; simulated results: equal")
    print(
        f"{'binary':<32} {'M acc/s wall':>13} {'CPU':>6} "
        f"{'wall/base':>10} {'95% CI':>12} {'faster':>7} {'CPU/base':>9} {'95% CI':>12} {'faster':>7}"
    )
    for b in bins:
        cells = []
        for times in (wall, cpu):
            ratios = [x / y for x, y in zip(times[b], times[base])]
            if b == base:
                cells += ["1", "", ""]
            else:
                lo, hi = bootstrap_median(ratios)
                cells += [
                    f"{statistics.median(ratios):.3f}",
                    f"{lo:.3f}-{hi:.3f}",
                    f"{sum(x < 1 for x in ratios)}/{len(ratios)}",
                ]
        print(
            f"{str(b)[-32:]:<32} {1 / statistics.median(wall[b]):>13.1f} "
            f"{1 / statistics.median(cpu[b]):>6.1f} {cells[0]:>10} {cells[1]:>12} {cells[2]:>7} "
            f"{cells[3]:>9} {cells[4]:>12} {cells[5]:>7}"
        )

if __name__ == "__main__":
    main()
