//! SWAP from a scenario: colored apps on 2 MiB superpages through the
//! platform's bit swap (examples/scenarios/swap-colored-superpages.toml).
//! Their superpages hold only their colors, checked frame by frame
//! through the swap map; superpages cut their TLB misses against 4 KiB
//! pages; the configurable swap costs an LLC cycle; bad keys are refused.

use std::path::PathBuf;

use cachepart::run::sim::{run_scenario, SimReport};
use cachepart::spec::scenario::{Scenario, ScenarioFile};
use cachepart_sim::memory::{ColorLayout, HugePages, PageSize};
use cachepart_sim::system::System;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios/swap-colored-superpages.toml")
}

/// The example with `edit` applied, alone runs off.
fn variant(edit: impl FnOnce(&mut ScenarioFile)) -> Scenario {
    let s = Scenario::load(&example()).unwrap();
    let mut file = s.file;
    file.alone = false;
    edit(&mut file);
    Scenario::from_file(file, s.name, example().parent(), None).unwrap()
}

fn run(s: &Scenario) -> SimReport {
    run_scenario(s, None).unwrap()
}

/// Runs `s` for a few intervals and returns the system (apps still
/// mapped).
fn system(s: &Scenario) -> System {
    let mut sys = System::new(&s.platform, s.apps.clone(), s.file.seed).unwrap();
    for (i, c) in s.colors.iter().enumerate() {
        sys.set_app_colors(i, c.as_ref().unwrap()).unwrap();
    }
    for _ in 0..3 {
        sys.run_interval(s.file.interval_cycles).unwrap();
    }
    sys
}

#[test]
fn colored_superpages_hold_only_their_apps_colors() {
    let s = variant(|_| {});
    let map = s
        .platform
        .swap_map()
        .unwrap()
        .expect("the example turns the swap on");
    let layout = ColorLayout::for_frames(&s.platform.llc.geometry().unwrap());
    let sys = system(&s);
    let mut superpages = 0;
    for (i, colors) in s.colors.iter().enumerate() {
        let colors = colors.as_ref().unwrap();
        let space = sys.address_space(i).unwrap();
        let mut huge = 0;
        for (size, vpn, first) in space.mappings() {
            let pieces = if size == PageSize::Huge { 512 } else { 1 };
            for k in 0..pieces {
                let physical = map.to_physical((first.0 + k) << 12);
                let c = layout.color_of(physical);
                assert!(
                    colors.contains(c),
                    "{}: {size:?} page {vpn:#x} piece {k} at {physical:#x} has color {c}, not in {colors}",
                    s.apps[i].name
                );
            }
            huge += u64::from(size == PageSize::Huge);
        }
        assert!(huge > 0, "{}: no superpage", s.apps[i].name);
        superpages += huge;
    }
    // Without the swap the same colored apps get no superpage at all.
    let off = variant(|f| f.swap = Some("off".into()));
    assert!(off.platform.swap_map().unwrap().is_none());
    let sys = system(&off);
    for i in 0..off.apps.len() {
        assert!(sys.address_space(i).unwrap().huge_pages().is_empty());
    }
    assert!(superpages >= 4);
}

#[test]
fn superpages_cut_tlb_misses_against_4k_pages() {
    let huge = run(&variant(|_| {}));
    let small = run(&variant(|f| {
        for a in &mut f.apps {
            a.huge_pages = Some(HugePages::Never);
        }
    }));
    let (h, s) = (&huge.apps[0].totals, &small.apps[0].totals);
    assert_eq!(h.name, "tlb-hungry");
    assert!(
        h.tlb_misses * 10 < s.tlb_misses,
        "TLB misses 2 MiB {} vs 4 KiB {}",
        h.tlb_misses,
        s.tlb_misses
    );
    assert!(h.ipc > s.ipc, "IPC 2 MiB {} vs 4 KiB {}", h.ipc, s.ipc);
    let all_h: u64 = huge.apps.iter().map(|a| a.totals.tlb_misses).sum();
    let all_s: u64 = small.apps.iter().map(|a| a.totals.tlb_misses).sum();
    assert!(all_h < all_s, "{all_h} vs {all_s}");
}

#[test]
fn the_configurable_swap_costs_one_cycle_per_llc_access() {
    let one = |swap: &str| {
        run(&variant(|f| {
            f.apps.truncate(1);
            f.swap = Some(swap.into());
        }))
    };
    let (st, conf) = (one("static"), one("configurable"));
    let (a, b) = (&st.apps[0].totals, &conf.apps[0].totals);
    // Alone, the same accesses hit and miss alike; only time differs.
    assert_eq!(
        (a.llc_references, a.llc_misses, a.tlb_misses),
        (b.llc_references, b.llc_misses, b.tlb_misses)
    );
    assert!(b.cycles > a.cycles, "{} vs {}", b.cycles, a.cycles);
    // At most one cycle per LLC reference.
    assert!(b.cycles - a.cycles <= a.llc_references as f64 + 1.0);
}

#[test]
fn bad_swap_keys_are_refused_naming_the_key() {
    let base = Scenario::load(&example()).unwrap().file;
    for (platform, key, want) in [
        ("sandybridge-8m", "on", "expected \"off\""),
        ("xeon-5160", "static", "declares no swap"),
    ] {
        let mut f = base.clone();
        f.platform = platform.into();
        f.swap = Some(key.into());
        let e = Scenario::from_file(f, "x".into(), example().parent(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("swap") && e.contains(want), "{key}: {e}");
    }
}
