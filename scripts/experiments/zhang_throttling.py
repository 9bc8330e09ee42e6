"""Zhang et al. (USENIX ATC'09) Fig. 2, Fig. 3 and Table 2 on the simulated
Xeon 5160: pairs of swim-, mcf-, equake- and SPECjbb-like programs sharing
the 4 MiB L2, under default sharing, the ideal static page-coloring
partition, scheduling-quantum adjustment with an idle process, duty-cycle
modulation, and duty cycle plus prefetchers (the hybrid), each at its
best-fairness setting found by ``cachepart sim throttle``.

    ./scripts/experiments/zhang_throttling.sh            # builds, then runs this
    python3 scripts/experiments/zhang_throttling.py --bin target/release/cachepart --out docs/experiments

Only the standard library and matplotlib (for the figure; skipped with a
warning when missing). Every number in the output comes from runs made
here; the paper's figures are quoted for comparison only. Writes
``zhang-throttling.csv`` (the best setting of each method for each pair),
``zhang-throttling-summary.csv`` (averages beside the paper's),
``zhang-throttling-candidates.csv`` (every setting tried) and
``zhang-throttling.png``; the search reports go to ``out/zhang``.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: The analogues (see each file's comments for its calibration).
PROGRAMS = {
    "swim": "examples/traces/zhang-swim-like.toml",
    "mcf": "examples/traces/zhang-mcf-like.toml",
    "equake": "examples/traces/zhang-equake-like.toml",
    "jbb": "examples/traces/zhang-jbb-like.toml",
}
#: The paper's pairs without SPECweb (no analogue here), in its order.
PAIRS = [
    ("swim", "mcf"),
    ("swim", "equake"),
    ("swim", "jbb"),
    ("mcf", "equake"),
    ("mcf", "jbb"),
    ("equake", "jbb"),
]
SAME = [(p, p) for p in PROGRAMS]
METHODS = ["default", "coloring", "quantum", "duty", "hybrid"]
LABELS = {
    "default": "default sharing",
    "coloring": "page coloring (ideal static)",
    "quantum": "scheduling quantum",
    "duty": "duty cycle",
    "hybrid": "duty cycle & prefetch",
}
#: The paper's averages over its 10 pairs (section 3, "Best Fairness").
PAPER_UNFAIRNESS = {
    "default": 0.191,
    "coloring": 0.028,
    "quantum": 0.025,
    "duty": 0.027,
    "hybrid": 0.017,
}


def scenario_text(a: str, b: str, cycles: int, seed: int, platform: str = "xeon-5160") -> str:
    names = (a, b) if a != b else (a, f"{b}-2")
    apps = "".join(
        f'\n[[app]]\nname = "{n}"\ngenerator = "{ROOT / PROGRAMS[p]}"\n'
        for n, p in zip(names, (a, b))
    )
    return (
        f'name = "zhang-{a}-{b}"\n'
        f'platform = "{platform}"\n'
        'allocator = "tam"\n'
        'prefetchers = "platform"\n'
        f"seed = {seed}\n"
        "interval-cycles = 1_000_000\n"
        f'method = {{ kind = "fixed-time", cycles = {cycles} }}\n' + apps
    )


def search(bin_: Path, work: Path, a: str, b: str, args: argparse.Namespace) -> dict[str, Any]:
    scen = work / f"zhang-{a}-{b}.toml"
    scen.write_text(scenario_text(a, b, args.cycles, args.seed, args.platform))
    out = work / f"zhang-{a}-{b}.json"
    stages = args.stages.split(",")
    cmd = [str(bin_), "sim", "throttle", str(scen), "--keep", str(args.keep)]
    cmd += [f"--{x}" for x in stages if x in ("prefetchers", "coloring")]
    if a != b and "quantum" in stages:
        cmd.append("--quantum")
    cmd += [
        "--quantum-run-cycles",
        str(args.quantum_run_cycles),
        "--max-runs",
        "2000",
        "--format",
        "json",
        "-o",
        str(out),
    ]
    t = time.time()
    subprocess.run(cmd, check=True)
    print(f"{a}/{b}: {time.time() - t:.0f} s", file=sys.stderr)
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def setting(c: dict[str, Any]) -> str:
    parts = []
    for i in range(len(c["duty"])):
        s = c["duty"][i]
        if c["prefetchers"][i] is not None:
            s += f" pf={c['prefetchers'][i]:#x}"
        if c["quantum"][i]:
            q = c["quantum"][i]
            s += f" idle={q['run-cycles']}/{q['idle-cycles']}"
        if c["colors"][i]:
            s += f" colors={c['colors'][i]}"
        parts.append(s)
    return "; ".join(parts)


def best_of(report: dict[str, Any], same: bool) -> dict[str, dict[str, Any]]:
    """Each method's setting: the fairest for different programs; for two
    instances of one program the paper's trivial fair settings (equal
    colors, full speed, no idle process) and, for the hybrid, the most
    efficient identical prefetcher word on both cores."""
    d = report["default"]
    if not same:
        found = {
            "default": d,
            "coloring": report.get("best_coloring"),
            "quantum": report.get("best_quantum"),
            "duty": report["best_duty"],
            "hybrid": report.get("best_hybrid"),
        }
        return {k: v for k, v in found.items() if v is not None}
    cands = report["candidates"]
    colors = [c for c in cands if c["stage"] == "coloring"]
    half = len(colors) // 2  # splits are in order of the first app's colors: 1, 2, ..., C - 1
    equal = colors[half]
    hybrid = [
        c
        for c in cands
        if c["stage"] == "hybrid"
        and all(x == "8/8" for x in c["duty"])
        and c["prefetchers"][0] == c["prefetchers"][1]
    ]
    h = max(hybrid, key=lambda c: c["efficiency"])
    return {"default": d, "coloring": equal, "quantum": d, "duty": d, "hybrid": h}


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def figure(rows: list[dict[str, Any]], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("warning: matplotlib missing, no figure", file=sys.stderr)
        return
    fig, axes = plt.subplots(2, 1, figsize=(11, 7.5))
    for ax, metric, pairs, title in [
        (axes[0], "unfairness_factor", PAIRS, "Fig. 2: unfairness factor (lower is better)"),
        (axes[1], "efficiency", PAIRS + SAME, "Fig. 3: overall system efficiency at best fairness"),
    ]:
        width = 0.8 / len(METHODS)
        for m, method in enumerate(METHODS):
            ys = [
                next(r[metric] for r in rows if r["pair"] == f"{a}/{b}" and r["method"] == method)
                for a, b in pairs
            ]
            xs = [i + (m - (len(METHODS) - 1) / 2) * width for i in range(len(pairs))]
            ax.bar(xs, ys, width, label=LABELS[method])
        ax.set_xticks(range(len(pairs)))
        ax.set_xticklabels([f"{a}/{b}" for a, b in pairs], fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8, ncol=3)
    fig.suptitle("Zhang et al. on the simulated Xeon 5160 (analogue programs)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", type=Path, default=ROOT / "target/release/cachepart")
    p.add_argument("--out", type=Path, default=ROOT / "docs/experiments")
    p.add_argument("--work", type=Path, default=ROOT / "out/zhang")
    p.add_argument(
        "--cycles", type=int, default=12_000_000, help="co-run length (fixed-time method)"
    )
    p.add_argument(
        "--keep",
        type=int,
        default=2,
        help="duty settings besides the default whose prefetchers are tuned",
    )
    p.add_argument("--quantum-run-cycles", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--name", default="zhang-throttling", help="prefix of the output files")
    p.add_argument(
        "--stages", default="prefetchers,quantum,coloring", help="search stages besides duty cycles"
    )
    p.add_argument(
        "--dram-bandwidth-gbps",
        type=float,
        default=None,
        help="ablation: run on a copy of xeon-5160 with this DRAM bandwidth",
    )
    p.add_argument("--pairs", default="", help="comma-separated a/b pairs (default: all)")
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    args.platform = "xeon-5160"
    if args.dram_bandwidth_gbps is not None:
        text = (ROOT / "platforms/xeon-5160.toml").read_text()
        old = "dram-bandwidth-gbps = 10.6"
        assert old in text, "platforms/xeon-5160.toml changed; update the ablation"
        plat = args.work / "xeon-5160-bandwidth.toml"
        plat.write_text(text.replace(old, f"dram-bandwidth-gbps = {args.dram_bandwidth_gbps}"))
        args.platform = str(plat)
    args.out.mkdir(parents=True, exist_ok=True)
    todo = PAIRS + SAME
    if args.pairs:
        todo = [tuple(x.split("/")) for x in args.pairs.split(",")]
    rows: list[dict[str, Any]] = []
    every: list[list[Any]] = []
    for a, b in todo:
        report = search(args.bin, args.work, a, b, args)
        for method, c in best_of(report, a == b).items():
            rows.append(
                {
                    "pair": f"{a}/{b}",
                    "method": method,
                    "unfairness_factor": c["unfairness_factor"],
                    "efficiency": c["efficiency"],
                    "slowdown_a": c["slowdowns"][0],
                    "slowdown_b": c["slowdowns"][1],
                    "setting": setting(c),
                }
            )
        for i, c in enumerate(report["candidates"]):
            every.append(
                [
                    f"{a}/{b}",
                    i,
                    c["stage"],
                    setting(c),
                    *c["slowdowns"],
                    c["unfairness_factor"],
                    c["efficiency"],
                ]
            )
    with open(args.out / f"{args.name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(args.out / f"{args.name}-candidates.csv", "w", newline="") as f:
        w2 = csv.writer(f)
        w2.writerow(
            [
                "pair",
                "candidate",
                "stage",
                "setting",
                "slowdown_a",
                "slowdown_b",
                "unfairness_factor",
                "efficiency",
            ]
        )
        w2.writerows(every)
    different = {f"{a}/{b}" for a, b in PAIRS}
    summary = []
    for m in METHODS:
        if not any(r["method"] == m for r in rows):
            continue
        u = [r["unfairness_factor"] for r in rows if r["method"] == m and r["pair"] in different]
        e = [r["efficiency"] for r in rows if r["method"] == m]
        summary.append(
            {
                "method": m,
                "unfairness_factor_mean": round(mean(u), 4),
                "paper_unfairness_factor_mean": PAPER_UNFAIRNESS[m],
                "efficiency_mean": round(mean(e), 4),
                "paper_efficiency_mean": "about 0.65",
            }
        )
    with open(args.out / f"{args.name}-summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    for s in summary:
        print(s)
    if not args.pairs:
        figure(rows, args.out / f"{args.name}.png")


if __name__ == "__main__":
    main()
