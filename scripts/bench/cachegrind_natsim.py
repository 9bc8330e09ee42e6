#!/usr/bin/env python3
"""`cachepart sim cachegrind` against natsim, end to end, as a user runs them.

The yardstick is `../shared/bench/natsim.c`: a plain C loop in
cachegrind's model (move-to-front tag arrays as valgrind's `cg_sim.c`)
over the raw 8-byte records of a trace, mmap'd. Both programs see the same
references of one real program, captured once under valgrind lackey and
written twice from that one run (`lk2bin` for natsim's raw records,
`cachepart trace convert --from lackey` for the compressed `.cpt`).

Each repetition runs the two whole processes one after the other
(alternating which goes first) and times each from start to exit: for
cachepart that is reading and decompressing the `.cpt` and printing the
totals; for natsim, mapping its raw file (already in the page cache) and
its loop. The nine totals of both are checked equal before timing. Prints
one row per run, then the medians and the ratio (cachepart's references
per second over natsim's; the target is at least 1.0), and each process's
CPU seconds (user + system over all its threads: cachepart's decoding
thread included), which other jobs on the machine disturb less than wall
time.

    scripts/bench/cachegrind_natsim.py [--reps N] [--mb SIZE] [--work DIR]
    scripts/bench/cachegrind_natsim.py --trace FILE.cpt [--reps N] [--work DIR]
    scripts/bench/cachegrind_natsim.py ... --cp-args "--threads 2"

`--cp-args` adds options to cachepart's command line (`--threads`,
`--decoders`); the default is cachepart's own defaults.

With `--trace`, an existing `.cpt` is raced instead of a fresh capture:
its accesses are written once as natsim's raw records by the
`cpt_to_natsim` example of cachepart-trace (the same records `lk2bin`
writes from lackey's text; built with cargo unless CPT_TO_NATSIM names
the binary), so no valgrind is needed, only gcc (or NATSIM, a natsim
binary already built).

Environment: CACHEPART (default target/release/cachepart), SHARED (default
../shared), CPT_TO_NATSIM, NATSIM. Needs valgrind (without `--trace`),
gzip and gcc. The traces stay in the work directory (default:
$TMPDIR/cachepart-cg-natsim) for the next run; delete it when done.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GEOMETRY = {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "2097152,16,64"}


def sh(cmd: list[str] | str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def make_input(path: Path, mb: float) -> None:
    """Seeded text with a skewed vocabulary (compressible as source code or
    logs are), `mb` MB."""
    r = random.Random(20261127)
    syll = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "an", "el", "or", "us", "ix", "em"]
    vocab = ["".join(r.choice(syll) for _ in range(r.randint(1, 5))) for _ in range(30000)]
    size, lines = 0, []
    while size < mb * 1e6:
        line = " ".join(vocab[int(len(vocab) * r.random() ** 2)] for _ in range(r.randint(3, 12)))
        lines.append(line)
        size += len(line) + 1
    path.write_text("\n".join(lines) + "\n")


def build_tools(work: Path, shared: Path, progs: tuple[str, ...]) -> Path:
    """natsim (and lk2bin) under WORK/bin, built once; NATSIM names a
    natsim binary to use instead of building one."""
    bins = work / "bin"
    bins.mkdir(parents=True, exist_ok=True)
    if os.environ.get("NATSIM") and not (bins / "natsim").exists():
        shutil.copy(os.environ["NATSIM"], bins / "natsim")
    for prog in progs:
        flags = ["-O3", "-march=native"] if prog == "natsim" else ["-O3"]
        if not (bins / prog).exists():
            sh(["gcc", *flags, "-o", str(bins / prog), str(shared / "bench" / f"{prog}.c")])
    return bins


def from_cpt(work: Path, cpt: Path) -> Path:
    """natsim's raw records of CPT's accesses, written once into WORK."""
    raw = work / (cpt.stem + ".bin")
    if raw.exists() and raw.stat().st_mtime >= cpt.stat().st_mtime:
        return raw
    tool = os.environ.get("CPT_TO_NATSIM")
    if tool is None:
        sh(["cargo", "build", "--release", "-q", "-p", "cachepart-trace", "--example", "cpt_to_natsim"], cwd=ROOT)
        tool = str(ROOT / "target/release/examples/cpt_to_natsim")
    print(f"# writing natsim's raw records of {cpt} (once)", file=sys.stderr)
    sh([tool, str(cpt), str(raw)])
    return raw


def capture(work: Path, cachepart: str, shared: Path, mb: float) -> tuple[Path, Path]:
    bins = build_tools(work, shared, ("natsim", "lk2bin"))
    raw, cpt = work / f"gzip9-{mb}mb.bin", work / f"gzip9-{mb}mb.cpt"
    if raw.exists() and cpt.exists():
        return raw, cpt
    inp = work / f"input-{mb}mb.txt"
    make_input(inp, mb)
    print(f"# capturing gzip -9 on {mb} MB under lackey (once)", file=sys.stderr)
    pipeline = (
        f"valgrind --tool=lackey --trace-mem=yes --log-fd=9 gzip -9 -c {inp} 9>&1 1>/dev/null"
        f" | tee >({bins / 'lk2bin'} -o {raw}.tmp)"
        f" | {cachepart} trace convert --from lackey - {cpt}.tmp"
    )
    sh(["bash", "-o", "pipefail", "-c", pipeline])
    time.sleep(1)  # lk2bin, in its process substitution, may still be flushing
    os.replace(f"{raw}.tmp", raw)
    os.replace(f"{cpt}.tmp", cpt)
    inp.unlink()
    return raw, cpt


def natsim_totals(text: str) -> dict[str, int]:
    g = {k: int(v) for k, v in re.findall(r"([\w()+]+)=(\d+)", text)}
    return {
        "Ir": g["I"],
        "I1miss": g["I1miss"],
        "D1miss": g["D1miss"],
        "LLmiss(I)": g["LLmiss(I)"],
        "LLmiss(D)": g["LLmiss(D)"],
        "Dr": g["Dr(L+M)"],
        "Dw": g["Dw"],
    }


def timed(cmd: list[str]) -> tuple[float, str, float]:
    """Wall seconds, standard output and CPU seconds (user + system, all its
    threads) of one run; the CPU time is the growth of this process's
    reaped-children usage, so runs must not overlap."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, out, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mb", type=float, default=0.35, help="gzip's input size in MB (default 0.35: about 200 M references)")
    ap.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "cachepart-cg-natsim")
    ap.add_argument("--trace", type=Path, help="race on this .cpt instead of capturing gzip -9 (needs no valgrind)")
    ap.add_argument("--cp-args", default="", help="more options for cachepart sim cachegrind, e.g. '--threads 2'")
    a = ap.parse_args()
    cachepart = os.environ.get("CACHEPART", str(ROOT / "target/release/cachepart"))
    shared = Path(os.environ.get("SHARED", ROOT.parent / "shared"))
    if not Path(cachepart).exists():
        sh(["cargo", "build", "--release", "-q", "-p", "cachepart-cli"], cwd=ROOT)
    needs = ["gcc"] if os.environ.get("NATSIM") is None else []
    if a.trace is None:
        needs += ["valgrind", "gzip"]
    for tool in needs:
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is needed (apt-get install {tool})")
    if a.trace is None:
        raw, cpt = capture(a.work, cachepart, shared, a.mb)
        what = f"gzip -9 on {a.mb} MB"
    else:
        if not a.trace.is_file():
            sys.exit(f"--trace {a.trace}: no such file")
        build_tools(a.work, shared, ("natsim",))
        cpt, raw = a.trace, from_cpt(a.work, a.trace)
        what = str(a.trace)

    cp_cmd = [cachepart, "sim", "cachegrind", str(cpt), *(f"--{k}={v}" for k, v in GEOMETRY.items()), *a.cp_args.split(), "--format", "json"]
    ns_cmd = [str(a.work / "bin" / "natsim"), "-c", GEOMETRY["D1"], "-l", GEOMETRY["LL"], str(raw)]
    # warm the page cache and check the counts once
    _, cp_out, _ = timed(cp_cmd)
    _, ns_out, _ = timed(ns_cmd)
    cp = json.loads(cp_out)
    ns = natsim_totals(ns_out)
    got = {
        "Ir": cp["Ir"],
        "Dr": cp["Dr"],
        "Dw": cp["Dw"],
        "I1miss": cp["I1mr"],
        "D1miss": cp["D1mr"] + cp["D1mw"],
        "LLmiss(I)": cp["ILmr"],
        "LLmiss(D)": cp["DLmr"] + cp["DLmw"],
    }
    want = {k: ns[k] for k in got}
    if got != want:
        sys.exit(f"the counts differ: cachepart {got}, natsim {want}")
    refs = cp["Ir"] + cp["Dr"] + cp["Dw"]
    print(f"trace: {what}, {refs:,} references ({cpt.stat().st_size / refs:.3f} bytes/ref in the .cpt,"
          f" 8 in natsim's file); I1 = D1 = {GEOMETRY['D1']}, LL = {GEOMETRY['LL']}; counts equal")
    if a.cp_args:
        print(f"cachepart's options: {a.cp_args}")
    print("| run | cachepart sim cachegrind (s) | M refs/s | natsim (s) | M refs/s | ratio | cachepart CPU (s) | natsim CPU (s) |")
    print("|---|---|---|---|---|---|---|---|")
    cps, nss, cpc, nsc = [], [], [], []
    for i in range(a.reps):
        order = [("cp", cp_cmd), ("ns", ns_cmd)] if i % 2 == 0 else [("ns", ns_cmd), ("cp", cp_cmd)]
        t, c = {}, {}
        for name, cmd in order:
            t[name], _, c[name] = timed(cmd)
        cps.append(t["cp"])
        nss.append(t["ns"])
        cpc.append(c["cp"])
        nsc.append(c["ns"])
        print(f"| {i + 1} | {t['cp']:.3f} | {refs / t['cp'] / 1e6:.1f} | {t['ns']:.3f} | {refs / t['ns'] / 1e6:.1f} |"
              f" {t['ns'] / t['cp']:.2f} | {c['cp']:.3f} | {c['ns']:.3f} |")
    mc, mn = statistics.median(cps), statistics.median(nss)
    print(f"| median | {mc:.3f} | {refs / mc / 1e6:.1f} | {mn:.3f} | {refs / mn / 1e6:.1f} | **{mn / mc:.2f}** |"
          f" {statistics.median(cpc):.3f} | {statistics.median(nsc):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
