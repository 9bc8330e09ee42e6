//! SWAP (DAC'14) in the memory model: colored apps get 2 MiB
//! pseudo-superpages of their colors through the swap map, frame by
//! frame; superpages of a colored app are recolored by a whole move or a
//! split; and a private cache behaves the same whether it sees
//! pseudo-physical or physical addresses (why the swap's position does
//! not change hits and misses in the model).

use cachepart_sim::memory::{
    AddressSpace, BuddyAllocator, ColorLayout, ColorisAllocator, ColorisPoolConfig, FrameAllocator,
    HugePages, HugeRecolor, PageSize, RecolorConfig, RecolorEngine, SwapConfig, SwapMap, SwapMode,
    SwapPosition, TamAllocator, TamConfig,
};
use cachepart_sim::{Cache, CacheConfig, Geometry, Hierarchy, HierarchyConfig};
use cachepart_trace::{Kind, Record};
use cachepart_units::IdSet;
use proptest::prelude::*;

const MEM: u64 = 64 << 20;

fn llc() -> Geometry {
    Geometry::new(8 << 20, 16, 64).unwrap()
}

/// Bits 21, 22 swapped with 17, 18: 4 superpage colors, each covering 32
/// of the LLC's 128 4 KiB colors (`c >> 5`).
fn swap() -> SwapMap {
    SwapConfig {
        superpage_bits: vec![21, 22],
        candidate_bits: vec![17, 18],
        position: SwapPosition::BeforeLlc,
        mode: SwapMode::Static,
        enabled: true,
    }
    .map(&llc(), 15, MEM)
    .unwrap()
}

fn tam(layout: ColorLayout) -> TamAllocator {
    let cfg = TamConfig {
        fallback: false,
        ..TamConfig::default()
    };
    TamAllocator::new(BuddyAllocator::new(MEM).unwrap(), layout, cfg)
}

/// COLORIS with a one-frame pool: its refills search the whole buddy
/// allocator for a color, so a 4 KiB page of any color is found while
/// memory has one.
fn coloris(layout: ColorLayout) -> ColorisAllocator {
    let cfg = ColorisPoolConfig {
        pool_bytes: 4096,
        ..ColorisPoolConfig::default()
    };
    ColorisAllocator::new(BuddyAllocator::new(MEM).unwrap(), layout, &cfg).unwrap()
}

/// Every 4 KiB piece of every mapping of `space` is of `colors`, checked
/// through the swap map frame by frame; returns (superpages, 4 KiB pages).
fn assert_in_colors(
    space: &AddressSpace,
    layout: &ColorLayout,
    m: &SwapMap,
    colors: &IdSet,
) -> (u64, u64) {
    let (mut huge, mut small) = (0, 0);
    for (size, vpn, first) in space.mappings() {
        let frames = match size {
            PageSize::Huge => 512,
            PageSize::Small => 1,
        };
        for i in 0..frames {
            let physical = m.to_physical((first.0 + i) << 12);
            let c = layout.color_of(physical);
            assert!(
                colors.contains(c),
                "app {}: {size:?} page {vpn:#x}, piece {i}: physical {physical:#x} has color {c}, not in {colors}",
                space.app()
            );
        }
        match size {
            PageSize::Huge => huge += 1,
            PageSize::Small => small += 1,
        }
    }
    (huge, small)
}

#[test]
fn colored_apps_get_superpages_of_their_colors_only() {
    let m = swap();
    let layout = ColorLayout::for_frames(&llc()).with_swap(m);
    let mut a = coloris(layout);
    let total = a.total_frames();
    let sets: [IdSet; 3] = [
        "0-63".parse().unwrap(),   // superpage colors 0 and 1
        "64-127".parse().unwrap(), // 2 and 3
        "0-15".parse().unwrap(),   // covers no superpage color
    ];
    let mut spaces: Vec<AddressSpace> = (0..3)
        .map(|i| AddressSpace::new(i, HugePages::Always))
        .collect();
    for (i, s) in sets.iter().enumerate() {
        a.set_app_colors(i as u32, s).unwrap();
    }
    for r in 0..5u64 {
        for s in &mut spaces {
            s.touch((r << 21) + 0x123, &mut a).unwrap();
        }
    }
    // A split superpage and a new 4 KiB page in it: both sizes mix in
    // one address space.
    spaces[0].unmap(4096, 4096, &mut a, |_, _| {});
    spaces[0].touch(4096, &mut a).unwrap();
    let mut super_frames = Vec::new();
    for (i, s) in spaces.iter().enumerate() {
        let (huge, small) = assert_in_colors(s, &layout, &m, &sets[i]);
        match i {
            0 => assert_eq!((huge, small), (4, 512)),
            1 => assert_eq!((huge, small), (5, 0)),
            _ => {
                assert_eq!((huge, small), (0, 5));
                assert_eq!(s.stats().huge_fallbacks, 5);
            }
        }
        for (_, f) in s.huge_pages() {
            super_frames.push(f);
        }
    }
    // Each pseudo-superpage is spread over 2^k = 4 physical superpages,
    // one color region each.
    for f in &super_frames {
        let mut physical: Vec<u64> = (0..512)
            .map(|i| m.frame(cachepart_sim::memory::Frame(f.0 + i)).0 >> 9)
            .collect();
        physical.sort_unstable();
        physical.dedup();
        assert_eq!(physical.len(), 4);
    }
    // The round-robin alternates the app's superpage colors.
    let colors0: Vec<u32> = spaces[0]
        .huge_pages()
        .iter()
        .map(|&(_, f)| m.superpage_color(f))
        .collect();
    assert!(colors0.contains(&0) && colors0.contains(&1), "{colors0:?}");
    // Nothing lost: resident + free (parked superpages included) = total.
    let resident: u64 = spaces.iter().map(AddressSpace::resident_frames).sum();
    assert_eq!(resident + a.free_frames(), total);
    for s in &mut spaces {
        s.release(&mut a);
    }
    assert_eq!(a.free_frames(), total);
}

#[test]
fn without_a_swap_colored_apps_get_no_superpages() {
    let layout = ColorLayout::for_frames(&llc());
    let mut a = tam(layout);
    a.set_app_colors(0, &"0-63".parse().unwrap()).unwrap();
    let mut s = AddressSpace::new(0, HugePages::Always);
    for r in 0..3u64 {
        assert_eq!(s.touch(r << 21, &mut a).unwrap().0, PageSize::Small);
    }
    assert_eq!((s.stats().faults_2m, s.stats().huge_fallbacks), (0, 3));
}

#[test]
fn parked_superpages_go_back_when_4k_frames_run_out() {
    let m = swap();
    let layout = ColorLayout::for_frames(&llc()).with_swap(m);
    let mut a = tam(layout);
    let total = a.total_frames();
    // A colored app of superpage color 3 only: the refill parks blocks of
    // colors 0-2 (order 9) on their lists.
    a.set_app_colors(0, &"96-127".parse().unwrap()).unwrap();
    let mut s0 = AddressSpace::new(0, HugePages::Always);
    for r in 0..8u64 {
        assert_eq!(s0.touch(r << 21, &mut a).unwrap().0, PageSize::Huge);
    }
    // An uncolored app then takes every other frame in 4 KiB pages: the
    // parked blocks come back to it.
    let mut s1 = AddressSpace::new(1, HugePages::Never);
    let rest = total - 8 * 512;
    for p in 0..rest {
        s1.touch(p << 12, &mut a).unwrap();
    }
    assert_eq!(a.free_frames(), 0);
    assert_eq!(s1.resident_frames(), rest);
}

#[test]
fn a_superpage_is_moved_whole_when_it_can_be_and_split_otherwise() {
    let m = swap();
    let layout = ColorLayout::for_frames(&llc()).with_swap(m);
    let mut a = coloris(layout);
    a.set_app_colors(0, &"0-63".parse().unwrap()).unwrap();
    let mut s = AddressSpace::new(0, HugePages::Always);
    for r in 0..2u64 {
        s.touch(r << 21, &mut a).unwrap();
    }
    let before: Vec<u32> = s
        .huge_pages()
        .iter()
        .map(|&(_, f)| m.superpage_color(f))
        .collect();
    let of_color_1 = before.iter().filter(|&&c| c == 1).count() as u64;
    assert!(of_color_1 > 0, "{before:?}");
    // Shrink to superpage color 0: the superpages of color 1 move whole.
    let only0: IdSet = "0-31".parse().unwrap();
    a.set_app_colors(0, &only0).unwrap();
    let mut e = RecolorEngine::new(RecolorConfig::default()).unwrap();
    let act = e.shrink(&mut s, &mut a);
    assert_eq!(act.moved, of_color_1 * 512);
    assert_eq!(act.marked, 0);
    assert_eq!(act.invalidate_huge.len() as u64, of_color_1);
    assert!(act.tlb_entries().all(|(size, _)| size == PageSize::Huge));
    let st = *s.stats();
    assert_eq!(st.superpages_moved, of_color_1);
    assert_eq!(st.pages_recolored, of_color_1 * 512);
    assert_eq!(st.copy_ns, of_color_1 * 512 * 3000); // 512 page copies each
    assert_eq!(assert_in_colors(&s, &layout, &m, &only0), (2, 0));
    // Shrink to colors that cover no superpage color: split, and the
    // pieces not of the new colors (half of each) are marked.
    let quarter: IdSet = "0-15".parse().unwrap();
    a.set_app_colors(0, &quarter).unwrap();
    let act = e.shrink(&mut s, &mut a);
    assert_eq!((act.moved, act.marked), (0, 2 * 256));
    assert_eq!(s.stats().superpage_recolor_splits, 2);
    assert_eq!(s.marked_pages(), 2 * 256);
    assert_eq!(s.huge_pages().len(), 0);
    // Touching the marked pages moves them, one page copy each.
    for v in 0..2 * 512u64 {
        s.touch(v << 12, &mut a).unwrap();
    }
    assert_eq!(s.marked_pages(), 0);
    assert_eq!(s.stats().recolor_failures, 0);
    assert_eq!(s.stats().pages_recolored, of_color_1 * 512 + 2 * 256);
    assert_eq!(assert_in_colors(&s, &layout, &m, &quarter), (0, 2 * 512));
    // recolor_huge on a page that is not a superpage does nothing.
    assert_eq!(s.recolor_huge(0, &mut a), None);
    // A move when a superpage of the app's colors is free.
    a.set_app_colors(0, &only0).unwrap();
    let mut t = AddressSpace::new(0, HugePages::Always);
    t.touch(0, &mut a).unwrap();
    assert!(matches!(
        t.recolor_huge(0, &mut a),
        Some(HugeRecolor::Moved(_))
    ));
}

/// The private caches of a hierarchy fed `addrs` swapped by `swap`, and
/// of one fed them as they are: their statistics.
fn private_stats(addrs: &[u64], swap: impl Fn(u64) -> u64) -> [String; 2] {
    let cfg = HierarchyConfig {
        l2: Some(CacheConfig::lru(256 << 10, 8, 64)),
        ..HierarchyConfig::split_l1(CacheConfig::lru(32 << 10, 8, 64))
    };
    let mut out = [String::new(), String::new()];
    for (k, o) in out.iter_mut().enumerate() {
        let mut llc = Cache::new(&CacheConfig::lru(8 << 20, 16, 64)).unwrap();
        let mut h = Hierarchy::new(&cfg, &llc).unwrap();
        for &a in addrs {
            let a = if k == 0 { a } else { swap(a) };
            h.access(&mut llc, Record::access(Kind::Load, a, 8, 1).unwrap());
        }
        let s = h.stats();
        *o = format!("{:?} {:?}", s.l1d, s.l2);
    }
    out
}

#[test]
fn a_swap_inside_the_l2_index_would_change_the_private_caches() {
    // Sixteen lines of one L2 set (bits 6-14 zero), different in bit 21:
    // cyclic over 8 ways, they always miss. Swapping bit 21 with bit 14
    // (inside L2's index, which the platform check refuses) splits them
    // over two sets where they fit: the equivalence below would fail.
    let addrs: Vec<u64> = (0..10).flat_map(|_| (0..16u64).map(|j| j << 21)).collect();
    let bad = |a: u64| {
        let d = ((a >> 21) ^ (a >> 14)) & 1;
        a ^ (d << 21) ^ (d << 14)
    };
    let [plain, swapped] = private_stats(&addrs, bad);
    assert_ne!(plain, swapped);
    let m = swap();
    let [plain, swapped] = private_stats(&addrs, |a| m.to_physical(a));
    assert_eq!(plain, swapped);
}

proptest! {
    /// The swap's position does not change the private caches: fed
    /// pseudo-physical addresses (`before-llc`) or physical ones
    /// (`before-l1`), L1 and L2 hit and miss alike.
    #[test]
    fn private_caches_behave_alike_before_and_after_the_swap(
        lines in prop::collection::vec((0u64..64, 0u64..32, 0u64..64), 1..400),
    ) {
        let addrs: Vec<u64> = lines
            .iter()
            .map(|&(region, page, line)| (region << 20) | (page << 15) | (line << 6))
            .collect();
        let m = swap();
        let [plain, swapped] = private_stats(&addrs, |a| m.to_physical(a));
        prop_assert_eq!(plain, swapped);
    }
}
