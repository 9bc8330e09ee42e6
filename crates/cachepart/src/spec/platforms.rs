//! The simulator's built-in platform files (`platforms/*.toml` in the
//! repository, compiled in) and how a scenario names a platform: a
//! built-in name or the path of a TOML/JSON platform file.

use std::path::{Path, PathBuf};

use cachepart_sim::system::{PlatformConfig, SystemError};
use cachepart_sim::Mode;

use crate::error::Error;

/// Built-in platforms: name, the paper whose machine it models, file text.
pub const BUILTIN: [(&str, &str, &str); 9] = [
    (
        "xeon-5160",
        "Zhang et al. (execution throttling): 2 cores, 4 MiB 16-way shared L2",
        include_str!("../../../../platforms/xeon-5160.toml"),
    ),
    (
        "xeon-e5506",
        "COLORIS: 4 cores, 4 MiB 16-way L3, 64 colors",
        include_str!("../../../../platforms/xeon-e5506.toml"),
    ),
    (
        "sandybridge-8m",
        "SWAP: 4 cores, 8 MiB 16-way L3, superpage TLBs",
        include_str!("../../../../platforms/sandybridge-8m.toml"),
    ),
    (
        "xeon-gold-6138",
        "LFOC / PBBCache: 20 cores, 27.5 MiB 11-way LLC in 20 slices",
        include_str!("../../../../platforms/xeon-gold-6138.toml"),
    ),
    (
        "xeon-gold-6138-small",
        "the Gold 6138 with L2 and LLC scaled by 1/8 (3.4375 MiB, 11 ways): the built-in Debian profiles",
        include_str!("../../../../platforms/xeon-gold-6138-small.toml"),
    ),
    (
        "xeon-5160-ooo",
        "xeon-5160 with the out-of-order window (ROB 96, 8 fill buffers, 20-entry store buffer)",
        include_str!("../../../../platforms/xeon-5160-ooo.toml"),
    ),
    (
        "xeon-gold-6138-ooo",
        "xeon-gold-6138 with the out-of-order window (ROB 224, 10 fill buffers, 56-entry store buffer)",
        include_str!("../../../../platforms/xeon-gold-6138-ooo.toml"),
    ),
    (
        "power5",
        "Tam et al.: 2 cores, 1.875 MB 10-way L2 in 3 slices, 16 colors",
        include_str!("../../../../platforms/power5.toml"),
    ),
    (
        "power5-l3",
        "Tam et al.: power5 with the 36 MB 12-way L3 victim cache (partitioned by the colors) and Table I's latencies",
        include_str!("../../../../platforms/power5-l3.toml"),
    ),
];

/// The built-in platform `name`, if there is one.
pub fn builtin(name: &str) -> Option<Result<PlatformConfig, Error>> {
    BUILTIN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(n, _, text)| {
            PlatformConfig::from_toml_str(text)
                .map_err(|e| Error::config(format_args!("built-in platform {n}"), "", e))
        })
}

/// A platform by built-in name, or by path (relative paths are taken
/// from `base`, the directory of the file that names it); `-` reads a
/// TOML platform from standard input.
pub fn resolve(name_or_path: &str, base: Option<&Path>) -> Result<PlatformConfig, Error> {
    if let Some(p) = builtin(name_or_path) {
        return p;
    }
    let stdin = name_or_path == "-";
    let looks_like_path = stdin
        || name_or_path.contains('/')
        || name_or_path.ends_with(".toml")
        || name_or_path.ends_with(".json");
    if !looks_like_path {
        let names: Vec<&str> = BUILTIN.iter().map(|(n, _, _)| *n).collect();
        return Err(Error::config(
            format_args!("platform {name_or_path:?}"),
            "",
            format_args!(
                "not a built-in platform ({}) nor a .toml/.json file",
                names.join(", ")
            ),
        ));
    }
    let path = joined(name_or_path, base);
    let p = PlatformConfig::load(&path).map_err(|e| match e {
        SystemError::Io { path, source } => Error::Io { path, source },
        e => Error::config("", "", e),
    })?;
    // the parts first: a bad LLC would otherwise surface as a bad
    // mask-min-bits range
    check_parts(&p).map_err(|e| Error::config_file(&path, e))?;
    p.check().map_err(|e| Error::config_file(&path, e))?;
    Ok(p)
}

/// The file a platform named `name_or_path` is read from (relative
/// paths are taken from `base`), or `None` for a built-in name.
pub fn file_path(name_or_path: &str, base: Option<&Path>) -> Option<PathBuf> {
    let is_builtin = BUILTIN.iter().any(|(n, _, _)| *n == name_or_path);
    (!is_builtin).then(|| joined(name_or_path, base))
}

/// `name_or_path` taken from `base` when relative (`-` as is).
fn joined(name_or_path: &str, base: Option<&Path>) -> PathBuf {
    match base {
        Some(b) if name_or_path != "-" && Path::new(name_or_path).is_relative() => {
            b.join(name_or_path)
        }
        _ => Path::new(name_or_path).to_path_buf(),
    }
}

/// What [`PlatformConfig::check`] leaves to the parts' constructors, checked
/// here so that a platform file's error names the file and the table
/// (`core.l1d`, `llc`, `memory.size-bytes`) rather than surfacing later in
/// the scenario that uses it: every cache's geometry, the memory size.
fn check_parts(p: &PlatformConfig) -> Result<(), String> {
    let caches = [
        ("core.l1i", Some(&p.core.l1i)),
        ("core.l1d", Some(&p.core.l1d)),
        ("core.l2", p.core.l2.as_ref()),
        ("llc", Some(&p.llc)),
    ];
    let llc_line = p.llc.geometry().map_err(|e| format!("llc: {e}"))?.line();
    for (field, cache) in caches {
        if let Some(c) = cache {
            let g = c.geometry().map_err(|e| format!("{field}: {e}"))?;
            if p.core.mode == Mode::WriteBack && g.line() != llc_line {
                return Err(format!(
                    "{field}: line size {} B: the write-back hierarchy needs one line size, the LLC's {llc_line} B",
                    g.line()
                ));
            }
        }
    }
    let bytes = p.memory.size_bytes;
    if bytes == 0 || !bytes.is_multiple_of(4096) {
        return Err(format!(
            "memory.size-bytes {bytes}: expected a positive multiple of 4096 (4 KiB frames)"
        ));
    }
    Ok(())
}

/// Turns the hardware prefetchers of every run on `platform` on or off,
/// as a scenario's `prefetchers` key does: `"off"`, `"platform"` (the
/// platform's default word) or an MSR 0x1A4 word (`"0x5"`). Refused when
/// the word is malformed or the platform declares no prefetchers.
pub fn set_prefetchers(platform: &mut PlatformConfig, key: &str) -> Result<(), Error> {
    platform.prefetchers.run_word = crate::spec::scenario::prefetch_word(key, platform)
        .map_err(|e| Error::Usage(format!("prefetchers: {e}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cachepart_sim::memory::ColorLayout;

    #[test]
    fn every_builtin_platform_loads_and_builds() {
        for (name, _, _) in BUILTIN {
            let p = builtin(name).unwrap().unwrap();
            assert_eq!(p.name, name);
            p.check().unwrap();
            p.llc.geometry().unwrap();
        }
    }

    #[test]
    fn platforms_have_the_papers_color_counts() {
        let colors = |n: &str| {
            let p = builtin(n).unwrap().unwrap();
            ColorLayout::for_frames(&p.llc.geometry().unwrap()).colors()
        };
        // COLORIS: 64 colors; Zhang et al.: 64; Tam et al. (Power5): 16.
        assert_eq!(colors("xeon-e5506"), 64);
        assert_eq!(colors("xeon-5160"), 64);
        assert_eq!(colors("power5"), 16);
    }

    #[test]
    fn ooo_platforms_differ_from_theirs_only_by_the_window() {
        for (name, rob) in [("xeon-5160", 96), ("xeon-gold-6138", 224)] {
            let base = builtin(name).unwrap().unwrap();
            let mut ooo = builtin(&format!("{name}-ooo")).unwrap().unwrap();
            assert_eq!(base.timing.window, None);
            let w = ooo.timing.window.take().unwrap();
            assert_eq!(w.rob_entries, rob);
            ooo.name = base.name.clone();
            assert_eq!(ooo, base);
        }
    }

    #[test]
    fn unknown_names_list_the_builtins() {
        let e = resolve("nehalem", None).unwrap_err().to_string();
        assert!(e.contains("xeon-e5506") && e.contains("nehalem"), "{e}");
        let e = resolve("missing.toml", None).unwrap_err().to_string();
        assert!(e.contains("missing.toml"), "{e}");
    }

    #[test]
    fn prefetchers_are_set_by_name_or_word_and_refused_where_absent() {
        let mut p = builtin("xeon-gold-6138").unwrap().unwrap();
        assert_eq!(p.prefetchers.run_word, None);
        set_prefetchers(&mut p, "platform").unwrap();
        assert_eq!(p.prefetchers.run_word, Some(p.prefetchers.default_word));
        set_prefetchers(&mut p, "0x5").unwrap();
        assert_eq!(p.prefetchers.run_word, Some(5));
        set_prefetchers(&mut p, "off").unwrap();
        assert_eq!(p.prefetchers.run_word, None);
        let e = set_prefetchers(&mut p, "lots").unwrap_err().to_string();
        assert!(e.contains("prefetchers") && e.contains("lots"), "{e}");
        let mut bare = builtin("power5").unwrap().unwrap();
        assert!(bare.prefetchers.is_absent());
        let e = set_prefetchers(&mut bare, "platform")
            .unwrap_err()
            .to_string();
        assert!(e.contains("declares no prefetchers"), "{e}");
    }
}
