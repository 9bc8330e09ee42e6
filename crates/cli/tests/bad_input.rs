//! Bad input, table-driven: for each case the CLI must not panic (exit code
//! 101, "panicked" on stderr), must exit non-zero, must name the file,
//! field or option in its message, and must write nothing.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::{gen_trace, refused_cleanly, EXPERIMENT};

const HDR: &str = "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps\n";

/// A valid two-program, two-way table, with `edit` applied to its text.
fn metrics(edit: impl Fn(String) -> String) -> String {
    edit(format!(
        "{HDR}a,1,1.0,2,2,200\na,2,1.5,1,1,100\nb,1,0.5,4,4,400\nb,2,0.6,3,3,300\n"
    ))
}

/// `dir/NAME.cpt` cut short by `cut` bytes (its trailer and index gone).
fn cut_trace(dir: &Path, name: &str, cut: usize) -> PathBuf {
    let p = gen_trace(dir, name, 200_000);
    let bytes = std::fs::read(&p).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() - cut]).unwrap();
    p
}

fn empty_trace(dir: &Path) -> PathBuf {
    let p = dir.join("empty.cpt");
    let o = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args([
            "trace",
            "convert",
            "--from",
            "din",
            "-",
            p.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    p
}

const SCENARIO: &str = r#"platform = "xeon-e5506"
[[app]]
name = "a"
trace = "TRACE"
core = 0
"#;

struct Case {
    name: &'static str,
    /// Files to write first: (name, contents).
    files: Vec<(&'static str, String)>,
    /// Builds traces in the directory.
    traces: fn(&Path),
    args: Vec<&'static str>,
    /// Each must appear in stderr.
    expect: Vec<&'static str>,
}

fn no_traces(_: &Path) {}

fn cases() -> Vec<Case> {
    let eval = |extra: &[&'static str]| {
        let mut v = vec!["profile", "eval", "-o", "out.txt"];
        v.extend_from_slice(extra);
        v
    };
    let ok_metrics = || vec![("m.csv", metrics(|s| s))];
    vec![
        Case {
            name: "time limit that overflows a Duration",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "optc-unf", "--time-limit", "1e300"]),
            expect: vec!["time-limit", "1e300"],
        },
        Case {
            name: "negative time limit",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "optc-unf", "--time-limit=-1"]),
            expect: vec!["time-limit"],
        },
        Case {
            name: "negative max-bw",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "stock", "--max-bw=-5"]),
            expect: vec!["max-bw", "-5"],
        },
        Case {
            name: "zero max-bw",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "stock", "--max-bw", "0"]),
            expect: vec!["max-bw"],
        },
        Case {
            name: "max-bw below the least the model takes",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "stock,optc-stp", "--max-bw", "1e-100"]),
            expect: vec!["max-bw 1e-100", "at least 1.0 MB/s"],
        },
        Case {
            name: "chart in a format the encoder does not know, refused before the table is read",
            files: vec![],
            traces: no_traces,
            args: eval(&["-m", "missing.csv", "--apps", "a", "-a", "ucp", "--chart", "c.txt"]),
            expect: vec!["--chart c.txt", "unsupported chart format .txt", ".png"],
        },
        Case {
            name: "chart without an extension",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "stock,ucp", "--chart", "c"]),
            expect: vec!["--chart c", "no file extension", ".png"],
        },
        Case {
            name: "two workloads with one name",
            files: vec![
                ("m.csv", metrics(|s| s)),
                (
                    "b.toml",
                    "[[workload]]\napps=[\"a\"]\nname=\"X\"\n[[workload]]\napps=[\"b\"]\nname=\"X\"\n"
                        .into(),
                ),
            ],
            traces: no_traces,
            args: eval(&["-m", "m.csv", "-w", "b.toml", "-a", "stock"]),
            expect: vec!["b.toml", "workload[0] and workload[1] are both named \"X\""],
        },
        Case {
            name: "from-trace with an mlp below 1",
            files: vec![],
            traces: small_trace,
            args: vec![
                "profile",
                "from-trace",
                "t.cpt",
                "-p",
                "xeon-5160",
                "--mlp",
                "0.5",
                "-o",
                "out.csv",
            ],
            expect: vec!["error: mlp: ", "(the timing of trace t.cpt)"],
        },
        Case {
            name: "stall-rate curve with an infinite mlp",
            files: vec![],
            traces: small_trace,
            args: vec![
                "curves", "t.cpt", "--kind", "stall-rate", "-p", "xeon-5160", "--mlp", "inf", "-o",
                "out.txt",
            ],
            expect: vec!["error: mlp: ", "(the timing of trace t.cpt)"],
        },
        Case {
            name: "from-trace with a NaN base-cpi",
            files: vec![],
            traces: small_trace,
            args: vec![
                "profile",
                "from-trace",
                "t.cpt",
                "-p",
                "xeon-5160",
                "--base-cpi",
                "nan",
                "-o",
                "out.csv",
            ],
            expect: vec!["error: base-cpi: ", "(the timing of trace t.cpt)"],
        },
        Case {
            name: "zero threads",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "optc-unf", "--threads", "0"]),
            expect: vec!["threads 0"],
        },
        Case {
            name: "plan without the user algorithm",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "stock", "--plan", "0x3=0"]),
            expect: vec!["plan", "user"],
        },
        Case {
            name: "user algorithm without a plan",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "user"]),
            expect: vec!["--plan"],
        },
        Case {
            name: "timings with table output",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "stock", "--timings"]),
            expect: vec!["--timings"],
        },
        Case {
            name: "unknown algorithm",
            files: vec![],
            traces: no_traces,
            args: eval(&["-a", "stock,nope"]),
            expect: vec!["nope"],
        },
        Case {
            name: "ways beyond the table",
            files: ok_metrics(),
            traces: no_traces,
            args: eval(&["-m", "m.csv", "--apps", "a,b", "--ways", "9"]),
            expect: vec!["--ways 9"],
        },
        Case {
            name: "negative llcmpkc in the metrics",
            files: vec![(
                "m.csv",
                metrics(|s| s.replace("b,1,0.5,4,4", "b,1,0.5,4,-4")),
            )],
            traces: no_traces,
            args: eval(&["-m", "m.csv", "--apps", "a,b"]),
            expect: vec!["m.csv:4", "llcmpkc", ">= 0"],
        },
        Case {
            name: "negative bandwidth in the metrics",
            files: vec![("m.csv", metrics(|s| s.replace(",100\n", ",-100\n")))],
            traces: no_traces,
            args: eval(&["-m", "m.csv", "--apps", "a,b"]),
            expect: vec!["m.csv:3", "bandwidth_mbps"],
        },
        Case {
            name: "absurdly small IPC in the metrics",
            files: vec![("m.csv", metrics(|s| s.replace("a,1,1.0", "a,1,1e-300")))],
            traces: no_traces,
            args: eval(&["-m", "m.csv", "--apps", "a,b"]),
            expect: vec!["m.csv:2", "ipc"],
        },
        Case {
            name: "non-numeric metric",
            files: vec![("m.csv", metrics(|s| s.replace("a,2,1.5", "a,2,x")))],
            traces: no_traces,
            args: eval(&["-m", "m.csv", "--apps", "a,b"]),
            expect: vec!["m.csv:3", "ipc"],
        },
        Case {
            name: "unknown program in the mix",
            files: ok_metrics(),
            traces: no_traces,
            args: eval(&["-m", "m.csv", "--apps", "a,zz"]),
            expect: vec!["zz"],
        },
        Case {
            name: "sim run of an empty trace",
            files: vec![("s.toml", SCENARIO.replace("TRACE", "empty.cpt"))],
            traces: |d| {
                empty_trace(d);
            },
            args: vec!["sim", "run", "s.toml", "--samples", "out.csv"],
            expect: vec!["s.toml", "trace", "empty.cpt", "no records"],
        },
        Case {
            name: "sim run of a trace without its trailer",
            files: vec![("s.toml", SCENARIO.replace("TRACE", "cut.cpt"))],
            traces: |d| {
                cut_trace(d, "cut", 3);
            },
            args: vec!["sim", "run", "s.toml", "--samples", "out.csv"],
            expect: vec!["s.toml", "trace", "cut.cpt"],
        },
        Case {
            name: "from-trace of a trace without its trailer",
            files: vec![],
            traces: |d| {
                cut_trace(d, "cut", 3);
            },
            args: vec![
                "profile",
                "from-trace",
                "cut.cpt",
                "-p",
                "xeon-e5506",
                "--instructions",
                "1000",
                "-o",
                "out.csv",
            ],
            expect: vec!["cut"],
        },
        Case {
            name: "set-associative curve larger than the host's memory",
            files: vec![],
            traces: small_trace,
            args: vec![
                "curves",
                "t.cpt",
                "--kind",
                "set-associative",
                "--sets",
                "4294967296",
                "--ways",
                "1024",
            ],
            expect: vec!["4294967296 sets x 1024 ways", "32.0 TiB", "memory"],
        },
        Case {
            name: "colored curves larger than any memory",
            files: vec![],
            traces: small_trace,
            args: vec![
                "curves",
                "t.cpt",
                "--kind",
                "colors",
                "--sets",
                "4294967296",
                "--ways",
                "1024",
            ],
            expect: vec!["colored curves", "would need", "more than"],
        },
        Case {
            name: "sim cachegrind: a set count that is not a power of two",
            files: vec![],
            traces: small_trace,
            args: vec![
                "sim",
                "cachegrind",
                "t.cpt",
                "--LL",
                "6291456,16,64",
                "-o",
                "out.txt",
            ],
            expect: vec!["--LL", "Cache set count is not a power of two."],
        },
        Case {
            name: "sim cachegrind: a line below 16 bytes",
            files: vec![],
            traces: small_trace,
            args: vec![
                "sim",
                "cachegrind",
                "t.cpt",
                "--D1",
                "1024,2,8",
                "-o",
                "out.txt",
            ],
            expect: vec!["--D1", "Cache line size is too small."],
        },
        Case {
            name: "sim cachegrind: not SIZE,WAYS,LINE",
            files: vec![],
            traces: small_trace,
            args: vec![
                "sim",
                "cachegrind",
                "t.cpt",
                "--I1",
                "32k,8,64",
                "-o",
                "out.txt",
            ],
            expect: vec!["--I1", "Bad argument '32k,8,64'"],
        },
        Case {
            name: "sim cachegrind: a platform whose LLC cachegrind refuses",
            files: vec![],
            traces: small_trace,
            args: vec![
                "sim",
                "cachegrind",
                "t.cpt",
                "--platform",
                "power5",
                "-o",
                "out.txt",
            ],
            expect: vec!["platform power5", "--LL=1966080,10,128", "Cache set count"],
        },
        Case {
            name: "sim cachegrind: a file that is not a trace",
            files: vec![("x.cpt", "I  0400d7d4,8\n".into())],
            traces: no_traces,
            args: vec!["sim", "cachegrind", "x.cpt", "-o", "out.txt"],
            expect: vec!["x.cpt"],
        },
        Case {
            name: "SHARDS rate for an exact curve",
            files: vec![],
            traces: small_trace,
            args: vec!["curves", "t.cpt", "--rate", "0.5"],
            expect: vec!["rate 0.5", "shards", "fully-associative"],
        },
        Case {
            name: "SHARDS max-lines for a set-associative curve",
            files: vec![],
            traces: small_trace,
            args: vec![
                "curves",
                "t.cpt",
                "--kind",
                "set-associative",
                "--max-lines",
                "100",
            ],
            expect: vec!["max-lines 100", "shards"],
        },
        Case {
            name: "SHARDS no-adjust where the reference sample makes it cancel",
            files: vec![],
            traces: small_trace,
            args: vec!["curves", "t.cpt", "--kind", "shards", "--no-adjust"],
            expect: vec!["no-adjust", "reference sample", "max-lines"],
        },
        Case {
            name: "SHARDS sample that holds no reference",
            files: vec![],
            traces: small_trace,
            args: vec!["curves", "t.cpt", "--kind", "shards", "--rate", "1e-9"],
            expect: vec!["SHARDS sample is empty", "higher rate"],
        },
        Case {
            name: "curve of a trace with no records",
            files: vec![],
            traces: |d| {
                empty_trace(d);
            },
            args: vec!["curves", "empty.cpt", "-o", "out.txt"],
            expect: vec!["empty.cpt", "0 data references", "expected at least one"],
        },
        Case {
            name: "SHARDS curve of a trace with no records",
            files: vec![],
            traces: |d| {
                empty_trace(d);
            },
            args: vec!["curves", "empty.cpt", "--kind", "shards", "--rate", "1"],
            expect: vec!["empty.cpt", "0 data references"],
        },
        Case {
            name: "data curve of a trace of instruction fetches only",
            files: vec![],
            traces: ifetch_trace,
            args: vec!["curves", "i.cpt", "--kind", "set-associative"],
            expect: vec!["i.cpt", "0 data references", "--ifetch"],
        },
        Case {
            name: "platform colors of 1-byte pages",
            files: vec![],
            traces: no_traces,
            args: vec!["platform", "colors", "xeon-e5506", "--page", "1"],
            expect: vec!["--page", "1 B", "4096"],
        },
        Case {
            name: "platform colors of a page size the model does not map",
            files: vec![],
            traces: no_traces,
            args: vec!["platform", "colors", "xeon-e5506", "--page", "8192"],
            expect: vec!["--page", "8192 B", "2097152"],
        },
        Case {
            name: "empty color set in a scenario",
            files: vec![(
                "s.toml",
                SCENARIO.replace("TRACE", "t.cpt").replace(
                    "platform = \"xeon-e5506\"",
                    "platform = \"xeon-e5506\"\nallocator = \"tam\"",
                ) + "colors = \"\"\n",
            )],
            traces: small_trace,
            args: vec!["sim", "run", "s.toml", "--samples", "out.csv"],
            expect: vec!["s.toml", "app[0] (a).colors", "empty color set"],
        },
        Case {
            name: "an online controller on the table-driven model",
            files: vec![],
            traces: no_traces,
            args: vec!["profile", "eval", "-a", "lfoc-online"],
            expect: vec!["lfoc-online", "sim run", "no"],
        },
        Case {
            name: "unknown LFOC preset on the command line",
            files: vec![],
            traces: no_traces,
            args: vec!["profile", "eval", "-a", "lfoc", "--lfoc-preset", "papr"],
            expect: vec!["--lfoc-preset", "papr", "paper, pbbcache"],
        },
        Case {
            name: "unknown LFOC preset in a scenario",
            files: vec![(
                "s.toml",
                SCENARIO.replace("TRACE", "t.cpt").replace(
                    "platform = \"xeon-e5506\"",
                    "platform = \"xeon-e5506\"\npolicy = \"lfoc\"\nlfoc-preset = \"papr\"",
                ),
            )],
            traces: small_trace,
            args: vec!["sim", "run", "s.toml", "--samples", "out.csv"],
            expect: vec!["s.toml", "papr", "pbbcache"],
        },
        Case {
            name: "an LFOC preset in a scenario whose policy is not LFOC",
            files: vec![(
                "s.toml",
                SCENARIO.replace("TRACE", "t.cpt").replace(
                    "platform = \"xeon-e5506\"",
                    "platform = \"xeon-e5506\"\npolicy = \"ucp\"\nlfoc-preset = \"paper\"",
                ),
            )],
            traces: small_trace,
            args: vec!["sim", "run", "s.toml", "--samples", "out.csv"],
            expect: vec!["s.toml", "lfoc-preset", "lfoc+"],
        },
        Case {
            name: "negative page-copy cost in a scenario",
            files: vec![(
                "s.toml",
                SCENARIO.replace("TRACE", "t.cpt").replace(
                    "platform = \"xeon-e5506\"",
                    "platform = \"xeon-e5506\"\npaging-costs = { page-copy-us = -1.0 }",
                ),
            )],
            traces: small_trace,
            args: vec!["sim", "run", "s.toml", "--samples", "out.csv"],
            expect: vec!["s.toml", "paging-costs", "page-copy-us"],
        },
        Case {
            name: "unknown claim metric in an experiment",
            files: vec![(
                "e.toml",
                EXPERIMENT.to_string()
                    + "[[claim]]\nwhat = \"w\"\npaper = \"p\"\nmetric = \"knee:b\"\n",
            )],
            traces: no_traces,
            args: vec!["experiment", "run", "e.toml", "--out", "out"],
            expect: vec!["e.toml", "claim[0].metric", "knee:b", "knee:a"],
        },
        Case {
            name: "unknown key in an experiment's program",
            files: vec![("e.toml", EXPERIMENT.replace("base-cpi", "base-cip"))],
            traces: no_traces,
            args: vec!["experiment", "run", "e.toml", "--out", "out"],
            expect: vec!["e.toml", "program.a", "base-cip"],
        },
        Case {
            name: "unknown key in an experiment's scenario",
            files: vec![(
                "e.toml",
                EXPERIMENT.replace("seed = 1\ninstructions", "sed = 1\ninstructions"),
            )],
            traces: no_traces,
            args: vec!["experiment", "run", "e.toml", "--out", "out"],
            expect: vec!["e.toml", "scenario", "sed"],
        },
        Case {
            name: "unknown key in an experiment's design",
            files: vec![(
                "e.toml",
                EXPERIMENT.replace("colors = [1, 2]", "colours = [1, 2]"),
            )],
            traces: no_traces,
            args: vec!["experiment", "run", "e.toml", "--out", "out"],
            expect: vec!["e.toml", "colours"],
        },
        Case {
            name: "unknown key in a platform file",
            files: vec![(
                "p.toml",
                include_str!("../../../platforms/xeon-e5506.toml")
                    .replace("dram-ns = 65.0", "dram-ns = 65.0\ndram-nss = 1"),
            )],
            traces: no_traces,
            args: vec!["platform", "show", "p.toml"],
            expect: vec!["p.toml", "dram-nss"],
        },
        Case {
            name: "more cores than any machine in a platform file",
            files: vec![(
                "p.toml",
                include_str!("../../../platforms/xeon-5160.toml")
                    .replace("cores = 2\n", "cores = 4294967295\n"),
            )],
            traces: no_traces,
            args: vec!["platform", "show", "p.toml"],
            expect: vec!["p.toml", "cores", "4294967295", "1..=1024"],
        },
        Case {
            name: "private caches beyond the host's memory in a platform file",
            files: vec![(
                "p.toml",
                include_str!("../../../platforms/xeon-5160.toml").replace(
                    "l1d = { size-bytes = 32768,",
                    "l1d = { size-bytes = 1125899906842624,",
                ),
            )],
            traces: no_traces,
            args: vec!["platform", "show", "p.toml"],
            expect: vec![
                "p.toml",
                "core.l1d",
                "the simulated platform (caches, TLBs, prefetchers, memory bookkeeping) would need",
            ],
        },
        Case {
            name: "unknown key in a scenario's app",
            files: vec![("s.toml", SCENARIO.replace("TRACE", "t.cpt") + "mpl = 2.0\n")],
            traces: small_trace,
            args: vec!["sim", "run", "s.toml", "--samples", "out.csv"],
            expect: vec!["s.toml", "mpl"],
        },
        Case {
            name: "unknown key in a TOML workload",
            files: vec![
                ("m.csv", metrics(|s| s)),
                (
                    "w.toml",
                    "[[workload]]\nname = \"x\"\napps = [\"a\", \"b\"]\nbogus = 1\n".into(),
                ),
            ],
            traces: no_traces,
            args: eval(&["-m", "m.csv", "-w", "w.toml"]),
            expect: vec!["w.toml", "workload[0]", "bogus"],
        },
        Case {
            name: "unknown top-level key in a JSON workloads file",
            files: vec![
                ("m.csv", metrics(|s| s)),
                (
                    "w.json",
                    r#"{"workloads": [["a", "b"]], "extra": 1}"#.into(),
                ),
            ],
            traces: no_traces,
            args: eval(&["-m", "m.csv", "-w", "w.json"]),
            expect: vec!["w.json", "extra", "unknown key"],
        },
        Case {
            name: "misspelt apps in a JSON workload",
            files: vec![
                ("m.csv", metrics(|s| s)),
                ("w.json", r#"[{"name": "x", "aps": ["a", "b"]}]"#.into()),
            ],
            traces: no_traces,
            args: eval(&["-m", "m.csv", "-w", "w.json"]),
            expect: vec!["w.json", "workloads[0]", "aps"],
        },
        Case {
            // an overflow is not a "Non-hex character"
            name: "a plan mask wider than 64 bits",
            files: ok_metrics(),
            traces: no_traces,
            args: eval(&[
                "-m",
                "m.csv",
                "--apps",
                "a,b",
                "-a",
                "user",
                "--plan",
                "0x1ffffffffffffffffffff=0,1",
            ]),
            expect: vec!["user plan", "0x1ffffffffffffffffffff", "wider than 64 bits"],
        },
        Case {
            // serde's "expected struct SynthConfig" names a Rust type
            name: "a generator that is not a table in a scenario",
            files: vec![(
                "s.toml",
                "platform = \"xeon-5160\"\n[[app]]\nname = \"x\"\nsynth = 5\n".into(),
            )],
            traces: no_traces,
            args: vec!["sim", "run", "s.toml", "-o", "out.txt"],
            expect: vec!["s.toml", "line 4", "expected a table"],
        },
        Case {
            name: "JSON scenario cut short",
            files: vec![("s.json", "{\n  \"platform\": \"xeon-5160\",\n".into())],
            traces: no_traces,
            args: vec!["sim", "run", "s.json", "-o", "out.txt"],
            expect: vec!["s.json", "at the end of the input, after line 2"],
        },
        Case {
            name: "JSON platform cut short",
            files: vec![("p.json", "{\n  \"name\": \"p\",\n".into())],
            traces: no_traces,
            args: vec!["platform", "show", "p.json"],
            expect: vec!["p.json", "at the end of the input, after line 2"],
        },
        Case {
            name: "trace info of standard input",
            files: vec![],
            traces: no_traces,
            args: vec!["trace", "info", "-", "-o", "out.txt"],
            expect: vec!["-: ", "standard input", "needs a file"],
        },
        Case {
            name: "sim run of a trace on standard input",
            files: vec![("s.toml", SCENARIO.replace("TRACE", "-"))],
            traces: no_traces,
            args: vec!["sim", "run", "s.toml", "-o", "out.txt"],
            expect: vec!["s.toml", "app[0]", "standard input", "needs a file"],
        },
        Case {
            name: "from-trace of a trace on standard input",
            files: vec![],
            traces: no_traces,
            args: vec![
                "profile",
                "from-trace",
                "--platform",
                "xeon-5160",
                "-",
                "-o",
                "out.csv",
            ],
            expect: vec!["standard input", "replays the trace"],
        },
    ]
}

fn small_trace(d: &Path) {
    gen_trace(d, "t", 2000);
}

/// `dir/i.cpt`: 100 instruction fetches and nothing else (from a Dinero
/// text trace of label 2 lines).
fn ifetch_trace(d: &Path) {
    let din: String = (0..100)
        .map(|i| format!("2 {:x}\n", 0x4000 + 64 * i))
        .collect();
    let o = Command::new(env!("CARGO_BIN_EXE_cachepart"))
        .args(["trace", "convert", "--from", "din", "-", "i.cpt"])
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(din.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bad_input_is_refused_cleanly() {
    let mut failures = Vec::new();
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in &case.files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        (case.traces)(dir.path());
        refused_cleanly(
            dir.path(),
            &case.args,
            &case.expect,
            case.name,
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Every numeric cell of a metrics table, one at a time, replaced by a
/// value its column cannot hold (negative, not a number, empty, NaN,
/// infinite, overflowing; 0 ways and an IPC of 0 too).
#[test]
fn every_cell_of_a_metrics_table_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut failures = Vec::new();
    let mut n = 0;
    for col in 1..=5 {
        let mut bad = vec!["-1", "abc", "", "nan", "inf", "1e400"];
        if col <= 2 {
            bad.push("0");
        }
        for v in bad {
            let text = metrics(|s| {
                let mut lines: Vec<String> = s.lines().map(String::from).collect();
                let mut cells: Vec<&str> = lines[3].split(',').collect();
                cells[col] = v;
                lines[3] = cells.join(",");
                lines.join("\n") + "\n"
            });
            std::fs::write(d.join("m.csv"), text).unwrap();
            let what = format!("metrics column {col} = {v:?}");
            refused_cleanly(
                d,
                &[
                    "profile",
                    "eval",
                    "-m",
                    "m.csv",
                    "--apps",
                    "a,b",
                    "-a",
                    "stock,ucp",
                    "-q",
                ],
                &["m.csv:"],
                &what,
                &mut failures,
            );
            n += 1;
        }
    }
    assert!(n >= 30);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Every key of a scenario, one at a time, given a value it cannot take.
#[test]
fn every_key_of_a_scenario_is_checked() {
    const BASE: &str = r#"platform = "xeon-5160"
seed = SEED
interval-cycles = IC
instructions = INS
alone = false

[[app]]
name = "a"
synth = { seed = 1, accesses = 20_000, pattern = { class = "streaming", array-bytes = 65_536 } }
base-cpi = CPI
mlp = MLP
core = CORE
ways = "WAYS"
"#;
    let defaults = [
        ("SEED", "1"),
        ("IC", "100_000"),
        ("INS", "200_000"),
        ("CPI", "0.8"),
        ("MLP", "1.0"),
        ("CORE", "0"),
        ("WAYS", "0x3"),
    ];
    let bad: &[(&str, &[&str])] = &[
        ("SEED", &["-1", "\"x\"", "1.5"]),
        ("IC", &["0", "-5", "\"1\"", "1e30"]),
        ("INS", &["0", "-1", "\"a\""]),
        ("CPI", &["0", "-1", "nan", "inf", "\"x\""]),
        ("MLP", &["0", "0.5", "-1", "nan", "inf"]),
        ("CORE", &["-1", "99", "1.5"]),
        (
            "WAYS",
            &["0x0", "0x5", "zz", "0x10000", "", "0xfffffffffffffffffff"],
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut failures = Vec::new();
    let mut n = 0;
    for (key, values) in bad {
        for v in *values {
            let mut text = BASE.to_string();
            for (k, def) in defaults {
                text = text.replace(k, if k == *key { v } else { def });
            }
            std::fs::write(d.join("s.toml"), text).unwrap();
            let what = format!("scenario {key} = {v:?}");
            refused_cleanly(
                d,
                &["sim", "run", "s.toml", "-q"],
                &["s.toml:"],
                &what,
                &mut failures,
            );
            n += 1;
        }
    }
    assert!(n >= 29);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
