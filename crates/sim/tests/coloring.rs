//! Page coloring end to end, checked by brute force over every mapped
//! frame: the `tam` and `coloris` allocators keep a colored app's frames
//! in its colors (unless a counted MaxTry fallback happened), memory per
//! color is finite and runs into page-outs that lose no page, and
//! recoloring (lazy shrink, Selective Moving, Redistribution) loses and
//! duplicates no page and keeps the frame count constant.

use std::collections::{BTreeSet, HashSet};

use cachepart_sim::memory::{
    AddressSpace, AllocatorKind, BuddyAllocator, ColorLayout, ColorisAllocator, ColorisPoolConfig,
    ExpandPolicy, FrameAllocator, HugePages, MemoryConfig, MemoryError, PageSize, PhysicalCore,
    RecolorConfig, RecolorEngine, TamAllocator, TamConfig, Tlb, TlbConfig,
};
use cachepart_sim::{Cache, CacheConfig, Hierarchy, HierarchyConfig};
use cachepart_trace::{Kind, Record};
use cachepart_units::IdSet;
use proptest::prelude::*;

/// 16 colors (a 1 MiB 16-way LLC with 64 B lines).
fn layout() -> ColorLayout {
    ColorLayout::with_sets(1024, 64, 4096).unwrap()
}

const APPS: u32 = 3;
/// Pages each app may touch: more than its colors can hold in 1 MiB of
/// memory (16 frames per color), so colors run out.
const PAGES: u64 = 96;

fn color_set() -> impl Strategy<Value = IdSet> {
    prop::collection::btree_set(0u32..16, 1..6).prop_map(|s| s.into_iter().collect())
}

fn allocator(kind: AllocatorKind, mb: u64, fallback: bool) -> Box<dyn FrameAllocator> {
    let buddy = BuddyAllocator::new(mb << 20).unwrap();
    match kind {
        AllocatorKind::Tam => Box::new(TamAllocator::new(
            buddy,
            layout(),
            TamConfig {
                fallback,
                ..TamConfig::default()
            },
        )),
        AllocatorKind::Coloris => Box::new(
            ColorisAllocator::new(
                buddy,
                layout(),
                &ColorisPoolConfig {
                    pool_bytes: (mb << 20) / 2,
                    ..ColorisPoolConfig::default()
                },
            )
            .unwrap(),
        ),
        AllocatorKind::Buddy => Box::new(buddy),
    }
}

/// Several address spaces on one allocator, with what each touched and
/// each app's colors.
struct World {
    alloc: Box<dyn FrameAllocator>,
    spaces: Vec<AddressSpace>,
    touched: Vec<BTreeSet<u64>>,
    colors: Vec<IdSet>,
    /// Colors added because an app had no page of its colors to page out
    /// (COLORIS's `ALLOC_COLORS(UNIT)` on running out of memory).
    grown: Vec<u32>,
    total: u64,
}

impl World {
    fn new(alloc: Box<dyn FrameAllocator>, huge: HugePages) -> World {
        let total = alloc.free_frames();
        World {
            alloc,
            spaces: (0..APPS).map(|a| AddressSpace::new(a, huge)).collect(),
            touched: vec![BTreeSet::new(); APPS as usize],
            colors: vec![IdSet::new(); APPS as usize],
            grown: vec![0; APPS as usize],
            total,
        }
    }

    fn set_colors(&mut self, app: usize, set: &IdSet) {
        self.alloc.set_app_colors(app as u32, set).unwrap();
        self.colors[app] = set.clone();
    }

    /// Touches a page; when the app's colors are exhausted and it has no
    /// page of them to page out, adds 4 colors (UNIT) and retries, as
    /// COLORIS's monitor does.
    fn touch(&mut self, app: usize, page: u64) -> Result<(), MemoryError> {
        let vaddr = (0x10_0000 + page) << 12;
        loop {
            match self.spaces[app].touch(vaddr, self.alloc.as_mut()) {
                Ok(_) => break,
                Err(MemoryError::ColorsExhausted { .. }) => {
                    let more: IdSet = (0..16)
                        .filter(|&c| !self.colors[app].contains(c))
                        .take(4)
                        .collect();
                    assert!(!more.is_empty(), "every color and still exhausted");
                    let set = self.colors[app].union(&more);
                    self.set_colors(app, &set);
                    self.grown[app] += 1;
                }
                Err(e) => return Err(e),
            }
        }
        self.spaces[app].take_invalidations();
        self.touched[app].insert(vaddr >> 12);
        Ok(())
    }

    /// No page lost (every page touched is resident or paged out, never
    /// both), no frame mapped twice, frames conserved.
    fn check_conservation(&self) -> Result<(), TestCaseError> {
        let mut frames = HashSet::new();
        let mut resident = 0;
        for (i, s) in self.spaces.iter().enumerate() {
            let small: BTreeSet<u64> = s.small_pages().iter().map(|&(v, _)| v).collect();
            let swapped: BTreeSet<u64> = s.swapped_pages().into_iter().collect();
            prop_assert!(small.is_disjoint(&swapped));
            let mut all: BTreeSet<u64> = small.union(&swapped).copied().collect();
            for (size, vpn, frame) in s.mappings() {
                let n = match size {
                    PageSize::Small => 1,
                    PageSize::Huge => {
                        all.extend((vpn << 9)..((vpn + 1) << 9));
                        512
                    }
                };
                for k in 0..n {
                    prop_assert!(
                        frames.insert(frame.0 + k),
                        "frame {} mapped twice",
                        frame.0 + k
                    );
                }
            }
            let touched = &self.touched[i];
            prop_assert!(touched.is_subset(&all), "app {} lost pages", i);
            resident += s.resident_frames();
        }
        prop_assert_eq!(resident + self.alloc.free_frames(), self.total);
        Ok(())
    }

    /// Frames of colored apps outside their colors: at most the fallbacks
    /// counted (pages moved or paged out since may have left).
    fn check_isolation(&self) -> Result<(), TestCaseError> {
        let sets = &self.colors;
        let l = layout();
        for (i, s) in self.spaces.iter().enumerate() {
            let app = i as u32;
            let mut off = 0u64;
            for (size, _, frame) in s.mappings() {
                prop_assert_eq!(size, PageSize::Small, "a colored app got a superpage");
                if !sets[i].contains(l.color_of_frame(frame)) {
                    off += 1;
                }
            }
            let fallbacks = self.alloc.app_stats(app).fallbacks;
            prop_assert!(
                off <= fallbacks,
                "app {}: {} frames off its colors {}, {} fallbacks",
                app,
                off,
                sets[i],
                fallbacks
            );
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random color sets and access patterns under tam (with and without
    /// fallback) and coloris: frames stay in the app's colors unless a
    /// counted fallback happened; running out pages out and loses nothing.
    #[test]
    fn colored_frames_carry_only_their_colors(
        kind in prop_oneof![Just(AllocatorKind::Tam), Just(AllocatorKind::Coloris)],
        fallback in any::<bool>(),
        huge in any::<bool>(),
        sets in prop::collection::vec(color_set(), APPS as usize),
        touches in prop::collection::vec((0..APPS as usize, 0..PAGES), 1..600),
    ) {
        let huge = if huge { HugePages::Always } else { HugePages::Never };
        let mut w = World::new(allocator(kind, 1, fallback), huge);
        for (a, set) in sets.iter().enumerate() {
            w.set_colors(a, set);
        }
        for (app, page) in touches {
            w.touch(app, page).unwrap();
        }
        w.check_isolation()?;
        w.check_conservation()?;
        if kind == AllocatorKind::Coloris || !fallback {
            for a in 0..APPS {
                prop_assert_eq!(w.alloc.app_stats(a).fallbacks, 0);
            }
        }
        // An app whose pages outnumber its colors' frames paged out.
        for (a, s) in w.spaces.iter().enumerate() {
            let capacity = sets[a].len() as u64 * 16;
            let strict = kind == AllocatorKind::Coloris || !fallback;
            if w.touched[a].len() as u64 > capacity && strict && w.grown[a] == 0 {
                prop_assert!(s.stats().page_outs > 0);
            }
            prop_assert_eq!(s.stats().swap_ns, s.stats().page_outs * 20_000 + s.stats().page_ins * 100_000);
        }
    }

    /// Recoloring loses and duplicates no page and conserves frames, under
    /// lazy shrink, Selective Moving and Redistribution, with touches in
    /// between (which move marked pages and may page out).
    #[test]
    fn recoloring_conserves_pages(
        kind in prop_oneof![Just(AllocatorKind::Tam), Just(AllocatorKind::Coloris)],
        start in prop::collection::vec(color_set(), APPS as usize),
        steps in prop::collection::vec(
            (0..APPS as usize, color_set(), 0u8..3, prop::collection::vec(0..PAGES, 0..60)),
            1..8,
        ),
        first in prop::collection::vec((0..APPS as usize, 0..PAGES), 1..200),
    ) {
        let mut w = World::new(allocator(kind, 2, false), HugePages::Never);
        for (a, set) in start.iter().enumerate() {
            w.set_colors(a, set);
        }
        for (app, page) in first {
            w.touch(app, page).unwrap();
        }
        w.check_conservation()?;
        let mut engines: Vec<RecolorEngine> = [ExpandPolicy::SelectiveMoving, ExpandPolicy::Redistribution]
            .into_iter()
            .map(|expand| RecolorEngine::new(RecolorConfig { expand, win_us: 10.0 }).unwrap())
            .collect();
        let mut now = 0.0;
        for (app, new, mode, pages) in steps {
            let added = new.difference(&w.colors[app]);
            w.set_colors(app, &new);
            let space = &mut w.spaces[app];
            let moved_before = space.stats().pages_recolored;
            match mode {
                0 => {
                    let before = space.marked_pages();
                    let act = engines[0].shrink(space, w.alloc.as_mut());
                    prop_assert!(space.marked_pages() <= before + act.marked as usize);
                    for (vpn, frame) in space.small_pages() {
                        if !w.alloc.frame_fits(app as u32, frame) {
                            prop_assert!(space.is_marked(vpn));
                        }
                    }
                }
                1 => {
                    let act = engines[0].expand(space, w.alloc.as_mut(), &added, 4, now).unwrap();
                    prop_assert_eq!(space.stats().pages_recolored - moved_before, act.moved);
                }
                _ => {
                    engines[1].expand(space, w.alloc.as_mut(), &added, 4, now).unwrap();
                }
            }
            w.check_conservation()?;
            now += 5.0;
            for &p in &pages {
                w.touch(app, p).unwrap();
            }
            now += 10.0;
            engines[1].poll(&mut w.spaces[app], now);
            for &p in &pages {
                w.touch(app, p).unwrap();
            }
            w.check_conservation()?;
            let s = w.spaces[app].stats();
            prop_assert_eq!(s.copy_ns, s.pages_recolored * 3000);
        }
    }
}

/// After a shrink, touching every page leaves no frame outside the app's
/// colors (coloris, enough memory): lazy recoloring completes.
#[test]
fn lazy_recoloring_completes_on_touch() {
    let mut w = World::new(
        allocator(AllocatorKind::Coloris, 4, false),
        HugePages::Never,
    );
    w.set_colors(0, &"0-7".parse().unwrap());
    for p in 0..64 {
        w.touch(0, p).unwrap();
    }
    let small: IdSet = "2-3".parse().unwrap();
    w.set_colors(0, &small);
    let mut e = RecolorEngine::new(RecolorConfig::default()).unwrap();
    let act = e.shrink(&mut w.spaces[0], w.alloc.as_mut());
    assert_eq!(act.marked, 48);
    for p in 0..64 {
        w.touch(0, p).unwrap();
    }
    let l = layout();
    for (_, frame) in w.spaces[0].small_pages() {
        assert!(small.contains(l.color_of_frame(frame)));
    }
    assert_eq!(w.spaces[0].stats().pages_recolored, 48);
    assert_eq!(w.spaces[0].stats().page_outs, 0);
}

/// Through a core: a page paged out leaves the TLB, so touching it again
/// pages it in instead of reading a frame that is no longer its own.
#[test]
fn page_outs_leave_the_tlb() {
    let llc_cfg = CacheConfig::lru(1 << 20, 16, 64);
    let llc = Cache::new(&llc_cfg).unwrap();
    let hier = Hierarchy::new(
        &HierarchyConfig::split_l1(CacheConfig::lru(4 << 10, 4, 64)),
        &llc,
    )
    .unwrap();
    let cfg = MemoryConfig {
        allocator: AllocatorKind::Coloris,
        aging: None,
        ..MemoryConfig::aged(1 << 20, 0)
    };
    let l = ColorLayout::new(&llc_cfg.geometry().unwrap(), 4096).unwrap();
    assert_eq!(l, layout());
    let mut mem = cfg.build_colored(&l).unwrap();
    mem.set_app_colors(0, &"9".parse().unwrap()).unwrap(); // 16 frames
    let tlb = Tlb::new(&TlbConfig::default()).unwrap();
    let mut core = PhysicalCore::new(hier, tlb, AddressSpace::new(0, HugePages::Never));
    for round in 0..3 {
        for p in 0..24u64 {
            let vaddr = 0x4000_0000 + (p << 12);
            let rec = Record::access(Kind::Load, vaddr, 8, 1).unwrap();
            let t = core.translate(rec, mem.as_mut()).unwrap();
            let paddr = t.records()[0].addr();
            assert_eq!(l.color_of(paddr), 9, "round {round} page {p}");
            let (_, _, f) = core.address_space().lookup(vaddr).unwrap();
            assert_eq!(f.addr(), paddr & !0xfff, "stale translation");
        }
    }
    let s = core.stats().paging;
    assert_eq!(core.address_space().resident_frames(), 16);
    assert_eq!(s.page_outs, 24 - 16 + 2 * 24);
    assert_eq!(s.page_ins, 2 * 24);
    assert_eq!(s.stall_ns(), s.page_outs * 20_000 + s.page_ins * 100_000);
}

/// Bad memory configs fail with errors naming the field.
#[test]
fn bad_configs_name_the_field() {
    let parse = |s: &str| {
        serde_json::from_str::<MemoryConfig>(s)
            .unwrap_err()
            .to_string()
    };
    let e = parse(r#"{"size-bytes": 4096, "allocator": "colors"}"#);
    assert!(e.contains("unknown variant `colors`"), "{e}");
    let e = parse(r#"{"size-bytes": 4096, "coloris": {"pool-size": 1}}"#);
    assert!(e.contains("unknown field `pool-size`"), "{e}");
    let e = parse(r#"{"size-bytes": 4096, "costs": {"copy-us": 1}}"#);
    assert!(e.contains("unknown field `copy-us`"), "{e}");
    let cfg: MemoryConfig = serde_json::from_str(
        r#"{"size-bytes": 1048576, "allocator": "coloris",
            "coloris": {"pool-bytes": 1000}}"#,
    )
    .unwrap();
    let e = cfg.build_colored(&layout()).err().unwrap().to_string();
    assert!(e.contains("coloris.pool-bytes"), "{e}");
    let cfg: MemoryConfig = serde_json::from_str(
        r#"{"size-bytes": 1048576, "allocator": "coloris",
            "coloris": {"shared": {"reserved": "12-20"}}}"#,
    )
    .unwrap();
    let e = cfg.build_colored(&layout()).err().unwrap().to_string();
    assert!(
        e.contains("color 16 is out of range") && e.contains("16 colors"),
        "{e}"
    );
    let e = layout().parse_colors("0-3,40").unwrap_err().to_string();
    assert_eq!(e, "color 40 is out of range: the LLC has 16 colors (0-15)");
    let e = BuddyAllocator::new(1 << 20)
        .unwrap()
        .set_app_colors(0, &"1".parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("buddy does not color"), "{e}");
}
