//! The cachegrind-compatible simulator's tests: worked examples, the
//! refusals, and property tests against the general model (one core's
//! [`Hierarchy`] in [`Mode::Cachegrind`]) on random records and
//! geometries, and on runs of references in one line (the lookups the
//! tag store answers from the block it looked up last).

use cachepart_trace::{Event, Kind, Record};
use proptest::prelude::*;

use super::*;
use crate::hierarchy::HierarchyStats;

#[test]
fn parses_the_summary_line() {
    let text = "desc: I1 cache: 32768 B, 64 B, 8-way associative\n\
                cmd: ls\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n\
                fl=x\n1 2 3 4 5 6 7 8 9 10\n\
                summary: 1174816 6198 2800 281560 3651 2441 140383 1303 1171\n";
    let s = CachegrindSummary::parse(text).unwrap();
    assert_eq!(s.ir, 1174816);
    assert_eq!(s.dlmw, 1171);
    assert!(CachegrindSummary::parse("events: Ir\nsummary: 5\n").is_err());
}

#[test]
fn counts_like_cachegrind() {
    let cfg = CachegrindConfig::lru((1024, 2, 64), (1024, 2, 32), (4096, 4, 64));
    let mut sim = CachegrindSim::new(&cfg).unwrap();
    let r = |k, a, s| Record::access(k, a, s, 0).unwrap();
    sim.run([
        r(Kind::Ifetch, 0x1000, 4),
        r(Kind::Ifetch, 0x103e, 4), // straddles two lines: one miss
        r(Kind::Load, 0x8000, 8),
        r(Kind::Modify, 0x8000, 8), // a read, and a hit
        r(Kind::Store, 0x9000, 8),
        r(Kind::Load, 0x9000, 64), // clamped to 32 bytes: one line, a hit
    ]);
    let s = sim.summary();
    assert_eq!(s.values(), [2, 2, 2, 3, 1, 1, 1, 1, 1], "{s}");
    assert_eq!(sim.instructions(), 2);
}

#[test]
fn refuses_what_cachegrind_refuses() {
    let small = CachegrindConfig::lru((1024, 2, 8), (1024, 2, 64), (4096, 4, 64));
    let e = CachegrindSim::new(&small).unwrap_err().to_string();
    assert!(e.contains("minimum of 16"), "{e}");
    let npot = CachegrindConfig::lru((1024, 2, 64), (1024, 2, 64), (6 << 20, 16, 64));
    let e = CachegrindSim::new(&npot).unwrap_err().to_string();
    assert!(e.starts_with("LL: 6144 sets"), "{e}");
}

/// The general model's totals on the same records.
fn general(cfg: &CachegrindConfig, records: &[Record]) -> (CachegrindSummary, u64) {
    let mut ll = Cache::new(&cfg.ll).unwrap();
    let mut core = Hierarchy::new(&general_config(cfg), &ll).unwrap();
    core.run(&mut ll, records.iter().copied());
    let stats: HierarchyStats = core.stats();
    (CachegrindSummary::from_stats(&stats), stats.instructions)
}

fn geometry() -> impl Strategy<Value = CacheConfig> {
    // size = sets x ways x line, all powers of two but the ways
    (0u32..4, 1u32..9, 4u32..8).prop_map(|(sets_log, ways, line_log)| {
        let line = 1u32 << line_log;
        CacheConfig::lru(
            (u64::from(line) * u64::from(ways)) << sets_log.max(1),
            ways,
            line,
        )
    })
}

fn record() -> impl Strategy<Value = Record> {
    // addresses in a few KiB so that sets fill, conflict and hit; sizes up
    // to 64 bytes so that references straddle lines and get clamped
    prop_oneof![
        20 => (0u8..6, 0u64..8192, 1u32..65, 0u32..4).prop_map(|(k, addr, size, gap)| {
            let kind = [Kind::Load, Kind::Store, Kind::Ifetch, Kind::Modify, Kind::DepLoad, Kind::Load]
                [usize::from(k)];
            let size = if kind == Kind::Ifetch { size.min(15) } else { size };
            Record::access(kind, addr, size, gap).unwrap()
        }),
        1 => Just(Record::event(Event::Flush, 0).unwrap()),
        1 => (1u64..1000).prop_map(|n| Record::event(Event::InstrGap(n), 0).unwrap()),
    ]
}

/// `CachegrindSim`'s totals and instruction count on `records` equal the
/// general model's, where both accept the geometry (LL at least one line
/// larger, ...).
fn same_as_the_general_model(
    cfg: CachegrindConfig,
    records: &[Record],
) -> Result<(), TestCaseError> {
    prop_assume!(CachegrindSim::new(&cfg).is_ok());
    let mut sim = CachegrindSim::new(&cfg).unwrap();
    sim.run(records.iter().copied());
    let (want, instructions) = general(&cfg, records);
    prop_assert_eq!(sim.summary(), want);
    prop_assert_eq!(sim.instructions(), instructions);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn counts_equal_the_general_models(
        i1 in geometry(),
        d1 in geometry(),
        ll in geometry(),
        records in proptest::collection::vec(record(), 0..2000),
    ) {
        same_as_the_general_model(CachegrindConfig { i1, d1, ll }, &records)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn runs_on_one_line_count_as_the_general_model_counts(
        i1 in geometry(),
        d1 in geometry(),
        ll in geometry(),
        records in super::parallel_tests::runs(),
    ) {
        // the general model does not wrap round the address space
        let records: Vec<Record> = records
            .into_iter()
            .filter(|r| r.addr_unchecked() < 1 << 40)
            .collect();
        same_as_the_general_model(CachegrindConfig { i1, d1, ll }, &records)?;
    }
}

#[test]
fn refuses_what_cachegrind_lacks() {
    let mut cfg = CachegrindConfig::lru((1024, 2, 64), (1024, 2, 64), (4096, 4, 64));
    cfg.ll.policy = PolicyKind::Random;
    let e = CachegrindSim::new(&cfg).unwrap_err().to_string();
    assert!(e.contains("LL must be an unsliced LRU cache"), "{e}");
    let mut cfg = CachegrindConfig::lru((1024, 2, 64), (1024, 2, 64), (8192, 4, 64));
    cfg.ll.slices = 2;
    let e = CachegrindSim::new(&cfg).unwrap_err().to_string();
    assert!(e.contains("LL must be an unsliced LRU cache"), "{e}");
}
