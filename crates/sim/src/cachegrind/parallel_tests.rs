//! The split simulation against the one-thread one: equal totals for 1, 2
//! and 4 threads on random records (straddling, clamped, wrapping round
//! the address space), geometries and chunkings, and for 1 to 8 threads on
//! runs of references in one line and across partition boundaries.

use cachepart_trace::{Event, Kind, Record};
use proptest::prelude::*;

use super::*;

pub(super) fn geometry() -> impl Strategy<Value = CacheConfig> {
    // size = sets x ways x line: 2 to 128 sets, so that most geometries
    // split 2 or 4 ways and some cannot
    (1u32..8, 1u32..9, 4u32..8).prop_map(|(sets_log, ways, line_log)| {
        let line = 1u32 << line_log;
        CacheConfig::lru((u64::from(line) * u64::from(ways)) << sets_log, ways, line)
    })
}

pub(super) fn record() -> impl Strategy<Value = Record> {
    let kinds = [
        Kind::Load,
        Kind::Store,
        Kind::Ifetch,
        Kind::Modify,
        Kind::DepLoad,
        Kind::Ifetch,
    ];
    // addresses in 64 KiB (sets fill, conflict and hit) and in the
    // address space's last bytes (references that wrap round to 0); sizes
    // up to the record's maximum, so that instruction fetches span several
    // lines and partitions and data references are clamped
    let addr = prop_oneof![
        30 => 0u64..(64 << 10),
        1 => (1u64..300).prop_map(|d| 0u64.wrapping_sub(d)),
    ];
    let size = prop_oneof![4 => 1u32..17, 1 => 1u32..128];
    prop_oneof![
        40 => (0usize..6, addr, size, 0u32..4)
            .prop_map(move |(k, addr, size, gap)| Record::access(kinds[k], addr, size, gap).unwrap()),
        1 => Just(Record::event(Event::Flush, 0).unwrap()),
        1 => (1u64..1000).prop_map(|n| Record::event(Event::InstrGap(n), 0).unwrap()),
    ]
}

/// The totals of `threads` threads fed `records` in chunks of `chunk`.
fn split(
    cfg: &CachegrindConfig,
    threads: usize,
    records: &[Record],
    chunk: usize,
) -> Result<CachegrindSummary> {
    let mut sim = ParallelCachegrind::new(cfg, threads)?;
    let mut rest = records.chunks(chunk);
    sim.run(|mut buf| {
        Ok::<_, ()>(rest.next().map(|c| {
            buf.extend_from_slice(c);
            buf
        }))
    })
    .unwrap();
    Ok(sim.summary())
}

/// The totals of `threads` threads fed `records` in chunks of `chunk`
/// scattered beforehand.
fn scattered(
    cfg: &CachegrindConfig,
    threads: usize,
    records: &[Record],
    chunk: usize,
) -> CachegrindSummary {
    let mut sim = ParallelCachegrind::new(cfg, threads).unwrap();
    let scatterer = sim.scatterer();
    let mut rest = records.chunks(chunk);
    sim.run_scattered(|| Ok::<_, ()>(rest.next().map(|c| scatterer.scatter(c))))
        .unwrap();
    sim.summary()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn any_thread_count_gives_the_one_thread_totals(
        i1 in geometry(),
        d1 in geometry(),
        ll in geometry(),
        records in proptest::collection::vec(record(), 0..3000),
        chunk in 1usize..700,
    ) {
        let cfg = CachegrindConfig { i1, d1, ll };
        prop_assume!(CachegrindSim::new(&cfg).is_ok());
        let mut one = CachegrindSim::new(&cfg).unwrap();
        one.run(records.iter().copied());
        let want = one.summary();
        let most = Partition::max_threads(&cfg).unwrap();
        for threads in [1, 2, 4] {
            match split(&cfg, threads, &records, chunk) {
                Ok(got) => {
                    prop_assert_eq!(got, want, "{} threads", threads);
                    let got = scattered(&cfg, threads, &records, chunk);
                    prop_assert_eq!(got, want, "{} threads, scattered ahead", threads);
                }
                Err(e) => {
                    prop_assert!(threads > most, "{} threads: {}", threads, e);
                    let e = e.to_string();
                    prop_assert!(e.contains("share"), "{}", e);
                }
            }
        }
    }
}

/// Runs of records as programs make them: instruction fetches marching
/// through code (most in the line fetched last, some across a line or
/// partition boundary), data references repeated on one line or just
/// below a boundary, and flushes; some runs straddle nothing, some little
/// else.
pub(super) fn runs() -> impl Strategy<Value = Vec<Record>> {
    let fetches = (0u64..4096, 1usize..80, 1u64..16).prop_map(|(pc, n, step)| {
        (0..n as u64)
            .map(|i| {
                let size = 1 + (i * 7 + pc) % 15;
                Record::access(Kind::Ifetch, 0x8000 + pc + i * step, size as u32, 0).unwrap()
            })
            .collect::<Vec<_>>()
    });
    let data = (0u64..512, 0u64..24, 1u32..40, 1usize..30, any::<bool>()).prop_map(
        |(block, below, size, n, store)| {
            let kind = if store { Kind::Store } else { Kind::Load };
            let addr = (block * 64).wrapping_sub(below);
            (0..n)
                .map(|_| Record::access(kind, addr, size, 1).unwrap())
                .collect::<Vec<_>>()
        },
    );
    let flush = Just(vec![Record::event(Event::Flush, 0).unwrap()]);
    proptest::collection::vec(prop_oneof![8 => fetches, 8 => data, 1 => flush], 0..60)
        .prop_map(|runs| runs.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn runs_on_one_line_and_across_boundaries_split_exactly(
        records in runs(),
        geometry in 0usize..3,
        chunk in prop_oneof![1 => 1usize..4, 4 => 1usize..2000],
    ) {
        // every geometry splits 8 ways; the last has lines of three sizes,
        // so that a part's share of a straddle can span lines
        let cfg = [
            CachegrindConfig::lru((32768, 8, 64), (32768, 8, 64), (262144, 16, 64)),
            CachegrindConfig::lru((1024, 1, 64), (2048, 2, 64), (8192, 2, 64)),
            CachegrindConfig::lru((4096, 2, 16), (8192, 4, 32), (131072, 8, 64)),
        ][geometry];
        let mut one = CachegrindSim::new(&cfg).unwrap();
        one.run(records.iter().copied());
        let want = one.summary();
        for threads in [1, 2, 4, 8] {
            let got = split(&cfg, threads, &records, chunk).unwrap();
            prop_assert_eq!(got, want, "{} threads", threads);
            let got = scattered(&cfg, threads, &records, chunk);
            prop_assert_eq!(got, want, "{} threads, scattered ahead", threads);
        }
    }
}

#[test]
fn splits_a_long_trace_with_many_straddles_exactly() {
    // a loop over 8 KiB of code and a 64 KiB stride-24 array, with 6-byte
    // fetches and 16-byte loads that often cross lines and partitions
    let cfg = CachegrindConfig::lru((4096, 4, 64), (8192, 2, 32), (65536, 8, 128));
    let mut records = Vec::new();
    for i in 0u64..200_000 {
        let pc = 0x40_0000 + (i * 6) % 8192;
        records.push(Record::access(Kind::Ifetch, pc, 6, 0).unwrap());
        let kind = if i % 3 == 0 { Kind::Store } else { Kind::Load };
        records.push(Record::access(kind, 0x100_0000 + (i * 24) % 65536, 16, 1).unwrap());
    }
    let mut one = CachegrindSim::new(&cfg).unwrap();
    one.run(records.iter().copied());
    for threads in [2, 4, 8] {
        let got = split(&cfg, threads, &records, CHUNK_RECORDS).unwrap();
        assert_eq!(got, one.summary(), "{threads} threads");
        let got = scattered(&cfg, threads, &records, 100_000);
        assert_eq!(got, one.summary(), "{threads} threads, scattered ahead");
    }
    // the work runs across calls of `run`: state is kept
    let mut sim = ParallelCachegrind::new(&cfg, 2).unwrap();
    for half in records.chunks(records.len() / 2 + 1) {
        let mut once = Some(half);
        sim.run(|mut buf| {
            Ok::<_, ()>(once.take().map(|c| {
                buf.extend_from_slice(c);
                buf
            }))
        })
        .unwrap();
    }
    assert_eq!(sim.summary(), one.summary());
}

#[test]
fn a_failing_source_keeps_what_came_before() {
    let cfg = CachegrindConfig::lru((4096, 4, 64), (4096, 4, 64), (65536, 8, 64));
    let records: Vec<Record> = (0..1000u64)
        .map(|i| Record::access(Kind::Load, i * 40, 8, 0).unwrap())
        .collect();
    let mut sim = ParallelCachegrind::new(&cfg, 2).unwrap();
    let mut n = 0;
    let e = sim.run(|mut buf| {
        n += 1;
        if n == 3 {
            return Err("broken");
        }
        buf.extend_from_slice(&records[(n - 1) * 100..n * 100]);
        Ok(Some(buf))
    });
    assert_eq!(e, Err("broken"));
    let mut one = CachegrindSim::new(&cfg).unwrap();
    one.run(records[..200].iter().copied());
    assert_eq!(sim.summary(), one.summary());
}
