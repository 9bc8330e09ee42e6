//! The per-app keys of a scenario: each `[[app]]` checked into the
//! simulator's [`AppSpec`] (its trace source, core, timing, way mask,
//! page colors, instruction limit, duty cycle, prefetchers and idle
//! quantum) and its color set, each refusal naming `app[i] (name).key`;
//! then the checks across apps (exclusive way masks).

use std::path::Path;

use cachepart_machine::Duty;
use cachepart_sim::memory::{AllocatorKind, ColorLayout};
use cachepart_sim::prefetch::Word;
use cachepart_sim::system::{check_throttle, AppSpec, AppTiming, PlatformConfig};
use cachepart_units::{check_exclusive, GroupMode, IdSet, WayMask};

use super::platform::prefetch_word;
use super::source::trace_source;
use super::{FieldError, ScenarioFile};
use crate::error::Error;
use crate::registry::Algorithm;

/// Each app of `file` on `platform`, with its color set if it has one;
/// `policy` is the scenario's (which then decides the masks), relative
/// paths are taken from `base`.
pub(super) fn build(
    file: &ScenarioFile,
    platform: &PlatformConfig,
    policy: Option<Algorithm>,
    layout: &ColorLayout,
    base: Option<&Path>,
    err: FieldError<'_>,
) -> Result<(Vec<AppSpec>, Vec<Option<IdSet>>), Error> {
    let rules = platform.mask_rules();
    let mut apps = Vec::with_capacity(file.apps.len());
    let mut colors = Vec::with_capacity(file.apps.len());
    let mut names = std::collections::BTreeSet::new();
    for (i, a) in file.apps.iter().enumerate() {
        let field = |f: &str| format!("app[{i}] ({}).{f}", a.name);
        if a.name.trim().is_empty() {
            return Err(err(
                format!("app[{i}].name"),
                format!("{:?} is empty: give the app a name for the reports", a.name),
            ));
        }
        if !names.insert(a.name.clone()) {
            return Err(err(
                format!("app[{i}].name"),
                format!(
                    "{:?} is used by an earlier app; names must be unique",
                    a.name
                ),
            ));
        }
        let source = trace_source(a, base, &field, err)?;
        let core = a.core.unwrap_or(i as u32 % platform.cores);
        if core >= platform.cores {
            return Err(err(
                field("core"),
                format!("{core}: the platform has cores 0..{} ", platform.cores - 1),
            ));
        }
        let d = AppTiming::default();
        let timing = AppTiming {
            base_cpi: a.base_cpi.unwrap_or(d.base_cpi),
            mlp: a.mlp.unwrap_or(d.mlp),
        };
        timing
            .check(&a.name)
            .map_err(|e| err(field("timing"), e.to_string()))?;
        let llc_mask = match &a.ways {
            None => None,
            Some(_) if policy.is_some() => {
                return Err(err(
                    field("ways"),
                    format!(
                        "the scenario's policy ({}) decides the masks; remove ways or the policy",
                        file.policy.as_deref().unwrap_or_default()
                    ),
                ))
            }
            Some(text) => {
                let m: WayMask = text
                    .parse()
                    .map_err(|e| err(field("ways"), format!("{e}")))?;
                rules
                    .check(m)
                    .map_err(|e| err(field("ways"), e.to_string()))?;
                Some(m)
            }
        };
        let color_set = match &a.colors {
            None => None,
            Some(_) if file.coloring.is_some() => {
                return Err(err(
                    field("colors"),
                    "the [coloring] policy decides the colors; remove colors or the policy"
                        .into(),
                ))
            }
            Some(text) if text.trim().is_empty() => {
                return Err(err(
                    field("colors"),
                    format!("{text:?} is an empty color set: give at least one color (range syntax, 0-15,32) or remove colors"),
                ))
            }
            Some(text) => {
                if platform.memory.allocator == AllocatorKind::Buddy {
                    return Err(err(
                        field("colors"),
                        "page colors need a color-aware allocator: set allocator = \"tam\" or \"coloris\" in the scenario".into(),
                    ));
                }
                let set = layout
                    .parse_colors(text)
                    .map_err(|e| err(field("colors"), e.to_string()))?;
                Some(set)
            }
        };
        let instructions = a.instructions.or(file.instructions);
        if instructions == Some(0) {
            return Err(err(field("instructions"), "must be positive".into()));
        }
        let duty = a.duty.unwrap_or(Duty::FULL);
        let prefetch_word = match &a.prefetchers {
            None => None,
            Some(k) if k == "off" => Some(Word::ALL_OFF.bits()),
            Some(k) => prefetch_word(k, platform).map_err(|e| err(field("prefetchers"), e))?,
        };
        check_throttle(platform, duty, prefetch_word).map_err(|(f, why)| err(field(f), why))?;
        if let Some(q) = &a.quantum {
            q.check()
                .map_err(|(f, why)| err(field(&format!("quantum.{f}")), why))?;
            let shared = file
                .apps
                .iter()
                .enumerate()
                .filter(|&(j, b)| j != i && b.core.unwrap_or(j as u32 % platform.cores) == core)
                .map(|(j, b)| format!("app[{j}] ({})", b.name))
                .collect::<Vec<_>>();
            if !shared.is_empty() {
                return Err(err(
                    field("quantum"),
                    format!(
                        "core {core} also runs {}; an idle process needs its app alone on the core",
                        shared.join(", ")
                    ),
                ));
            }
        }
        apps.push(AppSpec {
            name: a.name.clone(),
            source,
            timing,
            core,
            instructions,
            restart: (instructions.is_some() || file.method.replays()) && file.restart,
            llc_mask,
            huge_pages: a.huge_pages.unwrap_or_default(),
            duty,
            prefetch_word,
            idle_quantum: a.quantum,
        });
        colors.push(color_set);
    }
    Ok((apps, colors))
}

/// The checks across apps: no mask overlaps an exclusive one, and an
/// exclusive app has a mask.
pub(super) fn check_groups(
    file: &ScenarioFile,
    apps: &[AppSpec],
    err: FieldError<'_>,
) -> Result<(), Error> {
    let groups: Vec<(&str, WayMask, GroupMode)> = file
        .apps
        .iter()
        .zip(apps)
        .filter_map(|(e, a)| a.llc_mask.map(|m| (e.name.as_str(), m, e.mask_mode)))
        .collect();
    check_exclusive(&groups).map_err(|e| err("app.ways".into(), e.to_string()))?;
    if let Some((i, e)) = file
        .apps
        .iter()
        .enumerate()
        .find(|(_, e)| e.mask_mode == GroupMode::Exclusive && e.ways.is_none())
    {
        return Err(err(
            format!("app[{i}] ({}).mask-mode", e.name),
            "exclusive needs a way mask (ways = \"0x...\")".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{tmp, write, GEN};
    use super::super::Scenario;
    use cachepart_sim::memory::AllocatorKind;

    #[test]
    fn colors_need_and_get_a_color_aware_allocator() {
        let dir = tmp("colors");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let p = write(
            d,
            "s.toml",
            "platform = \"xeon-e5506\"\nallocator = \"tam\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncolors=\"0-15\"\n",
        );
        let s = Scenario::load(&p).unwrap();
        assert_eq!(s.colors[0].as_ref().unwrap().len(), 16);
        assert_eq!(s.platform.memory.allocator, AllocatorKind::Tam);
        let p = write(
            d,
            "t.toml",
            "platform = \"xeon-e5506\"\nallocator = \"tam\"\n[[app]]\nname=\"a\"\ngenerator=\"light.toml\"\ncolors=\"0-64\"\n",
        );
        let e = Scenario::load(&p).unwrap_err().to_string();
        assert!(e.contains("app[0] (a).colors") && e.contains("64"), "{e}");
    }
}
