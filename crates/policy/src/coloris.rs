//! COLORIS's Page Color Manager (Ye et al., PACT'14, section 3.2): the
//! static per-core color sections and the Cache Utilization Monitor of
//! Algorithm 1, as a machine-independent state machine over color
//! ownership.
//!
//! * **Static assignment.** The `C` colors are cut into `N` sections of
//!   contiguous colors, one per core (the first `C mod N` sections get one
//!   color more). A new app gets the whole section of the least loaded
//!   core (fewest apps; ties to the lowest core), or of the core it is
//!   pinned to.
//! * **Monitor** ([`ColorManager::monitor`]), called once per `PERIOD` with
//!   the app's LLC miss rate (misses / references; 0 when references are
//!   below `min-references`, as the paper does):
//!   - above the app's High threshold: if no app has signalled spare colors
//!     (`is_cold` false) the app only raises `is_hot`; otherwise it gets
//!     `UNIT` colors (ALLOC_COLORS) and `is_cold` is cleared;
//!   - below the app's Low threshold: if an app has signalled a need
//!     (`is_hot`), this app gives up `UNIT` colors (PICK_VICTIMS), clears
//!     `is_hot` and sets `is_cold`.
//!
//!   `is_hot` and `is_cold` are global to all apps, as in the paper.
//! * **ALLOC_COLORS**: while the app does not own its whole local section,
//!   it takes the local color it lacks with the smallest *remote hotness*
//!   (owners running on other cores); once it owns the section
//!   (`needRemote`), the remote color it lacks with the smallest *global
//!   hotness* (owners on every core).
//! * **PICK_VICTIMS**: while the app owns remote colors (`hasRemote`), the
//!   one with the largest global hotness goes; otherwise the local color
//!   with the largest remote hotness. An app keeps at least one color.
//!
//! Ties go to the lowest color number (the paper leaves them open). Every
//! pick updates ownership before the next one, so the `UNIT` picks of one
//! call are distinct. [`ColorManager::alloc_colors`] is public for the
//! paper's other trigger: an app that runs out of memory in its colors.
//! The caller carries decisions out (the recoloring engine: lazy
//! recoloring on shrink, Selective Moving or Redistribution on expand).

use std::fmt;

use cachepart_units::IdSet;
use serde::{Deserialize, Serialize};

use crate::error::PolicyError;

const NAME: &str = "coloris";

/// A pair of miss-rate thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Thresholds {
    /// Below it an app may give colors away.
    pub low: f64,
    /// Above it an app asks for more colors.
    pub high: f64,
}

impl Thresholds {
    /// Checks `0 <= low <= high <= 1`; `field` names the pair in errors
    /// (`thresholds`, `app[2].thresholds`).
    pub fn check(&self, field: &str) -> Result<(), PolicyError> {
        let bad = |name: &str, value: f64, expected: &str| PolicyError::BadParameter {
            policy: NAME.into(),
            name: format!("{field}.{name}"),
            value: value.to_string(),
            expected: expected.into(),
        };
        for (name, v) in [("low", self.low), ("high", self.high)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(bad(name, v, "a miss rate between 0 and 1"));
            }
        }
        if self.low > self.high {
            return Err(bad(
                "low",
                self.low,
                &format!("at most high ({})", self.high),
            ));
        }
        Ok(())
    }
}

/// Parameters of the Page Color Manager.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ColorisConfig {
    /// Page colors of the LLC.
    pub colors: u32,
    /// Cores (one section each).
    pub cores: u32,
    /// Colors added or taken per decision (`UNIT`).
    #[serde(default = "default_unit")]
    pub unit: u32,
    /// Global thresholds, for apps without their own.
    pub thresholds: Thresholds,
    /// Below this many LLC references in a period the miss rate counts as 0.
    #[serde(default)]
    pub min_references: u64,
}

fn default_unit() -> u32 {
    1
}

impl ColorisConfig {
    /// Checks every field.
    pub fn check(&self) -> Result<(), PolicyError> {
        let bad = |name: &str, value: u32, expected: String| PolicyError::BadParameter {
            policy: NAME.into(),
            name: name.into(),
            value: value.to_string(),
            expected,
        };
        if self.cores == 0 {
            return Err(bad("cores", 0, "at least 1".into()));
        }
        if self.colors < self.cores {
            return Err(bad(
                "colors",
                self.colors,
                format!("at least one per core ({})", self.cores),
            ));
        }
        if self.unit == 0 || self.unit > self.colors {
            return Err(bad(
                "unit",
                self.unit,
                format!("between 1 and the number of colors ({})", self.colors),
            ));
        }
        self.thresholds.check("thresholds")
    }
}

/// What one monitor call changed for one app.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ColorChange {
    /// Colors given to the app (expand: Selective Moving or Redistribution).
    pub added: IdSet,
    /// Colors taken from the app (shrink: lazy recoloring).
    pub removed: IdSet,
}

impl ColorChange {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

impl fmt::Display for ColorChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "+[{}] -[{}]", self.added, self.removed)
    }
}

#[derive(Clone, Debug)]
struct AppState {
    core: u32,
    owned: Vec<bool>,
    thresholds: Thresholds,
    /// Removed (finished): it owns nothing and is no one's neighbour.
    gone: bool,
}

/// The Page Color Manager: sections, ownership, the global hot/cold flags.
#[derive(Clone, Debug)]
pub struct ColorManager {
    cfg: ColorisConfig,
    /// First color of each section, plus `colors` at the end.
    bounds: Vec<u32>,
    apps: Vec<AppState>,
    /// Owners of each color.
    owners: Vec<u32>,
    is_hot: bool,
    is_cold: bool,
}

impl ColorManager {
    /// A manager with no app yet.
    pub fn new(cfg: ColorisConfig) -> Result<ColorManager, PolicyError> {
        cfg.check()?;
        let (c, n) = (cfg.colors, cfg.cores);
        let bounds = (0..=n)
            .map(|k| k * (c / n) + k.min(c % n))
            .collect::<Vec<_>>();
        Ok(ColorManager {
            cfg,
            bounds,
            apps: Vec::new(),
            owners: vec![0; c as usize],
            is_hot: false,
            is_cold: false,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ColorisConfig {
        &self.cfg
    }

    /// The colors of core `core`'s section.
    pub fn section(&self, core: u32) -> std::ops::Range<u32> {
        self.bounds[core as usize]..self.bounds[core as usize + 1]
    }

    /// Adds an app (ids are given in order: 0, 1, ...) on `core`, or on
    /// the least loaded core when `None`, with its own thresholds or the
    /// global ones. It owns the whole section of its core. Returns the core
    /// and the colors.
    pub fn add_app(
        &mut self,
        core: Option<u32>,
        thresholds: Option<Thresholds>,
    ) -> Result<(u32, IdSet), PolicyError> {
        let app = self.apps.len();
        if let Some(t) = &thresholds {
            t.check(&format!("app[{app}].thresholds"))?;
        }
        let core = match core {
            Some(k) if k >= self.cfg.cores => {
                return Err(PolicyError::BadParameter {
                    policy: NAME.into(),
                    name: format!("app[{app}].core"),
                    value: k.to_string(),
                    expected: format!("a core below {}", self.cfg.cores),
                })
            }
            Some(k) => k,
            None => (0..self.cfg.cores)
                .min_by_key(|&k| {
                    let load = self.apps.iter().filter(|a| a.core == k && !a.gone).count();
                    (load, k)
                })
                .expect("at least one core"),
        };
        let mut owned = vec![false; self.cfg.colors as usize];
        for c in self.section(core) {
            owned[c as usize] = true;
            self.owners[c as usize] += 1;
        }
        self.apps.push(AppState {
            core,
            owned,
            thresholds: thresholds.unwrap_or(self.cfg.thresholds),
            gone: false,
        });
        Ok((core, self.colors_of(app)))
    }

    /// Removes `app` (it finished): its colors are released, lowering
    /// their hotness, and it is no longer counted on its core. Returns the
    /// colors it held.
    pub fn remove_app(&mut self, app: usize) -> Result<IdSet, PolicyError> {
        self.check_app(app)?;
        let held = self.colors_of(app);
        for c in held.iter() {
            self.set(app, c, false);
        }
        self.apps[app].gone = true;
        Ok(held)
    }

    /// Whether `app` was removed.
    pub fn is_removed(&self, app: usize) -> bool {
        self.apps.get(app).is_some_and(|a| a.gone)
    }

    /// Apps added so far.
    pub fn apps(&self) -> usize {
        self.apps.len()
    }

    /// The core of `app`.
    pub fn core_of(&self, app: usize) -> u32 {
        self.apps[app].core
    }

    /// The colors `app` owns.
    pub fn colors_of(&self, app: usize) -> IdSet {
        self.apps[app]
            .owned
            .iter()
            .enumerate()
            .filter(|(_, &o)| o)
            .map(|(c, _)| c as u32)
            .collect()
    }

    /// Global hotness of `color`: how many apps own it.
    pub fn hotness(&self, color: u32) -> u32 {
        self.owners[color as usize]
    }

    /// Remote hotness of `color` seen from `app`: owners on other cores.
    pub fn remote_hotness(&self, app: usize, color: u32) -> u32 {
        let core = self.apps[app].core;
        self.apps
            .iter()
            .filter(|a| a.core != core && a.owned[color as usize])
            .count() as u32
    }

    /// The global flag raised by an app that needs colors.
    pub fn is_hot(&self) -> bool {
        self.is_hot
    }

    /// The global flag raised by an app that gave colors up.
    pub fn is_cold(&self) -> bool {
        self.is_cold
    }

    fn check_app(&self, app: usize) -> Result<(), PolicyError> {
        if app >= self.apps.len() || self.apps[app].gone {
            return Err(PolicyError::BadParameter {
                policy: NAME.into(),
                name: "app".into(),
                value: app.to_string(),
                expected: format!("a live app added before (0..{})", self.apps.len()),
            });
        }
        Ok(())
    }

    /// Procedure MONITOR for `app` after a period with `references` LLC
    /// references and `misses` misses.
    pub fn monitor(
        &mut self,
        app: usize,
        references: u64,
        misses: u64,
    ) -> Result<ColorChange, PolicyError> {
        self.check_app(app)?;
        let cmr = if references == 0 || references < self.cfg.min_references {
            0.0
        } else {
            misses as f64 / references as f64
        };
        let t = self.apps[app].thresholds;
        let mut change = ColorChange::default();
        if cmr > t.high {
            if !self.is_cold {
                self.is_hot = true;
                return Ok(change);
            }
            change.added = self.alloc_colors(app, self.cfg.unit)?;
            self.is_cold = false;
        } else if cmr < t.low && self.is_hot {
            self.is_hot = false;
            self.is_cold = true;
            change.removed = self.pick_victims(app, self.cfg.unit);
        }
        Ok(change)
    }

    fn in_section(&self, app: usize, color: u32) -> bool {
        self.section(self.apps[app].core).contains(&color)
    }

    fn need_remote(&self, app: usize) -> bool {
        let a = &self.apps[app];
        self.section(a.core).all(|c| a.owned[c as usize])
    }

    fn has_remote(&self, app: usize) -> bool {
        let a = &self.apps[app];
        (0..self.cfg.colors).any(|c| a.owned[c as usize] && !self.in_section(app, c))
    }

    fn set(&mut self, app: usize, color: u32, own: bool) {
        self.apps[app].owned[color as usize] = own;
        if own {
            self.owners[color as usize] += 1;
        } else {
            self.owners[color as usize] -= 1;
        }
    }

    /// Procedure ALLOC_COLORS: gives `app` up to `num` colors it lacks
    /// (fewer when it already owns them all). Returns them.
    pub fn alloc_colors(&mut self, app: usize, num: u32) -> Result<IdSet, PolicyError> {
        self.check_app(app)?;
        let mut new = IdSet::new();
        for _ in 0..num {
            let remote = self.need_remote(app);
            let pick = (0..self.cfg.colors)
                .filter(|&c| !self.apps[app].owned[c as usize])
                .filter(|&c| self.in_section(app, c) != remote)
                .min_by_key(|&c| {
                    let h = if remote {
                        self.hotness(c)
                    } else {
                        self.remote_hotness(app, c)
                    };
                    (h, c)
                });
            let Some(c) = pick else { break };
            self.set(app, c, true);
            new.insert(c);
        }
        Ok(new)
    }

    /// Procedure PICK_VICTIMS: takes up to `num` colors from `app`, never
    /// its last one. Returns them.
    fn pick_victims(&mut self, app: usize, num: u32) -> IdSet {
        let mut victims = IdSet::new();
        for _ in 0..num {
            if self.apps[app].owned.iter().filter(|&&o| o).count() <= 1 {
                break;
            }
            let remote = self.has_remote(app);
            let pick = (0..self.cfg.colors)
                .filter(|&c| self.apps[app].owned[c as usize])
                .filter(|&c| self.in_section(app, c) != remote)
                .max_by_key(|&c| {
                    let h = if remote {
                        self.hotness(c)
                    } else {
                        self.remote_hotness(app, c)
                    };
                    // Largest hotness, then lowest color.
                    (h, std::cmp::Reverse(c))
                });
            let Some(c) = pick else { break };
            self.set(app, c, false);
            victims.insert(c);
        }
        victims
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cfg(colors: u32, cores: u32, unit: u32) -> ColorisConfig {
        ColorisConfig {
            colors,
            cores,
            unit,
            thresholds: Thresholds {
                low: 0.1,
                high: 0.5,
            },
            min_references: 100,
        }
    }

    fn ids(s: &str) -> IdSet {
        s.parse().unwrap()
    }

    #[test]
    fn sections_are_contiguous_and_cover_every_color() {
        let m = ColorManager::new(cfg(10, 4, 1)).unwrap();
        let s: Vec<_> = (0..4).map(|k| m.section(k)).collect();
        assert_eq!(s, vec![0..3, 3..6, 6..8, 8..10]);
    }

    #[test]
    fn new_apps_go_to_the_least_loaded_core() {
        let mut m = ColorManager::new(cfg(8, 2, 1)).unwrap();
        assert_eq!(m.add_app(None, None).unwrap(), (0, ids("0-3")));
        assert_eq!(m.add_app(None, None).unwrap(), (1, ids("4-7")));
        assert_eq!(m.add_app(None, None).unwrap(), (0, ids("0-3")));
        assert_eq!(m.add_app(Some(0), None).unwrap(), (0, ids("0-3")));
        assert_eq!(m.add_app(None, None).unwrap(), (1, ids("4-7")));
        assert_eq!(m.hotness(0), 3);
        assert_eq!(m.hotness(5), 2);
    }

    /// A hand-worked run of Algorithm 1 on 2 cores and 8 colors
    /// (sections 0-3 and 4-7), UNIT = 1, Low = 0.1, High = 0.5.
    ///
    /// Apps: A on core 0, B on core 1, C on core 0 (over-committed: A and C
    /// share section 0-3 and never run at once).
    ///
    /// 1. A misses 80%: nobody is cold, so A only raises isHot.
    /// 2. B misses 5%: isHot is set, so B gives up its local color with the
    ///    largest remote hotness. Colors 4-7 have remote hotness 0 for B
    ///    (A and C own only 0-3), so the lowest, 4, goes. isHot clears,
    ///    isCold is set.
    /// 3. A misses 80% again: isCold is set. A owns its whole section, so
    ///    it needs a remote color: the one with the smallest global hotness
    ///    among 4-7. Color 4 now has 0 owners (B dropped it), 5-7 have 1:
    ///    A gets 4. isCold clears.
    /// 4. C misses 80%: nobody is cold: isHot again, nothing moves.
    /// 5. B misses 2%: B gives up a local color; remote hotness for B is 0
    ///    for 5, 6 and 7 (A owns 4, which B no longer has), so 5 goes.
    /// 6. C misses 80%: gets the remote color with the smallest global
    ///    hotness: 5 (0 owners) before 4 (A owns it) and 6, 7 (B owns them).
    /// 7. A misses 5% with isHot clear: nothing happens.
    /// 8. C misses 90%, isCold clear: isHot. Then A misses 5%: A has a
    ///    remote color (4), so it gives up its hottest remote color: 4
    ///    (1 owner) is its only remote color.
    #[test]
    fn hand_worked_example_of_algorithm_1() {
        let mut m = ColorManager::new(cfg(8, 2, 1)).unwrap();
        let (a, b, c) = (0, 1, 2);
        m.add_app(Some(0), None).unwrap();
        m.add_app(Some(1), None).unwrap();
        m.add_app(Some(0), None).unwrap();
        let step = |m: &mut ColorManager, app, refs, misses| m.monitor(app, refs, misses).unwrap();

        assert!(step(&mut m, a, 1000, 800).is_empty());
        assert!(m.is_hot() && !m.is_cold());

        let ch = step(&mut m, b, 1000, 50);
        assert_eq!((ch.added, ch.removed), (ids(""), ids("4")));
        assert!(!m.is_hot() && m.is_cold());
        assert_eq!(m.colors_of(b), ids("5-7"));

        let ch = step(&mut m, a, 1000, 800);
        assert_eq!((ch.added, ch.removed), (ids("4"), ids("")));
        assert!(!m.is_hot() && !m.is_cold());
        assert_eq!(m.colors_of(a), ids("0-4"));

        assert!(step(&mut m, c, 1000, 800).is_empty());
        assert!(m.is_hot());

        let ch = step(&mut m, b, 1000, 20);
        assert_eq!(ch.removed, ids("5"));
        assert_eq!(m.colors_of(b), ids("6-7"));

        let ch = step(&mut m, c, 1000, 800);
        assert_eq!(ch.added, ids("5"));
        assert_eq!(m.colors_of(c), ids("0-3,5"));

        assert!(step(&mut m, a, 1000, 50).is_empty());

        assert!(step(&mut m, c, 1000, 900).is_empty());
        assert!(m.is_hot());
        let ch = step(&mut m, a, 1000, 50);
        assert_eq!(ch.removed, ids("4"));
        assert_eq!(m.colors_of(a), ids("0-3"));
        assert_eq!(m.hotness(4), 0);
    }

    #[test]
    fn few_references_count_as_no_misses() {
        let mut m = ColorManager::new(cfg(8, 2, 1)).unwrap();
        m.add_app(Some(0), None).unwrap();
        // 99 references < min-references 100: cmr = 0, not hot.
        assert!(m.monitor(0, 99, 99).unwrap().is_empty());
        assert!(!m.is_hot());
    }

    #[test]
    fn local_victims_prefer_colors_shared_with_other_cores() {
        let mut m = ColorManager::new(cfg(8, 2, 2)).unwrap();
        m.add_app(Some(0), None).unwrap(); // A: 0-3
        m.add_app(Some(1), None).unwrap(); // B: 4-7
                                           // B reaches into A's section: needs the whole local section first.
        m.is_cold = true;
        let ch = m.alloc_colors(1, 2).unwrap();
        // B owns its section, so it takes the coldest remote colors: 0-3
        // all have global hotness 1, so the lowest two.
        assert_eq!(ch, ids("0-1"));
        // A is asked for victims: local colors with the largest remote
        // hotness are 0 and 1 (B owns them).
        m.is_hot = true;
        let ch = m.monitor(0, 1000, 0).unwrap();
        assert_eq!(ch.removed, ids("0-1"));
        assert_eq!(m.colors_of(0), ids("2-3"));
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let mut c = cfg(8, 2, 1);
        c.thresholds = Thresholds {
            low: 0.6,
            high: 0.5,
        };
        let e = ColorManager::new(c).unwrap_err().to_string();
        assert!(
            e.contains("thresholds.low") && e.contains("at most high"),
            "{e}"
        );
        let e = ColorManager::new(cfg(8, 2, 9)).unwrap_err().to_string();
        assert!(e.contains("unit"), "{e}");
        let e = ColorManager::new(cfg(1, 2, 1)).unwrap_err().to_string();
        assert!(e.contains("colors"), "{e}");
        let mut m = ColorManager::new(cfg(8, 2, 1)).unwrap();
        let e = m.add_app(Some(2), None).unwrap_err().to_string();
        assert!(e.contains("app[0].core"), "{e}");
        let t = Thresholds {
            low: 0.2,
            high: 1.5,
        };
        let e = m.add_app(None, Some(t)).unwrap_err().to_string();
        assert!(e.contains("app[0].thresholds.high"), "{e}");
        assert!(m.monitor(3, 1, 1).is_err());
    }

    proptest! {
        /// Ownership counts stay consistent, every app keeps a color, and
        /// added colors were not owned before (removed ones were).
        #[test]
        fn ownership_stays_consistent(
            cores in 1u32..4, colors_per in 1u32..6, n_apps in 1usize..7, unit in 1u32..3,
            steps in proptest::collection::vec((0usize..7, 0u64..1000), 1..60),
        ) {
            let colors = cores * colors_per;
            let mut m = ColorManager::new(cfg(colors, cores, unit.min(colors))).unwrap();
            for _ in 0..n_apps { m.add_app(None, None).unwrap(); }
            for (app, misses) in steps {
                let app = app % n_apps;
                let before = m.colors_of(app);
                let ch = m.monitor(app, 1000, misses).unwrap();
                for c in ch.added.iter() { prop_assert!(!before.contains(c)); }
                for c in ch.removed.iter() { prop_assert!(before.contains(c)); }
                for c in 0..colors {
                    let n = (0..n_apps).filter(|&a| m.colors_of(a).contains(c)).count() as u32;
                    prop_assert_eq!(n, m.hotness(c));
                }
                for a in 0..n_apps { prop_assert!(!m.colors_of(a).is_empty()); }
            }
        }
    }
}
