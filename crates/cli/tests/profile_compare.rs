//! `cachepart profile compare`: a table against itself shows no
//! difference; against another table, each side's class is the one
//! `profile classify` gives for that table, and the normalised IPC is the
//! table's IPC over its IPC at the most ways.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use tempfile::TempDir;

mod support;
use support::cachepart;

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// `profile classify`'s class of each program of a metrics file.
fn classes(dir: &Path, metrics: &str) -> BTreeMap<String, String> {
    ok(cachepart(
        dir,
        &["profile", "classify", "-m", metrics, "--format", "csv"],
    ))
    .lines()
    .skip(1)
    .map(|l| {
        let f: Vec<&str> = l.split(',').collect();
        (f[0].to_string(), f[1].to_string())
    })
    .collect()
}

/// A directory holding the built-in tables: `deb.csv` (Debian programs)
/// and `par.csv` (parametric ones).
fn two_tables() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(cachepart(d, &["profile", "builtin", "-o", "deb.csv"]));
    ok(cachepart(
        d,
        &[
            "profile",
            "builtin",
            "--builtin",
            "parametric",
            "-o",
            "par.csv",
        ],
    ));
    dir
}

#[test]
fn a_table_against_itself_and_against_another() {
    let dir = two_tables();
    let d = dir.path();

    // itself: every program paired, no difference, the same class
    let same = ok(cachepart(d, &["profile", "compare", "deb.csv", "deb.csv"]));
    assert!(
        same.contains("9 of 9 programs in the same class; 9 of 9 within 0.1"),
        "{same}"
    );
    let csv = ok(cachepart(
        d,
        &[
            "profile", "compare", "deb.csv", "deb.csv", "--format", "csv",
        ],
    ));
    assert_eq!(csv.lines().count(), 1 + 9 * 11);
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!((f[5], f[8]), ("0.000000", "0.000000"), "{l}");
    }

    // another table, paired by --map: the classes are classify's
    let deb = classes(d, "deb.csv");
    let par = classes(d, "par.csv");
    let map = "xz=stream-hi,sqlite3=sens-mid";
    let csv = ok(cachepart(
        d,
        &[
            "profile", "compare", "par.csv", "deb.csv", "--map", map, "--format", "csv",
        ],
    ));
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 2 * 11, "{csv}");
    for r in &rows {
        assert_eq!(r[10], deb[r[0]], "{r:?}");
        assert_eq!(r[9], par[r[1]], "{r:?}");
        let ways: usize = r[2].parse().unwrap();
        if ways == 11 {
            assert_eq!((r[6], r[7]), ("1.000000", "1.000000"), "{r:?}");
        }
    }
    // the JSON holds the same programs
    let json = ok(cachepart(
        d,
        &[
            "profile", "compare", "par.csv", "deb.csv", "--map", map, "--format", "json",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[0]["simulated"], "xz");
    assert_eq!(v[0]["measured"], "stream-hi");
}

/// A program that only one table has was left out without a word, the
/// summary counting only the pairs ("8 of 8 programs"): a note on
/// standard error names it, its table and which side, and the pairs are
/// compared as before.
#[test]
fn programs_without_a_partner_are_named() {
    let dir = two_tables();
    let d = dir.path();
    let deb = std::fs::read_to_string(d.join("deb.csv")).unwrap();
    let no_xz: String = deb
        .lines()
        .filter(|l| !l.starts_with("xz,"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(d.join("no-xz.csv"), no_xz).unwrap();
    for (args, side) in [
        (["deb.csv", "no-xz.csv"], "xz in deb.csv (measured)"),
        (["no-xz.csv", "deb.csv"], "xz in deb.csv (simulated)"),
    ] {
        let o = cachepart(d, &["profile", "compare", args[0], args[1]]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let out = ok(o);
        assert!(
            err.contains("note: not compared") && err.contains(side),
            "{args:?}: {err}"
        );
        assert!(out.contains("8 of 8 programs in the same class"), "{out}");
    }
    // every program paired (by name or --map): no note
    let o = cachepart(d, &["profile", "compare", "deb.csv", "deb.csv"]);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn refusals_name_the_option_and_file() {
    let dir = two_tables();
    let d = dir.path();
    for (args, expect) in [
        (
            vec!["profile", "compare", "par.csv", "deb.csv"],
            vec!["no program of deb.csv", "--map"],
        ),
        (
            vec![
                "profile",
                "compare",
                "par.csv",
                "deb.csv",
                "--map",
                "xzz=stream-hi",
            ],
            vec!["--map", "\"xzz\"", "did you mean \"xz\""],
        ),
        (
            vec!["profile", "compare", "par.csv", "deb.csv", "--map", "xz"],
            vec!["--map", "SIMULATED=MEASURED"],
        ),
        (
            vec!["profile", "compare", "deb.csv", "deb.csv", "--tolerance=-1"],
            vec!["--tolerance"],
        ),
        (
            vec!["profile", "compare", "deb.csv", "deb.csv", "-o", "deb.csv"],
            vec!["deb.csv"],
        ),
    ] {
        let o = cachepart(d, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(!err.contains("panicked"), "{err}");
        for e in expect {
            assert!(err.contains(e), "{args:?}: {err}");
        }
    }
}
