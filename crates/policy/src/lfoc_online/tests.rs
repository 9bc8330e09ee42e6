//! Online LFOC on the test kit's scripted machine: apps whose behaviour
//! changes by phase, each interval's sample computed from the ways the plan
//! in force gives them.

use super::*;
use crate::driver::{drive, Flow, Stop};
use cachepart_testkit::scripted::{INTERVAL_CYCLES as CYCLES, WAY_BYTES};
use cachepart_testkit::{Behaviour as Kind, ScriptedMachine};

const WAYS: u32 = 11;

/// Windows and periods of one to two intervals, repartitioning every 5.
fn params() -> LfocOnlineParams {
    LfocOnlineParams {
        window_instructions: 1e6,
        period_instructions: 1e6,
        repartition_cycles: 5_000_000,
        way_bytes: Some(WAY_BYTES),
        ..LfocOnlineParams::default()
    }
}

fn run(phases: Vec<Vec<(u64, Kind)>>, intervals: u64) -> (LfocOnline, crate::driver::RunLog) {
    run_with(params(), phases, intervals)
}

fn run_with(
    params: LfocOnlineParams,
    phases: Vec<Vec<(u64, Kind)>>,
    intervals: u64,
) -> (LfocOnline, crate::driver::RunLog) {
    let n = phases.len();
    let mut m = ScriptedMachine::new(WAYS, phases);
    let mut c = LfocOnline::new(params, n, Some(CYCLES as u64)).unwrap();
    let log = drive(&mut m, &mut c, Stop::After(intervals), &mut |_| {
        Flow::Continue
    })
    .unwrap();
    (c, log)
}

/// (interval, class) of every classification of `app`.
fn classes(c: &LfocOnline, app: usize) -> Vec<(u64, AppClass)> {
    c.decisions()
        .iter()
        .filter(|d| d.app == Some(app))
        .filter_map(|d| match &d.what {
            DecisionKind::Classified { class, .. } => Some((d.interval, *class)),
            _ => None,
        })
        .collect()
}

/// Interval of every class change signalled for `app`.
fn changes(c: &LfocOnline, app: usize) -> Vec<u64> {
    c.decisions()
        .iter()
        .filter(|d| d.app == Some(app) && matches!(d.what, DecisionKind::ClassChange { .. }))
        .map(|d| d.interval)
        .collect()
}

#[test]
fn an_app_is_reclassified_at_each_phase_change() {
    // app 0: light, sensitive from interval 100, streaming from 200, light
    // again from 300; apps 1 and 2 stay light and streaming.
    let phases = vec![
        vec![
            (0, Kind::Light),
            (100, Kind::Sensitive),
            (200, Kind::Streaming),
            (300, Kind::Light),
        ],
        vec![(0, Kind::Light)],
        vec![(0, Kind::Streaming)],
    ];
    let (c, log) = run(phases, 400);
    let got = classes(&c, 0);
    let kinds: Vec<AppClass> = got.iter().map(|g| g.1).collect();
    assert_eq!(
        kinds,
        [
            AppClass::Light,
            AppClass::Sensitive,
            AppClass::Streaming,
            AppClass::Light
        ],
        "{got:?}"
    );
    // each change is caught within the paper's windows: 5 monitoring
    // periods to fill the mean, then the sampling sweep (at most 10 sizes,
    // 1-5 intervals each)
    let ch = changes(&c, 0);
    assert_eq!(ch.len(), 3, "{ch:?}");
    for (k, from) in [100u64, 200, 300].into_iter().enumerate() {
        assert!(
            (from..from + 10).contains(&ch[k]),
            "change {k} at {}: {ch:?}",
            ch[k]
        );
        assert!((ch[k]..from + 60).contains(&got[k + 1].0), "{got:?}");
    }
    // the sensitive phase's critical size: its IPC stops growing at 6 ways
    let critical: Vec<u32> = c
        .decisions()
        .iter()
        .filter_map(|d| match &d.what {
            DecisionKind::Classified {
                class: AppClass::Sensitive,
                critical_ways,
                ..
            } if d.app == Some(0) => Some(*critical_ways),
            _ => None,
        })
        .collect();
    assert_eq!(critical, [6]);
    // the others keep their classes
    assert_eq!(classes(&c, 1).len(), 1);
    assert_eq!(classes(&c, 1)[0].1, AppClass::Light);
    assert_eq!(classes(&c, 2).len(), 1);
    assert_eq!(classes(&c, 2)[0].1, AppClass::Streaming);
    // every sampling step and re-plan reached the machine, nothing else
    let count = |f: fn(&DecisionKind) -> bool| c.decisions().iter().filter(|d| f(&d.what)).count();
    let sampling = count(|k| matches!(k, DecisionKind::Sampling { .. }));
    let replans = count(|k| matches!(k, DecisionKind::Replan { .. }));
    assert!(replans >= 4, "{replans}");
    assert_eq!(log.actions.len(), 1 + sampling + replans);
}

/// While app 0 was sensitive, it had a partition of its own of at least
/// its critical size; the streaming app had one way.
#[test]
fn a_sensitive_app_gets_its_own_partition() {
    let phases = vec![
        vec![(0, Kind::Sensitive)],
        vec![(0, Kind::Light)],
        vec![(0, Kind::Streaming)],
    ];
    let (c, _) = run(phases, 80);
    let plan = c.current.clone().unwrap();
    let own = plan.clusters.iter().find(|k| k.apps.contains(&0)).unwrap();
    assert_eq!(own.apps, [0], "{plan}");
    assert!(own.mask.count() >= 6, "{plan}");
    let streaming = plan.clusters.iter().find(|k| k.apps.contains(&2)).unwrap();
    assert_eq!(streaming.mask.count(), 1, "{plan}");
}

/// The paper's heuristics watch a streaming app only for a calm phase
/// (mean LLCMPKC under `low_threshold`): one that turns cache-sensitive
/// while squeezed into its streaming way keeps missing as much, so it is
/// not resampled. This pins that limitation of the published heuristics,
/// and that the opt-in periodic resample catches it.
#[test]
fn streaming_to_sensitive_needs_the_periodic_resample() {
    let phases = vec![
        vec![(0, Kind::Streaming), (60, Kind::Sensitive)],
        vec![(0, Kind::Sensitive)],
    ];
    let (c, _) = run(phases.clone(), 160);
    assert_eq!(changes(&c, 0), Vec::<u64>::new());
    assert_eq!(classes(&c, 0).len(), 1);
    // With the periodic resample of streaming apps (not in the paper) the
    // change is caught: resampled while still streaming, it stays
    // streaming; resampled after interval 60, it is sensitive.
    let periodic = LfocOnlineParams {
        streaming_resample_periods: Some(10),
        ..params()
    };
    let (c, _) = run_with(periodic, phases, 160);
    let got = classes(&c, 0);
    assert_eq!(got[0].1, AppClass::Streaming, "{got:?}");
    assert!(!changes(&c, 0).is_empty());
    let first_after = got.iter().find(|g| g.0 > 60).expect("a class after 60");
    assert_eq!(first_after.1, AppClass::Sensitive, "{got:?}");
    assert_eq!(got.last().unwrap().1, AppClass::Sensitive, "{got:?}");
}

#[test]
fn the_same_script_gives_the_same_decisions() {
    let phases = || {
        vec![
            vec![(0, Kind::Sensitive), (60, Kind::Light)],
            vec![(0, Kind::Streaming)],
            vec![(0, Kind::Light), (30, Kind::Sensitive)],
            vec![(0, Kind::Light)],
        ]
    };
    let (a, la) = run(phases(), 150);
    let (b, lb) = run(phases(), 150);
    assert_eq!(a.decisions(), b.decisions());
    assert_eq!(la.actions.len(), lb.actions.len());
    assert!(!a.decisions().is_empty());
}

#[test]
fn bad_parameters_and_empty_mixes_are_refused() {
    let p = LfocOnlineParams {
        repartition_cycles: 10,
        ..params()
    };
    assert!(LfocOnline::new(p, 2, Some(1000)).is_err());
    assert!(matches!(
        LfocOnline::new(params(), 0, None),
        Err(PolicyError::EmptyMix)
    ));
}

/// The order, light -> streaming -> sensitive, with the periodic
/// resample of streaming apps: each phase is found, within a sampling
/// round and the monitor's history after the change.
#[test]
fn light_streaming_sensitive_is_followed_with_the_periodic_resample() {
    let phases = vec![
        vec![
            (0, Kind::Light),
            (100, Kind::Streaming),
            (200, Kind::Sensitive),
        ],
        vec![(0, Kind::Light)],
        vec![(0, Kind::Streaming)],
    ];
    let p = LfocOnlineParams {
        streaming_resample_periods: Some(10),
        ..params()
    };
    let (c, _) = run_with(p, phases, 320);
    let got = classes(&c, 0);
    let at = |from: u64, to: u64| -> Vec<AppClass> {
        got.iter()
            .filter(|g| (from..to).contains(&g.0))
            .map(|g| g.1)
            .collect()
    };
    assert_eq!(at(0, 100), [AppClass::Light], "{got:?}");
    // Within 40 intervals of each change (5 periods of history, a
    // sampling round of 11 sizes, the resample every 10 periods) the new
    // class is found.
    assert_eq!(at(100, 140).last(), Some(&AppClass::Streaming), "{got:?}");
    assert_eq!(at(200, 240).last(), Some(&AppClass::Sensitive), "{got:?}");
    assert_eq!(got.last().unwrap().1, AppClass::Sensitive, "{got:?}");
}
