//! Tests of the hierarchy: write-back flow, inclusion, serving levels,
//! masks, and cachegrind's rules against a reference.

use super::*;
use crate::cachegrind::CachegrindSummary;
use crate::reference::reference_cachegrind;
use crate::replacement::PolicyKind;
use cachepart_trace::Event;
use cachepart_units::Kind as _;
use proptest::prelude::*;

fn rec(kind: Kind, addr: u64, size: u32) -> Record {
    Record::access(kind, addr, size, 0).unwrap()
}

fn config(mode: Mode, l2: bool, policy: PolicyKind) -> (HierarchyConfig, CacheConfig) {
    let l = |size, ways| {
        CacheConfig::lru(size, ways, 64)
            .with_policy(policy)
            .with_seed(9)
    };
    (
        HierarchyConfig {
            l1i: l(2048, 2),
            l1d: l(4096, 4),
            l2: l2.then(|| l(16384, 4)),
            mode,
            inclusion: Inclusion::NonInclusive,
        },
        l(65536, 8),
    )
}

fn build(h: &HierarchyConfig, llc: &CacheConfig) -> (Hierarchy, Cache) {
    let llc = Cache::new(llc).unwrap();
    (Hierarchy::new(h, &llc).unwrap(), llc)
}

/// Random traces over a 256 KiB region: every kind, sizes 1-32.
fn trace() -> impl Strategy<Value = Vec<Record>> {
    prop::collection::vec((0u8..4, 0u64..(1 << 18), 1u32..=32), 1..3000).prop_map(|v| {
        v.into_iter()
            .map(|(k, a, s)| rec(Kind::from_code(k).unwrap(), 0x10_0000 + a, s))
            .collect()
    })
}

#[test]
fn dirty_lines_flow_down_to_memory() {
    let (h, l) = config(Mode::WriteBack, false, PolicyKind::Lru);
    let (mut core, mut llc) = build(&h, &l);
    // L1D: 16 sets x 4 ways. Five stores to one set evict a dirty line.
    for i in 0..5 {
        core.access(&mut llc, rec(Kind::Store, i * 1024, 8));
    }
    let s = core.stats();
    assert_eq!(s.l1d.dirty_evictions, 1);
    assert_eq!(s.llc.writebacks_in, 1);
    assert_eq!(s.llc.writeback_misses, 0);
    assert_eq!(llc.is_dirty(0), Some(true));
    assert_eq!(s.mem.reads, 5);
    assert_eq!(s.mem.writes, 0);
}

#[test]
fn inclusive_llc_back_invalidates() {
    let (mut h, _) = config(Mode::WriteBack, false, PolicyKind::Lru);
    h.inclusion = Inclusion::Inclusive;
    // A one-set, 2-way LLC.
    let l = CacheConfig::lru(128, 2, 64);
    let (mut core, mut llc) = build(&h, &l);
    core.access(&mut llc, rec(Kind::Store, 0, 8));
    core.access(&mut llc, rec(Kind::Load, 64, 8));
    core.access(&mut llc, rec(Kind::Load, 128, 8));
    // The LLC evicted line 0, so L1D lost its dirty copy to memory.
    assert!(!core.levels().any(|c| c.contains(0)));
    assert_eq!(core.stats().mem.writes, 1);
    assert!(Hierarchy::new(
        &HierarchyConfig {
            mode: Mode::Cachegrind,
            ..h
        },
        &llc
    )
    .is_err());
}

#[test]
fn reports_the_serving_level() {
    for mode in [Mode::WriteBack, Mode::Cachegrind] {
        let l2 = mode == Mode::WriteBack;
        let (h, l) = config(mode, l2, PolicyKind::Lru);
        let (mut core, mut llc) = build(&h, &l);
        assert_eq!(core.access(&mut llc, rec(Kind::Load, 0, 8)), Served::Memory);
        assert_eq!(core.access(&mut llc, rec(Kind::Load, 8, 8)), Served::L1);
        // A straddling access: one line present, the other from memory.
        assert_eq!(
            core.access(&mut llc, rec(Kind::Load, 60, 8)),
            Served::Memory
        );
        // Evict line 0 from L1D (16 sets x 4 ways) but not from below.
        for i in 1..=4 {
            core.access(&mut llc, rec(Kind::Load, i * 1024, 8));
        }
        let want = if l2 { Served::L2 } else { Served::Llc };
        assert_eq!(
            core.access(&mut llc, rec(Kind::Load, 0, 8)),
            want,
            "{mode:?}"
        );
        let gap = Record::event(Event::InstrGap(1000), 0).unwrap();
        assert_eq!(core.access(&mut llc, gap), Served::L1);
    }
}

#[test]
fn masks_must_name_a_way() {
    let (h, l) = config(Mode::WriteBack, true, PolicyKind::Lru);
    let (mut core, llc) = build(&h, &l);
    assert!(core.set_llc_mask(WayMask(0xf00), &llc).is_err());
    core.set_llc_mask(WayMask(0x0f), &llc).unwrap();
    assert_eq!(core.llc_mask(), WayMask(0x0f));
}

/// Lines filled into a cache: the ones it still holds plus the ones
/// it evicted (nothing is invalidated in these runs).
fn fills(c: &Cache) -> u64 {
    c.occupancy(u64::MAX) as u64 + c.stats().evictions
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// hits + misses = accesses at every level, where the accesses of
    /// a level are counted independently: records at L1, first-level
    /// misses (cachegrind) or line fills (write-back) below.
    #[test]
    fn hits_plus_misses_is_accesses(t in trace(), l2 in any::<bool>()) {
        let fetches = t.iter().filter(|r| r.kind() == Kind::Ifetch).count() as u64;
        let data = t.len() as u64 - fetches;
        for mode in [Mode::Cachegrind, Mode::WriteBack] {
            let (h, l) = config(mode, l2 && mode == Mode::WriteBack, PolicyKind::Lru);
            let (mut core, mut llc) = build(&h, &l);
            core.run(&mut llc, t.iter().copied());
            let s = core.stats();
            prop_assert_eq!(s.l1i.total_hits() + s.l1i.total_misses(), fetches);
            prop_assert_eq!(s.l1d.total_hits() + s.l1d.total_misses(), data);
            let l1 = core.levels().take(2).map(fills).sum::<u64>();
            let into_llc = match (mode, s.l2) {
                (Mode::Cachegrind, _) => s.l1i.total_misses() + s.l1d.total_misses(),
                (Mode::WriteBack, None) => l1,
                (Mode::WriteBack, Some(l2s)) => {
                    prop_assert_eq!(l2s.total_hits() + l2s.total_misses(), l1);
                    fills(core.levels().nth(2).unwrap()) - l2s.writeback_misses
                }
            };
            prop_assert_eq!(s.llc.total_hits() + s.llc.total_misses(), into_llc);
            // One core: its view of the LLC is the whole LLC (in
            // cachegrind mode it counts references and misses only).
            if mode == Mode::WriteBack {
                prop_assert_eq!(*llc.stats(), s.llc);
            }
            for k in AccessKind::ALL {
                prop_assert_eq!(llc.stats().refs(k), s.llc.refs(k));
                prop_assert_eq!(llc.stats().misses(k), s.llc.misses(k));
            }
        }
    }

    /// The cachegrind mode agrees with the plain reference loop.
    #[test]
    fn cachegrind_mode_equals_reference(t in trace()) {
        let (h, l) = config(Mode::Cachegrind, false, PolicyKind::Lru);
        let (mut core, mut llc) = build(&h, &l);
        core.run(&mut llc, t.iter().copied());
        let g = |c: &CacheConfig| (c.size_bytes, c.ways, c.line_bytes);
        let want = reference_cachegrind(&t, g(&h.l1i), g(&h.l1d), g(&l));
        prop_assert_eq!(CachegrindSummary::from_stats(&core.stats()), want);
    }

    /// One core whose mask is every way of the LLC (or more bits than
    /// the LLC has) runs exactly as the unpartitioned LLC.
    #[test]
    fn whole_llc_mask_is_unpartitioned(t in trace(), p in 0usize..3, extra in any::<bool>()) {
        let (h, l) = config(Mode::WriteBack, true, PolicyKind::all().nth(p).unwrap());
        let (mut free, mut llc_free) = build(&h, &l);
        free.run(&mut llc_free, t.iter().copied());
        let (mut masked, mut llc_masked) = build(&h, &l);
        let all = if extra { u64::MAX } else { 0xff };
        masked.set_llc_mask(WayMask(all), &llc_masked).unwrap();
        masked.run(&mut llc_masked, t.iter().copied());
        prop_assert_eq!(free.stats(), masked.stats());
        prop_assert_eq!(llc_free.stats(), llc_masked.stats());
    }

    /// The same configuration and seed give identical counters, for
    /// every policy (random included) and mode.
    #[test]
    fn same_seed_same_results(t in trace(), p in 0usize..3, wb in any::<bool>()) {
        let mode = if wb { Mode::WriteBack } else { Mode::Cachegrind };
        let (h, l) = config(mode, wb, PolicyKind::all().nth(p).unwrap());
        let run = || {
            let (mut core, mut llc) = build(&h, &l);
            core.set_llc_mask(WayMask(0x3c), &llc).unwrap();
            core.run(&mut llc, t.iter().copied());
            (core.stats(), *llc.stats())
        };
        prop_assert_eq!(run(), run());
    }

    /// The plain path ([`Hierarchy::access_at_plain`]: a repeated hit
    /// inline, one line in `write_back_line`) serves and counts as
    /// [`Hierarchy::access_at`], with and without an L2, inclusive or
    /// not, for every policy.
    #[test]
    fn the_plain_path_equals_access_at(
        t in trace(),
        p in 0usize..3,
        l2 in any::<bool>(),
        inclusive in any::<bool>(),
    ) {
        let (mut h, l) = config(Mode::WriteBack, l2, PolicyKind::all().nth(p).unwrap());
        if inclusive {
            h.inclusion = Inclusion::Inclusive;
        }
        let (mut a, mut llc_a) = build(&h, &l);
        let (mut b, mut llc_b) = build(&h, &l);
        prop_assert!(b.is_plain());
        for &r in &t {
            let addr = r.addr();
            prop_assert_eq!(a.access_at(&mut llc_a, r, addr), b.access_at_plain(&mut llc_b, r, addr));
        }
        prop_assert_eq!(a.stats(), b.stats());
        prop_assert_eq!(llc_a.stats(), llc_b.stats());
    }
}
