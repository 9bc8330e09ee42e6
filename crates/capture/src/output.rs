//! The trace file being written: a temporary file beside the output,
//! renamed into place only when the capture succeeds and removed on drop
//! otherwise (an error, an interruption, a panic), so there is never a
//! partial output file.

use std::fs::{File, Permissions};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tempfile::TempPath;

use crate::error::{CaptureError, CaptureResult};

/// The temporary output file; see the module documentation.
#[derive(Debug)]
pub(crate) struct TempOutput {
    path: TempPath,
}

impl TempOutput {
    /// Creates `.NAME.capture-XXXXXX.tmp` in `output`'s directory, with the
    /// mode a plain `File::create` gives (0666 less the umask), and returns
    /// it with its open file.
    pub(crate) fn beside(output: &Path) -> CaptureResult<(TempOutput, File)> {
        let name = output.file_name().ok_or_else(|| CaptureError::Io {
            what: "writing",
            path: output.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name"),
        })?;
        let dir = output
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let prefix = format!(".{}.capture-", name.to_string_lossy());
        let file = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .permissions(Permissions::from_mode(0o666))
            .tempfile_in(dir)
            .map_err(|source| CaptureError::Io {
                what: "creating a temporary file for",
                path: output.to_path_buf(),
                source,
            })?;
        let (file, path) = file.into_parts();
        Ok((TempOutput { path }, file))
    }

    /// Renames the file to `output`.
    pub(crate) fn commit(self, output: &Path) -> CaptureResult<()> {
        self.path.persist(output).map_err(|e| CaptureError::Io {
            what: "renaming the trace to",
            path: output.to_path_buf(),
            source: e.error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn committed_output_is_renamed_and_dropped_output_vanishes() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("t.cpt");
        let (tmp, mut f) = TempOutput::beside(&out).unwrap();
        f.write_all(b"trace").unwrap();
        let names = listing(d.path());
        assert!(
            names.len() == 1 && names[0].starts_with(".t.cpt.capture-"),
            "{names:?}"
        );
        tmp.commit(&out).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"trace");
        assert_eq!(listing(d.path()), ["t.cpt"]);

        let other = d.path().join("u.cpt");
        let (tmp, _f) = TempOutput::beside(&other).unwrap();
        drop(tmp);
        assert_eq!(listing(d.path()), ["t.cpt"]);
    }

    #[test]
    fn the_output_gets_a_plain_files_mode() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("t.cpt");
        let (tmp, _f) = TempOutput::beside(&out).unwrap();
        tmp.commit(&out).unwrap();
        let plain = d.path().join("plain");
        File::create(&plain).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&out), mode(&plain));
    }
}
