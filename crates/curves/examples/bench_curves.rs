//! Throughput and accuracy of the curves on synthetic traces and, with
//! valgrind, on real programs captured with lackey (`sort`, `xz`,
//! `sqlite3`): accesses per second of the exact fully associative pass, of
//! a plain reference Fenwick loop, of SHARDS (from an iterator and from a
//! slice) and of a bare scan of the records (the floor of any pass that
//! reads them all); the mean absolute error of SHARDS against the exact
//! curve over log-spaced sizes from 1 KiB to 64 MiB.
//!
//! Run: `cargo run --release -p cachepart-curves --example bench_curves`
//! (`-- --quick` for the synthetic traces only, `-- --no-synth` for the
//! real ones only).

#[path = "../benches/common/reference.rs"]
mod reference;
#[path = "../benches/common/traces.rs"]
mod traces;

use std::time::Instant;

use cachepart_curves::{
    build_index, fully_associative, log_sizes, mean_absolute_error, shards, shards_slice, Curve,
    Options, ShardsConfig, ShardsIndex, UntilError,
};
use cachepart_trace::{Header, Kind, Prefetch, Reader, Record, Writer};

/// Exact and SHARDS from a trace file, and SHARDS from the file's sample
/// index: the real paths of `cachepart curves`.
fn from_files(name: &str, recs: &[Record], t_exact_mem: f64) {
    let opts = Options::default();
    let dir = std::env::temp_dir().join(format!("cachepart-bench-curves-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join(format!(
        "{}.cpt",
        name.split_whitespace().next().unwrap_or("t")
    ));
    let f = std::io::BufWriter::new(std::fs::File::create(&trace).unwrap());
    let mut w = Writer::new(f, &Header::default()).unwrap();
    w.extend(recs.iter().copied()).unwrap();
    w.finish().unwrap();
    // As `cachepart curves` reads a trace: frames decoded ahead on another
    // thread.
    let read = || {
        let f = std::fs::File::open(&trace).unwrap();
        let reader = Reader::new(std::io::BufReader::with_capacity(1 << 20, f)).unwrap();
        UntilError::new(Prefetch::reader(reader).unwrap())
    };
    let (t_exact, h) = time(3, || {
        let mut r = read();
        let h = fully_associative(&mut r, &opts).unwrap();
        r.finish().unwrap();
        h
    });
    let n = h.accesses as f64;
    let cfg = ShardsConfig::fixed_rate(0.01);
    let (t_pass, pass) = time(3, || {
        let mut r = read();
        let e = shards(&mut r, &opts, &cfg).unwrap();
        r.finish().unwrap();
        e
    });
    let (t_build, summary) = time(1, || build_index(&trace, &opts, 256).unwrap());
    let (t_index, est) = time(5, || {
        let index = ShardsIndex::open(&summary.path).unwrap();
        index.check_trace(&trace).unwrap();
        index.estimate(&opts, &cfg).unwrap()
    });
    assert_eq!(est, pass, "the index's estimate differs from the pass's");
    let trace_bytes = std::fs::metadata(&trace).unwrap().len();
    println!(
        "from files: trace {:.1} MB, sample index {:.2} MB ({} base-sample references, {} lines)",
        trace_bytes as f64 / 1e6,
        summary.bytes as f64 / 1e6,
        summary.sampled_refs,
        summary.sampled_lines
    );
    println!(
        "exact from the file       {:8.1} M accesses/s",
        n / t_exact / 1e6
    );
    println!(
        "SHARDS 0.01, file pass    {:8.1} M accesses/s  ({:.1}x exact from the file)",
        n / t_pass / 1e6,
        t_exact / t_pass
    );
    println!(
        "SHARDS 0.01, sample index {:8.1} M accesses/s  ({:.1}x exact from the file, {:.1}x exact in memory; same estimate as the pass)",
        n / t_index / 1e6,
        t_exact / t_index,
        t_exact_mem / t_index
    );
    println!(
        "building the index        {:8.1} M accesses/s  (once per trace; {:.2}x the exact pass's time)",
        n / t_build / 1e6,
        t_build / t_exact
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Best of `n` runs of `f`, in seconds, and its last result.
fn time<T>(n: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..n {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.expect("n > 0"))
}

fn mae_over_salts(recs: &[Record], cfg: ShardsConfig, exact: &Curve, salts: u64) -> (f64, f64) {
    let opts = Options::default();
    let mut sum = 0.0;
    let mut max: f64 = 0.0;
    for salt in 0..salts {
        let est = shards_slice(recs, &opts, &cfg.with_salt(salt).with_base_salt(salt)).unwrap();
        let e = mean_absolute_error(&est.curve(&exact.sizes_bytes).unwrap(), exact).unwrap();
        sum += e;
        max = max.max(e);
    }
    (sum / salts as f64, max)
}

fn report(name: &str, recs: &[Record]) {
    let opts = Options::default();
    let (t_exact, h) = time(3, || {
        fully_associative(recs.iter().copied(), &opts).unwrap()
    });
    let n = h.accesses as f64;
    let shift = opts.line_shift();
    let lines: Vec<u64> = recs
        .iter()
        .filter(|r| r.kind().is_data())
        .flat_map(|r| {
            let a = r.addr();
            (a >> shift)..=((a + u64::from(r.size()) - 1) >> shift)
        })
        .collect();
    let (t_ref, (hist, cold)) = time(3, || reference::plain_fenwick(&lines));
    assert_eq!(hist, h.counts, "reference loop disagrees");
    assert_eq!(cold, h.cold);
    let cfg = ShardsConfig::fixed_rate(0.01);
    let (t_shards, _) = time(5, || shards_slice(recs, &opts, &cfg).unwrap());
    let (t_iter, _) = time(3, || shards(recs.iter().copied(), &opts, &cfg).unwrap());
    let plain = cfg.with_exact_below(0);
    let (t_plain, _) = time(5, || shards_slice(recs, &opts, &plain).unwrap());
    let dense = cfg.with_reference_fraction(1.0);
    let (t_dense, _) = time(3, || shards_slice(recs, &opts, &dense).unwrap());
    // The floor of any pass over the records: read each one, count the
    // data references and instructions.
    let (t_scan, _) = time(5, || {
        let mut refs = 0u64;
        let mut instructions = 0u64;
        for &r in std::hint::black_box(recs) {
            let kind = r.kind_code();
            instructions += r.gap_u64() + u64::from(kind == Kind::Ifetch as u64);
            refs += u64::from(kind != Kind::Ifetch as u64 && kind != Kind::Escape as u64);
        }
        std::hint::black_box((refs, instructions))
    });
    println!("## {name}");
    println!(
        "records {}  data line references {}  footprint {} KiB  instructions {}",
        recs.len(),
        h.accesses,
        h.distinct_lines() * 64 / 1024,
        h.instructions
    );
    println!(
        "exact fully associative   {:8.1} M accesses/s",
        n / t_exact / 1e6
    );
    println!(
        "plain Fenwick reference   {:8.1} M accesses/s  (exact / reference = {:.2})",
        n / t_ref / 1e6,
        t_ref / t_exact
    );
    println!(
        "SHARDS 0.01, slice        {:8.1} M accesses/s  ({:.1}x exact)",
        n / t_shards / 1e6,
        t_exact / t_shards
    );
    println!(
        "SHARDS 0.01, iterator     {:8.1} M accesses/s  ({:.1}x exact)",
        n / t_iter / 1e6,
        t_exact / t_iter
    );
    println!(
        "plain SHARDS 0.01, slice  {:8.1} M accesses/s  ({:.1}x exact)",
        n / t_plain / 1e6,
        t_exact / t_plain
    );
    println!(
        "SHARDS 0.01, ref. frac. 1 {:8.1} M accesses/s  ({:.1}x exact)",
        n / t_dense / 1e6,
        t_exact / t_dense
    );
    println!(
        "bare scan of the records  {:8.1} M accesses/s  ({:.1}x exact: the bound on any sampler)",
        n / t_scan / 1e6,
        t_exact / t_scan
    );
    from_files(name, recs, t_exact);
    for per_octave in [1, 4] {
        let sizes = log_sizes(1024, 64 << 20, per_octave).unwrap();
        let exact = h.curve(&sizes).unwrap();
        println!(
            "MAE over {} sizes 1 KiB..64 MiB (mean / max over 5 salts):",
            sizes.len()
        );
        for cfg in [
            ShardsConfig::fixed_rate(0.1),
            ShardsConfig::fixed_rate(0.01),
            ShardsConfig::fixed_rate(0.01).with_reference_fraction(1.0),
            ShardsConfig::fixed_rate(0.01).with_exact_below(0),
            ShardsConfig::fixed_rate(0.01)
                .with_exact_below(0)
                .with_adjust(false),
            ShardsConfig::fixed_rate(0.001),
            ShardsConfig::fixed_rate(0.001).with_exact_below(0),
            ShardsConfig::fixed_size(8192),
            ShardsConfig::fixed_size(65536),
        ] {
            let (mean, max) = mae_over_salts(recs, cfg, &exact, 5);
            println!(
                "  {:<55} C={:<4} f={:<4} {mean:.4} / {max:.4}",
                format!("{:?}", cfg.sampling) + if cfg.adjust { " adj" } else { "" },
                cfg.exact_below_lines,
                cfg.reference_fraction
            );
        }
    }
    let sizes = log_sizes(1024, 64 << 20, 1).unwrap();
    let exact = h.curve(&sizes).unwrap();
    let est = shards_slice(recs, &opts, &cfg).unwrap();
    let approx = est.curve(&sizes).unwrap();
    let plain_est = shards_slice(recs, &opts, &plain).unwrap();
    let approx_plain = plain_est.curve(&sizes).unwrap();
    println!(
        "reference sample {} refs ({} look-backs truncated), line sample {} refs of {} lines",
        est.ref_samples(),
        est.truncated_lookbacks,
        est.sampled_refs,
        est.sampled_lines
    );
    println!("size        exact    shards(0.01)  plain(0.01)");
    for (i, size) in sizes.iter().enumerate() {
        println!(
            "{:>9}  {:.4}   {:.4}        {:.4}",
            size,
            exact.miss_ratio(i),
            approx.miss_ratio(i),
            approx_plain.miss_ratio(i)
        );
    }
    println!();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let synth = !args.iter().any(|a| a == "--no-synth");
    if synth {
        report(
            "zipf 0.99 over 8 MiB, 4 M accesses",
            &traces::zipf(4_000_000, 8 << 20),
        );
        report(
            "uniform working set of 2 MiB, 4 M accesses",
            &traces::working_set(4_000_000, 2 << 20),
        );
        report(
            "phases (zipf 8 MiB, stream 32 MiB, light 256 KiB), 6 M accesses",
            &traces::phased(6_000_000),
        );
    }
    if quick {
        return;
    }
    match traces::sort() {
        Some(r) => report("sort of 3,000 lines (lackey)", &r),
        None => println!("valgrind not found: no real traces"),
    }
    if let Some(r) = traces::xz() {
        report("xz -3 of 60 KB (lackey)", &r);
    }
    if let Some(r) = traces::sqlite() {
        report(
            "sqlite3, 4,000 rows, index, group-by, self-join (lackey)",
            &r,
        );
    }
}
