#!/usr/bin/env python3
"""Writes the SWAP experiment's program analogues (examples/traces/swap-*.toml)
from PBBCache's Skylake measurements of the same SPEC CPU2006 programs
(../shared/data/pbbcache/metrics.csv: LLC references and misses per 1,000
instructions at 1..11 ways of a 2.5 MiB-per-way LLC).

Targets per program: R = LLC references per 1,000 instructions (mean over
the ways), and the LLC misses per 1,000 instructions M1 at 2.5 MiB (1
way), M8 at 8 MiB (the SWAP machine's LLC; interpolated between 3 and 4
ways) and M11 at 27.5 MiB (11 ways). Each analogue interleaves, in a
period of 1,000 accesses (0.4 per instruction: A = 400 per 1,000
instructions), phases on disjoint regions:

* hot: uniform over 64 KiB (L1 and L2 hits);
* near: uniform over 2 MiB (misses the 256 KiB L2; LLC hits);
* streaming programs (lbm, libquantum, GemsFDTD, cactusADM, leslie3d,
  zeusmp): three streams of 64-byte elements (one new line per access)
  with M1 - M8 (hits from 8 MiB of LLC), M8 - M11 (hits at 27.5 MiB) and
  M11 (never hits) accesses, near = R - M1. Under LRU a cyclic stream hits
  only in a cache larger than its reuse distance (its own array plus what
  the other components bring in meanwhile), so the first two arrays are
  sized for reuse distances of 5 and 17 MiB, between the measured sizes;
  the third is the footprint. The TLB sees one new page per 64
  accesses, as a stream does.
* pointer-chasing programs (mcf, omnetpp, gcc, sphinx3, milc, perlbench,
  soplex): uniform random accesses over a sensitive set of W MiB and over
  the footprint (far), with near = R - sensitive - far. Their miss
  counts at each LLC size come from Che's approximation of an LRU cache
  (characteristic time T with sum_i N_i (1 - exp(-r_i T / N_i)) = lines;
  component i misses with probability exp(-r_i T / N_i)), so the
  components' competition for the cache is accounted for; (sensitive, W,
  far) are fitted by search to M8 exactly and M1, M11 in least squares.

Run from the repository root:
    python3 scripts/experiments/swap_analogues.py [../shared/data/pbbcache/metrics.csv]
"""

import csv
import math
import sys
from pathlib import Path

A = 400.0  # accesses per 1,000 instructions (mix accesses-per-instr = 0.4)
PERIOD = 1000
WAY_MIB = 2.5
MIB = 1 << 20

# name: (PBBCache name, far kind, footprint MiB, source of the footprint)
# Footprints: mcf and milc from the SWAP paper (1.6 GB, 679 MB); the others
# are approximate SPEC CPU2006 reference-input resident sizes.
PROGRAMS = {
    "mcf": ("mcf06", "random", 1600),
    "lbm": ("lbm06", "stream", 410),
    "libquantum": ("libquantum06", "stream", 96),
    "GemsFDTD": ("GemsFDTD06", "stream", 830),
    "omnetpp": ("omnetpp06", "random", 170),
    "gcc": ("gcc06", "random", 900),
    "sphinx3": ("sphinx306", "random", 44),
    "milc": ("milc06", "random", 679),
    "cactusADM": ("cactusADM06", "stream", 630),
    "leslie3d": ("leslie3d06", "stream", 123),
    "perlbench": ("perlbench06", "random", 590),
    "soplex": ("soplex06", "random", 420),
    "zeusmp": ("zeusmp06", "stream", 510),
}
SCALE = 1.0
PIECES = 16  # superpage colors of the SWAP machine (bits 21-24)


def load(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.setdefault(r["BENCH"], {})[int(r["NR_WAYS"])] = r
    return rows


LINE = 64
NEAR_MIB = 2.0


def che_misses(components, cap_mib):
    """Misses (same unit as the rates) of an LRU cache of `cap_mib` fed by
    independent components (rate, MiB): Che's approximation."""
    lines = cap_mib * MIB / LINE
    comps = [(r, max(m * MIB / LINE, 1.0)) for r, m in components if r > 0]
    if sum(n for _, n in comps) <= lines:
        return 0.0
    lo, hi = 0.0, 1.0
    occ = lambda t: sum(n * (1 - math.exp(-r * t / n)) for r, n in comps)
    while occ(hi) < lines:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if occ(mid) < lines:
            lo = mid
        else:
            hi = mid
    return sum(r * math.exp(-r * hi / n) for r, n in comps)


def targets(t):
    m1 = float(t[1]["llcmpki"])
    w3, w4 = float(t[3]["llcmpki"]), float(t[4]["llcmpki"])
    m8 = w3 + (8 / WAY_MIB - 3) * (w4 - w3)
    m11 = float(t[11]["llcmpki"])
    refs = sum(float(t[w]["llcrpki"]) for w in t) / len(t)
    return dict(m1=m1, m8=m8, m11=m11, refs=refs)


def reuse_mib(i, arrays, rates, near):
    """Distinct MiB an LRU cache sees between two touches of a line of
    stream i: its own array, the near set, and what the other streams
    bring in meanwhile (at most their arrays)."""
    a, r = arrays[i], rates[i]
    other = sum(min(arrays[j], rates[j] / r * a) for j in range(len(arrays)) if j != i and rates[j] > 0)
    return a + (NEAR_MIB if near > 0 else 0.0) + other


def fit_stream(g, foot_mib):
    """Streams whose reuse distance lies between the measured sizes: the
    first hits from 8 MiB of LLC (reuse 5 MiB), the second from 27.5 MiB
    (reuse 17 MiB), the third never (the footprint)."""
    s5 = max(g["m1"] - g["m8"], 0.0)
    s16 = max(g["m8"] - g["m11"], 0.0)
    far = g["m11"]
    near = max(g["refs"] - g["m1"], 0.0)
    rates = [s5, s16, far]
    arrays = [5.0, 16.0, foot_mib]
    for _ in range(50):
        for i, want in ((0, 5.0), (1, 17.0)):
            if rates[i] <= 0:
                continue
            lo, hi = 0.01, want
            for _ in range(50):
                arrays[i] = (lo + hi) / 2
                if reuse_mib(i, arrays, rates, near) < want:
                    lo = arrays[i]
                else:
                    hi = arrays[i]
    return dict(g, kind="stream", near=near, s5=s5, s16=s16, far=far, a5=arrays[0], a16=arrays[1])


def fit_random(g, foot_mib):
    best = None
    for wi in range(0, 113):
        w = 8.0 + 0.5 * wi
        for fi in range(0, 41):
            far = g["m11"] * 1.25 * fi / 40
            def misses(sens, cap):
                near = max(g["refs"] - sens - far, 0.0)
                return che_misses([(near, NEAR_MIB), (sens, w), (far, foot_mib)], cap)
            lo, hi = 0.0, max(g["refs"] - far, 0.0)
            if misses(hi, 8) < g["m8"]:
                continue
            for _ in range(30):
                mid = (lo + hi) / 2
                if misses(mid, 8) < g["m8"]:
                    lo = mid
                else:
                    hi = mid
            sens = hi
            e1 = (misses(sens, 2.5) - g["m1"]) / max(g["m1"], 0.1)
            e11 = (misses(sens, 27.5) - g["m11"]) / max(g["m11"], 0.1)
            err = e1 * e1 + e11 * e11
            if best is None or err < best[0]:
                best = (err, w, sens, far, misses(sens, 2.5), misses(sens, 8), misses(sens, 27.5))
    _, w, sens, far, f1, f8, f11 = best
    near = max(g["refs"] - sens - far, 0.0)
    return dict(g, kind="random", near=near, sens=sens, w=w, far=far, f1=f1, f8=f8, f11=f11)


def counts(parts):
    c = [round(PERIOD * p / A) for p in parts]
    hot = PERIOD - sum(c)
    assert hot > 0
    return [hot] + c


def toml_for(name, f, footprint, seed, scatter=False):
    foot = int(footprint * SCALE * MIB) // 4096 * 4096
    if f["kind"] == "stream":
        hot, near, s5, s16, far = counts([f["near"], f["s5"], f["s16"], f["far"]])
        how = (f"{hot} hot (64 KiB), {near} near (2 MiB), streams of {s5} over {f['a5']:.2f} MiB\n"
               f"# (reuse distance 5 MiB), {s16} over {f['a16']:.2f} MiB (reuse 17 MiB) and {far} over\n"
               f"# {footprint * SCALE:.0f} MiB (the footprint).")
    else:
        hot, near, sens, far = counts([f["near"], f["sens"], f["far"]])
        how = (f"{hot} hot (64 KiB), {near} near (2 MiB), {sens} random over\n"
               f"# {f['w']:.1f} MiB, {far} random over {footprint * SCALE:.0f} MiB (the footprint);\n"
               f"# Che's approximation: MPKI {f['f1']:.2f}, {f['f8']:.2f}, {f['f11']:.2f}.")
    lines = [
        f"# A {name}-like program for SWAP (DAC'14), generated by",
        "# scripts/experiments/swap_analogues.py from PBBCache's Skylake",
        f"# measurements of {PROGRAMS[name][0]}: LLC MPKI {f['m1']:.2f} at 2.5 MiB,",
        f"# {f['m8']:.2f} at 8 MiB, {f['m11']:.2f} at 27.5 MiB; {f['refs']:.2f} LLC",
        "# references per 1,000 instructions. Per 1,000 accesses (0.4 per",
        f"# instruction): {how}",
        f"seed = {seed}",
        "accesses = 100_000_000",
        "[mix]",
        "accesses-per-instr = 0.4",
        "[pattern]",
        'class = "phases"',
    ]
    if scatter:
        lines[0] = f"# A {name}-like program for SWAP (DAC'14), its near and sensitive sets"
        lines.insert(1, "# scattered (the ablation of experiments/swap-scattered.toml): each")
        lines.insert(2, f"# split into {PIECES} pieces, one per 2 MiB superpage-sized slot. Generated by")
        lines[3] = "# scripts/experiments/swap_analogues.py from PBBCache's Skylake"
    body = []
    region = [0]

    def phase(n, pattern, size=0):
        """n accesses per period to `pattern` at the next region; with
        `scatter` and a `size` (the pattern's bytes, "{size}" in it), the
        region is split into PIECES pieces 2 MiB (or a piece) apart, each
        taking n accesses in a period PIECES times as long."""
        if n > 0 and scatter and size:
            piece = max(size // PIECES // LINE * LINE, LINE)
            slot = max(2 * MIB, -(-piece // (2 * MIB)) * 2 * MIB)
            for j in range(PIECES):
                body.append("[[pattern.phases]]")
                body.append(f"accesses = {n}")
                body.append(f"offset-bytes = {region[0] + j * slot}")
                body.append(f"pattern = {pattern.replace('{size}', str(piece))}")
        elif n > 0:
            body.append("[[pattern.phases]]")
            body.append(f"accesses = {n * (PIECES if scatter else 1)}")
            if region[0]:
                body.append(f"offset-bytes = {region[0]}")
            body.append(f"pattern = {pattern.replace('{size}', str(size))}")
        region[0] += 1 << 32

    phase(hot, '{ class = "light", working-set-bytes = 65536 }')
    phase(near, '{ class = "cache-sensitive", working-set-bytes = {size} }', 2 * MIB)
    if f["kind"] == "stream":
        for n, mib in ((s5, f["a5"]), (s16, f["a16"])):
            size = max(int(mib * MIB) // LINE * LINE, LINE)
            phase(n, '{ class = "streaming", array-bytes = {size}, element-bytes = 64 }', size)
        phase(far, f'{{ class = "streaming", array-bytes = {foot}, element-bytes = 64 }}')
    else:
        w = int(f["w"] * MIB) // 4096 * 4096
        phase(sens, '{ class = "cache-sensitive", working-set-bytes = {size} }', w)
        phase(far, f'{{ class = "cache-sensitive", working-set-bytes = {foot} }}')
    return "\n".join(lines + body) + "\n"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/pbbcache/metrics.csv"
    rows = load(path)
    out = Path("examples/traces")
    for seed, (name, (bench, kind, foot)) in enumerate(PROGRAMS.items(), start=101):
        g = targets(rows[bench])
        f = fit_stream(g, foot * SCALE) if kind == "stream" else fit_random(g, foot * SCALE)
        (out / f"swap-{name.lower()}-like.toml").write_text(toml_for(name, f, foot, seed))
        (out / f"swap-{name.lower()}-like-scattered.toml").write_text(
            toml_for(name, f, foot, seed, scatter=True)
        )
        fitted = f"{f['f1']:.2f} {f['f8']:.2f} {f['f11']:.2f}" if kind == "random" else "exact"
        print(f"{name:11} R {g['refs']:6.2f} M1 {g['m1']:6.2f} M8 {g['m8']:6.2f} M11 {g['m11']:6.2f}  fit {fitted}")


if __name__ == "__main__":
    main()
