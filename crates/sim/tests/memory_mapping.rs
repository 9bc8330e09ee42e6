//! The memory model end to end: random access streams (4 KiB and 2 MiB
//! pages, `munmap` escapes, memory running out) through a
//! [`PhysicalCore`] on an aged buddy allocator, checked by brute force:
//! every mapped page has exactly one frame, no two pages share a frame,
//! no mapped frame is free, frame counts add up, translations agree with
//! the page table, TLB counts add up, and the same seed gives the same
//! result. Also: colors of an aged machine are scattered.

use std::collections::HashSet;

use cachepart_sim::memory::{
    age, AddressSpace, AgingConfig, BuddyAllocator, ColorLayout, Frame, FrameAllocator, HugePages,
    PageSize, PhysicalCore, PhysicalStats, Tlb, TlbArrayConfig, TlbConfig, MAX_ORDER,
};
use cachepart_sim::{Cache, CacheConfig, Hierarchy, HierarchyConfig};
use cachepart_trace::{Event, Kind, Record};
use proptest::prelude::*;

const MEMORY: u64 = 16 << 20;
/// Virtual regions the streams touch (8 MiB each, far apart).
const REGIONS: [u64; 3] = [0x0040_0000, 0x5555_5540_0000, 0x7fff_f000_0000];
const REGION_BYTES: u64 = 8 << 20;

#[derive(Clone, Debug)]
enum Op {
    Access(Kind, usize, u64, u32),
    Munmap(usize, u64, u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let access = (0u8..4, 0usize..3, 0..REGION_BYTES, 1u32..=64)
        .prop_map(|(k, r, off, size)| Op::Access(Kind::from_code(k).unwrap(), r, off, size));
    let munmap = (0usize..3, 0..REGION_BYTES, 1u64..(4 << 20))
        .prop_map(|(r, off, len)| Op::Munmap(r, off & !0xfff, len));
    prop::collection::vec(prop_oneof![20 => access, 2 => munmap], 1..1500)
}

fn records(ops: &[Op]) -> Vec<Record> {
    let mut out = Vec::new();
    for op in ops {
        match *op {
            Op::Access(kind, r, off, size) => {
                out.push(Record::access(kind, REGIONS[r] + off, size, 1).unwrap())
            }
            Op::Munmap(r, off, len) => {
                out.push(Record::event(Event::Munmap(REGIONS[r] + off), 0).unwrap());
                out.push(Record::event(Event::Length(len), 0).unwrap());
            }
        }
    }
    out
}

struct Machine {
    core: PhysicalCore,
    llc: Cache,
    mem: BuddyAllocator,
    residents: Vec<(Frame, u8)>,
}

/// A small machine; its memory aged with `seed`, or fresh without one.
fn machine(huge: HugePages, seed: Option<u64>) -> Machine {
    let l1 = CacheConfig::lru(4 << 10, 4, 64);
    let llc = Cache::new(&CacheConfig::lru(256 << 10, 8, 64)).unwrap();
    let hier = Hierarchy::new(&HierarchyConfig::split_l1(l1), &llc).unwrap();
    let mut mem = BuddyAllocator::new(MEMORY).unwrap();
    let residents = match seed {
        Some(seed) => age(&mut mem, &AgingConfig::seeded(seed)).unwrap(),
        None => Vec::new(),
    };
    // Small TLBs so that every level misses often.
    let tlb = Tlb::new(&TlbConfig {
        l1d_4k: TlbArrayConfig::new(8, 2),
        l1d_2m: TlbArrayConfig::new(4, 2),
        l1i_4k: TlbArrayConfig::new(8, 2),
        l1i_2m: TlbArrayConfig::new(2, 2),
        stlb: TlbArrayConfig::new(32, 4),
        walk_cycles: 30,
        ..TlbConfig::default()
    })
    .unwrap();
    Machine {
        core: PhysicalCore::new(hier, tlb, AddressSpace::new(7, huge)),
        llc,
        mem,
        residents,
    }
}

fn free_frames_of(mem: &BuddyAllocator) -> HashSet<u64> {
    let mut s = HashSet::new();
    for k in 0..=MAX_ORDER {
        for f in mem.free_list(k) {
            s.extend(f.0..f.0 + (1 << k));
        }
    }
    s
}

/// Runs the stream access by access, checking each translation against
/// the page table; stops at out-of-memory. Returns the accesses done, the
/// translations they needed, and those of the access that ran out of
/// memory (its first page, or both pages of a crossing access, were
/// looked up before the fault failed: 1 or 2).
fn run(m: &mut Machine, recs: &[Record]) -> (u64, u64, Option<u64>) {
    let (mut accesses, mut translations) = (0, 0);
    for &r in recs {
        let crosses =
            r.is_access() && (r.addr() >> 12) != ((r.addr() + u64::from(r.size()) - 1) >> 12);
        let t = match m.core.translate(r, &mut m.mem) {
            Ok(t) => t,
            Err(cachepart_sim::memory::MemoryError::OutOfMemory { .. }) => {
                return (accesses, translations, Some(1 + u64::from(crosses)))
            }
            Err(e) => panic!("{e}"),
        };
        if r.is_access() {
            accesses += 1;
            translations += 1 + u64::from(crosses);
            let (size, _, frame) = m.core.address_space().lookup(r.addr()).unwrap();
            let want = frame.addr() | (r.addr() & (size.bytes() - 1));
            assert_eq!(t.records()[0].addr(), want, "{r:?}");
            let bytes: u32 = t.records().iter().map(|x| x.size()).sum();
            assert_eq!(bytes, r.size());
            for x in t.records() {
                m.core.hierarchy_mut().access(&mut m.llc, *x);
            }
        }
    }
    (accesses, translations, None)
}

fn check_frames(m: &Machine) -> Result<(), TestCaseError> {
    let total = m.mem.total_frames();
    let mut mapped = HashSet::new();
    let mut pages = HashSet::new();
    for (size, vpn, frame) in m.core.address_space().mappings() {
        prop_assert!(
            pages.insert((size, vpn)),
            "page {:?} {:#x} twice",
            size,
            vpn
        );
        let n = 1u64 << size.order();
        prop_assert_eq!(frame.0 % n, 0, "misaligned superpage");
        for f in frame.0..frame.0 + n {
            prop_assert!(f < total);
            prop_assert!(mapped.insert(f), "frame {} mapped twice", f);
        }
    }
    // A 4 KiB page is never inside a mapped superpage.
    for (size, vpn, _) in m.core.address_space().mappings() {
        if size == PageSize::Small {
            prop_assert!(!pages.contains(&(PageSize::Huge, vpn >> 9)));
        }
    }
    let free = free_frames_of(&m.mem);
    prop_assert!(mapped.is_disjoint(&free), "a mapped frame is free");
    let resident: u64 = m.residents.iter().map(|&(_, k)| 1u64 << k).sum();
    prop_assert_eq!(
        mapped.len() as u64,
        m.core.address_space().resident_frames()
    );
    prop_assert_eq!(free.len() as u64 + mapped.len() as u64 + resident, total);
    Ok(())
}

fn tlb_counts(s: &PhysicalStats, translations: u64, oom: Option<u64>) -> Result<(), TestCaseError> {
    let t = s.tlb;
    let lookups = t.l1i.hits + t.l1i.misses + t.l1d.hits + t.l1d.misses;
    match oom {
        None => prop_assert_eq!(lookups, translations),
        Some(n) => prop_assert!(lookups > translations && lookups <= translations + n),
    }
    prop_assert_eq!(t.stlb.hits + t.stlb.misses, t.l1i.misses + t.l1d.misses);
    prop_assert_eq!(t.walks, t.stlb.misses);
    // Every fault is a walk (not every walk a fault).
    prop_assert!(s.paging.faults_4k + s.paging.faults_2m <= t.walks);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_page_has_its_own_frame(ops in ops(), huge in any::<bool>(), seed in prop::option::of(0u64..4)) {
        let huge = if huge { HugePages::Always } else { HugePages::Never };
        let recs = records(&ops);
        let mut m = machine(huge, seed);
        let (_, translations, oom) = run(&mut m, &recs);
        check_frames(&m)?;
        tlb_counts(&m.core.stats(), translations, oom)?;
        // Everything freed: the allocator is back to its fresh state.
        m.core.release(&mut m.mem);
        for (f, k) in std::mem::take(&mut m.residents) {
            m.mem.free(f, k);
        }
        let fresh = BuddyAllocator::new(MEMORY).unwrap();
        for k in 0..=MAX_ORDER {
            let mut a = m.mem.free_list(k);
            a.sort();
            prop_assert_eq!(a, fresh.free_list(k));
        }
    }

    #[test]
    fn same_seed_same_everything(ops in ops(), seed in 0u64..1000) {
        let recs = records(&ops);
        let go = || {
            let mut m = machine(HugePages::Always, Some(seed));
            // Through the public driver this time.
            let r = m.core.run(&mut m.llc, &mut m.mem, recs.iter().copied());
            (r, m.core.stats(), m.core.address_space().mappings(), *m.llc.stats())
        };
        prop_assert_eq!(go(), go());
    }
}

#[test]
fn huge_pages_are_used_and_cut_walks() {
    // An 8 MiB sweep, one load per 4 KiB page, twice.
    let recs: Vec<Record> = (0..2)
        .flat_map(|_| {
            (0..2048u64).map(|p| Record::access(Kind::Load, 0x4000_0000 + p * 4096, 8, 0).unwrap())
        })
        .collect();
    let walks = |huge, seed| {
        let mut m = machine(huge, seed);
        m.core
            .run(&mut m.llc, &mut m.mem, recs.iter().copied())
            .unwrap();
        m.core.stats()
    };
    let small = walks(HugePages::Never, None);
    let big = walks(HugePages::Always, None);
    assert_eq!(small.paging.faults_4k, 2048);
    assert_eq!(big.paging.faults_2m, 4);
    assert_eq!(big.paging.faults_4k, 0);
    assert!(big.tlb.walks * 50 < small.tlb.walks, "{big:?} {small:?}");
    // On aged (fragmented) memory few order-9 blocks are left: most
    // regions fall back to 4 KiB pages, as THP does without compaction.
    let aged = walks(HugePages::Always, Some(3));
    assert_eq!(aged.paging.faults_2m + aged.paging.huge_fallbacks, 4);
    assert!(aged.paging.huge_fallbacks > 0, "{aged:?}");
    assert_eq!(aged.paging.faults_4k, 512 * aged.paging.huge_fallbacks);
}

#[test]
fn aged_memory_scatters_colors() {
    // 8 MiB 16-way LLC, 64 B lines: 128 colors of 4 KiB pages.
    let llc = CacheConfig::lru(8 << 20, 16, 64).geometry().unwrap();
    let colors = ColorLayout::for_frames(&llc);
    assert_eq!(colors.colors(), 128);
    let sequence = |aged: bool| {
        let mut mem = BuddyAllocator::new(256 << 20).unwrap();
        if aged {
            age(&mut mem, &AgingConfig::seeded(11)).unwrap();
        }
        let mut space = AddressSpace::new(0, HugePages::Never);
        (0..512u64)
            .map(|p| {
                let (_, _, f) = space.touch(p << 12, &mut mem).unwrap();
                colors.color_of_frame(f)
            })
            .collect::<Vec<u32>>()
    };
    let next = |s: &[u32]| s.windows(2).filter(|w| w[1] == (w[0] + 1) % 128).count();
    let fresh = sequence(false);
    assert_eq!(
        next(&fresh),
        511,
        "a fresh allocator hands out frames in order"
    );
    let aged = sequence(true);
    assert!(
        next(&aged) < 128,
        "aged: {} of 511 in sequence",
        next(&aged)
    );
    let distinct: HashSet<u32> = aged.iter().copied().collect();
    assert!(distinct.len() > 100, "{} colors", distinct.len());
    // Per-color counts are uneven, as on a real machine.
    let mut per = [0u32; 128];
    aged.iter().for_each(|&c| per[c as usize] += 1);
    assert!(per.iter().max() > per.iter().min());
}
