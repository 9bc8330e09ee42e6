//! `cachepart sweep`: the forwarding to `python -m cachepart.sweep` and
//! its errors when the Python or the package is missing.

use std::path::PathBuf;
use std::process::{Command, Output};

fn sweep(python: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .arg("sweep")
        .args(args)
        .env("CACHEPART_PYTHON", python)
        .output()
        .expect("run cachepart")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn a_missing_python_is_named_with_what_to_do() {
    let o = sweep("/nonexistent/python3", &["plan", "x.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot run Python /nonexistent/python3 (from $CACHEPART_PYTHON)"),
        "{err}"
    );
    assert!(err.contains("./scripts/setup.sh"), "{err}");
}

#[test]
fn a_python_without_cachepart_is_named() {
    // the system Python, when it has no cachepart (the package lives in .venv)
    let sys = "/usr/bin/python3";
    let has = Command::new(sys)
        .args(["-c", "import cachepart"])
        .output()
        .map(|o| o.status.success());
    if !matches!(has, Ok(false)) {
        eprintln!("skipped: {sys} is missing or has cachepart");
        return;
    }
    let o = sweep(sys, &["plan", "x.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the Python package cachepart is not installed in /usr/bin/python3"),
        "{err}"
    );
}

#[test]
fn arguments_and_exit_status_are_forwarded() {
    let venv = root().join(".venv/bin/python");
    if !venv.is_file() {
        eprintln!(
            "skipped: no {} (./scripts/setup.sh builds it)",
            venv.display()
        );
        return;
    }
    let py = venv.to_string_lossy().into_owned();
    let quick = root().join("examples/sweeps/quick.toml");
    let o = sweep(&py, &["plan", &quick.to_string_lossy(), "--format", "csv"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("index,hash,mix,"), "{out}");
    assert_eq!(out.lines().count(), 1 + 60);
    // a bad file: the Python command's error and status come through
    let o = sweep(&py, &["plan", "/nonexistent/sweep.toml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/sweep.toml: can not read it"));
}
