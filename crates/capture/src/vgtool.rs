//! cachepart's valgrind tool, cpgrind: its C source, where the valgrind
//! files it is built against live, and building it once into a cache
//! directory that valgrind can load it from.
//!
//! The source (`crates/capture/valgrind-tool/cpgrind.c`, the three
//! `cpgrind_*.h` it includes and `crates/capture/include/cp_gap.h`, which
//! it shares with the qemu plugin) is compiled into this crate and written
//! out, then compiled with gcc against valgrind's
//! tool headers and linked statically with valgrind's core, VEX and gcc
//! support libraries, the way valgrind's `Makefile.tool.am` links its own
//! tools (`-static -nodefaultlibs -nostartfiles -u _start
//! -Wl,-Ttext-segment=0x58000000`). valgrind finds a tool as
//! `$VALGRIND_LIB/TOOL-amd64-linux`, so the tool goes into a directory of
//! its own that also holds a symlink to everything else in valgrind's
//! library directory (the preloads, `default.supp`, ...): the capture runs
//! `valgrind --tool=cpgrind` with `VALGRIND_LIB` set to it.
//!
//! The directory is named after a hash of the source and valgrind's
//! version (`cpgrind-HASH`), built under a temporary name and renamed into
//! place once complete, so a changed source or another valgrind builds a
//! new one and concurrent captures never load a half-built tool; a failed
//! build removes its temporary directory.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{CaptureError, CaptureResult};
use crate::plugin::{cache_dir, fnv1a64, run_cc};

/// The tool's C source: `cpgrind.c` and the files it includes, by name.
pub(crate) const SOURCES: [(&str, &str); 5] = [
    ("cpgrind.c", include_str!("../valgrind-tool/cpgrind.c")),
    (
        "cpgrind_events.h",
        include_str!("../valgrind-tool/cpgrind_events.h"),
    ),
    (
        "cpgrind_shadow.h",
        include_str!("../valgrind-tool/cpgrind_shadow.h"),
    ),
    (
        "cpgrind_instrument.h",
        include_str!("../valgrind-tool/cpgrind_instrument.h"),
    ),
    ("cp_gap.h", crate::plugin::GAP_HEADER),
];

/// The tool's name, as given to `valgrind --tool=`.
pub(crate) const TOOL: &str = "cpgrind";

/// The platform suffix of valgrind's tool files on this machine.
const PLATFORM: &str = "amd64-linux";

/// The static libraries a tool links with, in link order.
const LIBS: [&str; 3] = [
    "libcoregrind-amd64-linux.a",
    "libvex-amd64-linux.a",
    "libgcc-sup-amd64-linux.a",
];

/// The directory where cpgrind builds are cached when
/// [`CaptureOptions::tool_dir`](crate::CaptureOptions::tool_dir) is not
/// set: `valgrind-tool` beside the qemu plugin's directory
/// (`$CACHEPART_CACHE_DIR/valgrind-tool`, else
/// `$XDG_CACHE_HOME/cachepart/valgrind-tool`, else
/// `$HOME/.cache/cachepart/valgrind-tool`).
pub fn default_tool_dir() -> PathBuf {
    cache_dir("valgrind-tool")
}

/// Where a valgrind installation keeps what a tool needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ValgrindFiles {
    /// The tool headers (`pub_tool_basics.h`, `libvex.h`, ...).
    pub(crate) include: PathBuf,
    /// The static libraries of [`LIBS`].
    pub(crate) libs: PathBuf,
    /// valgrind's library directory (`none-amd64-linux`, the preloads).
    pub(crate) libexec: PathBuf,
}

/// Finds valgrind's headers, static libraries and library directory: under
/// Debian's paths (`/usr/include/valgrind`,
/// `/usr/lib/x86_64-linux-gnu/valgrind`, `/usr/libexec/valgrind`), or
/// under the prefix of the `valgrind` program (`PREFIX/include/valgrind`,
/// `PREFIX/lib/valgrind`, `PREFIX/libexec/valgrind`).
pub(crate) fn find_valgrind_files(valgrind: &Path) -> CaptureResult<ValgrindFiles> {
    if std::env::consts::ARCH != "x86_64" || std::env::consts::OS != "linux" {
        return Err(CaptureError::ValgrindDev {
            what: format!(
                "cpgrind is built for amd64-linux only, not {}-{}",
                std::env::consts::ARCH,
                std::env::consts::OS
            ),
        });
    }
    let mut prefixes = vec![PathBuf::from("/usr")];
    if let Some(found) = crate::command::resolve_command(valgrind.as_os_str()) {
        let real = std::fs::canonicalize(&found).unwrap_or(found);
        if let Some(p) = real.parent().and_then(Path::parent) {
            if p != Path::new("/usr") {
                prefixes.push(p.to_path_buf());
            }
        }
    }
    let first =
        |cands: Vec<PathBuf>, probe: &str| cands.into_iter().find(|d| d.join(probe).is_file());
    let mut include = Vec::new();
    let mut libs = Vec::new();
    let mut libexec = Vec::new();
    for p in &prefixes {
        include.push(p.join("include/valgrind"));
        libs.push(p.join("lib/x86_64-linux-gnu/valgrind"));
        libs.push(p.join("lib/valgrind"));
        libs.push(p.join("libexec/valgrind"));
        libexec.push(p.join("libexec/valgrind"));
        libexec.push(p.join("lib/x86_64-linux-gnu/valgrind"));
        libexec.push(p.join("lib/valgrind"));
    }
    let missing = |what: &str, cands: &[PathBuf]| CaptureError::ValgrindDev {
        what: format!(
            "{what} (looked in {})",
            cands
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let include_dir = first(include.clone(), "pub_tool_tooliface.h")
        .ok_or_else(|| missing("valgrind's tool headers (pub_tool_tooliface.h)", &include))?;
    let libs_dir = first(libs.clone(), LIBS[0]).ok_or_else(|| {
        missing(
            "valgrind's static libraries (libcoregrind-amd64-linux.a)",
            &libs,
        )
    })?;
    for lib in &LIBS[1..] {
        if !libs_dir.join(lib).is_file() {
            return Err(missing(
                &format!("valgrind's {lib}"),
                std::slice::from_ref(&libs_dir),
            ));
        }
    }
    let libexec_dir = first(libexec.clone(), &format!("none-{PLATFORM}"))
        .ok_or_else(|| missing("valgrind's library directory (none-amd64-linux)", &libexec))?;
    Ok(ValgrindFiles {
        include: include_dir,
        libs: libs_dir,
        libexec: libexec_dir,
    })
}

/// The name of the build of cpgrind for `valgrind_version`:
/// `cpgrind-HASH`, HASH the FNV-1a of the source files and the version.
pub(crate) fn build_name(valgrind_version: &str) -> String {
    let mut bytes = Vec::new();
    for (name, text) in SOURCES {
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(0);
    }
    bytes.extend_from_slice(valgrind_version.as_bytes());
    format!("{TOOL}-{:016x}", fnv1a64(&bytes))
}

/// The directory to give valgrind as `VALGRIND_LIB` for cpgrind, built in
/// `dir` with `cc` against `files` if it is not there yet.
pub(crate) fn ensure_tool(
    cc: &Path,
    dir: &Path,
    files: &ValgrindFiles,
    valgrind_version: &str,
) -> CaptureResult<PathBuf> {
    let name = build_name(valgrind_version);
    let lib = dir.join(&name);
    if lib.join(format!("{TOOL}-{PLATFORM}")).is_file() {
        return Ok(lib);
    }
    let fail = |reason: String| CaptureError::ToolBuild {
        path: lib.clone(),
        reason,
    };
    let missing = |program, source| CaptureError::ToolCompilerMissing { program, source };
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("creating {}: {e}", dir.display())))?;
    // removed on drop, whatever happens, unless renamed into place
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}-"))
        .tempdir_in(dir)
        .map_err(|e| {
            fail(format!(
                "creating a temporary directory in {}: {e}",
                dir.display()
            ))
        })?;
    for (name, text) in SOURCES {
        let f = tmp.path().join(name);
        std::fs::File::create(&f)
            .and_then(|mut out| out.write_all(text.as_bytes()))
            .map_err(|e| fail(format!("writing {}: {e}", f.display())))?;
    }
    let src = tmp.path().join(SOURCES[0].0);
    let obj = tmp.path().join(format!("{TOOL}.o"));
    let mut include = std::ffi::OsString::from("-I");
    include.push(&files.include);
    let mut compile = Command::new(cc);
    compile
        .args(["-O2", "-g", "-Wall", "-c"])
        .arg(&include)
        .args([
            "-DVGA_amd64=1",
            "-DVGO_linux=1",
            "-DVGP_amd64_linux=1",
            "-DVGPV_amd64_linux_vanilla=1",
            "-fno-strict-aliasing",
            "-fno-builtin",
            "-fno-stack-protector",
            "-fomit-frame-pointer",
        ])
        .arg("-o")
        .arg(&obj)
        .arg(&src);
    run_cc(cc, &mut compile, missing, &fail)?;
    let exe = tmp.path().join(format!("{TOOL}-{PLATFORM}"));
    let mut link = Command::new(cc);
    link.arg("-o")
        .arg(&exe)
        .arg(&obj)
        .args([
            "-static",
            "-nodefaultlibs",
            "-nostartfiles",
            "-u",
            "_start",
            "-Wl,--build-id=none",
            "-Wl,-Ttext-segment=0x58000000",
        ])
        .args(LIBS.iter().map(|l| files.libs.join(l)))
        .arg("-lgcc");
    run_cc(cc, &mut link, missing, &fail)?;
    let built = SOURCES
        .iter()
        .map(|(name, _)| tmp.path().join(name))
        .chain([obj]);
    for f in built {
        std::fs::remove_file(&f).map_err(|e| fail(format!("removing {}: {e}", f.display())))?;
    }
    link_valgrind_lib(&files.libexec, tmp.path()).map_err(fail)?;
    let tmp_path = tmp.keep();
    match std::fs::rename(&tmp_path, &lib) {
        Ok(()) => Ok(lib),
        // another capture finished the same build first: use it
        Err(_) if lib.join(format!("{TOOL}-{PLATFORM}")).is_file() => {
            let _ = std::fs::remove_dir_all(&tmp_path);
            Ok(lib)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp_path);
            Err(fail(format!("renaming {}: {e}", tmp_path.display())))
        }
    }
}

/// Symlinks every entry of valgrind's library directory `libexec` into
/// `dir`, but cpgrind's own name.
fn link_valgrind_lib(libexec: &Path, dir: &Path) -> Result<(), String> {
    let entries =
        std::fs::read_dir(libexec).map_err(|e| format!("reading {}: {e}", libexec.display()))?;
    let own = format!("{TOOL}-{PLATFORM}");
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", libexec.display()))?;
        let name = entry.file_name();
        if name == OsStr::new(&own) {
            continue;
        }
        let target = libexec.join(&name);
        std::os::unix::fs::symlink(&target, dir.join(&name))
            .map_err(|e| format!("linking {}: {e}", target.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|r| {
                r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn fake_files(root: &Path) -> ValgrindFiles {
        let f = ValgrindFiles {
            include: root.join("include"),
            libs: root.join("libs"),
            libexec: root.join("libexec"),
        };
        for d in [&f.include, &f.libs, &f.libexec] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(f.libexec.join("default.supp"), "").unwrap();
        f
    }

    #[test]
    fn the_build_is_named_after_source_and_version() {
        let a = build_name("valgrind-3.19.0");
        assert!(
            a.starts_with("cpgrind-") && a.len() == "cpgrind-".len() + 16,
            "{a}"
        );
        assert_ne!(a, build_name("valgrind-3.20.0"));
        assert_eq!(a, build_name("valgrind-3.19.0"));
    }

    #[test]
    fn a_missing_compiler_is_a_typed_error_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let files = fake_files(d.path());
        let dir = d.path().join("tool");
        let err = ensure_tool(Path::new("/nonexistent/gcc"), &dir, &files, "v").unwrap_err();
        assert!(
            matches!(err, CaptureError::ToolCompilerMissing { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("Debian package `gcc`"), "{err}");
        assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
    }

    #[test]
    fn a_compiler_failure_carries_its_message_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let files = fake_files(d.path());
        let dir = d.path().join("tool");
        let err = ensure_tool(Path::new("false"), &dir, &files, "v").unwrap_err();
        assert!(matches!(err, CaptureError::ToolBuild { .. }), "{err:?}");
        assert!(
            err.to_string()
                .contains("building the valgrind tool cpgrind"),
            "{err}"
        );
        assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
    }
}
