"""LFOC (ICPP'19) Fig. 7 on the trace-driven simulator: the dynamic policies
(online LFOC and dynamic Dunn) against Stock-Linux on mixes of real programs
with long-term phases, on the scaled Xeon Gold 6138 (11-way CAT).

The programs are real Debian programs captured with ``cachepart trace
capture --tool qemu``: the built-in profile set's xz, sort, bzip2,
sqlite3, python3 and md5sum (inputs from ``scripts/make-builtin-profiles.sh``)
and ``stream``, NumPy's ``cumsum`` over two 64 MiB arrays after NumPy's
import (a cache-friendly start-up phase of 390 M instructions, then 560 M
instructions of streaming, like the paper's fotonik3d in its Fig. 4).
Every number in the output comes from runs made here; the paper's own
figures are quoted for comparison only.

    .venv/bin/python scripts/experiments/lfoc_fig7.py --out docs/experiments

Captures go to ``out/fig7-traces`` (about 400 MB, reused when present),
scenarios and run reports to ``out/fig7``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = "xeon-gold-6138-small"
# The P-workloads: each has at least one program whose class changes during
# its run (stream: start-up, then streaming; sqlite3: inserts, then indexed
# lookups; sort: read, sort, write), as the paper's P_i mixes have xz,
# astar, mcf or xalancbmk. Programs are named apart when a mix runs two.
MIXES: dict[str, list[str]] = {
    "P1": ["stream", "xz", "sort", "bzip2"],
    "P2": ["stream", "sqlite3", "xz", "python3"],
    "P3": ["stream", "stream", "sort", "xz"],
    "P4": ["sort", "bzip2", "xz", "sqlite3"],
    "P5": ["stream", "stream", "xz", "sort", "bzip2", "sqlite3", "python3", "md5sum"],
}
# (label, policy, overrides of the policy's section): Stock-Linux is no
# partitioning. The last two are ablations (not in the paper): online LFOC
# with sampling windows of 10 M instructions, the paper's own length
# (unscaled), instead of 1 M; and static LFOC (the paper's Fig. 6 policy)
# planned once from each program's complete alone sweep over 1..11 ways,
# an oracle of its classes that no online policy has.
POLICIES: list[tuple[str, str, dict[str, int]]] = [
    ("Stock", "stock", {}),
    ("Dunn", "dunn-dynamic", {}),
    ("LFOC", "lfoc-online", {}),
    ("LFOC-w10M", "lfoc-online", {"window-instructions": 10_000_000}),
    ("LFOC-static", "lfoc", {}),
]
# The paper's controllers run every 500 ms and sample every 10 M (sampling
# mode) and 100 M instructions (normal mode), over runs of minutes. Our runs
# last 0.5-1.5 s of simulated time, so every period is scaled down by
# 25 (repartitioning) and 10 (sampling windows and monitoring periods).
REPARTITION_CYCLES = 40_000_000  # 20 ms at 2 GHz
SECTIONS = {
    "lfoc-online": {
        "warmup-windows": 3,
        "window-instructions": 1_000_000,
        "period-instructions": 10_000_000,
        "repartition-cycles": REPARTITION_CYCLES,
    },
    "dunn-dynamic": {"period-cycles": REPARTITION_CYCLES},
}
STREAM_PROGRAM = """import numpy as np
a = np.ones(8 << 20)
b = np.empty_like(a)
for _ in range(8):
    np.cumsum(a, out=b)
print(b[-1])
"""
# The paper's numbers (section 5.2).
PAPER = {
    "lfoc_vs_stock_unfairness": -16.7,
    "lfoc_vs_dunn_unfairness_mean": -9.0,
    "lfoc_vs_dunn_unfairness_best": -20.5,
}


def cachepart_bin() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "cachepart"


def capture(traces: Path) -> None:
    """The real programs' traces, captured once (qemu-user)."""
    want = {p for mix in MIXES.values() for p in mix}
    if all((traces / f"{p}.cpt").exists() for p in want):
        return
    bin_ = cachepart_bin()
    if not bin_.exists():
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "cachepart-cli"], cwd=ROOT, check=True
        )
    # whole runs (WINDOW=0): the mixes run each program to its end, phases and all
    env = dict(os.environ, CACHEPART=str(bin_), SKIP_PROFILE="1", TOOL="qemu", WINDOW="0")
    subprocess.run(
        [str(ROOT / "scripts" / "make-builtin-profiles.sh"), str(traces)], env=env, check=True
    )
    if not (traces / "stream.cpt").exists():
        subprocess.run(
            [
                str(bin_),
                "trace",
                "capture",
                "--tool",
                "qemu",
                "-o",
                str(traces / "stream.cpt"),
                "--",
                sys.executable,
                "-c",
                STREAM_PROGRAM,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )


def app_names(mix: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for p in mix:
        seen[p] = seen.get(p, 0) + 1
        out.append(p if seen[p] == 1 else f"{p}#{seen[p]}")
    return out


def scenario_text(mix: list[str], policy: str, overrides: dict[str, int], traces: Path) -> str:
    lines = [
        f'platform = "{PLATFORM}"',
        "seed = 1",
        "interval-cycles = 2_000_000",
        f'policy = "{policy}"',
        "",
        "# LFOC's run methodology (section 5.1): traces restart until the",
        "# program whose run takes longest has completed one.",
        "[method]",
        'kind = "restart"',
        "completions = 1",
    ]
    if policy in SECTIONS:
        section = {**SECTIONS[policy], **overrides}
        lines += ["", f"[{policy}]"] + [f"{k} = {v}" for k, v in section.items()]
    for name, prog in zip(app_names(mix), mix):
        # The built-in profile set's timing (scripts/make-builtin-profiles.sh).
        lines += [
            "",
            "[[app]]",
            f'name = "{name}"',
            f'trace = "{traces / (prog + ".cpt")}"',
            "base-cpi = 0.5",
            "mlp = 2.0",
        ]
    return "\n".join(lines) + "\n"


def run_one(job: tuple[str, str, str, Path]) -> dict:
    """Runs one scenario with the CLI (one process per run) and returns its
    JSON report."""
    mix, label, scenario, work = job
    out = work / f"{mix}-{label}.json"
    if not out.exists():
        tmp = out.with_suffix(".json.tmp")
        subprocess.run(
            [
                str(cachepart_bin()),
                "sim",
                "run",
                scenario,
                "--format",
                "json",
                "-q",
                "-o",
                str(tmp),
            ],
            check=True,
        )
        tmp.rename(out)
    return json.loads(out.read_text())


def final_classes(report: dict, names: list[str]) -> dict[str, str]:
    classes: dict[str, str] = {}
    for d in report.get("lfoc_online") or []:
        what = d["what"]
        if what.get("kind") == "classified" and d.get("app") is not None:
            classes[names[d["app"]]] = what["class"]
    return classes


def class_history(report: dict, names: list[str]) -> dict[str, list[str]]:
    hist: dict[str, list[str]] = {n: [] for n in names}
    for d in report.get("lfoc_online") or []:
        what = d["what"]
        if what.get("kind") == "classified" and d.get("app") is not None:
            hist[names[d["app"]]].append(what["class"])
    return hist


def plan_ways(plan: str, n: int) -> list[int]:
    """Ways per app of a printed plan (`0x7ff=2;0x7c0=0,3;0x3=1-2`)."""
    ways = [0] * n
    for part in plan.split(";"):
        mask, apps = part.split("=")
        w = bin(int(mask, 16)).count("1")
        for a in apps.split(","):
            lo, _, hi = a.partition("-")
            for i in range(int(lo), int(hi or lo) + 1):
                ways[i] = w
    return ways


def dunn_mean_ways(report: dict, names: list[str]) -> dict[str, float]:
    """Mean ways per app over Dunn's re-plans (one per period)."""
    plans = [plan_ways(d["plan"], len(names)) for d in report.get("dunn_dynamic") or []]
    if not plans:
        return {}
    return {n: sum(p[i] for p in plans) / len(plans) for i, n in enumerate(names)}


def pct(x: float) -> str:
    return f"{x:+.1f}%"


def write_up(
    out: Path, df: pd.DataFrame, summary: dict, dunn: pd.DataFrame, lfoc_rows: list[dict]
) -> None:
    """docs/experiments/lfoc-fig7.md: method, results beside the paper's,
    and what the runs show (every figure from this run's reports)."""
    u = df.pivot(index="mix", columns="policy", values="unfairness_norm")
    st = df.pivot(index="mix", columns="policy", values="stp_norm")
    raw = df[df.policy == "Stock"].set_index("mix")
    lf, lw = summary["LFOC"], summary["LFOC-w10M"]
    L = [
        "# LFOC Fig. 7: the dynamic policies against Stock-Linux",
        "",
        "García-García et al., ICPP'19 (LFOC), section 5.2, Fig. 7, on the trace-driven",
        "simulator: online LFOC (`lfoc-online`) and dynamic Dunn (`dunn-dynamic`) on",
        "mixes of real programs with long-term phases, each normalised to",
        "Stock-Linux (`stock`, no partitioning) on the same mix.",
        "",
        "    .venv/bin/python scripts/experiments/lfoc_fig7.py --out docs/experiments",
        "",
        "(about 40 minutes on 2 cores; it captures its programs first, into",
        "`out/fig7-traces`, and keeps every run's report in `out/fig7`).",
        "",
        "## Method",
        "",
        "- Platform: `xeon-gold-6138-small`, the paper's Xeon Gold 6138 with its",
        "  L2 and LLC scaled by 1/8 (11-way CAT), as the built-in profile set uses",
        "  (docs/profiles.md).",
        "- Programs: real Debian programs captured with `cachepart trace capture",
        "  --tool qemu` on the built-in profile set's inputs",
        "  (`scripts/make-builtin-profiles.sh`): xz, sort, bzip2, sqlite3, python3,",
        "  md5sum; and `stream`, NumPy's `cumsum` over two 64 MiB arrays after",
        "  NumPy's import: a start-up phase of 390 M instructions that fits the",
        "  cache, then 560 M instructions of streaming (28 LLC misses per",
        "  kilo-instruction, in the range of libquantum and lbm in PBBCache's",
        "  table). It is the phase pattern of the paper's fotonik3d (its Fig. 4).",
        "  sqlite3 (inserts, then indexed lookups), sort (read, sort, write) and",
        "  python3 (start-up, then an interpreter loop) change behaviour too.",
        "  Timing as in the built-in profile set: base CPI 0.5, MLP 2.",
        "- Mixes: P1-P4 of four programs and P5 of eight (table below); the",
        "  paper's P_i mixes (xz, astar, mcf, xalancbmk, ...) are not published as",
        "  data, and astar, mcf and xalancbmk (SPEC inputs) are not captured here.",
        '- Run methodology: the paper\'s (section 5.1, `[method] kind = "restart"`):',
        "  every program restarts its trace as soon as it ends, until the program",
        "  whose run takes longest has completed one run; a program's slowdown is",
        "  the geometric mean of its runs' times over its time alone.",
        "- Controllers: the paper repartitions every 500 ms and samples every",
        "  10 M instructions (sampling mode) and 100 M (normal mode), over runs of",
        "  minutes. Our runs last 0.5-1.5 s of simulated time, so repartitioning",
        "  is every 20 ms (for both policies) and LFOC's windows and monitoring",
        "  periods are 1 M and 10 M instructions (scaled by 1/10); warm-up 3",
        "  windows. The ablation `LFOC-w10M` uses the paper's own 10 M-instruction",
        "  sampling windows.",
        "- Unfairness is max slowdown over min slowdown, STP the sum of speedups.",
        "- Reproducibility: given the traces, every run is deterministic and the",
        "  script reuses reports already in `out/fig7` (`--fresh` re-runs them).",
        "  The captures themselves depend on the machine (library versions,",
        "  NumPy's build, address layout), so a capture elsewhere can move the",
        "  figures a little.",
        "",
        "## Results",
        "",
        "![Fig. 7](lfoc-fig7.png)",
        "",
        "| mix | programs | Stock unfairness | Stock STP | Dunn unf. | Dunn STP | LFOC unf. | LFOC STP "
        "| LFOC-w10M unf. | LFOC-w10M STP | LFOC-static unf. | LFOC-static STP |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mix in u.index:
        L.append(
            f"| {mix} | {', '.join(MIXES[mix])} | {raw.loc[mix, 'unfairness']:.3f} | {raw.loc[mix, 'stp']:.3f} | "
            + " | ".join(
                f"{u.loc[mix, p]:.3f} | {st.loc[mix, p]:.3f}"
                for p in ("Dunn", "LFOC", "LFOC-w10M", "LFOC-static")
            )
            + " |"
        )
    L += [
        "",
        "Dunn, LFOC and the ablations are normalised to Stock on the same mix",
        "(`lfoc-fig7.csv`; per-program slowdowns in `lfoc-fig7-apps.csv`).",
        "",
        "| | ours (LFOC, 1 M windows) | ours (LFOC-w10M) | paper |",
        "|---|---|---|---|",
        f"| LFOC's unfairness vs Stock, mean | {pct(lf['unfairness_vs_stock_mean'])} | "
        f"{pct(lw['unfairness_vs_stock_mean'])} | -16.7% |",
        f"| LFOC's unfairness vs Dunn's, mean | {pct(lf['unfairness_vs_dunn_mean'])} | "
        f"{pct(lw['unfairness_vs_dunn_mean'])} | -9% |",
        f"| LFOC's unfairness vs Dunn's, best mix | {pct(lf['unfairness_vs_dunn_best'])} | "
        f"{pct(lw['unfairness_vs_dunn_best'])} | -20.5% (their P4) |",
        f"| LFOC's STP vs Dunn's, mean | {pct(lf['stp_vs_dunn_mean'])} | {pct(lw['stp_vs_dunn_mean'])} "
        "| higher on every mix |",
        f"| Dunn's unfairness vs Stock, mean | {pct(summary['Dunn']['unfairness_vs_stock_mean'])} | | "
        "slightly fairer than in Fig. 6 |",
        "",
        "## What the runs show",
        "",
    ]
    L += notes(u, dunn, lfoc_rows)
    (out / "lfoc-fig7.md").write_text("\n".join(L) + "\n")


def notes(u: pd.DataFrame, dunn: pd.DataFrame, lfoc_rows: list[dict]) -> list[str]:
    """The findings, each with the figures of this run that support it."""
    d = dunn.set_index("mix")
    with_stream = [m for m in d.index if pd.notna(d.loc[m, "stream_ways"])]
    lfoc = {r["mix"]: r for r in lfoc_rows if r["variant"] == "LFOC"}
    w10 = {r["mix"]: r for r in lfoc_rows if r["variant"] == "LFOC-w10M"}
    no_stream = [m for m in u.index if m not in with_stream]
    L = [
        "- **Dunn gives the streaming program the most cache.** Over Dunn's re-plans,",
        "  `stream` holds "
        + ", ".join(f"{d.loc[m, 'stream_ways']:.1f}" for m in with_stream)
        + f" of 11 ways on average in {', '.join(with_stream)}, against "
        + ", ".join(f"{d.loc[m, 'other_ways']:.1f}" for m in with_stream)
        + " for the other programs: its fraction of cycles stalled on L2 misses is",
        "  the highest of every mix (0.70 under Stock, `l2-miss-stall-cycles` over",
        "  `cycles` in the Stock reports), and Dunn sizes partitions by that",
        "  fraction alone. This is the paper's own explanation of Dunn's behaviour",
        "  (section 5.1, GemsFDTD and fotonik3d). The control: in "
        + ", ".join(no_stream)
        + ", with no streaming program, Dunn's unfairness is "
        + ", ".join(f"{u.loc[m, 'Dunn']:.3f}" for m in no_stream)
        + " of Stock's.",
        "- **Online LFOC finds the streaming phase.** `stream` is classified",
        "  streaming at "
        + ", ".join(
            f"{lfoc[m]['first_streaming_ms']:.0f} ms ({m})"
            for m in with_stream
            if lfoc[m]["first_streaming_ms"] is not None
        )
        + ", after its start-up phase was sampled as sensitive or light, and is then",
        "  confined to one way. LFOC's best mixes are the ones where a streaming",
        "  program shares the cache with sensitive ones: "
        + ", ".join(f"{m} {u.loc[m, 'LFOC']:.3f}" for m in u.index if u.loc[m, "LFOC"] < 0.97)
        + " of Stock's unfairness.",
        "- **Its sampled curves follow the programs' phases as much as their",
        "  partition sizes.** Each sampling step measures the next 1 M",
        "  instructions, and our programs change phase every few tens of millions",
        "  of instructions (the paper's programs run for minutes). The per-size IPCs LFOC",
        "  recorded for bzip2 in P4 at 1..7 ways were 2.00, 2.00, 1.93, 1.33,",
        "  1.65, 0.50, 0.77 (`lfoc_online` in `out/fig7/P4-LFOC.json`):",
        "  start-up, then compression, not a cache curve. LFOC read a critical",
        "  size of 1 way and gave bzip2 2 ways; its slowdown rose from 1.071",
        "  (Stock) to 1.209. Classifications per run (every sampling round ends",
        "  in one): " + ", ".join(f"{m} {lfoc[m]['samplings']}" for m in u.index) + "; python3",
        "  is resampled at most restarts, because its start-up phase crosses the",
        "  light class's 25% stall threshold.",
        "- **Ablation, the paper's 10 M-instruction windows (`LFOC-w10M`).** Longer",
        "  windows average over phases: bzip2's critical size in P4 became 4 ways",
        "  (slowdown 1.090) and P4's unfairness "
        + f"{u.loc['P4', 'LFOC']:.3f} -> {u.loc['P4', 'LFOC-w10M']:.3f} of Stock's, P5's "
        + f"{u.loc['P5', 'LFOC']:.3f} -> {u.loc['P5', 'LFOC-w10M']:.3f}. But each sampling",
        "  round takes 10 times longer, with the sampled program in a small",
        "  partition meanwhile: P1 "
        + f"{u.loc['P1', 'LFOC']:.3f} -> {u.loc['P1', 'LFOC-w10M']:.3f}, P3 "
        + f"{u.loc['P3', 'LFOC']:.3f} -> {u.loc['P3', 'LFOC-w10M']:.3f}. Classifications",
        "  per run: " + ", ".join(f"{m} {w10[m]['samplings']}" for m in u.index) + ".",
        "  The window length moves the result in both directions; neither length",
        "  suits programs this short.",
        "- **Ablation, static LFOC on complete alone sweeps (`LFOC-static`).** The",
        "  same clustering planned once from each program's whole alone run at",
        "  1..11 ways (an oracle of the classes that no online policy has): "
        + ", ".join(f"{m} {u.loc[m, 'LFOC-static']:.3f}" for m in u.index)
        + f" of Stock's unfairness (mean {pct((u['LFOC-static'].mean() - 1) * 100)}), against",
        "  online LFOC's "
        + ", ".join(f"{m} {u.loc[m, 'LFOC']:.3f}" for m in u.index)
        + f" (mean {pct((u['LFOC'].mean() - 1) * 100)}). Online classification costs",
        f"  {(u['LFOC'].mean() - u['LFOC-static'].mean()) * 100:.1f} points of the mean; with perfect classes",
        "  the clustering itself removes "
        + f"{(1 - u['LFOC-static'].mean()) * 100:.1f}% of Stock's unfairness on these mixes, against",
        "  18.5% for static LFOC on PBBCache's SPEC tables (Fig. 6,",
        "  `lfoc-fig6.md`). That difference is not isolated: programs, mix sizes",
        "  and machine model all differ between the two. Online LFOC",
        "  beats the oracle on P3, where it follows `stream` from its start-up",
        "  phase into its streaming one. On P4, with no streaming program, both",
        "  lose to Stock: LFOC gives bzip2 and xz partitions of their own, and",
        "  sort, whose working set spans the whole LLC, loses more in the 4 ways",
        "  it shares with sqlite3 than the others gain (static: sort 1.220",
        "  against 1.146 under Stock).",
        "",
        "## Deviations and limits",
        "",
        "- Short runs and scaled periods (above): they make the sampled curves",
        "  noisy; the two ablations measure their effect.",
        "- Mixes of four and eight programs; the paper's workloads and its astar,",
        "  mcf and xalancbmk are not reproduced (the paper's -20.5% is on its",
        "  own P4, not ours).",
        "- The simulator has no hardware prefetchers yet, so `stream`'s misses",
        "  all reach DRAM and its slowdown from sharing stays small (1.02-1.10).",
        "- The paper's OS-level costs (monitoring, CAT writes) are not charged;",
        "  the sampling partitions' own cost (a program squeezed while it is",
        "  sampled) is in every run.",
    ]
    return L


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out",
        type=Path,
        default=ROOT / "out" / "exp",
        help="where the write-up, CSV and figure go",
    )
    ap.add_argument("--traces", type=Path, default=ROOT / "out" / "fig7-traces")
    ap.add_argument(
        "--work", type=Path, default=ROOT / "out" / "fig7", help="scenarios and run reports"
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fresh", action="store_true", help="re-run even where a report exists")
    args = ap.parse_args()
    if not cachepart_bin().exists():
        subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", "cachepart-cli"], cwd=ROOT, check=True
        )
    capture(args.traces.resolve())
    if args.fresh and args.work.exists():
        shutil.rmtree(args.work)
    args.work.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)

    jobs = []
    for mix, progs in MIXES.items():
        for label, policy, overrides in POLICIES:
            path = args.work / f"{mix}-{label}.toml"
            path.write_text(scenario_text(progs, policy, overrides, args.traces.resolve()))
            jobs.append((mix, label, str(path), args.work))
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        reports = list(ex.map(run_one, jobs))

    rows, app_rows, dunn_rows, lfoc_rows = [], [], [], []
    for (mix, label, _, _), rep in zip(jobs, reports):
        names = app_names(MIXES[mix])
        m = rep["metrics"]
        rows.append(
            {
                "mix": mix,
                "policy": label,
                "unfairness": m["unfairness"],
                "stp": m["stp"],
                "antt": m["antt"],
            }
        )
        for a in rep["apps"]:
            app_rows.append(
                {"mix": mix, "policy": label, "app": a["totals"]["name"], "slowdown": a["slowdown"]}
            )
        if label == "Dunn":
            ways = dunn_mean_ways(rep, names)
            streams = [w for n, w in ways.items() if n.startswith("stream")]
            others = [w for n, w in ways.items() if not n.startswith("stream")]
            dunn_rows.append(
                {
                    "mix": mix,
                    "stream_ways": sum(streams) / len(streams) if streams else None,
                    "other_ways": sum(others) / len(others),
                }
            )
        if label in ("LFOC", "LFOC-w10M"):
            hist = class_history(rep, names)
            first_streaming = [
                d["at_cycles"] / 2e6
                for d in rep["lfoc_online"]
                if d["what"].get("kind") == "classified" and d["what"].get("class") == "streaming"
            ]
            lfoc_rows.append(
                {
                    "mix": mix,
                    "variant": label,
                    "samplings": sum(len(v) for v in hist.values()),
                    "first_streaming_ms": min(first_streaming) if first_streaming else None,
                    "classes": hist,
                }
            )
    df = pd.DataFrame(rows)
    stock = df[df.policy == "Stock"].set_index("mix")
    df["unfairness_norm"] = df.apply(
        lambda r: r.unfairness / stock.loc[r.mix, "unfairness"], axis=1
    )
    df["stp_norm"] = df.apply(lambda r: r.stp / stock.loc[r.mix, "stp"], axis=1)
    df.to_csv(args.out / "lfoc-fig7.csv", index=False, float_format="%.5f")
    pd.DataFrame(app_rows).to_csv(args.out / "lfoc-fig7-apps.csv", index=False, float_format="%.5f")

    piv_u = df.pivot(index="mix", columns="policy", values="unfairness_norm")
    piv_s = df.pivot(index="mix", columns="policy", values="stp_norm")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, piv, what in ((axes[0], piv_u, "unfairness"), (axes[1], piv_s, "STP")):
        piv[["Dunn", "LFOC"]].plot.bar(ax=ax, color=["#1f77b4", "#ff7f0e"], rot=0)
        ax.axhline(1.0, color="grey", lw=0.8)
        vals = piv[["Dunn", "LFOC"]].to_numpy()
        ax.set_ylim(min(vals.min(), 1.0) - 0.03, max(vals.max(), 1.0) + 0.06)
        ax.legend(loc="upper left", ncols=2, fontsize=8)
        ax.set_ylabel(f"{what} normalised to Stock")
        ax.set_xlabel("")
    fig.suptitle("LFOC Fig. 7 on the simulator: dynamic policies (xeon-gold-6138-small)")
    fig.tight_layout()
    fig.savefig(args.out / "lfoc-fig7.png", dpi=120)
    plt.close(fig)

    summary = {}
    for label in ("LFOC", "LFOC-w10M"):
        vs_dunn = (piv_u[label] / piv_u["Dunn"] - 1) * 100
        summary[label] = {
            "unfairness_vs_stock_mean": (piv_u[label].mean() - 1) * 100,
            "unfairness_vs_dunn_mean": vs_dunn.mean(),
            "unfairness_vs_dunn_best": vs_dunn.min(),
            "stp_vs_dunn_mean": ((piv_s[label] / piv_s["Dunn"]).mean() - 1) * 100,
            "stp_vs_stock_mean": (piv_s[label].mean() - 1) * 100,
        }
    summary["Dunn"] = {
        "unfairness_vs_stock_mean": (piv_u["Dunn"].mean() - 1) * 100,
        "stp_vs_stock_mean": (piv_s["Dunn"].mean() - 1) * 100,
    }
    (args.out / "lfoc-fig7-summary.json").write_text(
        json.dumps(summary, indent=2, sort_keys=True) + "\n"
    )
    write_up(args.out, df, summary, pd.DataFrame(dunn_rows), lfoc_rows)
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(json.dumps(summary, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
