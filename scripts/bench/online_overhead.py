"""What an online controller costs a simulator run: one 16-program mix on
the Xeon Gold 6138 (20 cores, 11-way LLC), run end to end with the CLI
(`cachepart sim run --no-alone`) under a static policy (`stock`, planned
once) and under each online controller, alternating, median of N.

    python3 scripts/bench/online_overhead.py [--repeat 3]

Prints one table row per policy: median wall seconds, the ratio to stock,
and the controller's decisions (re-plans). The simulated work is the same
in every run (16 x 10 M instructions); what differs is the controller's
own time and the plans it applies.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATORS = [
    ("sensitive-zipf", 0.8, 1.5),
    ("streaming", 0.6, 4.0),
    ("sensitive-uniform", 0.8, 1.2),
    ("light", 0.7, 1.0),
]
POLICIES = {
    "stock": "",
    "lfoc-online": (
        "[lfoc-online]\nwarmup-windows = 3\nwindow-instructions = 500_000\n"
        "period-instructions = 1_000_000\nrepartition-cycles = 10_000_000\n"
    ),
    "dunn-dynamic": "[dunn-dynamic]\nperiod-cycles = 10_000_000\n",
    "kpart-dynaway": "[kpart-dynaway]\nwindow-instructions = 500_000\nreprofile-cycles = 40_000_000\n",
}


def scenario(policy: str) -> str:
    lines = [
        'platform = "xeon-gold-6138"',
        "seed = 1",
        "interval-cycles = 1_000_000",
        "instructions = 10_000_000",
        f'policy = "{policy}"',
        "",
        POLICIES[policy],
    ]
    for i in range(16):
        gen, cpi, mlp = GENERATORS[i % 4]
        lines += [
            "[[app]]",
            f'name = "{gen}-{i}"',
            f'generator = "{ROOT / "examples" / "traces" / (gen + ".toml")}"',
            f"base-cpi = {cpi}",
            f"mlp = {mlp}",
            "",
        ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    bin_ = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "cachepart"
    if not bin_.exists():
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "cachepart-cli"], cwd=ROOT, check=True
        )
    times: dict[str, list[float]] = {p: [] for p in POLICIES}
    decisions: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for p in POLICIES:
            f = Path(tmp) / f"{p}.toml"
            f.write_text(scenario(p))
            files[p] = f
        for _ in range(args.repeat):
            for p, f in files.items():
                out = Path(tmp) / f"{p}.json"
                t = time.perf_counter()
                subprocess.run(
                    [
                        str(bin_),
                        "sim",
                        "run",
                        str(f),
                        "--no-alone",
                        "-q",
                        "--format",
                        "json",
                        "-o",
                        str(out),
                    ],
                    check=True,
                )
                times[p].append(time.perf_counter() - t)
                rep = json.loads(out.read_text())
                key = p.replace("-", "_")
                decisions[p] = len(rep.get(key) or []) if p != "stock" else 1
    base = statistics.median(times["stock"])
    print("| policy | median wall (s) | vs stock | decisions |")
    print("|---|---|---|---|")
    for p, ts in times.items():
        m = statistics.median(ts)
        print(f"| {p} | {m:.2f} | {m / base:.3f}x | {decisions[p]} |")


if __name__ == "__main__":
    main()
