//! Bad input, generated from tables of (field, bad value, expected words)
//! for every input kind: metrics CSV cells and shapes, workloads files,
//! scenario, platform and generator TOML, cut and corrupted traces, and
//! the command-line options' values (out of range, overflowing, NaN,
//! negative, huge, malformed masks). Each case must pass
//! [`support::refused_cleanly`]: no panic, a non-zero exit, the file,
//! line, field or option named, nothing written. The hand-picked cases are
//! in `bad_input.rs`.

mod support;

use std::path::Path;
use support::{gen_trace, refused_cleanly};

/// One case: what it is, files to write first, the command, the words
/// its message must hold.
struct Case {
    what: String,
    files: Vec<(String, String)>,
    args: Vec<String>,
    expect: Vec<String>,
}

fn case(what: String, files: Vec<(&str, String)>, args: &[&str], expect: &[&str]) -> Case {
    Case {
        what,
        files: files.into_iter().map(|(n, t)| (n.to_string(), t)).collect(),
        args: args.iter().map(|s| s.to_string()).collect(),
        expect: expect.iter().map(|s| s.to_string()).collect(),
    }
}

/// Runs every case in one directory made by `setup` (the fixtures are
/// there before and after each case, so "nothing written" still holds);
/// the files of a case are removed after it. Returns the case count.
fn run(setup: impl Fn(&Path), cases: Vec<Case>) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    setup(d);
    let mut failures = Vec::new();
    let n = cases.len();
    for c in cases {
        for (name, text) in &c.files {
            std::fs::write(d.join(name), text).unwrap();
        }
        let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
        let expect: Vec<&str> = c.expect.iter().map(String::as_str).collect();
        refused_cleanly(d, &args, &expect, &c.what, &mut failures);
        for (name, _) in &c.files {
            std::fs::remove_file(d.join(name)).unwrap();
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    n
}

const HDR: &str = "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps";
const ROWS: [&str; 4] = [
    "a,1,1.0,2,2,200",
    "a,2,1.5,1,1,100",
    "b,1,0.5,4,4,400",
    "b,2,0.6,3,3,300",
];

fn table(rows: &[String]) -> String {
    format!("{HDR}\n{}\n", rows.join("\n"))
}

fn eval_args(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = vec!["profile", "eval", "-o", "out.txt", "-q"];
    v.extend_from_slice(extra);
    v
}

/// Every numeric cell of every row, with values no column may hold; the
/// message names the file and line and the column.
#[test]
fn metrics_cells() {
    let cols = HDR.split(',').collect::<Vec<_>>();
    let mut cases = Vec::new();
    for (r, row) in ROWS.iter().enumerate() {
        for (c, col) in cols.iter().enumerate().skip(1) {
            let mut bad = vec!["-1", "abc", "", "nan", "inf", "-inf", "1e400", "0x10"];
            if c == 1 {
                bad.extend(["0", "1.5", "99999999999999999999", "3"]);
            }
            if c == 2 {
                bad.extend(["0", "1e-300"]);
            }
            for v in bad {
                let mut rows: Vec<String> = ROWS.iter().map(|s| s.to_string()).collect();
                let mut cells: Vec<&str> = row.split(',').collect();
                cells[c] = v;
                rows[r] = cells.join(",");
                // a way count beyond the others leaves a gap: no one line
                // is wrong, the column is
                let line = match (c, v) {
                    (1, "3") => "NR_WAYS".to_string(),
                    _ => format!("m.csv:{}", r + 2),
                };
                cases.push(case(
                    format!("metrics row {} {col} = {v:?}", r + 1),
                    vec![("m.csv", table(&rows))],
                    &eval_args(&["-m", "m.csv", "--apps", "a,b", "-a", "stock,ucp"]),
                    &[&line],
                ));
            }
        }
    }
    assert!(run(|_| {}, cases) >= 150);
}

/// Tables of the wrong shape.
#[test]
fn metrics_shapes() {
    let ok: Vec<String> = ROWS.iter().map(|s| s.to_string()).collect();
    let without = |col: &str| {
        let i = HDR.split(',').position(|c| c == col).unwrap();
        let drop = |l: &str| {
            l.split(',')
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, c)| c)
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut s = drop(HDR) + "\n";
        for r in ROWS {
            s += &(drop(r) + "\n");
        }
        s
    };
    let shapes: Vec<(&str, String, &[&str])> = vec![
        ("an empty file", String::new(), &["m.csv"]),
        ("a header only", format!("{HDR}\n"), &["m.csv", "a"]),
        ("no BENCH column", without("BENCH"), &["m.csv", "BENCH"]),
        (
            "no NR_WAYS column",
            without("NR_WAYS"),
            &["m.csv", "NR_WAYS"],
        ),
        ("no ipc column", without("ipc"), &["m.csv", "ipc"]),
        (
            "no llcmpkc column",
            without("llcmpkc"),
            &["m.csv", "llcmpkc"],
        ),
        (
            "a duplicated row",
            table(&[ok.clone(), vec![ROWS[1].to_string()]].concat()),
            &["m.csv:6", "a"],
        ),
        (
            "a way count missing",
            table(&[ROWS[0], ROWS[2], ROWS[3]].map(String::from)),
            &["m.csv", "a"],
        ),
        (
            "a row with too few cells",
            table(&[ROWS[0], "a,2,1.5,1", ROWS[2], ROWS[3]].map(String::from)),
            &["m.csv:3"],
        ),
        (
            "a row with too many cells",
            table(&[ROWS[0], "a,2,1.5,1,1,100,7", ROWS[2], ROWS[3]].map(String::from)),
            &["m.csv:3"],
        ),
        (
            "an empty program name",
            table(&[ROWS[0], ROWS[1], ",1,0.5,4,4,400", ",2,0.6,3,3,300"].map(String::from)),
            &["m.csv:4", "BENCH"],
        ),
        (
            "ways starting at 2",
            table(
                &[
                    "a,2,1.0,2,2,200",
                    "a,3,1.5,1,1,100",
                    "b,2,0.5,4,4,400",
                    "b,3,0.6,3,3,300",
                ]
                .map(String::from),
            ),
            &["m.csv", "NR_WAYS"],
        ),
        (
            "a duplicated column",
            format!("{HDR},ipc\n{}\n", ROWS.map(|r| format!("{r},1")).join("\n")),
            &["m.csv", "ipc"],
        ),
        (
            "binary garbage",
            "\u{0}\u{1}\u{2}\u{ff}garbage\n".into(),
            &["m.csv"],
        ),
        (
            "a quote left open",
            table(&[ROWS[0], "\"a,2,1.5,1,1,100", ROWS[2], ROWS[3]].map(String::from)),
            &["m.csv"],
        ),
    ];
    let mut cases: Vec<Case> = shapes
        .into_iter()
        .map(|(what, text, expect)| {
            case(
                format!("metrics: {what}"),
                vec![("m.csv", text)],
                &eval_args(&["-m", "m.csv", "--apps", "a,b", "-a", "stock"]),
                expect,
            )
        })
        .collect();
    // not UTF-8 at all
    cases.push(Case {
        what: "metrics: not UTF-8".into(),
        files: vec![(
            "m.csv".into(),
            String::from_utf8_lossy(b"BENCH,\xff\n").into(),
        )],
        args: eval_args(&["-m", "m.csv", "--apps", "a,b"])
            .iter()
            .map(|s| s.to_string())
            .collect(),
        expect: vec!["m.csv".into()],
    });
    // a metrics path that does not exist, or is a directory
    for (what, path) in [("missing", "nope.csv"), ("a directory", ".")] {
        cases.push(case(
            format!("metrics file {what}"),
            vec![],
            &eval_args(&["-m", path, "--apps", "a,b"]),
            &[path],
        ));
    }
    assert!(run(|_| {}, cases) >= 18);
}

/// Workloads files of every format with bad contents.
#[test]
fn workloads() {
    let bad: Vec<(&str, &str, &[&str])> = vec![
        ("w.csv", "a,zz\n", &["w.csv:1", "zz"]),
        ("w.csv", "a,b\n,\n", &["w.csv:2"]),
        ("w.csv", "a,,b\n", &["w.csv:1"]),
        ("w.csv", "", &["w.csv"]),
        ("w.txt", "a b\n", &["w.txt:1"]),
        (
            "w.toml",
            "[[workload]]\napps = \"a,b\"\n",
            &["w.toml", "apps"],
        ),
        (
            "w.toml",
            "[[workload]]\napps = []\n",
            &["w.toml", "workload[0]"],
        ),
        (
            "w.toml",
            "[[workload]]\napps = [1, 2]\n",
            &["w.toml", "apps"],
        ),
        (
            "w.toml",
            "[[workload]]\nname = 5\napps = [\"a\"]\n",
            &["w.toml", "name"],
        ),
        (
            "w.toml",
            "[[workload]]\napps = [\"a\", \"zz\"]\n",
            &["w.toml", "zz"],
        ),
        ("w.toml", "workload = 3\n", &["w.toml", "workload"]),
        ("w.toml", "[[workload]\napps = [\"a\"]\n", &["w.toml:1"]),
        ("w.toml", "", &["w.toml"]),
        ("w.json", "[[\"a\", \"zz\"]]", &["w.json", "zz"]),
        ("w.json", "[[\"a\", \"b\"]", &["w.json"]),
        ("w.json", "[\"a,b\"]", &["w.json"]),
        ("w.json", "[[1, 2]]", &["w.json"]),
        ("w.json", "{}", &["w.json"]),
        ("w.json", "[]", &["w.json"]),
        ("w.json", "[{\"apps\": []}]", &["w.json", "workloads[0]"]),
        ("w.yaml", "- [a, b]\n", &["w.yaml"]),
    ];
    let cases = bad
        .into_iter()
        .map(|(name, text, expect)| {
            case(
                format!("workloads {name}: {text:?}"),
                vec![
                    ("m.csv", table(&ROWS.map(String::from))),
                    (name, text.into()),
                ],
                &eval_args(&["-m", "m.csv", "-w", name, "-a", "stock"]),
                expect,
            )
        })
        .collect();
    assert!(run(|_| {}, cases) >= 20);
}

const SCENARIO: &str = r#"platform = "PLATFORM"
seed = 1
instructions = 50_000
interval-cycles = 100_000
alone = false
POLICY
[[app]]
name = "a"
trace = "TRACE"
core = 0
APP
"#;

fn scenario(platform: &str, policy: &str, trace: &str, app: &str) -> String {
    SCENARIO
        .replace("PLATFORM", platform)
        .replace("POLICY", policy)
        .replace("TRACE", trace)
        .replace("APP", app)
}

/// Scenario keys beyond `bad_input.rs`'s numeric ones: names, files,
/// policies, color sets, masks, syntax.
#[test]
fn scenarios() {
    let p = |policy: &str| scenario("xeon-e5506", policy, "t.cpt", "");
    let a = |app: &str| scenario("xeon-e5506", "", "t.cpt", app);
    let bad: Vec<(String, String, Vec<&str>)> = vec![
        ("unknown platform".into(), scenario("nope", "", "t.cpt", ""), vec!["s.toml", "nope"]),
        ("missing platform file".into(), scenario("nope.toml", "", "t.cpt", ""), vec!["nope.toml"]),
        ("missing trace".into(), scenario("xeon-e5506", "", "none.cpt", ""), vec!["s.toml", "none.cpt"]),
        ("unknown policy".into(), p("policy = \"nope\""), vec!["s.toml", "nope"]),
        ("policy of the wrong type".into(), p("policy = 3"), vec!["s.toml", "policy"]),
        ("unknown allocator".into(), p("allocator = \"nope\""), vec!["s.toml", "allocator"]),
        ("unknown top-level key".into(), p("bogus = 1"), vec!["s.toml", "bogus"]),
        ("TOML syntax".into(), p("x = = 1"), vec!["s.toml"]),
        ("an app on a core the platform lacks".into(), a("").replace("core = 0", "core = 4"), vec!["s.toml", "core"]),
        ("two apps with no app table".into(), "platform = \"xeon-e5506\"\n".into(), vec!["s.toml", "app"]),
        ("an app with a trace and a generator".into(), a("synth = { seed = 1, accesses = 10, pattern = { class = \"streaming\", array-bytes = 4096 } }"), vec!["s.toml", "app[0]"]),
        ("an app with no name".into(), a("").replace("name = \"a\"\n", ""), vec!["s.toml", "name"]),
        ("negative start".into(), a("start-cycle = -5"), vec!["s.toml", "start"]),
        ("duty of 0".into(), a("duty = 0.0"), vec!["s.toml", "duty"]),
        ("duty above 1".into(), a("duty = 2.0"), vec!["s.toml", "duty"]),
        ("prefetchers word of the wrong type".into(), a("prefetchers = 1.5"), vec!["s.toml", "prefetchers"]),
    ];
    let mut cases: Vec<Case> = bad
        .into_iter()
        .map(|(what, text, expect)| {
            case(
                format!("scenario: {what}"),
                vec![("s.toml", text)],
                &["sim", "run", "s.toml", "-q", "-o", "out.txt"],
                &expect,
            )
        })
        .collect();
    // color sets (with a coloring allocator) and CAT masks
    for colors in [
        "0-",
        "5-2",
        "99999",
        "a",
        "0-63,64",
        "-1",
        "0,,1",
        "18446744073709551616",
    ] {
        let text = scenario(
            "xeon-e5506",
            "allocator = \"tam\"",
            "t.cpt",
            &format!("colors = \"{colors}\""),
        );
        cases.push(case(
            format!("scenario colors {colors:?}"),
            vec![("s.toml", text)],
            &["sim", "run", "s.toml", "-q", "-o", "out.txt"],
            &["s.toml", "colors"],
        ));
    }
    for ways in [
        "0x0",
        "0x5",
        "0x10000",
        "zz",
        "0x",
        "-0x3",
        "0xfffffffffffffffffff",
    ] {
        cases.push(case(
            format!("scenario ways {ways:?}"),
            vec![("s.toml", a(&format!("ways = \"{ways}\"")))],
            &["sim", "run", "s.toml", "-q", "-o", "out.txt"],
            &["s.toml", "ways"],
        ));
    }
    let n = run(
        |d| {
            gen_trace(d, "t", 2000);
        },
        cases,
    );
    assert!(n >= 30, "{n} cases");
}

/// Every number of a platform file, one at a time, given a value it
/// cannot take; the platform is read by a scenario, which runs it.
#[test]
fn platforms() {
    const BASE: &str = include_str!("../../../platforms/xeon-e5506.toml");
    // (the word the message must hold, the line replaced, bad values):
    // a cache's geometry errors name its table, a memory size error its key
    let keys: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "cores",
            "cores = 4",
            vec!["0", "-1", "\"4\"", "1.5", "1025", "4294967295"],
        ),
        (
            "llc",
            "size-bytes = 4194304",
            vec!["0", "3", "1000000", "1125899906842624"],
        ),
        (
            "size-bytes",
            "size-bytes = 4194304",
            vec!["-1", "1e30", "\"x\""],
        ),
        ("llc", "ways = 16", vec!["0", "3000"]),
        ("ways", "ways = 16", vec!["-1", "1.5"]),
        ("core.l1i", "line-bytes = 64", vec!["0", "48", "8192"]),
        ("line-bytes", "line-bytes = 64", vec!["-1", "1e9"]),
        (
            "freq-ghz",
            "freq-ghz = 2.13",
            vec!["0", "-1", "nan", "inf", "\"x\""],
        ),
        ("l2-cycles", "l2-cycles = 10", vec!["-1", "1.5", "\"x\""]),
        ("llc-cycles", "llc-cycles = 38", vec!["-1", "1.5", "\"x\""]),
        (
            "dram-ns",
            "dram-ns = 65.0",
            vec!["-1", "nan", "inf", "\"x\""],
        ),
        (
            "dram-bandwidth-gbps",
            "dram-bandwidth-gbps = 19.2",
            vec!["0", "-1", "nan", "\"x\""],
        ),
        (
            "memory.size-bytes",
            "size-bytes = 4294967296",
            vec!["0", "4097"],
        ),
        (
            "size-bytes",
            "size-bytes = 4294967296",
            vec!["-1", "4096.5"],
        ),
    ];
    let mut cases = Vec::new();
    for (key, line, values) in &keys {
        assert!(BASE.contains(line), "{line}");
        for v in values {
            let value_line = line.replacen(line.split(" = ").nth(1).unwrap(), v, 1);
            let text = BASE.replacen(line, &value_line, 1);
            cases.push(case(
                format!("platform {value_line}"),
                vec![
                    ("p.toml", text),
                    ("s.toml", scenario("p.toml", "", "t.cpt", "")),
                ],
                &["sim", "run", "s.toml", "-q", "-o", "out.txt"],
                &["p.toml", key],
            ));
        }
    }
    // caches whose geometry does not divide, or whose table is malformed
    for (what, l1d) in [
        (
            "a set count that is not a power of two",
            "l1d = { size-bytes = 24576, ways = 8, line-bytes = 64 }",
        ),
        (
            "more ways than lines",
            "l1d = { size-bytes = 256, ways = 8, line-bytes = 64 }",
        ),
        (
            "a missing line size",
            "l1d = { size-bytes = 32768, ways = 8 }",
        ),
        (
            "an unknown key",
            "l1d = { size-bytes = 32768, ways = 8, line-bytes = 64, lines = 2 }",
        ),
    ] {
        let text = BASE.replacen(
            "l1d = { size-bytes = 32768, ways = 8, line-bytes = 64 }",
            l1d,
            1,
        );
        cases.push(case(
            format!("platform l1d: {what}"),
            vec![
                ("p.toml", text),
                ("s.toml", scenario("p.toml", "", "t.cpt", "")),
            ],
            &["sim", "run", "s.toml", "-q", "-o", "out.txt"],
            // core.l1d for the geometry, the file's l1d line for parse errors
            &["p.toml", "l1d"],
        ));
    }
    let n = run(
        |d| {
            gen_trace(d, "t", 2000);
        },
        cases,
    );
    assert!(n >= 40, "{n} cases");
}

/// Generator configs (`trace generate`), every key with bad values.
#[test]
fn generator_configs() {
    const BASE: &str = "seed = SEED\naccesses = ACC\n[mix]\naccesses-per-instr = API\n[pattern]\nclass = \"CLASS\"\nworking-set-bytes = WS\ndistribution = \"DIST\"\n";
    let defaults = [
        ("SEED", "1"),
        ("ACC", "1000"),
        ("API", "0.3"),
        ("CLASS", "cache-sensitive"),
        ("WS", "65536"),
        ("DIST", "uniform"),
    ];
    // (placeholder, key, bad values, the word the message must hold):
    // errors inside [pattern] point at the key itself (its line is shown)
    let bad: &[(&str, &str, &[&str], &str)] = &[
        (
            "SEED",
            "seed",
            &["-1", "\"x\"", "1.5", "18446744073709551616"],
            "seed",
        ),
        (
            "ACC",
            "accesses",
            &["-1", "\"x\"", "1.5", "1e30", "18446744073709551616"],
            "accesses",
        ),
        (
            "API",
            "accesses-per-instr",
            &["0", "-1", "nan", "inf", "\"x\""],
            "accesses-per-instr",
        ),
        ("CLASS", "class", &["nope", ""], "class"),
        ("WS", "working-set-bytes", &["0"], "working set"),
        (
            "WS",
            "working-set-bytes",
            &["-1", "1e30", "\"x\""],
            "working-set-bytes =",
        ),
        ("DIST", "distribution", &["nope", ""], "distribution ="),
    ];
    let mut cases = Vec::new();
    for (key, name, values, word) in bad {
        for v in *values {
            let mut text = BASE.to_string();
            for (k, def) in defaults {
                text = text.replace(k, if k == *key { v } else { def });
            }
            cases.push(case(
                format!("generator {name} = {v:?}"),
                vec![("g.toml", text)],
                &["trace", "generate", "g.toml", "out.cpt", "-q"],
                &["g.toml", word],
            ));
        }
    }
    for (what, name, text, expect) in [
        ("JSON syntax", "g.json", "{\"seed\": 1,", "g.json"),
        (
            "JSON unknown key",
            "g.json",
            "{\"seed\": 1, \"acesses\": 5}",
            "acesses",
        ),
        (
            "TOML unknown key",
            "g.toml",
            "seed = 1\nacesses = 5\n",
            "acesses",
        ),
        (
            "no pattern",
            "g.toml",
            "seed = 1\naccesses = 5\n",
            "pattern",
        ),
        ("another extension", "g.yaml", "seed: 1\n", "g.yaml"),
        ("empty", "g.toml", "", "g.toml"),
    ] {
        cases.push(case(
            format!("generator: {what}"),
            vec![(name, text.into())],
            &["trace", "generate", name, "out.cpt", "-q"],
            &[expect],
        ));
    }
    let n = run(|_| {}, cases);
    assert!(n >= 28, "{n} cases");
}

/// A trace cut at several lengths or with one byte flipped (header,
/// inside the frames' compressed data, index, trailer), read by every
/// command that reads traces.
#[test]
fn broken_traces() {
    let dir = tempfile::tempdir().unwrap();
    let good = gen_trace(dir.path(), "good", 20_000);
    let bytes = std::fs::read(&good).unwrap();
    let len = bytes.len();
    let mut variants: Vec<(String, Vec<u8>)> = Vec::new();
    for cut in [1, 3, 8, 16, 40, len / 2, len - 8, len] {
        variants.push((
            format!("cut by {cut} of {len} bytes"),
            bytes[..len - cut].to_vec(),
        ));
    }
    // Header, trailer and index bytes, and bytes inside the frames'
    // compressed data (zstd's content checksum catches those).
    for at in [
        0,
        1,
        4,
        8,
        len / 4,
        len / 3,
        len / 2,
        len - 1,
        len - 4,
        len - 12,
        len - 24,
    ] {
        let mut b = bytes.clone();
        b[at] ^= 0xff;
        variants.push((format!("byte {at} of {len} flipped"), b));
    }
    let commands: Vec<Vec<&str>> = vec![
        vec!["trace", "info", "c.cpt", "-o", "out.txt"],
        vec!["curves", "c.cpt", "-o", "out.txt"],
        vec!["curves", "c.cpt", "--kind", "shards", "-o", "out.txt"],
        vec!["sim", "cachegrind", "c.cpt", "-o", "out.txt"],
        vec!["trace", "convert", "--from", "cpt", "c.cpt", "out.cpt"],
        vec!["trace", "shards-index", "c.cpt"],
        vec![
            "profile",
            "from-trace",
            "c.cpt",
            "-p",
            "xeon-e5506",
            "--instructions",
            "1000",
            "-o",
            "out.csv",
        ],
    ];
    let mut cases = Vec::new();
    for (what, b) in &variants {
        for args in &commands {
            cases.push((
                format!("{what}: {}", args[..2].join(" ")),
                b.clone(),
                args.clone(),
            ));
        }
    }
    drop(dir);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut failures = Vec::new();
    let n = cases.len();
    for (what, b, args) in cases {
        std::fs::write(d.join("c.cpt"), b).unwrap();
        refused_cleanly(d, &args, &["c.cpt"], &what, &mut failures);
        std::fs::remove_file(d.join("c.cpt")).unwrap();
    }
    assert!(
        failures.is_empty(),
        "{} of {n} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(n >= 100, "{n} cases");
}

/// Every numeric option of the commands, with values out of range,
/// overflowing, NaN, negative, huge or malformed; the message names the
/// option.
#[test]
fn option_values() {
    let curves = |extra: &[&'static str]| {
        let mut v = vec!["curves", "t.cpt", "-o", "out.txt"];
        v.extend_from_slice(extra);
        v
    };
    let stall = curves(&["--kind", "stall-rate", "-p", "xeon-e5506"]);
    let from_trace = vec![
        "profile",
        "from-trace",
        "t.cpt",
        "-p",
        "xeon-e5506",
        "-o",
        "out.csv",
    ];
    let eval = |alg: &'static str| vec!["profile", "eval", "-a", alg, "-o", "out.txt", "-q"];
    let sim = vec!["sim", "run", "s.toml", "-q", "-o", "out.txt"];
    let throttle = vec!["sim", "throttle", "s.toml", "-o", "out.txt"];
    let opts: Vec<(Vec<&str>, &str, Vec<&str>)> = vec![
        (
            curves(&[]),
            "--line",
            vec![
                "0",
                "3",
                "-1",
                "abc",
                "1e3",
                "18446744073709551616",
                "1099511627776",
            ],
        ),
        (
            curves(&["--kind", "set-associative"]),
            "--sets",
            vec!["0", "-1", "abc", "18446744073709551616"],
        ),
        (
            curves(&["--kind", "set-associative"]),
            "--ways",
            vec!["0", "-1", "4294967296"],
        ),
        (
            curves(&["--kind", "colors"]),
            "--page",
            vec!["0", "3", "-1"],
        ),
        (curves(&[]), "--min-size", vec!["0", "-1", "abc", "32"]),
        (curves(&[]), "--max-size", vec!["0", "-1", "512"]),
        (
            curves(&[]),
            "--per-octave",
            vec!["0", "-1", "4294967296", "4294967295", "1025"],
        ),
        (
            curves(&["--kind", "shards"]),
            "--rate",
            vec!["0", "-1", "nan", "inf", "2", "abc"],
        ),
        (
            curves(&["--kind", "shards"]),
            "--max-lines",
            vec!["0", "-1", "abc"],
        ),
        (
            stall.clone(),
            "--base-cpi",
            vec!["0", "-1", "nan", "inf", "abc"],
        ),
        (stall.clone(), "--mlp", vec!["0", "0.5", "-1", "nan", "inf"]),
        (
            stall.clone(),
            "--instructions",
            vec!["0", "-1", "abc", "18446744073709551615", "1000000000001"],
        ),
        (
            from_trace.clone(),
            "--base-cpi",
            vec!["0", "-1", "nan", "inf"],
        ),
        (from_trace.clone(), "--mlp", vec!["0", "0.5", "nan", "-inf"]),
        (
            from_trace.clone(),
            "--instructions",
            vec!["0", "-1", "18446744073709551615"],
        ),
        (from_trace.clone(), "--warmup", vec!["18446744073709551615"]),
        (
            from_trace.clone(),
            "--seed",
            vec!["-1", "18446744073709551616"],
        ),
        (
            eval("stock"),
            "--max-bw",
            vec![
                "nan", "inf", "-inf", "abc", "-5", "0", "0.5", "1e-100", "5e-324",
            ],
        ),
        (
            eval("optc-stp"),
            "--time-limit",
            vec!["nan", "inf", "-inf", "abc", "1e20", "-0.5"],
        ),
        (eval("stock"), "--ways", vec!["0", "-1", "999", "abc"]),
        (eval("lfoc"), "--lfoc-max-streaming", vec!["0", "-1", "abc"]),
        (eval("lfoc"), "--lfoc-gaps-per-streaming", vec!["-1", "abc"]),
        (eval("stock"), "--bw-model", vec!["nope", ""]),
        (eval("stock"), "--format", vec!["xml", ""]),
        (
            eval("optc-stp"),
            "--threads",
            vec!["0", "-1", "abc", "18446744073709551616"],
        ),
        (
            vec!["trace", "shards-index", "t.cpt"],
            "--line",
            vec!["0", "3", "-1"],
        ),
        (
            vec!["trace", "shards-index", "t.cpt"],
            "--exact-below",
            vec!["-1", "abc", "4294967296"],
        ),
        (
            vec!["platform", "colors", "xeon-e5506"],
            "--page",
            vec!["0", "-1", "3", "abc"],
        ),
        (
            vec!["platform", "colors", "xeon-e5506"],
            "--colors",
            vec!["0-", "5-2", "99999", "a", "", "0-63,64"],
        ),
        (
            vec!["sim", "cachegrind", "t.cpt", "-o", "out.txt"],
            "--LL",
            vec![
                "0,0,0",
                "1,1,1",
                "-1,8,64",
                "4194304,16",
                "4194304,16,64,1",
                "99999999999,16,64",
                "nan,1,1",
            ],
        ),
        (
            vec!["sim", "cachegrind", "t.cpt", "-o", "out.txt"],
            "--I1",
            vec!["32768,0,64", "32768,8,63", "32768,8,0"],
        ),
        (
            sim.clone(),
            "--seed",
            vec!["-1", "abc", "18446744073709551616"],
        ),
        (sim.clone(), "--policy", vec!["nope", ""]),
        (throttle.clone(), "--max-runs", vec!["-1", "abc"]),
        (throttle.clone(), "--keep", vec!["-1", "abc"]),
    ];
    let mut cases = Vec::new();
    for (base, opt, values) in &opts {
        for v in values {
            let kv = format!("{opt}={v}");
            let args: Vec<&str> = base.iter().copied().chain([kv.as_str()]).collect();
            // the option as the message names it: the library's messages
            // (shared with Python) give the field without dashes
            let word = match *opt {
                "--lfoc-max-streaming" => "streaming",
                o => o.trim_start_matches('-'),
            };
            cases.push(case(
                format!("{} {kv}", base[..2].join(" ")),
                vec![],
                &args,
                &[word],
            ));
        }
    }
    // masks and app lists of `--plan`
    for plan in [
        "0x0=0,1",
        "zz=0,1",
        "0x3=9",
        "0x3=",
        "=0",
        "0x3=0,1;0xc=0",
        "0x10000=0,1",
        "0xfffffffffffffffffffff=0,1",
        "0x3=0-",
        "0x3=1-0",
        "0x3=a",
        "0x3",
    ] {
        cases.push(case(
            format!("--plan {plan:?}"),
            vec![],
            &[
                "profile",
                "eval",
                "--builtin",
                "parametric",
                "--apps",
                "stream-hi,sens-mid",
                "-a",
                "user",
                "-o",
                "out.txt",
                "--plan",
                plan,
            ],
            &["plan"],
        ));
    }
    let n = run(
        |d| {
            gen_trace(d, "t", 2000);
            std::fs::write(d.join("s.toml"), scenario("xeon-e5506", "", "t.cpt", "")).unwrap();
        },
        cases,
    );
    assert!(n >= 120, "{n} cases");
}
