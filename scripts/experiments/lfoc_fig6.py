"""LFOC (ICPP'19) Fig. 6 on the table-driven machine with PBBCache's Skylake
measurements (11-way LLC): the unfairness and STP of the static clustering
algorithms (Dunn, KPart, LFOC) and of Best-Static (the optimal fairness
clustering, ``optc-unf``) on random mixes of 8, 12 and 16 programs,
normalised to Stock-Linux (no partitioning).

Every number comes from ``cachepart.profile`` run here; nothing is copied
from the paper except its own figures, quoted for comparison.

    .venv/bin/python scripts/experiments/lfoc_fig6.py --out docs/experiments
"""

from __future__ import annotations

import argparse
import os
import random
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from cachepart import profile  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_METRICS = HERE.parents[2] / "shared" / "data" / "pbbcache" / "metrics.csv"
SIZES = (8, 12, 16)
# Model settings the ablation section reruns the same mixes under: memory
# bandwidth contention, which the real machine has and PBBCache's default
# leaves out. 60 GB/s is about half the Xeon Gold 6138's six DDR4-2666
# channels (128 GB/s peak), within reach of 16 instances (up to 7.2 GB/s
# each in the table).
# 25 GB/s is below what the machine sustains, chosen to make the limit bind.
ABLATIONS: list[tuple[str, dict[str, object]]] = [
    ("bandwidth limit 60 GB/s, simple (KPart) model", {"bw_model": "simple", "max_bw": 60000.0}),
    ("bandwidth limit 60 GB/s, stalls model", {"bw_model": "stalls", "max_bw": 60000.0}),
    ("bandwidth limit 25 GB/s, simple (KPart) model", {"bw_model": "simple", "max_bw": 25000.0}),
]
# (label in the figure, algorithm name); Best-Static is the paper's name for
# the optimal fairness clustering its simulator finds.
# `lfoc` runs under the `paper` preset (Table 1 and Algorithm 1);
# `lfoc@pbbcache` is PBBCache's variant of it, on the same mixes.
ALGORITHMS = [
    ("Dunn", "dunn"),
    ("KPart", "kpart"),
    ("LFOC", "lfoc"),
    ("LFOC (pbbcache)", "lfoc@pbbcache"),
    ("Best-Static", "optc-unf"),
]


def pool(metrics: Path) -> pd.DataFrame:
    """Every program of the table with its LFOC class (Table 1), sorted by
    name so that a seed draws the same mixes on any machine."""
    names = sorted(pd.read_csv(metrics)["BENCH"].unique())
    classes = profile.classify(metrics=metrics, mixes=[names])
    return classes[["app", "class"]].drop_duplicates().sort_values("app").reset_index(drop=True)


def random_mixes(programs: pd.DataFrame, size: int, count: int, seed: int) -> list[list[str]]:
    """`count` mixes of `size` program instances drawn with repetition (the
    paper's Fig. 5 counts instances of a benchmark per workload), each with
    at least one streaming and two cache-sensitive instances: the paper chose
    its programs "to experiment with a wider range of streaming and
    cache-sensitive programs"; a mix without them leaves nothing to
    partition."""
    rng = random.Random(f"fig6-{seed}-{size}")
    names = list(programs["app"])
    cls = dict(zip(programs["app"], programs["class"]))
    mixes: list[list[str]] = []
    while len(mixes) < count:
        mix = [rng.choice(names) for _ in range(size)]
        kinds = [cls[a] for a in mix]
        if kinds.count("streaming") >= 1 and kinds.count("sensitive") >= 2:
            mixes.append(mix)
    return mixes


def evaluate(
    metrics: Path,
    mixes: list[list[str]],
    size: int,
    time_limit: float | None,
    exact: bool = True,
    **model: object,
) -> pd.DataFrame:
    """Per mix and algorithm: unfairness and STP, and both normalised to
    stock on the same mix. `model` goes to `profile.evaluate` (bandwidth
    model and limit for the ablations); `exact=False` leaves Best-Static
    out (its search is far longer under a bandwidth limit, and the
    ablations compare the heuristics)."""
    wanted = [a for label, a in ALGORITHMS if exact or label != "Best-Static"]
    algos = ["stock"] + [a for a in wanted if "@" not in a]
    df = profile.evaluate(
        algos, metrics=metrics, mixes=mixes, time_limit=time_limit, lfoc_preset="paper", **model
    )
    for a in (a for a in wanted if "@" in a):
        name, preset = a.split("@")
        extra = profile.evaluate([name], metrics=metrics, mixes=mixes, lfoc_preset=preset, **model)
        df = pd.concat([df, extra.assign(algorithm=a)], ignore_index=True)
    per = (
        df.groupby(["workload", "algorithm"])[["unfairness", "stp", "proven_optimal"]]
        .first()
        .reset_index()
    )
    stock = per[per["algorithm"] == "stock"].set_index("workload")
    per = per[per["algorithm"] != "stock"].copy()
    per["norm_unfairness"] = per["unfairness"] / per["workload"].map(stock["unfairness"])
    per["norm_stp"] = per["stp"] / per["workload"].map(stock["stp"])
    per["apps"] = size
    per["label"] = per["algorithm"].map({a: label for label, a in ALGORITHMS})
    return per


def summary(per: pd.DataFrame) -> pd.DataFrame:
    """Mean, best and worst normalised figure per algorithm (and size)."""
    rows = []
    for (apps, label), g in list(per.groupby(["apps", "label"])) + [
        (("all", label), g) for label, g in per.groupby("label")
    ]:
        rows.append(
            {
                "apps": apps,
                "algorithm": label,
                "mixes": len(g),
                "unfairness_mean": g["norm_unfairness"].mean(),
                "unfairness_min": g["norm_unfairness"].min(),
                "unfairness_max": g["norm_unfairness"].max(),
                "stp_mean": g["norm_stp"].mean(),
                "stp_min": g["norm_stp"].min(),
                "stp_max": g["norm_stp"].max(),
            }
        )
    order = {label: i for i, (label, _) in enumerate(ALGORITHMS)}
    rows = [r for r in rows if r["mixes"] > 0]
    out = pd.DataFrame(rows)
    out["_a"] = out["apps"].map(lambda a: 99 if a == "all" else a)
    out["_o"] = out["algorithm"].map(order)
    return out.sort_values(["_a", "_o"]).drop(columns=["_a", "_o"]).reset_index(drop=True)


def plot(per: pd.DataFrame, out: Path) -> None:
    labels = [label for label, _ in ALGORITHMS]
    fig, axes = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    per = per.sort_values(["apps", "workload"])
    mixes = list(dict.fromkeys(zip(per["apps"], per["workload"])))
    x = range(len(mixes))
    width = 0.8 / len(labels)
    colors = ["#8172b2", "#dd8452", "#4c72b0", "#a6bddb", "#55a868"]
    for metric, ax, name in [
        ("norm_unfairness", axes[0], "unfairness"),
        ("norm_stp", axes[1], "STP"),
    ]:
        for i, (label, color) in enumerate(zip(labels, colors)):
            g = per[per["label"] == label].set_index(["apps", "workload"])
            ax.bar(
                [k + i * width for k in x],
                [g.loc[m, metric] for m in mixes],
                width,
                label=label,
                color=color,
            )
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel(f"{name}\n(normalised to stock)")
    axes[0].legend(ncol=len(labels), fontsize=8)
    axes[1].set_xticks([k + 0.4 - width / 2 for k in x])
    axes[1].set_xticklabels([f"{a}:{w}" for a, w in mixes], rotation=90, fontsize=6)
    axes[1].set_xlabel("mix (apps:workload)")
    fig.suptitle("LFOC Fig. 6 on PBBCache's Skylake data (static clustering, table-driven machine)")
    fig.tight_layout()
    fig.savefig(out / "lfoc-fig6.png", dpi=120, metadata={"Software": None})
    plt.close(fig)


def write(
    out: Path,
    per: pd.DataFrame,
    summ: pd.DataFrame,
    ablations: pd.DataFrame,
    args: argparse.Namespace,
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cols = [
        "apps",
        "workload",
        "algorithm",
        "unfairness",
        "stp",
        "norm_unfairness",
        "norm_stp",
        "proven_optimal",
    ]
    per[cols].to_csv(out / "lfoc-fig6.csv", index=False, float_format="%.6f")
    summ.to_csv(out / "lfoc-fig6-summary.csv", index=False, float_format="%.6f")
    plot(per, out)

    def s(label: str) -> pd.Series:
        return summ[(summ["apps"] == "all") & (summ["algorithm"] == label)].iloc[0]

    lfoc, kpart, dunn = s("LFOC"), s("KPart"), s("Dunn")
    stp_gap = (
        per[per["label"] == "Best-Static"].set_index(["apps", "workload"])["stp"]
        / per[per["label"] == "LFOC"].set_index(["apps", "workload"])["stp"]
        - 1
    )
    best_rows = per[per["label"] == "Best-Static"]
    proven = int(best_rows["proven_optimal"].sum())
    limit = (
        "no time limit"
        if args.time_limit is None
        else f"each exact solve limited to {args.time_limit:g} s"
    )
    lines = [
        "# LFOC Fig. 6: the static clustering algorithms against Stock-Linux",
        "",
        "García-García et al., ICPP'19 (LFOC), section 5.1, Fig. 6, on the table-driven",
        "machine with PBBCache's measurements of SPEC CPU2006/2017 programs on an Intel",
        "Skylake (Xeon Gold 6138, 11-way LLC: the paper's platform;",
        "`../shared/data/pbbcache/`).",
        "",
        "    .venv/bin/python scripts/experiments/lfoc_fig6.py --out docs/experiments",
        "",
        "## Method",
        "",
        f"- Mixes: {args.mixes} random mixes for each of 8, 12 and 16 program instances",
        "  (the paper's sizes), drawn with repetition from the 55 programs of the table",
        f"  (seed {args.seed}), each with at least one streaming and two cache-sensitive",
        "  instances (Table 1's classes as `cachepart profile classify` computes them).",
        "- Algorithms: `stock` (no partitioning), `dunn`, `kpart`, `lfoc` under the",
        "  `paper` preset (Table 1, Algorithm 1) and under `pbbcache` (PBBCache's variant), and",
        "  `optc-unf` (Best-Static: the optimal fairness clustering, as the paper's",
        f"  simulator computes it; {limit}, {proven} of {len(best_rows)} solves proven",
        "  optimal).",
        "- Each figure is normalised to stock on the same mix; unfairness is max slowdown",
        "  over min slowdown, STP the sum of speedups.",
        "- Deviations from the paper: (1) the paper enforces each plan with CAT on the",
        "  real machine and runs the mix (150 G instructions per program, restarted until",
        "  the longest completes three times); here the table-driven machine predicts",
        "  each program's slowdown from its per-way table (PBBCache's model, which the",
        "  paper's own simulator is), so no run-time interference beyond the LLC and the",
        "  bandwidth model is measured. (2) The paper's S_i mixes (Fig. 5) are not",
        "  published as data; ours are random mixes of the same kind. (3) No memory",
        "  bandwidth limit (PBBCache's default), so bandwidth contention is not modelled.",
        "",
        "## Results (all mixes)",
        "",
        "| algorithm | unfairness (mean) | best | worst | STP (mean) | best | worst |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, _ in ALGORITHMS:
        r = s(label)
        lines.append(
            f"| {label} | {r.unfairness_mean:.3f} | {r.unfairness_min:.3f} | {r.unfairness_max:.3f} "
            f"| {r.stp_mean:.3f} | {r.stp_max:.3f} | {r.stp_min:.3f} |"
        )
    lines += [
        "",
        "By mix size:",
        "",
        "| apps | algorithm | unfairness (mean) | best | worst | STP (mean) |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in summ[summ["apps"] != "all"].itertuples():
        lines.append(
            f"| {r.apps} | {r.algorithm} | {r.unfairness_mean:.3f} | {r.unfairness_min:.3f} "
            f"| {r.unfairness_max:.3f} | {r.stp_mean:.3f} |"
        )
    lines += [
        "",
        "![Fig. 6](lfoc-fig6.png)",
        "",
        "## Against the paper",
        "",
        "| claim (paper) | paper | ours |",
        "|---|---:|---:|",
        f"| LFOC unfairness reduction vs stock, mean | 14% | {100 * (1 - lfoc.unfairness_mean):.1f}% |",
        f"| LFOC unfairness reduction vs stock, best | 27.3% | {100 * (1 - lfoc.unfairness_min):.1f}% |",
        f"| KPart unfairness reduction vs stock, mean | 8.6% | {100 * (1 - kpart.unfairness_mean):.1f}% |",
        f"| KPart STP gain vs stock, best | up to 3% | {100 * (kpart.stp_max - 1):.1f}% |",
        f"| Dunn unfairness reduction, best | 15.5% | {100 * (1 - dunn.unfairness_min):.1f}% |",
        f"| Dunn unfairness, worst (x stock) | 1.14x | {dunn.unfairness_max:.3f}x |",
        f"| Best-Static STP over LFOC's, mean | 1.8% | {100 * stp_gap.mean():.1f}% |",
        f"| LFOC STP above KPart's in every mix | yes | {_share(per, 'LFOC', 'KPart', 'stp')} |",
        f'| LFOC unfairness below KPart\'s ("vast majority") | most mixes | {_share(per, "KPart", "LFOC", "unfairness")} |',
        "",
        "## Ablations",
        "",
        "The same mixes under other model settings, to see which of the deviations",
        "above moves the comparison (mean unfairness and STP normalised to stock):",
        "",
        "| setting | algorithm | unfairness (mean) | STP (mean) |",
        "|---|---|---:|---:|",
    ]
    for r in ablations.itertuples():
        lines.append(
            f"| {r.setting} | {r.algorithm} | {r.unfairness_mean:.3f} | {r.stp_mean:.3f} |"
        )
    base = ablations[ablations["setting"] == ablations["setting"].iloc[0]].set_index("algorithm")
    lines.append("")
    for setting, _ in ABLATIONS:
        a = ablations[ablations["setting"] == setting].set_index("algorithm")
        same = all(
            abs(a.loc[k, m] - base.loc[k, m]) < 1e-12
            for k in a.index
            for m in ("unfairness_mean", "stp_mean")
        )
        if same:
            lines.append(
                f"- {setting}: every figure equals the unlimited run's: the limit never binds on these mixes."
            )
        else:
            d = {k: a.loc[k, "unfairness_mean"] - base.loc[k, "unfairness_mean"] for k in a.index}
            moved = ", ".join(f"{k} {v:+.3f}" for k, v in d.items())
            lines.append(f"- {setting}: mean normalised unfairness moves by {moved}.")
    kp, lf = base.loc["KPart", "unfairness_mean"], base.loc["LFOC", "unfairness_mean"]
    gaps = ", ".join(
        f"{setting}: {100 * (a.loc['KPart', 'unfairness_mean'] - a.loc['LFOC', 'unfairness_mean']):.1f}"
        for setting, a in (
            (st, ablations[ablations["setting"] == st].set_index("algorithm"))
            for st, _ in ABLATIONS
        )
    )
    lines += [
        "",
        f"KPart's unfairness reduction here ({100 * (1 - kp):.1f}%) is about twice the paper's",
        f"(8.6%), and LFOC's lead over it ({100 * (kp - lf):.1f} points of normalised",
        "unfairness) is far smaller than the paper's (5.4 points). Memory bandwidth, the",
        "one contention the model adds to the per-way tables, does not close that gap:",
        f"LFOC's lead under each ablation is {gaps} points. What the model",
        "cannot show is what the paper measured on the real machine beyond the per-way",
        "tables (the plans run for real: prefetchers, DRAM and interconnect contention,",
        "phases); that gap stays unexplained here.",
        "",
        f"The LFOC preset moves little: PBBCache's variant gives {base.loc['LFOC (pbbcache)', 'unfairness_mean']:.3f}",
        f"against the paper's {lf:.3f} (mean normalised unfairness).",
        "",
    ]
    (out / "lfoc-fig6.md").write_text("\n".join(lines))


def _share(per: pd.DataFrame, hi: str, lo: str, metric: str) -> str:
    """In how many mixes `hi`'s metric is above `lo`'s (ties excluded)."""
    a = per[per["label"] == hi].set_index(["apps", "workload"])[metric]
    b = per[per["label"] == lo].set_index(["apps", "workload"])[metric]
    return f"{int((a > b).sum())} of {len(a)} mixes"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--metrics",
        type=Path,
        default=Path(os.environ.get("CACHEPART_PBBCACHE_METRICS", DEFAULT_METRICS)),
    )
    ap.add_argument("--out", type=Path, default=Path("docs/experiments"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mixes", type=int, default=10, help="mixes per size")
    ap.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="seconds per exact solve (default: none, so every run is exact and reproducible)",
    )
    args = ap.parse_args()
    if not args.metrics.is_file():
        raise SystemExit(f"{args.metrics}: PBBCache's metrics table is missing (set --metrics)")
    programs = pool(args.metrics)
    mixes = {n: random_mixes(programs, n, args.mixes, args.seed) for n in SIZES}

    def run(exact: bool = True, **model: object) -> pd.DataFrame:
        return pd.concat(
            [evaluate(args.metrics, mixes[n], n, args.time_limit, exact, **model) for n in SIZES],
            ignore_index=True,
        )

    per = run()
    summ = summary(per)
    rows = [summ[summ["apps"] == "all"].assign(setting="as above (no bandwidth limit)")]
    for setting, model in ABLATIONS:
        s = summary(run(False, **model))
        rows.append(s[s["apps"] == "all"].assign(setting=setting))
    ablations = pd.concat(rows, ignore_index=True)
    write(args.out, per, summ, ablations, args)
    print(summ.to_string(index=False))
    print(ablations[["setting", "algorithm", "unfairness_mean", "stp_mean"]].to_string(index=False))


if __name__ == "__main__":
    main()
