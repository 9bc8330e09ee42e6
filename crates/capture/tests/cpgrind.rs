//! `capture_cpgrind` end to end (skipped with a `SKIPPED` line when
//! valgrind or gcc is absent): with `ifetch` it records lackey's trace of
//! a real program (`gzip -1` of generated text), without it the same data
//! accesses with instruction gaps, and its dependency hints mark a pointer
//! chase's loads and not an array sum's, and a gather's `a[b[i]]` only
//! when the index was loaded within the window (small C programs built
//! here with gcc).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use cachepart_capture::{capture_cpgrind, capture_lackey, cpgrind_lib, CaptureOptions};
use cachepart_trace::{Kind, Record, TraceFile};
use common::{meta, tmpdir, words};

fn opts() -> CaptureOptions {
    CaptureOptions {
        tool_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("valgrind-tool")),
        ..CaptureOptions::default()
    }
}

/// Whether valgrind and gcc run (cpgrind needs both).
fn have_tools() -> bool {
    if !cachepart_testkit::have_valgrind() {
        return false;
    }
    let gcc = Command::new("gcc").arg("--version").output();
    if !gcc.is_ok_and(|o| o.status.success()) {
        println!("SKIPPED: gcc is not installed (apt-get install gcc)");
        return false;
    }
    true
}

fn records(p: &Path) -> Vec<Record> {
    TraceFile::open(p).unwrap().read_all_parallel().unwrap()
}

/// The accesses of `recs` as (kind, address, size), dependent loads as
/// loads.
fn accesses(recs: &[Record]) -> Vec<(Kind, u64, u32)> {
    recs.iter()
        .filter(|r| r.kind() != Kind::Escape)
        .map(|r| {
            let k = if r.kind() == Kind::DepLoad {
                Kind::Load
            } else {
                r.kind()
            };
            (k, r.addr(), r.size())
        })
        .collect()
}

/// Asserts that `a` and `b` are the same accesses in the same order but
/// for at most 4 addresses, and returns how many differ: ld.so indexes a
/// table by a byte of its random start-up data (AT_RANDOM), which
/// differs between any two runs, two lackey runs included.
fn nearly_equal(what: &str, a: &[(Kind, u64, u32)], b: &[(Kind, u64, u32)]) -> usize {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let shape = |v: &[(Kind, u64, u32)]| v.iter().map(|&(k, _, s)| (k, s)).collect::<Vec<_>>();
    assert!(shape(a) == shape(b), "{what}: kinds or sizes differ");
    let differ: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    assert!(
        differ.len() <= 4,
        "{what}: {} addresses differ, first at {:?}",
        differ.len(),
        &differ[..differ.len().min(10)]
    );
    differ.len()
}

/// Deterministic text: words drawn by a fixed LCG.
fn text(bytes: usize) -> String {
    let mut x: u64 = 1;
    let mut s = String::new();
    while s.len() < bytes {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 2 + (x >> 60) as usize % 8;
        for i in 0..len {
            s.push((b'a' + ((x >> (8 + 5 * i)) % 26) as u8) as char);
        }
        s.push(if (x >> 40).is_multiple_of(12) {
            '\n'
        } else {
            ' '
        });
    }
    s.truncate(bytes);
    s
}

#[test]
fn with_ifetch_it_records_lackeys_trace() {
    if !have_tools() {
        return;
    }
    let d = tmpdir("cpgrind-lackey");
    let input = d.join("in.txt");
    std::fs::write(&input, text(16 << 10)).unwrap();
    let cmd: Vec<OsString> = vec![
        "gzip".into(),
        "-1".into(),
        "-k".into(),
        "-f".into(),
        input.clone().into(),
    ];
    // valgrind needs VALGRIND_LIB to find cpgrind, and the variable is in
    // the program's environment: lackey runs with the same one, so that
    // both runs see the same stack
    let lib = cpgrind_lib(&opts()).unwrap();
    std::env::set_var("VALGRIND_LIB", &lib);
    // gzip -f takes another path when its output exists: remove it first
    let gz = d.join("in.txt.gz");
    let lk = d.join("lackey.cpt");
    let l = capture_lackey(&cmd, &lk, &CaptureOptions::default()).unwrap();
    assert!(l.success());
    std::fs::remove_file(&gz).unwrap();
    let cp = d.join("cpgrind.cpt");
    let c = capture_cpgrind(
        &cmd,
        &cp,
        &CaptureOptions {
            ifetch: true,
            ..opts()
        },
    )
    .unwrap();
    assert!(c.success());
    assert_eq!(c.instructions(), l.instructions());
    assert_eq!(c.counts.ifetches, l.counts.ifetches);
    assert_eq!(meta(&cp, "tool").as_deref(), Some("cpgrind"));
    assert_eq!(meta(&cp, "ifetch").as_deref(), Some("yes"));
    assert_eq!(meta(&cp, "dep-window").as_deref(), Some("256"));
    assert!(meta(&cp, "cpgrind-version")
        .unwrap()
        .starts_with("cpgrind-"));

    let a = accesses(&records(&cp));
    let b = accesses(&records(&lk));
    let differ = nearly_equal("cpgrind vs lackey", &a, &b);
    eprintln!(
        "cpgrind vs lackey on gzip -1 of 16 KiB: {} records, {} instructions, {differ} addresses differ",
        a.len(),
        c.instructions(),
    );

    // without fetches: the same data accesses and instruction count
    std::fs::remove_file(&gz).unwrap();
    let dp = d.join("data.cpt");
    let dd = capture_cpgrind(&cmd, &dp, &opts()).unwrap();
    assert_eq!(dd.instructions(), c.instructions());
    let data: Vec<_> = a.iter().copied().filter(|x| x.0 != Kind::Ifetch).collect();
    nearly_equal("data-only vs fetches", &accesses(&records(&dp)), &data);
    assert_eq!(meta(&dp, "ifetch").as_deref(), Some("no"));
    std::env::remove_var("VALGRIND_LIB");
    std::fs::remove_dir_all(&d).unwrap();
}

/// A pointer chase in random order over `N` nodes of 64 bytes, `LAPS`
/// times round (65,536 and 4 unless defined); prints the nodes' range.
const CHASE: &str = include_str!("common/chase.c");

const SUM: &str = r#"
#include <stdio.h>
#define N 262144
long a[N];
int main(void) {
    for (long i = 0; i < N; i++) a[i] = i * 7;
    long s = 0;
    for (int r = 0; r < 4; r++)
        for (long i = 0; i < N; i++) s += a[i];
    printf("%p %p\n", (void *)a, (void *)(a + N));
    return s == 0;
}
"#;

/// `s += a[b[i]]`, the index used at once or, given an argument, after a
/// register-only delay loop of about 400 instructions (past the window).
const GATHER: &str = r#"
#include <stdio.h>
#define N 16384
long a[N];
unsigned b[N];
int main(int argc, char **argv) {
    int delay = argc > 1;
    unsigned long x = 88172645463325252UL;
    for (unsigned i = 0; i < N; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        b[i] = x % N; a[i] = i;
    }
    long s = 0;
    for (unsigned i = 0; i < N; i++) {
        unsigned idx = b[i];
        if (delay)
            for (int k = 0; k < 200; k++) __asm__ volatile("");
        s += a[idx];
    }
    printf("%p %p %ld\n", (void *)a, (void *)(a + N), s);
    return 0;
}
"#;

/// Builds `src` as `d/name` (not PIE: its arrays have fixed addresses) and
/// returns the program and the address range it prints (its array's).
fn build(d: &Path, name: &str, src: &str) -> (PathBuf, u64, u64) {
    let c = d.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = d.join(name);
    let st = Command::new("gcc")
        .args(["-O2", "-no-pie", "-fno-tree-vectorize", "-o"])
        .arg(&exe)
        .arg(&c)
        .status()
        .unwrap();
    assert!(st.success());
    let out = Command::new(&exe).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut it = text
        .split_whitespace()
        .map(|w| u64::from_str_radix(w.trim_start_matches("0x"), 16).unwrap());
    (exe, it.next().unwrap(), it.next().unwrap())
}

/// The loads in `lo..hi` and the fraction of them marked dependent.
fn dependent_fraction(recs: &[Record], lo: u64, hi: u64) -> (usize, f64) {
    let loads: Vec<_> = recs
        .iter()
        .filter(|r| r.kind().is_load() && (lo..hi).contains(&r.addr()))
        .collect();
    let dep = loads.iter().filter(|r| r.kind() == Kind::DepLoad).count();
    (loads.len(), dep as f64 / loads.len().max(1) as f64)
}

#[test]
fn a_pointer_chase_is_marked_dependent_and_an_array_sum_is_not() {
    if !have_tools() {
        return;
    }
    let d = tmpdir("cpgrind-hints");
    let (chase, lo, hi) = build(&d, "chase", CHASE);
    let cpt = d.join("chase.cpt");
    let s = capture_cpgrind(&words(&[chase.to_str().unwrap()]), &cpt, &opts()).unwrap();
    assert!(s.success());
    let recs = records(&cpt);
    let (n, f) = dependent_fraction(&recs, lo, hi);
    eprintln!("pointer chase: {n} loads of the list, {:.4} dependent", f);
    assert_eq!(n, 4 << 16);
    assert!(f > 0.99, "{f}");
    assert_eq!(
        s.counts.dependent_loads,
        recs.iter().filter(|r| r.kind() == Kind::DepLoad).count() as u64
    );

    // --dep-window 0: the same records, no hints
    let none = d.join("chase0.cpt");
    capture_cpgrind(
        &words(&[chase.to_str().unwrap()]),
        &none,
        &CaptureOptions {
            dep_window: 0,
            ..opts()
        },
    )
    .unwrap();
    let plain = records(&none);
    assert!(plain.iter().all(|r| r.kind() != Kind::DepLoad));
    nearly_equal("--dep-window 0 vs 256", &accesses(&plain), &accesses(&recs));
    assert_eq!(meta(&none, "dep-window").as_deref(), Some("0"));

    let (sum, lo, hi) = build(&d, "sum", SUM);
    let cpt = d.join("sum.cpt");
    capture_cpgrind(&words(&[sum.to_str().unwrap()]), &cpt, &opts()).unwrap();
    let (n, f) = dependent_fraction(&records(&cpt), lo, hi);
    eprintln!("array sum: {n} loads of the array, {:.4} dependent", f);
    assert_eq!(n, 4 << 18);
    assert!(f < 0.001, "{f}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_index_loaded_beyond_the_window_is_no_dependency() {
    if !have_tools() {
        return;
    }
    let d = tmpdir("cpgrind-gather");
    let (gather, lo, hi) = build(&d, "gather", GATHER);
    let exe = gather.to_str().unwrap();
    let mut fractions = Vec::new();
    for (name, cmd) in [("at once", vec![exe]), ("delayed", vec![exe, "delay"])] {
        let cpt = d.join("gather.cpt");
        let s = capture_cpgrind(&words(&cmd), &cpt, &opts()).unwrap();
        assert!(s.success());
        let (n, f) = dependent_fraction(&records(&cpt), lo, hi);
        eprintln!("a[b[i]], index used {name}: {n} loads of a, {f:.4} dependent");
        assert_eq!(n, 1 << 14);
        fractions.push(f);
    }
    assert!(fractions[0] > 0.99, "{fractions:?}");
    assert!(fractions[1] < 0.01, "{fractions:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_records_before_an_exec_are_kept() {
    if !have_tools() {
        return;
    }
    let d = tmpdir("cpgrind-exec");
    let cpt = d.join("sh.cpt");
    // valgrind runs the exec'ed program natively, and the tool's exit
    // never comes: the buffer is written before the execve
    let s = capture_cpgrind(&words(&["sh", "-c", "exec /bin/true"]), &cpt, &opts()).unwrap();
    assert!(s.success());
    assert!(s.accesses() > 10_000, "{s:?}");
    assert_eq!(records(&cpt).len() as u64, s.records());
    std::fs::remove_dir_all(&d).unwrap();
}
