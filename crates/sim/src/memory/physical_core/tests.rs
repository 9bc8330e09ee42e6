//! Tests of one core's physical view ([`super::PhysicalCore`]).

use super::*;
use crate::geometry::CacheConfig;
use crate::hierarchy::HierarchyConfig;
use crate::memory::address_space::HugePages;
use crate::memory::buddy::BuddyAllocator;
use crate::memory::tlb::TlbConfig;

fn setup(huge: HugePages) -> (PhysicalCore, Cache, BuddyAllocator) {
    let l1 = CacheConfig::lru(4096, 4, 64);
    let llc = Cache::new(&CacheConfig::lru(65536, 8, 64)).unwrap();
    let hier = Hierarchy::new(&HierarchyConfig::split_l1(l1), &llc).unwrap();
    let tlb = Tlb::new(&TlbConfig::default()).unwrap();
    let core = PhysicalCore::new(hier, tlb, AddressSpace::new(0, huge));
    (core, llc, BuddyAllocator::new(16 << 20).unwrap())
}

fn rec(kind: Kind, addr: u64, size: u32, gap: u32) -> Record {
    Record::access(kind, addr, size, gap).unwrap()
}

#[test]
fn page_crossing_fetch_is_split_once() {
    let (mut core, mut llc, mut mem) = setup(HugePages::Never);
    // Map the second page first so the two frames are not adjacent
    // (the fresh allocator hands out frames in order).
    core.access(&mut llc, &mut mem, rec(Kind::Load, 0x2000, 1, 0))
        .unwrap();
    let t = core
        .translate(rec(Kind::Ifetch, 0x1ffe, 4, 5), &mut mem)
        .unwrap();
    let r = t.records();
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].addr(), r[0].size(), r[0].gap()), (0x1ffe, 2, 5));
    assert_eq!((r[1].addr(), r[1].size(), r[1].gap()), (0x0000, 2, 0));
    for &x in r {
        core.hierarchy_mut().access(&mut llc, x);
    }
    let s = core.stats();
    assert_eq!(s.split_accesses, 1);
    assert_eq!(s.hierarchy.instructions, 6);
    // Pages 3 and 4 get frames 2 and 3: adjacent, so no split.
    for a in [0x3000, 0x4000] {
        core.access(&mut llc, &mut mem, rec(Kind::Load, a, 1, 0))
            .unwrap();
    }
    let t = core
        .translate(rec(Kind::Load, 0x3ffc, 8, 0), &mut mem)
        .unwrap();
    assert_eq!(t.records().len(), 1);
    assert_eq!(t.records()[0].addr(), 0x2ffc);
    assert_eq!(core.stats().split_accesses, 1);
}

#[test]
fn superpage_accesses_stay_whole() {
    let (mut core, _, mut mem) = setup(HugePages::Always);
    let t = core
        .translate(rec(Kind::Store, 0x40_0ffc, 8, 0), &mut mem)
        .unwrap();
    assert_eq!(t.records().len(), 1);
    assert_eq!(t.records()[0].addr() & 0x1f_ffff, 0x0ffc);
    assert_eq!(core.stats().paging.faults_2m, 1);
}

#[test]
fn munmap_drops_translations_and_frames() {
    let (mut core, mut llc, mut mem) = setup(HugePages::Never);
    for p in 0..4u64 {
        core.access(
            &mut llc,
            &mut mem,
            rec(Kind::Load, 0x10_0000 + p * 4096, 8, 0),
        )
        .unwrap();
    }
    let free = mem.free_frames();
    let unmap = [
        Record::event(Event::Munmap(0x10_1000), 0).unwrap(),
        Record::event(Event::Length(8192), 0).unwrap(),
    ];
    core.run(&mut llc, &mut mem, unmap).unwrap();
    assert_eq!(mem.free_frames(), free + 2);
    assert_eq!(core.stats().paging.unmapped_4k, 2);
    // The next touch of an unmapped page walks and faults again.
    let walks = core.stats().tlb.walks;
    core.access(&mut llc, &mut mem, rec(Kind::Load, 0x10_1000, 8, 0))
        .unwrap();
    assert_eq!(core.stats().tlb.walks, walks + 1);
    assert_eq!(core.stats().paging.faults_4k, 5);
    // Page 0 is still mapped and in the TLB.
    core.access(&mut llc, &mut mem, rec(Kind::Load, 0x10_0000, 8, 0))
        .unwrap();
    assert_eq!(core.stats().tlb.walks, walks + 1);
    // A length without a munmap before it does nothing.
    core.run(
        &mut llc,
        &mut mem,
        [Record::event(Event::Length(1 << 20), 0).unwrap()],
    )
    .unwrap();
    assert_eq!(core.stats().paging.unmapped_4k, 2);
}
