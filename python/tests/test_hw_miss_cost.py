"""scripts/experiments/hw_miss_cost.py: the cycles one extra LLC miss costs."""

import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "experiments" / "hw_miss_cost.py"
HEAD = "BENCH,NR_WAYS,ipc,llcmpki\n"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_cost_is_extra_cycles_over_extra_misses(tmp_path):
    meas = tmp_path / "m.csv"
    # 1 way: CPI 2, 10 MPKI; 11 ways: CPI 1, no misses -> 1000 cycles / 10 misses.
    meas.write_text(HEAD + "a06,1,0.5,10\na06,11,1.0,0\nb06,1,1.0,0.01\nb06,11,1.0,0.0\n")
    sim = tmp_path / "s.csv"
    # 1 way: CPI 4, 2 MPKI; 4 ways (the most): CPI 2, 1 MPKI -> 2000 / 1.
    sim.write_text(HEAD + "a,1,0.25,2\na,2,0.4,1.5\na,4,0.5,1\nb,1,1,0\nb,4,1,0\n")
    r = run(meas, f"ours={sim}", "--map", "a=a06,b=b06")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "| program | measured | ours |"
    assert lines[2] == "| a | 100.0 (10.00) | 2000.0 (1.00) |"
    # Misses that barely grow give no ratio.
    assert lines[3] == "| b | n/a | n/a |"


def test_bad_tables_name_the_file_and_line(tmp_path):
    meas = tmp_path / "m.csv"
    meas.write_text("BENCH,NR_WAYS,ipc\n")
    r = run(meas, f"x={meas}", "--map", "a=a06")
    assert r.returncode == 2
    assert f"{meas}: missing column(s) llcmpki" in r.stderr
    meas.write_text(HEAD + "a06,1,0.5,10\na06,11,zero,0\n")
    r = run(meas, f"x={meas}", "--map", "a=a06")
    assert r.returncode == 2
    assert f"{meas}:3:" in r.stderr
    meas.write_text(HEAD + "a06,1,0.5,10\na06,11,1,0\n")
    r = run(meas, "no-equals-sign")
    assert r.returncode == 2 and "expected NAME=SIM.csv" in r.stderr
    r = run(meas, f"x={meas}")
    assert r.returncode == 2 and "no rows for bzip206" in r.stderr
