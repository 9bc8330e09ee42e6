//! The cachegrind-compatible mode against valgrind cachegrind itself.
//!
//! For each program (Debian's `xz` and `sqlite3`, when installed) the test
//! runs it once under `valgrind --tool=lackey --trace-mem=yes`, streaming
//! the trace through [`LackeyReader`] into one simulator per geometry, and
//! once per geometry under `valgrind --tool=cachegrind --cache-sim=yes`
//! with the same explicit I1/D1/LL, then requires all nine totals
//! (`Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw`) to be equal. Both runs use
//! the same working directory, environment and input, so the program
//! executes the same instructions at the same addresses. Without
//! valgrind the test prints why and passes.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cachepart_sim::{CachegrindConfig, CachegrindSim, CachegrindSummary, EVENTS};
use cachepart_trace::LackeyReader;

/// Three geometries: a typical one, one with mixed line sizes and a
/// small LL, and one with a direct-mapped I1 and a 128-byte LL line.
/// Lines stay at 32 bytes or more: cachegrind refuses lines smaller than
/// the largest guest register (32 bytes with AVX).
fn geometries() -> Vec<CachegrindConfig> {
    vec![
        CachegrindConfig::lru((32 << 10, 8, 64), (32 << 10, 8, 64), (2 << 20, 16, 64)),
        CachegrindConfig::lru((4 << 10, 2, 32), (8 << 10, 4, 32), (64 << 10, 8, 64)),
        CachegrindConfig::lru((8 << 10, 1, 64), (16 << 10, 2, 32), (256 << 10, 4, 128)),
    ]
}

fn have(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A command with a fixed environment, working directory and no input.
fn valgrind(dir: &Path, tool_args: &[String], program: &[String]) -> Command {
    let mut c = Command::new("valgrind");
    c.args(tool_args)
        .args(program)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    c
}

/// Runs `program` under lackey and simulates every geometry on its trace.
fn simulate(dir: &Path, program: &[String], cfgs: &[CachegrindConfig]) -> Vec<CachegrindSummary> {
    let mut sims: Vec<CachegrindSim> = cfgs
        .iter()
        .map(|c| CachegrindSim::new(c).unwrap())
        .collect();
    let args = ["--tool=lackey".to_string(), "--trace-mem=yes".to_string()];
    let mut child = valgrind(dir, &args, program)
        .stderr(Stdio::piped())
        .spawn()
        .expect("valgrind starts");
    let trace = BufReader::with_capacity(1 << 20, child.stderr.take().unwrap());
    for rec in LackeyReader::new(trace) {
        let rec = rec.expect("lackey trace parses");
        for s in &mut sims {
            s.access(rec);
        }
    }
    assert!(child.wait().unwrap().success(), "lackey run failed");
    sims.iter().map(|s| s.summary()).collect()
}

/// Runs `program` under cachegrind with `cfg` and reads its totals.
fn cachegrind(
    dir: &Path,
    program: &[String],
    cfg: &CachegrindConfig,
    out: &Path,
) -> CachegrindSummary {
    let mut args = vec![
        "--tool=cachegrind".to_string(),
        "--cache-sim=yes".to_string(),
        format!("--cachegrind-out-file={}", out.display()),
    ];
    args.extend(cfg.valgrind_args());
    let status = valgrind(dir, &args, program)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "cachegrind run failed");
    CachegrindSummary::parse(&std::fs::read_to_string(out).unwrap()).unwrap()
}

fn table(ours: &CachegrindSummary, theirs: &CachegrindSummary) -> String {
    let mut s = String::from("event        cachegrind          ours\n");
    for ((name, t), o) in EVENTS.iter().zip(theirs.values()).zip(ours.values()) {
        let mark = if t == o { "" } else { "   <-- differs" };
        s += &format!("{name:<6} {t:>16} {o:>13}{mark}\n");
    }
    s
}

/// A deterministic, compressible input for xz.
fn xz_input(dir: &Path) -> PathBuf {
    let path = dir.join("input.txt");
    let mut text = String::new();
    let mut x: u32 = 12345;
    for i in 0..600 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        text += &format!(
            "line {i} value {} {}\n",
            x >> 16,
            "abc".repeat((x % 7) as usize)
        );
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn cachegrind_mode_equals_cachegrind() {
    if !have("valgrind", "--version") {
        println!("SKIPPED: valgrind is not installed, so cachegrind cannot be compared");
        return;
    }
    let dir = std::env::temp_dir().join(format!("cachepart-sim-cg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = xz_input(&dir);
    let mut programs: Vec<Vec<String>> = Vec::new();
    if have("xz", "--version") {
        programs.push(vec![
            "xz".into(),
            "-0".into(),
            "-T1".into(),
            "-c".into(),
            input.display().to_string(),
        ]);
    }
    if have("sqlite3", "--version") {
        programs.push(vec![
            "sqlite3".into(),
            ":memory:".into(),
            "with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000) \
             select count(*), sum(x * x) % 1000003 from c;"
                .into(),
        ]);
    }
    if programs.is_empty() {
        programs.push(vec!["ls".into(), "-la".into(), "/usr/lib".into()]);
    }
    let cfgs = geometries();
    let mut failures = Vec::new();
    for program in &programs {
        let ours = simulate(&dir, program, &cfgs);
        for (i, (cfg, ours)) in cfgs.iter().zip(&ours).enumerate() {
            let theirs = cachegrind(&dir, program, cfg, &dir.join(format!("cg.out.{i}")));
            println!(
                "{} with {}:\n{}",
                program.join(" "),
                cfg.valgrind_args().join(" "),
                table(ours, &theirs)
            );
            if *ours != theirs {
                failures.push(format!(
                    "{} / {}",
                    program[0],
                    cfg.valgrind_args().join(" ")
                ));
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "differs from cachegrind: {failures:?}");
}
