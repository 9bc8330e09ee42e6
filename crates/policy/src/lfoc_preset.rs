//! LFOC's two parameter sets: the paper's and PBBCache's.
//!
//! LFOC (García-García et al., ICPP 2019) prints its classification in
//! Table 1 and its clustering in Algorithm 1; PBBCache, the simulator the
//! paper's authors published, runs a variant of both. They differ in three
//! places, and a preset names each side:
//!
//! | | `paper` (default) | `pbbcache` |
//! |---|---|---|
//! | streaming needs LLCMPKC at or above (Table 1) | 10 | 14 |
//! | streaming apps go to | up to `max_streaming_ways` (2) **1-way clusters**, each with up to `r = ceil(n_streaming / clusters)` of them (Algorithm 1) | **one cluster** of `min(ceil(n_streaming / max_streaming), max_streaming_ways)` ways |
//! | light apps admitted per free streaming slot | `gaps_per_streaming` = 3 | 2 |
//!
//! In both, a way holds `max_streaming` (5) streaming apps before another
//! streaming way is reserved, the streaming ways are capped at
//! `max_streaming_ways` (2), the free slots of a streaming way are
//! `max_streaming` minus the streaming apps in it, and the light apps left
//! over go round-robin over the sensitive clusters.
//!
//! Two lines of Algorithm 1 as printed cannot run as written, and the
//! `paper` preset reads them as PBBCache does: `ways_for_streaming = min(2,
//! floor(|ST| / max_streaming_way))` reserves no way at all for fewer than
//! five streaming apps (which would then belong to no cluster), so the
//! floor is a ceiling; and `gaps_available = r - |TargetC| *
//! gaps_per_streaming` never admits a light app to a cluster already
//! holding `r` streaming apps (nor does the loop advance `idx`), so a
//! cluster's free slots are `max_streaming` minus its streaming apps, each
//! admitting `gaps_per_streaming` light apps. PBBCache's outputs are
//! reproduced exactly under `pbbcache` (the parity tests run it).

use cachepart_units::Kind as _;
use serde::{Deserialize, Serialize};

/// A named set of LFOC parameters (see the module docs).
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[strum(
    parse_err_ty = UnknownPreset,
    parse_err_fn = UnknownPreset::new
)]
pub enum LfocPreset {
    /// Table 1 and Algorithm 1 as the paper prints them.
    #[default]
    Paper,
    /// PBBCache's code, whose outputs the parity tests pin.
    Pbbcache,
}

/// An unknown preset name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown LFOC preset {0:?}: expected one of {names}",
    names = LfocPreset::names().join(", ")
)]
pub struct UnknownPreset(pub String);

impl UnknownPreset {
    /// The error for the name `s`.
    fn new(s: &str) -> UnknownPreset {
        UnknownPreset(s.to_string())
    }
}

/// How the streaming apps are clustered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StreamingLayout {
    /// One 1-way cluster per reserved way, `r` streaming apps each
    /// (Algorithm 1).
    OneWayClusters,
    /// One cluster spanning every reserved way (PBBCache).
    OneCluster,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AppClass, Lfoc};
    use cachepart_machine::AppCurves;
    use cachepart_testkit::curves_from_ipc;

    fn app(sd: &[f64], mpkc: f64) -> AppCurves {
        let ipc: Vec<f64> = sd.iter().map(|s| 1.0 / s).collect();
        curves_from_ipc("a", &ipc, &vec![mpkc; sd.len()])
    }

    /// (apps, ways) of each cluster of LFOC's plan under `lfoc`.
    fn shape(lfoc: &Lfoc, curves: &[AppCurves], ways: u32) -> Vec<(Vec<usize>, u32)> {
        let classes = lfoc.classes(curves);
        let plan = lfoc.plan_for(curves, &classes, ways).unwrap();
        plan.clusters
            .iter()
            .map(|c| (c.apps.clone(), c.mask.count()))
            .collect()
    }

    #[test]
    fn the_streaming_threshold_is_10_in_the_paper_and_14_in_pbbcache() {
        let flat_12 = app(&[1.02, 1.01, 1.0, 1.0], 12.0);
        let paper = Lfoc::preset(LfocPreset::Paper);
        let pbb = Lfoc::preset(LfocPreset::Pbbcache);
        assert_eq!(
            paper.classes(std::slice::from_ref(&flat_12)),
            [AppClass::Streaming]
        );
        assert_eq!(
            pbb.classes(std::slice::from_ref(&flat_12)),
            [AppClass::Light]
        );
        assert_eq!(paper.classify_app(&flat_12).streaming_ways, Some(1));
        assert_eq!(pbb.classify_app(&flat_12).streaming_ways, None);
    }

    /// Six streaming apps, one sensitive and 20 light ones on 11 ways:
    /// the paper makes two 1-way clusters of three streaming apps, each
    /// with room for 2 more streaming apps, so 2 x 3 light apps each;
    /// PBBCache one 2-way cluster of six with room for 4, so 4 x 2 light
    /// apps.
    #[test]
    fn streaming_clusters_and_light_gaps_follow_the_preset() {
        let mut curves = vec![app(
            &[1.5, 1.3, 1.2, 1.1, 1.05, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
            5.0,
        )];
        let flat = [1.02, 1.01, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        curves.extend((0..6).map(|_| app(&flat, 30.0)));
        curves.extend((0..20).map(|_| app(&flat, 0.5)));
        let paper = shape(&Lfoc::preset(LfocPreset::Paper), &curves, 11);
        assert_eq!(paper.len(), 3, "{paper:?}");
        assert_eq!((paper[0].0[0], paper[0].1), (0, 9));
        assert_eq!(paper[1].0[..3], [1, 2, 3]);
        assert_eq!(paper[1].0.len(), 3 + 6);
        assert_eq!(paper[1].1, 1);
        assert_eq!(paper[2].0[..3], [4, 5, 6]);
        assert_eq!((paper[2].0.len(), paper[2].1), (3 + 6, 1));
        // the 8 light apps left join the sensitive cluster
        assert_eq!(paper[0].0.len(), 1 + 8);
        let pbb = shape(&Lfoc::preset(LfocPreset::Pbbcache), &curves, 11);
        assert_eq!(pbb.len(), 2, "{pbb:?}");
        assert_eq!(pbb[1].0[..6], [1, 2, 3, 4, 5, 6]);
        assert_eq!((pbb[1].0.len(), pbb[1].1), (6 + 8, 2));
        assert_eq!((pbb[0].0.len(), pbb[0].1), (1 + 12, 9));
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for p in [LfocPreset::Paper, LfocPreset::Pbbcache] {
            assert_eq!(p.name().parse::<LfocPreset>(), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        let e = "papr".parse::<LfocPreset>().unwrap_err().to_string();
        assert!(e.contains("papr") && e.contains("paper, pbbcache"), "{e}");
        assert_eq!(LfocPreset::default(), LfocPreset::Paper);
    }
}
