#!/usr/bin/env python3
"""Host instructions and host cache misses per simulated access of the full
multicore simulator (benchmark (b), `bench_system`), counted by callgrind.

Wall time on a shared machine follows the load; these counts do not (the
same binary and arguments give the same counts to within a few hundred per
million). Each binary runs under `valgrind --tool=callgrind
--separate-threads=yes --cache-sim=yes` with the collection switched on only
inside `System::run_interval_with`, so only the simulating thread is counted
(the trace decoders run ahead on their own threads and are left out), and
the host caches modelled are `--D1` (default 48 KiB 12-way: an AMD Zen 4 core's
L1D) and `--LL` (default 1 MiB 16-way: its L2).

    scripts/bench/sim_instr.py [--accesses 1e7] [--mix synthetic|walk|NAME,...]
                               [--extra ARGS] [--llc-share] BIN [BIN ...]

Before the first callgrind run each binary runs once natively on a few
accesses, so that the synthetic traces it replays (written once under the
temporary directory) are not generated under valgrind, which takes many
minutes.

`--llc-share` is for binaries built with `--cfg cachepart_split_llc`
(`scripts/bench/llc_share.sh` builds one), which keep the LLC's part of the
write-back path (`Hierarchy::fetch_from_llc`, `write_back_llc_inline`) out
of line: it adds the share of the simulating thread's instructions,
host-L1D misses and host-L2 misses spent there (the shared work a parallel
run's clock thread would keep, docs/sim.md).

BIN is a built `bench_system` (`cargo build --release -p cachepart-sim
--example bench_system`; the default is target/release/examples/bench_system).
With several binaries (say, a base and a change) they run one after another on
the same arguments, the simulated lines of each (per-app instructions, IPC,
MPKI, occupancy, TLB misses, walks) are checked equal, and a table prints
instructions, host-L1D misses and host-L2 misses per simulated access. Needs
valgrind (`apt-get install valgrind`). About 70 s a binary at 10^7 accesses.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

MIXES = {
    "synthetic": [],
    "walk": ["--mix", "pointer-chase,streaming,pointer-chase,streaming"],
}

# Lines of bench_system's output that carry timings (left out of the
# equality check): everything else is simulated and must match.
TIMED = re.compile(r"^(setup|simulated|dram latency|sources)")


# The functions a `--cfg cachepart_split_llc` build keeps out of line: the
# LLC's part of the write-back path.
LLC_FUNCTIONS = re.compile(r"::(fetch_from_llc|write_back_llc_inline) \[")


def warm_up(binary: Path, args: list[str]) -> None:
    """Runs `binary` natively on a few accesses, writing the traces it
    replays if they are missing (generating them under valgrind would take
    many minutes)."""
    short = list(args)
    short[short.index("--accesses") + 1] = "1e5"
    p = subprocess.run([str(binary), *short], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{binary}: exited {p.returncode}:\n{p.stderr[-2000:]}")


def llc_costs(out_file: Path) -> dict:
    """Inclusive costs of the LLC functions in one thread's callgrind
    output (`callgrind_annotate --inclusive=yes`), summed; empty if the
    binary inlines them."""
    p = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", str(out_file)],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        sys.exit(f"callgrind_annotate failed on {out_file}:\n{p.stderr[-2000:]}")
    events: list[str] = []
    sums: dict = {}
    for line in p.stdout.splitlines():
        if line.startswith("Events shown:"):
            events = line.split()[2:]
        elif LLC_FUNCTIONS.search(line):
            # "1,234 (5.6%)" per event, or "." for none, then the name
            fields = re.findall(r"([0-9,]+) \([^)]*\)|(?<!\S)\.(?!\S)", line.split("  /")[0])
            values = [int(f.replace(",", "")) if f else 0 for f in fields]
            for e, v in zip(events, values):
                sums[e] = sums.get(e, 0) + v
    return sums


def run_one(
    binary: Path, args: list[str], d1: str, ll: str, scratch: Path, llc_share: bool = False
) -> dict:
    warm_up(binary, args)
    out = scratch / f"callgrind-{os.getpid()}-{binary.stat().st_ino}.out"
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--separate-threads=yes",
        "--cache-sim=yes",
        f"--D1={d1}",
        f"--LL={ll}",
        "--toggle-collect=*run_interval_with*",
        f"--callgrind-out-file={out}",
        str(binary),
        *args,
    ]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{binary}: valgrind exited {p.returncode}:\n{p.stderr[-2000:]}")
    m = re.search(r"simulated (\d+) accesses", p.stdout)
    if not m:
        sys.exit(f"{binary}: no 'simulated N accesses' line in its output")
    accesses = int(m.group(1))
    totals = None
    llc = {}
    for f in sorted(scratch.glob(out.name + "*")):
        events = summary = None
        for line in f.read_text().splitlines():
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:") or line.startswith("totals:"):
                summary = [int(x) for x in line.split()[1:]]
        if events and summary and summary[0] > 0:
            if totals is not None:
                sys.exit(f"{binary}: more than one thread ran inside run_interval_with")
            totals = dict(zip(events, summary))
            if llc_share:
                llc = llc_costs(f)
        f.unlink()
    if totals is None:
        sys.exit(f"{binary}: callgrind counted nothing inside run_interval_with")
    simulated = [l for l in p.stdout.splitlines() if not TIMED.match(l)]
    if llc_share and not llc:
        sys.exit(
            f"{binary}: no fetch_from_llc in its profile; build it with "
            "RUSTFLAGS='--cfg cachepart_split_llc' (scripts/bench/llc_share.sh)"
        )
    return {"accesses": accesses, "totals": totals, "simulated": simulated, "llc": llc}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binaries", nargs="*", type=Path)
    ap.add_argument("--accesses", default="1e7")
    ap.add_argument("--mix", default="synthetic", help="synthetic, walk, or 4 app names")
    ap.add_argument("--extra", default="", help="more bench_system arguments, e.g. '--walk hierarchy'")
    ap.add_argument("--D1", dest="d1", default="49152,12,64")
    ap.add_argument("--LL", dest="ll", default="1048576,16,64")
    ap.add_argument(
        "--llc-share",
        action="store_true",
        help="also print the LLC part's share (binaries built with --cfg cachepart_split_llc)",
    )
    a = ap.parse_args()
    bins = a.binaries or [Path("target/release/examples/bench_system")]
    for b in bins:
        if not b.is_file():
            sys.exit(f"{b}: no such binary (cargo build --release -p cachepart-sim --example bench_system)")
    mix = MIXES.get(a.mix, ["--mix", a.mix])
    args = ["--accesses", a.accesses, *mix, *a.extra.split()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="cachepart-sim-instr-") as scratch:
        for b in bins:
            print(f"running {b} {' '.join(args)} under callgrind ...", file=sys.stderr, flush=True)
            rows.append((b, run_one(b, args, a.d1, a.ll, Path(scratch), a.llc_share)))
    first = rows[0][1]["simulated"]
    for b, r in rows[1:]:
        if r["simulated"] != first:
            diff = [f"  {x!r} != {y!r}" for x, y in zip(first, r["simulated"]) if x != y]
            sys.exit(f"{b}: simulated results differ from {rows[0][0]}:\n" + "\n".join(diff[:10]))
    print(f"bench_system {' '.join(args)}; host D1 {a.d1}, host L2 {a.ll}")
    print(f"{'binary':<48} {'accesses':>10} {'instr/acc':>10} {'L1D miss/acc':>13} {'L2 miss/acc':>12}")
    for b, r in rows:
        t, n = r["totals"], r["accesses"]
        d1 = t.get("D1mr", 0) + t.get("D1mw", 0)
        l2 = t.get("DLmr", 0) + t.get("DLmw", 0)
        print(f"{str(b)[-48:]:<48} {n:>10} {t['Ir'] / n:>10.1f} {d1 / n:>13.2f} {l2 / n:>12.3f}")
        if a.llc_share:
            c = r["llc"]
            cd1 = c.get("D1mr", 0) + c.get("D1mw", 0)
            cl2 = c.get("DLmr", 0) + c.get("DLmw", 0)
            print(
                f"{'  of which the LLC part':<48} {'':>10} {c.get('Ir', 0) / n:>10.1f} "
                f"{cd1 / n:>13.2f} {cl2 / n:>12.3f}   "
                f"({100 * c.get('Ir', 0) / t['Ir']:.1f}% / {100 * cd1 / max(d1, 1):.1f}% / "
                f"{100 * cl2 / max(l2, 1):.1f}%)"
            )
    if len(rows) > 1:
        print("simulated results: equal")


if __name__ == "__main__":
    main()
