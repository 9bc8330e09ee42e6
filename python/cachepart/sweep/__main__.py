"""The sweep command line: ``python -m cachepart.sweep plan|run|report``
(``cachepart sweep ...`` runs this).

Errors are printed as ``error: MESSAGE`` with exit status 1; usage errors
exit 2 (argparse). ``run`` stops on Ctrl-C (SIGINT, exit 130) and on
SIGTERM (what ``kill`` and SLURM at a job's time limit send; exit 143): the
runs not started are cancelled, finished runs stay, and running again
resumes. A SIGINT that was ignored when the command started (a job started
with ``&`` from a script) stays ignored, as the shell meant; SIGTERM still
stops it.
"""

from __future__ import annotations

import argparse
import csv
import json
import signal
import sys
from collections.abc import Sequence

INSTALL_HINT = (
    "install the sweep dependencies into this Python ({python}): "
    "pip install 'dask[distributed]' pyarrow tqdm (./scripts/setup.sh does it in .venv)"
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cachepart sweep", description="Sweeps on Dask: plan, run, report.")
    sub = p.add_subparsers(dest="command", required=True)
    pl = sub.add_parser("plan", help="list the runs of a sweep file and their count")
    pl.add_argument("file", help="the sweep file (TOML)")
    pl.add_argument("--format", choices=["table", "csv", "json"], default="table")
    r = sub.add_parser("run", help="run a sweep (resumes: runs already done are skipped)")
    r.add_argument("file", help="the sweep file (TOML)")
    r.add_argument("--scheduler", metavar="ADDR", help="a Dask scheduler (tcp://HOST:PORT); default: a local cluster")
    r.add_argument("--workers", type=int, metavar="N", help="worker processes of the local cluster (default: one per CPU; at most 8 per CPU)")
    r.add_argument("--out", metavar="DIR", help="results directory: new, empty, or this sweep's to resume (default: NAME-results)")
    r.add_argument("--batch", type=int, metavar="N", help="runs per Dask task (default: sized from the measured run time, about half a second of work a task)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    rep = sub.add_parser("report", help="write the HTML report of a results directory")
    rep.add_argument("dir", help="the results directory")
    rep.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    rep.add_argument(
        "--samples", metavar="HASH,...", help="sim sweeps: the runs (hash prefixes) whose samples are plotted (default: the first 4)"
    )
    return p


def _plan(args: argparse.Namespace) -> int:
    from cachepart.sweep.plan import expand

    plan = expand(args.file)
    cols = ["index", "hash", *dict.fromkeys(k for r in plan.runs for k in r.labels)]
    rows = [{"index": r.index, "hash": r.hash, **r.labels} for r in plan.runs]
    if args.format == "json":
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.format == "csv":
        w = csv.DictWriter(sys.stdout, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    else:
        def cell(r: dict[str, object], c: str) -> str:
            v = r.get(c)
            if c == "hash":
                return str(v)[:12]
            return "" if v is None else str(v)

        widths = {c: max(len(c), *(len(cell(r, c)) for r in rows)) if rows else len(c) for c in cols}
        print("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
        for r in rows:
            print("  ".join(cell(r, c).ljust(widths[c]) for c in cols).rstrip())
        print(f"{len(rows)} runs")
    return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt so
    that the runner cancels what is left the same way."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def _run(args: argparse.Namespace) -> int:
    from cachepart.sweep.runner import run

    if args.workers is not None and args.workers < 1:
        raise SystemExit("cachepart sweep: error: --workers must be at least 1")
    if args.workers is not None and args.scheduler is None:
        from cachepart.sweep.runner import MAX_WORKERS_PER_CPU, _cpus

        most = MAX_WORKERS_PER_CPU * _cpus()
        if args.workers > most:
            # each worker is a process of its own: a typo would start thousands
            raise SystemExit(
                f"cachepart sweep: error: --workers {args.workers}: expected at most {most} "
                f"({MAX_WORKERS_PER_CPU} per CPU of this machine) for a local cluster"
            )
    signal.signal(signal.SIGTERM, _raise_terminated)
    s = run(args.file, scheduler=args.scheduler, workers=args.workers, out=args.out, batch=args.batch, progress=not args.quiet)
    print(
        f"{s.total} runs: {s.already_done} already done, {s.done} done now, {s.failed} failed; results in {s.out}",
        file=sys.stderr,
    )
    return 1 if s.failed else 0


def _report(args: argparse.Namespace) -> int:
    from cachepart.sweep.report_html import report

    runs = None if args.samples is None else [h.strip() for h in args.samples.split(",") if h.strip()]
    path = report(args.dir, args.output, runs)
    print(f"report written to {path}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
        import tqdm  # noqa: F401
    except ImportError as e:
        print(f"error: {e.name} is missing: " + INSTALL_HINT.format(python=sys.executable), file=sys.stderr)
        return 1
    from cachepart import _core

    try:
        return {"plan": _plan, "run": _run, "report": _report}[args.command](args)
    except _core.CachepartError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        what = "terminated" if isinstance(e, Terminated) else "interrupted"
        print(f"{what}: finished runs are kept; run again to resume", file=sys.stderr)
        return 128 + (signal.SIGTERM if isinstance(e, Terminated) else signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
