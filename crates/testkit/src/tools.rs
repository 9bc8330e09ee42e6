//! External tools some tests compare against, found on `PATH` or not.

use std::process::{Command, Stdio};

/// Whether `valgrind --version` runs; prints a SKIPPED line when it does
/// not, so a test that needs valgrind can return early and say why.
pub fn have_valgrind() -> bool {
    let ok = Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        println!("SKIPPED: valgrind is not installed (apt-get install valgrind)");
    }
    ok
}
