//! The qemu-user TCG plugin of the qemu capture route: its C source, the
//! plugin API version it must declare for a given QEMU, and building it
//! once into a cache directory.
//!
//! The source (`crates/capture/qemu-plugin/cachepart_plugin.c`, with the
//! header it shares with cpgrind, `crates/capture/include/cp_gap.h`, put
//! in place of its `#include` line so that it is one file) is compiled
//! into this crate and written out, then built with
//! `gcc -O2 -shared -fPIC -fvisibility=hidden -DCP_PLUGIN_API=N` the first
//! time a capture needs it. The shared object is named after the API
//! version and a hash of the source, so a changed source or another QEMU
//! builds a new one, and it is renamed into place only once complete, so
//! concurrent captures never load a half-written plugin; the temporaries
//! of a build (source and shared object) are removed whatever happens.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;

use crate::error::{CaptureError, CaptureResult};
use crate::process::tie;

/// The C header both capture tools include: the records of an instruction
/// gap, as `Record::after_gap` writes them.
pub(crate) const GAP_HEADER: &str = include_str!("../include/cp_gap.h");

/// The plugin's own file, which includes [`GAP_HEADER`].
const PLUGIN_C: &str = include_str!("../qemu-plugin/cachepart_plugin.c");

/// The line of [`PLUGIN_C`] that includes [`GAP_HEADER`].
const GAP_INCLUDE: &str = "#include \"cp_gap.h\"\n";

/// The plugin's C source, one self-contained file: [`PLUGIN_C`] with
/// [`GAP_HEADER`] in place of its `#include` line.
pub(crate) static SOURCE: LazyLock<String> = LazyLock::new(|| {
    assert!(
        PLUGIN_C.contains(GAP_INCLUDE),
        "cachepart_plugin.c no longer includes cp_gap.h"
    );
    PLUGIN_C.replacen(GAP_INCLUDE, GAP_HEADER, 1)
});

/// The directory where the built qemu plugin is cached when
/// [`CaptureOptions::plugin_dir`](crate::CaptureOptions::plugin_dir) is not
/// set: `$CACHEPART_CACHE_DIR/qemu-plugin`, else
/// `$XDG_CACHE_HOME/cachepart/qemu-plugin`, else
/// `$HOME/.cache/cachepart/qemu-plugin`, else `cachepart-qemu-plugin` in
/// the system temporary directory.
pub fn default_plugin_dir() -> PathBuf {
    cache_dir("qemu-plugin")
}

/// `NAME` in cachepart's cache directory: `$CACHEPART_CACHE_DIR/NAME`,
/// else `$XDG_CACHE_HOME/cachepart/NAME`, else
/// `$HOME/.cache/cachepart/NAME`, else `cachepart-NAME` in the system
/// temporary directory.
pub(crate) fn cache_dir(name: &str) -> PathBuf {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("CACHEPART_CACHE_DIR") {
        return PathBuf::from(d).join(name);
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("cachepart").join(name);
    }
    if let Some(h) = var("HOME") {
        return PathBuf::from(h).join(".cache").join("cachepart").join(name);
    }
    std::env::temp_dir().join(format!("cachepart-{name}"))
}

/// The `major.minor` of a `qemu-x86_64 --version` first line, e.g.
/// `qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)`.
pub(crate) fn qemu_release(version_line: &str) -> Option<(u32, u32)> {
    let rest = version_line.split(" version ").nth(1)?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The plugin API version to declare for a QEMU release: QEMU 4.2 to 8.1
/// accept version 1 (7.2 accepts 0 and 1 only); from 8.2 on, the oldest
/// version accepted is 2, and the calls this plugin makes are unchanged.
pub(crate) fn plugin_api(release: (u32, u32)) -> u32 {
    if release < (8, 2) {
        1
    } else {
        2
    }
}

/// FNV-1a, 64 bits: names the plugin after its source.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The plugin for API version `api` in `dir`, built with `cc` if it is not
/// there yet.
pub(crate) fn ensure_plugin(cc: &Path, dir: &Path, api: u32) -> CaptureResult<PathBuf> {
    let stem = format!(
        "cachepart_plugin-api{api}-{:016x}",
        fnv1a64(SOURCE.as_bytes())
    );
    let so = dir.join(format!("{stem}.so"));
    if so.is_file() {
        return Ok(so);
    }
    let fail = |reason: String| CaptureError::PluginBuild {
        path: so.clone(),
        reason,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("creating {}: {e}", dir.display())))?;
    let src = dir.join(format!("{stem}.c"));
    let temp_in_dir = |suffix: &str| {
        tempfile::Builder::new()
            .prefix(&format!(".{stem}-"))
            .suffix(suffix)
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(dir)
    };
    temp_in_dir(".c")
        .and_then(|mut f| {
            f.write_all(SOURCE.as_bytes())?;
            f.into_temp_path().persist(&src).map_err(|e| e.error)
        })
        .map_err(|e| fail(format!("writing {}: {e}", src.display())))?;
    let tmp_so = temp_in_dir(".so")
        .map_err(|e| {
            fail(format!(
                "creating a temporary file in {}: {e}",
                dir.display()
            ))
        })?
        .into_temp_path();
    let mut define = OsString::from("-DCP_PLUGIN_API=");
    define.push(api.to_string());
    let mut compile = Command::new(cc);
    compile
        .args(["-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall"])
        .arg(define)
        .arg("-o")
        .arg(&tmp_so)
        .arg(&src)
        .arg("-lpthread");
    run_cc(
        cc,
        &mut compile,
        |program, source| CaptureError::CompilerMissing { program, source },
        &fail,
    )?;
    let tmp_name = tmp_so.to_path_buf();
    tmp_so
        .persist(&so)
        .map_err(|e| fail(format!("renaming {}: {}", tmp_name.display(), e.error)))?;
    Ok(so)
}

/// Runs one step of `cc` (the qemu plugin's build, or a compile or link
/// of the valgrind tool) with no input: `missing` makes the error when
/// `cc` cannot be started, `fail` the one carrying the compiler's message
/// when it exits non-zero.
pub(crate) fn run_cc(
    cc: &Path,
    cmd: &mut Command,
    missing: impl FnOnce(PathBuf, std::io::Error) -> CaptureError,
    fail: &dyn Fn(String) -> CaptureError,
) -> CaptureResult<()> {
    let out = tie(cmd)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| missing(cc.to_path_buf(), source))?;
    if !out.status.success() {
        return Err(fail(format!(
            "{} exited with {}: {}",
            cc.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_source_holds_the_gap_header_in_place_of_its_include() {
        assert!(!SOURCE.contains("#include \"cp_gap.h\""));
        assert_eq!(SOURCE.matches(GAP_HEADER).count(), 1);
        let at = SOURCE.find(GAP_HEADER).unwrap();
        // before the plugin's first use of it, after the system headers
        assert!(at > SOURCE.find("#include <unistd.h>").unwrap());
        assert!(at < SOURCE.find("cp_after_gap(rec, gap, emit, c)").unwrap());
    }

    #[test]
    fn releases_are_parsed_from_the_version_line() {
        assert_eq!(
            qemu_release("qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"),
            Some((7, 2))
        );
        assert_eq!(qemu_release("qemu-aarch64 version 10.0.2"), Some((10, 0)));
        assert_eq!(qemu_release("qemu-x86_64 version x"), None);
        assert_eq!(qemu_release("something else"), None);
    }

    #[test]
    fn api_version_follows_the_release() {
        assert_eq!(plugin_api((7, 2)), 1);
        assert_eq!(plugin_api((8, 1)), 1);
        assert_eq!(plugin_api((8, 2)), 2);
        assert_eq!(plugin_api((10, 0)), 2);
    }

    #[test]
    fn a_missing_compiler_is_a_typed_error() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("plugin");
        let err = ensure_plugin(Path::new("/nonexistent/gcc"), &dir, 1).unwrap_err();
        assert!(
            matches!(err, CaptureError::CompilerMissing { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("Debian package `gcc`"), "{err}");
        // only the source is left, under its final name
        assert_eq!(listing(&dir).len(), 1, "{:?}", listing(&dir));
    }

    #[test]
    fn a_compiler_failure_carries_its_message() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("plugin");
        // `false` runs but fails: the build error names the plugin
        let err = ensure_plugin(Path::new("false"), &dir, 1).unwrap_err();
        assert!(matches!(err, CaptureError::PluginBuild { .. }), "{err:?}");
        assert!(
            err.to_string().contains("building the qemu plugin"),
            "{err}"
        );
        // nothing half-built is left behind: only the source
        let names = listing(&dir);
        assert!(
            names.len() == 1 && names[0].ends_with(".c") && !names[0].starts_with('.'),
            "{names:?}"
        );
    }
}
