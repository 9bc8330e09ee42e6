//! The platform a scenario runs on: the built-in or file platform its
//! `platform` key names, with the scenario's keys that replace parts of it
//! (`allocator`, `paging-costs`, `prefetchers`, `memory-bytes`, `aging`,
//! `page-walks`, `page-table-colors`, `swap`, a `[coloring]` policy's own allocator) and its
//! seed added to the memory-aging seed.

use cachepart_units::Kind as _;
use std::path::Path;

use cachepart_sim::memory::{AllocatorKind, SwapMode};
use cachepart_sim::system::PlatformConfig;

use super::{FieldError, ScenarioFile};
use crate::error::Error;
use crate::run::coloring::ColorPolicy;
use crate::spec::platforms;

/// The platform of `file`, its relative paths taken from `base`.
pub(super) fn resolve(
    file: &ScenarioFile,
    base: Option<&Path>,
    err: FieldError<'_>,
) -> Result<PlatformConfig, Error> {
    let mut platform = platforms::resolve(&file.platform, base)
        .map_err(|e| err("platform".into(), e.to_string()))?;
    if let Some(k) = file.allocator {
        platform.memory.allocator = k;
    }
    if let Some(c) = file.paging_costs {
        c.check().map_err(|e| match e {
            // The key as the scenario writes it: paging-costs.page-in-us.
            cachepart_sim::memory::MemoryError::Config { field, reason } => err(
                format!(
                    "paging-costs.{}",
                    field.strip_prefix("costs.").unwrap_or(field)
                ),
                reason,
            ),
            e => err("paging-costs".into(), e.to_string()),
        })?;
        platform.memory.costs = c;
    }
    if let Some(p) = &file.prefetchers {
        platform.prefetchers.run_word =
            prefetch_word(p, &platform).map_err(|e| err("prefetchers".into(), e))?;
    }
    if let Some(b) = file.memory_bytes {
        if !b.is_power_of_two() || b < 1 << 21 {
            return Err(err(
                "memory-bytes".into(),
                format!("{b} is not a power of two of at least 2 MiB"),
            ));
        }
        platform.memory.size_bytes = b;
    }
    if file.aging == Some(false) {
        platform.memory.aging = None;
    }
    if let Some(w) = file.page_walks {
        platform.tlb.walk = w;
    }
    if let Some(c) = file.page_table_colors {
        platform.memory.page_table_colors = c;
    }
    if let Some(k) = &file.swap {
        apply_swap(k, &mut platform).map_err(|e| err("swap".into(), e))?;
    }
    if let Some(c) = &file.coloring {
        match file.allocator {
            Some(AllocatorKind::Buddy) => {
                return Err(err(
                    "allocator".into(),
                    "a [coloring] policy needs a color-aware allocator (tam or coloris)".into(),
                ))
            }
            Some(_) => {}
            None if platform.memory.allocator == AllocatorKind::Buddy => {
                // The policy's own allocator.
                // (An unknown policy is refused later, by the section's
                // check.)
                platform.memory.allocator = ColorPolicy::from_name(&c.policy)
                    .map_or(AllocatorKind::Coloris, ColorPolicy::allocator);
            }
            None => {}
        }
    }
    // The scenario's seed also ages memory differently, so another seed
    // gives other physical pages (and colors).
    if let Some(a) = &mut platform.memory.aging {
        a.seed = a.seed.wrapping_add(file.seed);
    }
    Ok(platform)
}

/// The values of a scenario's `swap` key.
#[cachepart_units::kind]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SwapKey {
    /// The swap off.
    Off,
    /// The swap on, in the platform's mode.
    Platform,
    /// The swap on, wired.
    Static,
    /// The swap on, configurable.
    Configurable,
}

/// Turns the platform's swap on or off as a scenario's `swap` key asks.
fn apply_swap(key: &str, platform: &mut PlatformConfig) -> Result<(), String> {
    let key = SwapKey::from_name(key)
        .ok_or_else(|| format!("{key:?}: expected {}", SwapKey::expected_quoted()))?;
    let mode = match key {
        SwapKey::Off => {
            if let Some(s) = &mut platform.swap {
                s.enabled = false;
            }
            return Ok(());
        }
        SwapKey::Platform => None,
        SwapKey::Static => Some(SwapMode::Static),
        SwapKey::Configurable => Some(SwapMode::Configurable),
    };
    let name = platform.name.clone();
    let Some(s) = &mut platform.swap else {
        return Err(format!(
            "platform {name} declares no swap (its [swap] section)"
        ));
    };
    s.enabled = true;
    if let Some(m) = mode {
        s.mode = m;
    }
    platform.swap_map().map_err(|e| e.to_string())?;
    Ok(())
}

/// The word a scenario's `prefetchers` key asks for (`None`: off).
pub(crate) fn prefetch_word(key: &str, platform: &PlatformConfig) -> Result<Option<u64>, String> {
    let word = match key {
        "off" => return Ok(None),
        "platform" => platform.prefetchers.default_word,
        w => {
            let hex = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X"));
            let parsed = match hex {
                Some(h) => u64::from_str_radix(h, 16),
                None => w.parse::<u64>(),
            };
            parsed.map_err(|_| {
                format!(
                    "{w:?}: expected \"off\", \"platform\" or an MSR 0x1A4 word such as \"0x4\""
                )
            })?
        }
    };
    cachepart_sim::prefetch::Word::new(word)?;
    if platform.prefetchers.is_absent() {
        return Err(format!(
            "platform {} declares no prefetchers (its [prefetchers] section)",
            platform.name
        ));
    }
    Ok(Some(word))
}

#[cfg(test)]
mod tests {
    use cachepart_sim::memory::{TableColors, WalkMode};

    use super::super::fixtures::{tmp, write, APP, GEN};
    use super::super::Scenario;

    #[test]
    fn memory_size_and_aging_replace_the_platform_s() {
        let dir = tmp("memory");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let app = APP;
        let p = write(
            d,
            "s.toml",
            &format!("platform = \"sandybridge-8m\"\n{app}"),
        );
        let s = Scenario::load(&p).unwrap();
        assert_eq!(s.platform.memory.size_bytes, 4 << 30);
        assert!(s.platform.memory.aging.is_some());
        let p = write(
            d,
            "t.toml",
            &format!("platform = \"sandybridge-8m\"\nmemory-bytes = 17_179_869_184\naging = false\npage-walks = \"flat\"\n{app}"),
        );
        let s = Scenario::load(&p).unwrap();
        assert_eq!(s.platform.memory.size_bytes, 16 << 30);
        assert!(s.platform.memory.aging.is_none());
        assert_eq!(s.platform.tlb.walk, WalkMode::Flat);
        let p = write(
            d,
            "u.toml",
            &format!("platform = \"sandybridge-8m\"\n{app}"),
        );
        assert_eq!(
            Scenario::load(&p).unwrap().platform.tlb.walk,
            WalkMode::Hierarchy
        );
    }

    /// A bad paging cost, in a scenario's `paging-costs` or a platform
    /// file's `memory.costs`, is refused naming the file and the key as
    /// written there, and the range expected.
    #[test]
    fn bad_paging_costs_name_the_file_and_key() {
        let dir = tmp("paging-costs");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let app = APP;
        let expected = "expected a finite number of microseconds from 0 to 1000000 (one second)";
        for (i, (cost, key)) in [
            ("page-copy-us = nan", "page-copy-us"),
            ("page-out-us = -1.0", "page-out-us"),
            ("page-in-us = inf", "page-in-us"),
            ("page-in-us = 2e6", "page-in-us"),
        ]
        .into_iter()
        .enumerate()
        {
            let name = format!("s{i}.toml");
            let p = write(
                d,
                &name,
                &format!("platform = \"xeon-5160\"\npaging-costs = {{ {cost} }}\n{app}"),
            );
            let e = Scenario::load(&p).unwrap_err().to_string();
            assert!(
                e.contains(&format!("{name}: paging-costs.{key}: "))
                    && e.contains(expected)
                    && !e.contains("costs.costs"),
                "{cost}: {e}"
            );
        }
        let base = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../platforms/xeon-5160.toml"),
        )
        .unwrap();
        write(
            d,
            "costly.toml",
            &base.replace("[memory]\n", "[memory]\ncosts = { page-in-us = -1.0 }\n"),
        );
        let p = write(d, "p.toml", &format!("platform = \"costly.toml\"\n{app}"));
        let e = Scenario::load(&p).unwrap_err().to_string();
        assert!(
            e.contains("costly.toml: memory.costs.page-in-us: -1: ") && e.contains(expected),
            "{e}"
        );
    }

    #[test]
    fn page_table_colors_replace_the_platform_s_or_are_refused_by_name() {
        let dir = tmp("ptcolors");
        let d = dir.path();
        write(d, "light.toml", GEN);
        let app = APP;
        let load = |name: &str, keys: &str| {
            let p = write(
                d,
                name,
                &format!("platform = \"sandybridge-8m\"\n{keys}{app}"),
            );
            Scenario::load(&p).map(|s| s.platform.memory.page_table_colors)
        };
        assert_eq!(load("a.toml", "").unwrap(), TableColors::Any);
        assert_eq!(
            load("o.toml", "page-table-colors = \"owner\"\n").unwrap(),
            TableColors::Owner
        );
        assert_eq!(
            load("y.toml", "page-table-colors = \"any\"\n").unwrap(),
            TableColors::Any
        );
        let e = load("b.toml", "page-table-colors = \"mine\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("b.toml") && e.contains("page-table-colors") && e.contains("owner"),
            "{e}"
        );
        // In a platform file: the memory section's key, checked as strictly.
        let base = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../platforms/sandybridge-8m.toml"),
        )
        .unwrap();
        let with = |v: &str| {
            base.replace(
                "[memory]\n",
                &format!("[memory]\npage-table-colors = {v}\n"),
            )
        };
        write(d, "owner.toml", &with("\"owner\""));
        let p = write(d, "p.toml", &format!("platform = \"owner.toml\"\n{app}"));
        assert_eq!(
            Scenario::load(&p)
                .unwrap()
                .platform
                .memory
                .page_table_colors,
            TableColors::Owner
        );
        write(d, "bad.toml", &with("\"mine\""));
        let p = write(d, "q.toml", &format!("platform = \"bad.toml\"\n{app}"));
        let e = Scenario::load(&p).unwrap_err().to_string();
        assert!(e.contains("page-table-colors") && e.contains("mine"), "{e}");
    }
}
