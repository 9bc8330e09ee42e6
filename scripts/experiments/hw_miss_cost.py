"""What one extra LLC miss costs, measured against simulated, for the
hardware comparison (`scripts/experiments/hw_compare.sh`).

For each program, from its rows at 1 way and at the most ways of a
PBBCache-style table (``BENCH,NR_WAYS,ipc,...,llcmpki,...``: PBBCache's
measurements and ``cachepart profile from-trace``'s output alike):

    cycles per extra miss = 1000 * (1/IPC(1) - 1/IPC(max)) / (MPKI(1) - MPKI(max))

i.e. the cycles per kilo-instruction that giving up the ways adds, divided by
the misses per kilo-instruction it adds. It is the price the timing model
puts on a miss, separated from how many misses the program makes: a
simulated program can match the measured normalised IPC with ten times fewer
misses that each cost ten times more. A program whose misses grow by less
than ``--min-delta`` per kilo-instruction prints ``n/a`` (the ratio is noise).

Usage:
    python3 hw_miss_cost.py MEASURED.csv NAME=SIM.csv [NAME=SIM.csv ...]
        [--map ours=theirs,...] [--min-delta 0.05]

Only the standard library; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

DEFAULT_MAP = (
    "bzip2=bzip206,gcc=gcc06,perl=perlbench06,hmmer=hmmer06,"
    "gnugo=gobmk06,povray=povray06,xalan=xalancbmk06"
)


class TableError(Exception):
    """A table that cannot be read, naming the file, line and field."""


def load(path: Path) -> dict[str, dict[int, tuple[float, float]]]:
    """``program -> ways -> (ipc, llcmpki)`` of a PBBCache-style CSV."""
    out: dict[str, dict[int, tuple[float, float]]] = {}
    try:
        f = path.open(newline="")
    except OSError as e:
        raise TableError(f"{path}: {e.strerror}") from e
    with f:
        reader = csv.DictReader(f)
        need = {"BENCH", "NR_WAYS", "ipc", "llcmpki"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            raise TableError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        for row in reader:
            line = reader.line_num
            try:
                ways = int(row["NR_WAYS"])
                ipc = float(row["ipc"])
                mpki = float(row["llcmpki"])
            except ValueError as e:
                raise TableError(f"{path}:{line}: {e}") from e
            if ways < 1 or not ipc > 0 or not math.isfinite(mpki):
                raise TableError(
                    f"{path}:{line}: expected NR_WAYS >= 1, ipc > 0 and a finite llcmpki"
                )
            out.setdefault(row["BENCH"], {})[ways] = (ipc, mpki)
    return out


def miss_cost(rows: dict[int, tuple[float, float]], min_delta: float) -> tuple[float | None, float]:
    """(cycles per extra miss or None, extra MPKI) from 1 way to the most ways."""
    if 1 not in rows or len(rows) < 2:
        return None, math.nan
    top = max(rows)
    ipc1, mpki1 = rows[1]
    ipc_top, mpki_top = rows[top]
    delta = mpki1 - mpki_top
    if delta < min_delta:
        return None, delta
    return 1000.0 * (1.0 / ipc1 - 1.0 / ipc_top) / delta, delta


def parse_map(text: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(","):
        ours, sep, theirs = item.partition("=")
        if not sep or not ours or not theirs:
            raise TableError(f"--map: expected ours=theirs, got {item!r}")
        pairs.append((ours, theirs))
    return pairs


def cell(cost: float | None, delta: float) -> str:
    if cost is None:
        return "n/a"
    return f"{cost:.1f} ({delta:.2f})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("measured", type=Path, help="PBBCache's metrics.csv")
    ap.add_argument("sims", nargs="+", metavar="NAME=SIM.csv", help="simulated tables")
    ap.add_argument("--map", default=DEFAULT_MAP, help="ours=theirs,... [%(default)s]")
    ap.add_argument("--min-delta", type=float, default=0.05, help="[%(default)s]")
    args = ap.parse_args(argv)
    try:
        pairs = parse_map(args.map)
        measured = load(args.measured)
        sims = []
        for spec in args.sims:
            name, sep, path = spec.partition("=")
            if not sep or not name or not path:
                raise TableError(f"expected NAME=SIM.csv, got {spec!r}")
            sims.append((name, load(Path(path))))
    except TableError as e:
        print(f"hw_miss_cost: {e}", file=sys.stderr)
        return 2
    head = ["program", "measured"] + [n for n, _ in sims]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for ours, theirs in pairs:
        if theirs not in measured:
            print(f"hw_miss_cost: {args.measured}: no rows for {theirs}", file=sys.stderr)
            return 2
        cells = [ours, cell(*miss_cost(measured[theirs], args.min_delta))]
        for name, table in sims:
            cells.append(cell(*miss_cost(table[ours], args.min_delta)) if ours in table else "-")
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
