//! `lfoc`: LFOC's fairness-oriented cache clustering (García-García et al.,
//! ICPP 2019, Algorithm 1 and Table 1), under one of two presets
//! ([`LfocPreset`]): `paper` (the default) or `pbbcache` (PBBCache's code,
//! exactly); [`crate::lfoc_preset`] lists every difference.
//!
//! Apps are first classified from their alone curves ([`classify`]):
//!
//! * **streaming**: some way count has slowdown `<= 1.03` and LLC misses
//!   per kilo-cycle at or above the preset's threshold (10 in the paper's
//!   Table 1, 14 in PBBCache), and no way count has slowdown `>= 1.06`;
//! * **sensitive**: not streaming, and some way count `w >= 2` has slowdown
//!   `>= 1.05`;
//! * **light** (light sharing): neither.
//!
//! Then the clustering ([`Lfoc::plan_for`]):
//!
//! 1. no sensitive app: every app shares every way;
//! 2. `min(ceil(n_streaming / max_streaming), max_streaming_ways)` ways are
//!    reserved for the streaming apps: under `pbbcache` they share ONE
//!    cluster of that many ways; under `paper` each reserved way is a 1-way
//!    cluster of up to `r = ceil(n_streaming / ways)` of them;
//! 3. each sensitive app gets its own cluster, sized by UCP lookahead on the
//!    slowdown curves over the remaining ways;
//! 4. light apps first fill the streaming clusters: each free streaming
//!    slot (a way holds `max_streaming` streaming apps) admits
//!    `gaps_per_streaming` light apps (3 under `paper`, 2 under
//!    `pbbcache`); the rest go round-robin over the sensitive clusters.
//!
//! Clusters are listed sensitive first (in mix order), then the streaming
//! clusters, as PBBCache numbers them (the order only places the masks).
//!
//! Beyond PBBCache (which asserts): when the sensitive apps outnumber the
//! ways left for them, only `ways - reserved` sensitive clusters are made,
//! the sensitive apps beyond them join those clusters round-robin (in mix
//! order), and lookahead runs on each cluster's summed slowdown curve. With
//! a single way, or when the streaming reservation would leave no way for
//! sensitive apps, the reservation shrinks to leave at least one way; with
//! one way everyone shares it. So every non-empty mix gets a valid plan.

use crate::lfoc_preset::{LfocPreset, StreamingLayout};
use crate::lookahead::lookahead;
use crate::{Policy, PolicyError};
use cachepart_machine::{AppCurves, Machine, Plan};
use serde::{Deserialize, Serialize};

/// Slowdown at or below which a way count looks streaming.
pub const STREAMING_MAX_SLOWDOWN: f64 = 1.03;
/// LLC misses per kilo-cycle at or above which a way count looks streaming,
/// in PBBCache (the `pbbcache` preset).
pub const STREAMING_MIN_LLCMPKC: f64 = 14.0;
/// The same threshold in the paper's Table 1 (the `paper` preset; the
/// online algorithm's `high_threshold`).
pub const PAPER_STREAMING_MIN_LLCMPKC: f64 = 10.0;
/// A slowdown at or above this at any way count rules streaming out.
pub const STREAMING_NEVER_SLOWDOWN: f64 = 1.06;
/// Slowdown at or above which (at 2 ways or more) an app is sensitive.
pub const SENSITIVE_MIN_SLOWDOWN: f64 = 1.05;

/// LFOC's application classes (Table 1).
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppClass {
    /// Light sharing: neither streaming nor sensitive (PBBCache code 0).
    Light,
    /// Streaming: insensitive and aggressive (PBBCache code 1).
    Streaming,
    /// Cache sensitive (PBBCache code 2).
    Sensitive,
}

impl AppClass {
    /// PBBCache's numeric code: 0 light, 1 streaming, 2 sensitive.
    pub fn code(self) -> u8 {
        match self {
            AppClass::Light => 0,
            AppClass::Streaming => 1,
            AppClass::Sensitive => 2,
        }
    }

    /// The class of a PBBCache code (`>= 2` is sensitive, as PBBCache reads it).
    pub fn from_code(code: u8) -> AppClass {
        match code {
            0 => AppClass::Light,
            1 => AppClass::Streaming,
            _ => AppClass::Sensitive,
        }
    }
}

/// An app's class and the numbers that decided it. Way counts are 1-based.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Classification {
    /// The class.
    pub class: AppClass,
    /// Smallest slowdown over all way counts.
    pub min_slowdown: f64,
    /// Way count of `min_slowdown` (the first one).
    pub min_slowdown_ways: u32,
    /// Largest slowdown over all way counts (streaming needs it `< 1.06`).
    pub max_slowdown: f64,
    /// Way count of `max_slowdown` (the first one).
    pub max_slowdown_ways: u32,
    /// Largest slowdown at 2 ways or more (sensitive needs it `>= 1.05`).
    pub max_slowdown_from_2: f64,
    /// Way count of `max_slowdown_from_2` (the first one; 0 with one way).
    pub max_slowdown_from_2_ways: u32,
    /// Largest LLC misses per kilo-cycle over all way counts.
    pub max_llcmpkc: f64,
    /// Way count of `max_llcmpkc` (the first one).
    pub max_llcmpkc_ways: u32,
    /// First way count with slowdown `<= 1.03` and MPKC `>= 14`, if any.
    pub streaming_ways: Option<u32>,
}

/// Classifies one app (Table 1 with the `paper` preset's thresholds; see
/// [`Lfoc::classify_app`] for another preset's).
pub fn classify_app(c: &AppCurves) -> Classification {
    Lfoc::default().classify_app(c)
}

/// Classifies one app with `min_llcmpkc` as the streaming threshold.
fn classify_with(c: &AppCurves, min_llcmpkc: f64) -> Classification {
    let mut r = Classification {
        class: AppClass::Light,
        min_slowdown: f64::INFINITY,
        min_slowdown_ways: 0,
        max_slowdown: f64::NEG_INFINITY,
        max_slowdown_ways: 0,
        max_slowdown_from_2: f64::NEG_INFINITY,
        max_slowdown_from_2_ways: 0,
        max_llcmpkc: f64::NEG_INFINITY,
        max_llcmpkc_ways: 0,
        streaming_ways: None,
    };
    for (i, (&sd, &mpkc)) in c.slowdown.iter().zip(&c.llcmpkc).enumerate() {
        let w = i as u32 + 1;
        if sd < r.min_slowdown {
            r.min_slowdown = sd;
            r.min_slowdown_ways = w;
        }
        if sd > r.max_slowdown {
            r.max_slowdown = sd;
            r.max_slowdown_ways = w;
        }
        if w >= 2 && sd > r.max_slowdown_from_2 {
            r.max_slowdown_from_2 = sd;
            r.max_slowdown_from_2_ways = w;
        }
        if mpkc > r.max_llcmpkc {
            r.max_llcmpkc = mpkc;
            r.max_llcmpkc_ways = w;
        }
        if r.streaming_ways.is_none() && sd <= STREAMING_MAX_SLOWDOWN && mpkc >= min_llcmpkc {
            r.streaming_ways = Some(w);
        }
    }
    r.class = if r.streaming_ways.is_some() && r.max_slowdown < STREAMING_NEVER_SLOWDOWN {
        AppClass::Streaming
    } else if r.max_slowdown_from_2 >= SENSITIVE_MIN_SLOWDOWN {
        AppClass::Sensitive
    } else {
        AppClass::Light
    };
    r
}

/// Classifies every app of a mix (the `paper` preset's thresholds).
pub fn classify(curves: &[AppCurves]) -> Vec<Classification> {
    curves.iter().map(classify_app).collect()
}

/// The class only, without the numbers (no allocation), with
/// `min_llcmpkc` as the streaming threshold.
pub(crate) fn class_of(c: &AppCurves, min_llcmpkc: f64) -> AppClass {
    let mut streaming_way = false;
    let mut never = false;
    let mut sensitive = false;
    for (i, (&sd, &mpkc)) in c.slowdown.iter().zip(&c.llcmpkc).enumerate() {
        streaming_way |= sd <= STREAMING_MAX_SLOWDOWN && mpkc >= min_llcmpkc;
        never |= sd >= STREAMING_NEVER_SLOWDOWN;
        sensitive |= i >= 1 && sd >= SENSITIVE_MIN_SLOWDOWN;
    }
    if streaming_way && !never {
        AppClass::Streaming
    } else if sensitive {
        AppClass::Sensitive
    } else {
        AppClass::Light
    }
}

/// LFOC clustering: its parameters (a preset's, each overridable).
#[derive(Clone, Debug, PartialEq)]
pub struct Lfoc {
    /// The preset these parameters started from (for reports).
    pub preset: LfocPreset,
    /// Streaming apps one streaming way holds (`max_streaming_way`, 5).
    pub max_streaming: usize,
    /// Light apps admitted per free streaming slot (the paper's
    /// `gaps_per_streaming`, 3; PBBCache's code uses 2).
    pub gaps_per_streaming: usize,
    /// Cap on the ways reserved for streaming apps (2 in both).
    pub max_streaming_ways: usize,
    /// LLC misses per kilo-cycle at or above which a way count looks
    /// streaming (Table 1: 10; PBBCache: 14).
    pub streaming_min_llcmpkc: f64,
    /// One cluster over the streaming ways, or a 1-way cluster each.
    pub layout: StreamingLayout,
}

impl Default for Lfoc {
    /// The `paper` preset.
    fn default() -> Self {
        Lfoc::preset(LfocPreset::Paper)
    }
}

impl Lfoc {
    /// The parameters of `preset` (see [`crate::lfoc_preset`]).
    pub fn preset(preset: LfocPreset) -> Lfoc {
        match preset {
            LfocPreset::Paper => Lfoc {
                preset,
                max_streaming: 5,
                gaps_per_streaming: 3,
                max_streaming_ways: 2,
                streaming_min_llcmpkc: PAPER_STREAMING_MIN_LLCMPKC,
                layout: StreamingLayout::OneWayClusters,
            },
            LfocPreset::Pbbcache => Lfoc {
                preset,
                max_streaming: 5,
                gaps_per_streaming: 2,
                max_streaming_ways: 2,
                streaming_min_llcmpkc: STREAMING_MIN_LLCMPKC,
                layout: StreamingLayout::OneCluster,
            },
        }
    }

    /// One app's class and the numbers that decided it, with these
    /// parameters' thresholds.
    pub fn classify_app(&self, c: &AppCurves) -> Classification {
        classify_with(c, self.streaming_min_llcmpkc)
    }

    /// The class of each app (no evidence).
    pub fn classes(&self, curves: &[AppCurves]) -> Vec<AppClass> {
        curves
            .iter()
            .map(|c| class_of(c, self.streaming_min_llcmpkc))
            .collect()
    }

    fn check(&self, policy: &str) -> Result<(), PolicyError> {
        let bad = |name: &str, value: usize| PolicyError::BadParameter {
            policy: policy.into(),
            name: name.into(),
            value: value.to_string(),
            expected: "at least 1".into(),
        };
        if self.max_streaming == 0 {
            return Err(bad("max_streaming", self.max_streaming));
        }
        if self.max_streaming_ways == 0 {
            return Err(bad("max_streaming_ways", self.max_streaming_ways));
        }
        if !(self.streaming_min_llcmpkc.is_finite() && self.streaming_min_llcmpkc >= 0.0) {
            return Err(PolicyError::BadParameter {
                policy: policy.into(),
                name: "streaming_min_llcmpkc".into(),
                value: self.streaming_min_llcmpkc.to_string(),
                expected: "a finite number of misses per kilo-cycle, at least 0".into(),
            });
        }
        Ok(())
    }

    /// The plan for apps of known classes (`classes[i]` of `curves[i]`)
    /// over `ways` ways. See the module documentation for the rules.
    pub fn plan_for(
        &self,
        curves: &[AppCurves],
        classes: &[AppClass],
        ways: u32,
    ) -> Result<Plan, PolicyError> {
        self.plan_with(curves, classes, ways, "lfoc", sensitive_clusters)
    }

    /// LFOC's plan with the sensitive clusters made by `sensitive`, which
    /// gets the curves, the mix indices of the sensitive apps (at least one)
    /// and the ways left for them (at least one), and returns their clusters
    /// as (mix indices, ways): non-empty, at most that many clusters, ways
    /// summing to it. The streaming cluster and the light apps are placed
    /// around them as the module documentation says.
    pub(crate) fn plan_with<F>(
        &self,
        curves: &[AppCurves],
        classes: &[AppClass],
        ways: u32,
        policy: &str,
        sensitive: F,
    ) -> Result<Plan, PolicyError>
    where
        F: FnOnce(&[AppCurves], &[usize], usize) -> Vec<(Vec<usize>, usize)>,
    {
        self.check(policy)?;
        let n = curves.len();
        if n == 0 {
            return Err(PolicyError::EmptyMix);
        }
        assert_eq!(n, classes.len(), "one class per app");
        let w = ways as usize;
        let of =
            |class: AppClass| -> Vec<usize> { (0..n).filter(|&i| classes[i] == class).collect() };
        let sens = of(AppClass::Sensitive);
        let stream = of(AppClass::Streaming);
        if sens.is_empty() || w <= 1 {
            return Ok(Plan::shared_all(n, ways));
        }
        let mut reserved = if stream.is_empty() {
            0
        } else {
            stream
                .len()
                .div_ceil(self.max_streaming)
                .min(self.max_streaming_ways)
                .min(w - 1)
        };
        // Algorithm 1: r streaming apps per 1-way cluster (fewer clusters
        // when r of them already hold every streaming app).
        let per_cluster = match self.layout {
            StreamingLayout::OneCluster => stream.len(),
            StreamingLayout::OneWayClusters if reserved > 0 => {
                let r = stream.len().div_ceil(reserved);
                reserved = stream.len().div_ceil(r);
                r
            }
            StreamingLayout::OneWayClusters => 0,
        };
        let (mut members, mut sizes): (Vec<Vec<usize>>, Vec<usize>) =
            sensitive(curves, &sens, w - reserved).into_iter().unzip();
        let k = members.len();
        debug_assert!(k >= 1 && k <= w - reserved);
        debug_assert_eq!(sizes.iter().sum::<usize>(), w - reserved);
        let mut lights = of(AppClass::Light).into_iter();
        match self.layout {
            StreamingLayout::OneCluster if reserved > 0 => {
                // Saturating: a huge parameter means room for every app
                // (an overflow would panic, or wrap to a wrong plan).
                let room = self
                    .max_streaming
                    .saturating_mul(reserved)
                    .saturating_sub(stream.len());
                let mut cluster = stream;
                cluster.extend(
                    lights
                        .by_ref()
                        .take(room.saturating_mul(self.gaps_per_streaming)),
                );
                members.push(cluster);
                sizes.push(reserved);
            }
            StreamingLayout::OneWayClusters if reserved > 0 => {
                for group in stream.chunks(per_cluster) {
                    let room = self.max_streaming.saturating_sub(group.len());
                    let mut cluster = group.to_vec();
                    cluster.extend(
                        lights
                            .by_ref()
                            .take(room.saturating_mul(self.gaps_per_streaming)),
                    );
                    members.push(cluster);
                    sizes.push(1);
                }
            }
            _ => {}
        }
        for (j, a) in lights.enumerate() {
            members[j % k].push(a);
        }
        Ok(Plan::from_clusters(
            members.into_iter().zip(sizes.into_iter().map(|s| s as u32)),
        ))
    }
}

/// LFOC's sensitive clusters: one per sensitive app, sized by lookahead on
/// the slowdown curves over `ways` ways; when the apps outnumber the ways,
/// `ways` clusters that the apps join round-robin (in mix order), sized by
/// lookahead on each cluster's summed slowdown curve.
pub(crate) fn sensitive_clusters(
    curves: &[AppCurves],
    sensitive: &[usize],
    ways: usize,
) -> Vec<(Vec<usize>, usize)> {
    let n_sens = sensitive.len();
    let k = n_sens.min(ways);
    let mut members: Vec<Vec<usize>> = Vec::with_capacity(k + 1);
    for (s, &i) in sensitive.iter().enumerate() {
        if s < k {
            members.push(vec![i]);
        } else {
            members[s % k].push(i);
        }
    }
    let sizes = if k == n_sens {
        let m: Vec<&[f64]> = members.iter().map(|c| &curves[c[0]].slowdown[..]).collect();
        lookahead(&m, ways)
    } else {
        let m: Vec<Vec<f64>> = members
            .iter()
            .map(|c| {
                (0..ways)
                    .map(|x| c.iter().map(|&a| curves[a].slowdown[x]).sum())
                    .collect()
            })
            .collect();
        lookahead(&m, ways)
    };
    members.into_iter().zip(sizes).collect()
}

impl Policy for Lfoc {
    fn name(&self) -> &str {
        "lfoc"
    }

    fn decide(&mut self, machine: &mut dyn Machine) -> Result<Plan, PolicyError> {
        let ways = machine.platform().ways;
        let curves = machine.alone_curves()?;
        let classes = self.classes(curves);
        self.plan_for(curves, &classes, ways)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_testkit::{curves_from_ipc, random_curves, FixedMachine};
    use proptest::prelude::*;

    /// An app with a given slowdown curve (IPC = 1 / slowdown) and MPKC.
    fn app(name: &str, sd: &[f64], mpkc: f64) -> AppCurves {
        let ipc: Vec<f64> = sd.iter().map(|s| 1.0 / s).collect();
        curves_from_ipc(name, &ipc, &vec![mpkc; sd.len()])
    }

    fn streaming(name: &str) -> AppCurves {
        app(name, &[1.02, 1.01, 1.0, 1.0], 20.0)
    }
    fn sensitive(name: &str, sd2: f64) -> AppCurves {
        app(name, &[1.5, sd2, 1.0, 1.0], 5.0)
    }
    fn light(name: &str) -> AppCurves {
        app(name, &[1.01, 1.0, 1.0, 1.0], 0.5)
    }

    #[test]
    fn classes_and_their_evidence() {
        let s = classify_app(&streaming("lbm"));
        assert_eq!(s.class, AppClass::Streaming);
        assert_eq!(s.streaming_ways, Some(1));
        assert_eq!(s.max_llcmpkc, 20.0);
        let c = classify_app(&sensitive("xalan", 1.2));
        assert_eq!(c.class, AppClass::Sensitive);
        assert!((c.max_slowdown_from_2 - 1.2).abs() < 1e-12);
        assert_eq!(c.max_slowdown_from_2_ways, 2);
        assert_eq!(c.max_slowdown_ways, 1);
        assert_eq!(classify_app(&light("povray")).class, AppClass::Light);
        // a high slowdown at ONE way only is neither streaming nor sensitive
        // (streaming is ruled out by sd >= 1.06, sensitive needs w >= 2)
        let one = app("x", &[1.3, 1.0, 1.0, 1.0], 30.0);
        let k = classify_app(&one);
        assert_eq!(k.class, AppClass::Light);
        assert_eq!(k.streaming_ways, Some(2));
        // class_of agrees with classify_app
        for a in [streaming("a"), sensitive("b", 1.1), light("c"), one] {
            assert_eq!(class_of(&a, STREAMING_MIN_LLCMPKC), classify_app(&a).class);
        }
        assert_eq!(
            AppClass::from_code(AppClass::Streaming.code()),
            AppClass::Streaming
        );
        assert_eq!(AppClass::Sensitive.to_string(), "sensitive");
    }

    #[test]
    fn no_sensitive_app_shares_everything() {
        let mut m = FixedMachine::new(vec![streaming("a"), light("b")], 4);
        let p = Lfoc::default().decide(&mut m).unwrap();
        assert_eq!(p, Plan::shared_all(2, 4));
    }

    #[test]
    fn streaming_cluster_takes_lights_first() {
        // 1 streaming -> 1 way, room = 5 - 1 = 4 slots -> up to 8 lights
        // at PBBCache's 2 per slot (12 at the default 3).
        let mut apps = vec![sensitive("s", 1.3), streaming("t")];
        for i in 0..9 {
            apps.push(light(&format!("l{i}")));
        }
        let mut m = FixedMachine::new(apps, 4);
        let pbbcache = Lfoc {
            gaps_per_streaming: 2,
            ..Lfoc::default()
        };
        let p = pbbcache.clone().decide(&mut m).unwrap();
        assert_eq!(p.clusters.len(), 2);
        assert_eq!(p.clusters[0].apps, vec![0, 10]); // the 9th light goes RR
        assert_eq!(p.clusters[0].mask.0.count_ones(), 3);
        assert_eq!(p.clusters[1].apps, vec![1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(p.clusters[1].mask.0.count_ones(), 1);
        let p = Lfoc::default().decide(&mut m).unwrap();
        assert_eq!(p.clusters[0].apps, vec![0]);
        assert_eq!(p.clusters[1].apps, (1..=10).collect::<Vec<_>>());
    }

    #[test]
    fn sensitive_ways_by_lookahead_and_lights_round_robin() {
        // s0 gains from 2 ways only a little, s1 a lot from 3 ways.
        let s0 = app("s0", &[1.3, 1.2, 1.2, 1.2, 1.0], 5.0);
        let s1 = app("s1", &[2.0, 1.9, 1.0, 1.0, 1.0], 5.0);
        let apps = vec![light("l0"), s0, s1, light("l1"), light("l2")];
        let mut m = FixedMachine::new(apps, 5);
        let p = Lfoc::default().decide(&mut m).unwrap();
        assert_eq!(p.clusters.len(), 2);
        assert_eq!(p.clusters[0].apps, vec![1, 0, 4]);
        assert_eq!(p.clusters[1].apps, vec![2, 3]);
        assert_eq!(p.clusters[0].mask.0.count_ones(), 2);
        assert_eq!(p.clusters[1].mask.0.count_ones(), 3);
    }

    #[test]
    fn more_sensitive_apps_than_ways_still_fit() {
        let apps: Vec<AppCurves> = (0..6).map(|i| sensitive(&format!("s{i}"), 1.2)).collect();
        let mut m = FixedMachine::new(apps, 4);
        let p = Lfoc::default().decide(&mut m).unwrap();
        assert_eq!(p.clusters.len(), 4);
        assert_eq!(p.clusters[0].apps, vec![0, 4]);
        assert_eq!(p.clusters[1].apps, vec![1, 5]);
        assert!(p.validate(6, &m.platform().mask_rules).is_ok());
    }

    #[test]
    fn parameters_are_checked() {
        let mut m = FixedMachine::new(vec![light("a")], 4);
        let mut l = Lfoc {
            max_streaming: 0,
            ..Lfoc::default()
        };
        assert!(matches!(
            l.decide(&mut m),
            Err(PolicyError::BadParameter { .. })
        ));
        let mut m = FixedMachine::new(vec![], 4);
        assert!(matches!(
            Lfoc::default().decide(&mut m),
            Err(PolicyError::EmptyMix)
        ));
    }

    /// Parameters up to `usize::MAX` (Python's `lfoc_max_streaming=2**63`,
    /// the CLI's `--lfoc-gaps-per-streaming`) admit every light app to the
    /// streaming cluster instead of overflowing (a panic in debug builds, a
    /// wrapped count in release ones).
    #[test]
    fn huge_parameters_do_not_overflow() {
        let mut apps = vec![sensitive("s", 1.3), streaming("t")];
        for i in 0..3 {
            apps.push(light(&format!("l{i}")));
        }
        for preset in [LfocPreset::Paper, LfocPreset::Pbbcache] {
            for (max_streaming, gaps) in [(usize::MAX, 3), (5, usize::MAX), (1 << 63, 1 << 63)] {
                let mut m = FixedMachine::new(apps.clone(), 4);
                let mut l = Lfoc {
                    max_streaming,
                    gaps_per_streaming: gaps,
                    ..Lfoc::preset(preset)
                };
                let p = l.decide(&mut m).unwrap();
                assert_eq!(p.clusters.len(), 2, "{preset:?} {max_streaming} {gaps}");
                assert_eq!(p.clusters[0].apps, vec![0]);
                assert_eq!(p.clusters[1].apps, vec![1, 2, 3, 4]);
            }
        }
    }

    /// PBBCache's own classes of all 55 programs of its metrics file.
    #[test]
    fn classes_match_pbbcache() {
        let Some(dir) = cachepart_testkit::pbbcache_dir("classes_match_pbbcache") else {
            return;
        };
        let cats = dir.join("ref/app_categories_from_get_app_category.csv");
        let metrics = dir.join("metrics.csv");
        let text =
            std::fs::read_to_string(&cats).unwrap_or_else(|e| panic!("{}: {e}", cats.display()));
        let table = cachepart_profile::MetricsTable::from_path(&metrics).unwrap();
        let mut checked = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (name, code) = line.split_once(',').unwrap();
            let want = AppClass::from_code(code.trim().parse().unwrap());
            let a = table
                .app_index(name.trim())
                .expect("program in metrics.csv");
            let got = Lfoc::preset(LfocPreset::Pbbcache).classify_app(&table.curves(a));
            assert_eq!(got.class, want, "{name}: {got:?}");
            checked += 1;
        }
        eprintln!("classes_match_pbbcache: {checked} programs agree");
        assert_eq!(checked, 55);
    }

    proptest! {
        #[test]
        fn forced_classes_give_valid_plans(
            (curves, ways) in random_curves(1, 24),
            codes in proptest::collection::vec(0u8..3, 24),
        ) {
            let n = curves.len();
            let classes: Vec<AppClass> = codes[..n].iter().map(|&c| AppClass::from_code(c)).collect();
            let plan = Lfoc::default().plan_for(&curves, &classes, ways as u32).unwrap();
            let rules = cachepart_units::MaskRules::intel(ways as u32, 1);
            prop_assert!(plan.validate(n, &rules).is_ok());
            let total: u32 = plan.clusters.iter().map(|c| c.mask.0.count_ones()).sum();
            prop_assert_eq!(total, ways as u32);
        }
    }
}
