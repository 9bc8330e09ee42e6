//! Trace sources are interchangeable: a `.cpt` file decoded ahead on a
//! background thread, the generator run ahead, and the same records in
//! memory give byte-identical samples and totals, restarts included.

use std::sync::Arc;

use cachepart_sim::memory::MemoryConfig;
use cachepart_sim::system::{
    AppSpec, AppTiming, CptFile, PlatformConfig, RecordsSource, System, TraceSource,
};
use cachepart_sim::{CacheConfig, HierarchyConfig};
use cachepart_trace::synth::SynthConfig;
use cachepart_trace::{Header, Record, Writer};

fn platform() -> PlatformConfig {
    let mut core = HierarchyConfig::split_l1(CacheConfig::lru(8 << 10, 4, 64));
    core.l2 = Some(CacheConfig::lru(32 << 10, 4, 64));
    PlatformConfig::new(
        "sources",
        2,
        core,
        CacheConfig::lru(256 << 10, 8, 64).with_slices(2),
        MemoryConfig::aged(64 << 20, 5),
    )
}

fn synth(seed: u64, pattern: &str) -> SynthConfig {
    serde_json::from_str(&format!(
        r#"{{"seed": {seed}, "accesses": 30000, "pattern": {pattern}}}"#
    ))
    .unwrap()
}

/// Samples of every interval, the final totals as text, and the fewest
/// restarts of an app.
fn run(sources: [Arc<dyn TraceSource>; 2]) -> (Vec<String>, String, u64) {
    let apps = sources
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            AppSpec::new(format!("a{i}"), s)
                .on_core(i as u32)
                .with_timing(AppTiming::new(0.7, 2.0))
                // Several passes over each trace.
                .with_limit(250_000, true)
        })
        .collect();
    let mut sys = System::new(&platform(), apps, 7).unwrap();
    let mut samples = Vec::new();
    sys.run_to_end(50_000, |s| samples.push(format!("{s:?}")))
        .unwrap();
    let totals = sys.totals();
    let restarts = totals.iter().map(|t| t.restarts).min().unwrap_or(0);
    (samples, format!("{totals:?}"), restarts)
}

#[test]
fn file_generator_and_memory_sources_agree() {
    let cfgs = [
        synth(
            1,
            r#"{"class": "cache-sensitive", "working-set-bytes": 1048576, "distribution": "zipf"}"#,
        ),
        synth(2, r#"{"class": "streaming", "array-bytes": 4194304}"#),
    ];
    let recs: Vec<Vec<Record>> = cfgs
        .iter()
        .map(|c| c.generator().unwrap().collect())
        .collect();
    // Small frames, so the read-ahead crosses many frame boundaries.
    let dir = std::env::temp_dir().join(format!("cachepart-sources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths: Vec<_> = recs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let path = dir.join(format!("{i}.cpt"));
            let header = Header {
                frame_records: 777,
                ..Header::default()
            };
            let mut w = Writer::new(std::fs::File::create(&path).unwrap(), &header).unwrap();
            w.extend(r.iter().copied()).unwrap();
            w.finish().unwrap();
            path
        })
        .collect();
    let memory = run([
        Arc::new(RecordsSource::new(recs[0].clone())),
        Arc::new(RecordsSource::new(recs[1].clone())),
    ]);
    let files = run([
        Arc::new(CptFile(paths[0].clone())),
        Arc::new(CptFile(paths[1].clone())),
    ]);
    let [c0, c1] = cfgs;
    let generators = run([Arc::new(c0), Arc::new(c1)]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(memory.0.len() > 3, "{} intervals", memory.0.len());
    assert!(memory.2 >= 2, "{}", memory.1);
    assert_eq!(files, memory);
    assert_eq!(generators, memory);
}
