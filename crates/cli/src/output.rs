//! Where a command's output goes, and how it gets there safely. Every
//! command that writes uses [`Output`]:
//!
//! - `-` is standard output;
//! - a character device or a FIFO (`/dev/null`, a named pipe) is written
//!   straight, never replaced;
//! - a symlink is followed: its final target is written;
//! - a regular file (or a new path) is written through a temporary file
//!   beside it, renamed into place only when the whole output is written,
//!   so no partial file is ever left behind. The temporary is registered
//!   with [`crate::interrupt`], whose SIGINT/SIGTERM handler removes it.
//!
//! It also refuses an output that is one of the command's inputs (same
//! device and inode) and two outputs of one command on one file, and an
//! output directory (`--out DIR`) that is a file ([`check_output_dir`]);
//! [`OutputDir`] makes an output directory and removes it again when the
//! command fails before writing into it.

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::interrupt;

/// Where an output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// Standard output (`-`).
    Stdout,
    /// A character device or FIFO: written in place.
    Direct(PathBuf),
    /// A regular file or a path to create: temporary file, then rename.
    File(PathBuf),
}

/// A resolved output: the option that named it (for messages) and its target.
#[derive(Debug, Clone)]
pub struct Output {
    option: String,
    given: PathBuf,
    target: Target,
}

impl Output {
    /// Resolves the output `path` given with `option` (`-o`, `--chart`,
    /// `OUTPUT`): `-` is stdout, symlinks are followed to their target,
    /// character devices and FIFOs are written in place, directories and
    /// other special files are refused.
    pub fn new(option: &str, path: &Path) -> Result<Output> {
        let target = if path.as_os_str() == "-" {
            Target::Stdout
        } else {
            let resolved =
                follow_symlinks(path).with_context(|| format!("{option} {}", path.display()))?;
            match std::fs::metadata(&resolved) {
                Ok(m) if m.is_file() => Target::File(resolved),
                Ok(m) if m.file_type().is_char_device() || m.file_type().is_fifo() => {
                    Target::Direct(resolved)
                }
                Ok(m) if m.is_dir() => bail!(
                    "{option} {}: is a directory; expected a file name",
                    path.display()
                ),
                Ok(_) => bail!(
                    "{option} {}: not a regular file, character device or FIFO",
                    path.display()
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    // Refused now, before any work, rather than when the
                    // result is written.
                    let dir = parent_dir(&resolved);
                    if !dir.is_dir() {
                        bail!(
                            "{option} {}: the directory {} does not exist",
                            path.display(),
                            dir.display()
                        );
                    }
                    Target::File(resolved)
                }
                Err(e) => bail!("{option} {}: {e}", path.display()),
            }
        };
        Ok(Output {
            option: option.to_string(),
            given: path.to_path_buf(),
            target,
        })
    }

    /// An optional output: `None` (no option given) is stdout.
    pub fn or_stdout(option: &str, path: Option<&Path>) -> Result<Output> {
        Output::new(option, path.unwrap_or(Path::new("-")))
    }

    /// The path as given (for messages).
    pub fn display(&self) -> std::path::Display<'_> {
        self.given.display()
    }

    /// The regular file this output is written to (a symlink's final
    /// target), or `None` for standard output, a device or a FIFO.
    pub fn file_path(&self) -> Option<&Path> {
        match &self.target {
            Target::File(p) => Some(p),
            Target::Stdout | Target::Direct(_) => None,
        }
    }

    /// True when this output is standard output.
    #[cfg(test)]
    pub fn is_stdout(&self) -> bool {
        self.target == Target::Stdout
    }

    /// Refuses this output when it is the same file (device and inode) as
    /// one of `inputs` (`-`, stdin, is skipped; so are inputs that do not
    /// exist: loading them fails with its own message).
    pub fn check_not_input<'a>(&self, inputs: impl IntoIterator<Item = &'a Path>) -> Result<()> {
        let Some(out) = self.existing_id() else {
            return Ok(());
        };
        for input in inputs {
            if input.as_os_str() == "-" {
                continue;
            }
            if let Ok(m) = std::fs::metadata(input) {
                if (m.dev(), m.ino()) == out {
                    bail!(
                        "{} {}: is also an input ({}); write the output elsewhere",
                        self.option,
                        self.given.display(),
                        input.display()
                    );
                }
            }
        }
        Ok(())
    }

    /// Device and inode of the target, when it exists.
    fn existing_id(&self) -> Option<(u64, u64)> {
        match &self.target {
            Target::Stdout => None,
            Target::Direct(p) | Target::File(p) => {
                std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
            }
        }
    }

    /// The file this output names, for comparing two outputs: the resolved
    /// target with its directory made absolute.
    fn key(&self) -> Option<PathBuf> {
        match &self.target {
            Target::Stdout => Some(PathBuf::from("-")),
            Target::Direct(p) => Some(p.clone()),
            Target::File(p) => {
                let dir = parent_dir(p);
                let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
                Some(dir.join(p.file_name().unwrap_or_default()))
            }
        }
    }

    /// Writes `bytes` to the output (atomically for a file).
    pub fn write_bytes(&self, bytes: &[u8]) -> Result<()> {
        self.write_with(|w| {
            w.write_all(bytes)?;
            Ok(())
        })
    }

    /// Runs `write` on a buffered writer to the output and finishes it:
    /// for a file, through a registered temporary renamed into place on
    /// success and removed on failure.
    ///
    /// A failure to write is named by this output, whatever `write` made of
    /// it (a converter that names its input, a library error naming no
    /// file).
    pub fn write_with<T>(&self, write: impl FnOnce(&mut dyn Write) -> Result<T>) -> Result<T> {
        let ctx = || format!("{} {}", self.option, self.given.display());
        let write = |out: &mut dyn Write| {
            let mut watched = Watched {
                inner: out,
                failed: None,
            };
            let v = write(&mut watched);
            match (v, watched.failed) {
                (Err(_), Some(e)) => Err(anyhow::Error::new(e).context(ctx())),
                (v, _) => v,
            }
        };
        match &self.target {
            Target::Stdout => {
                let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
                let v = write(&mut out)?;
                out.flush().with_context(ctx)?;
                Ok(v)
            }
            Target::Direct(p) => {
                let f = OpenOptions::new().write(true).open(p).with_context(ctx)?;
                let mut out = BufWriter::with_capacity(1 << 20, f);
                let v = write(&mut out)?;
                out.flush().with_context(ctx)?;
                Ok(v)
            }
            Target::File(p) => {
                let tmp = TempFile::beside(p).with_context(ctx)?;
                let mut out = BufWriter::with_capacity(1 << 20, tmp.file()?);
                let v = write(&mut out)?;
                out.flush().with_context(ctx)?;
                drop(out);
                tmp.persist(p).with_context(ctx)?;
                Ok(v)
            }
        }
    }
}

/// Writes each output's bytes, all or nothing as far as files go: every
/// file's bytes go to a registered temporary beside it first, and the
/// temporaries are renamed into place only once all are written (a full
/// disk leaves none of them); standard output, devices and FIFOs, which
/// cannot be staged, are written after that.
pub fn write_all_bytes(outputs: &[(&Output, &[u8])]) -> Result<()> {
    let ctx = |o: &Output| format!("{} {}", o.option, o.given.display());
    let files = outputs.iter().filter_map(|&(o, bytes)| match &o.target {
        Target::File(p) => Some(((o, bytes), p.as_path())),
        _ => None,
    });
    write_staged(
        files,
        |&(o, bytes), tmp| {
            let mut f = tmp.file().with_context(|| ctx(o))?;
            f.write_all(bytes).with_context(|| ctx(o))?;
            f.flush().with_context(|| ctx(o))
        },
        |&(o, _), _| ctx(o),
        |&(o, _), _| ctx(o),
    )?;
    for (o, bytes) in outputs {
        if !matches!(o.target, Target::File(_)) {
            o.write_bytes(bytes)?;
        }
    }
    Ok(())
}

/// Writes files all or nothing: for each `(item, dest)` in turn, a
/// registered temporary (removed on SIGINT and SIGTERM) is made beside
/// `dest` and filled by `write(item, tmp)`; only once every one is written
/// are the temporaries renamed into place, in order, so a failure to write
/// any of them leaves none. `dest` must be a regular file's path (symlinks
/// followed). A failure to make a temporary is named by
/// `staging(item, dest)` and one to rename it by `persisting(item, dest)`;
/// `write` names its own.
pub fn write_staged<'p, T>(
    files: impl IntoIterator<Item = (T, &'p Path)>,
    mut write: impl FnMut(&T, &TempFile) -> Result<()>,
    staging: impl Fn(&T, &Path) -> String,
    persisting: impl Fn(&T, &Path) -> String,
) -> Result<()> {
    let mut staged = Vec::new();
    for (item, dest) in files {
        let tmp = TempFile::beside(dest).with_context(|| staging(&item, dest))?;
        write(&item, &tmp)?;
        staged.push((item, tmp, dest));
    }
    for (item, tmp, dest) in staged {
        tmp.persist(dest).with_context(|| persisting(&item, dest))?;
    }
    Ok(())
}

/// A writer that remembers its first failure, so that [`Output::write_with`]
/// can name the output when that failure comes back wrapped in another
/// error.
struct Watched<'a> {
    inner: &'a mut dyn Write,
    failed: Option<std::io::Error>,
}

impl Watched<'_> {
    fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if self.failed.is_none() && e.kind() != std::io::ErrorKind::Interrupted {
                self.failed = Some(match e.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code),
                    None => std::io::Error::new(e.kind(), e.to_string()),
                });
            }
        }
        r
    }
}

impl Write for Watched<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

impl Output {
    /// Runs `write` with a path to write to (for writers that only take a
    /// path, such as the chart's): a registered temporary beside a file
    /// target, renamed into place on success; for stdout, a device or a
    /// FIFO, a registered temporary in the system's temporary directory,
    /// copied to the target and removed.
    pub fn write_path_with<T>(&self, write: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
        let ctx = || format!("{} {}", self.option, self.given.display());
        match &self.target {
            Target::File(p) => {
                let tmp = TempFile::beside(p).with_context(ctx)?;
                let v = write(tmp.path())?;
                tmp.persist(p).with_context(ctx)?;
                Ok(v)
            }
            Target::Stdout | Target::Direct(_) => {
                let name = self.given.file_name().unwrap_or_default();
                let tmp = TempFile::beside(&std::env::temp_dir().join(name)).with_context(ctx)?;
                let v = write(tmp.path())?;
                let bytes = std::fs::read(tmp.path()).with_context(ctx)?;
                self.write_bytes(&bytes)?;
                Ok(v)
            }
        }
    }
}

impl Output {
    /// Refuses a file output when its file system has less than `bytes`
    /// free (stdout, devices and FIFOs are not checked). `what` says where
    /// the estimate comes from.
    pub fn check_space(&self, bytes: u64, what: &str) -> Result<()> {
        let Target::File(p) = &self.target else {
            return Ok(());
        };
        let Some(free) = free_bytes(parent_dir(p)) else {
            return Ok(());
        };
        if bytes > free {
            bail!(
                "{} {}: the output needs at least {bytes} bytes ({what}) but its file system has {free} bytes free",
                self.option,
                self.given.display()
            );
        }
        Ok(())
    }
}

/// Bytes available to us on the file system holding `dir` (statvfs).
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path and `st` a buffer of the right
    // type, filled by statvfs when it returns 0.
    let st = unsafe {
        if libc::statvfs(c.as_ptr(), st.as_mut_ptr()) != 0 {
            return None;
        }
        st.assume_init()
    };
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Refuses two outputs of one command on one file, stdout included.
pub fn check_distinct(outputs: &[&Output]) -> Result<()> {
    for (i, a) in outputs.iter().enumerate() {
        for b in &outputs[i + 1..] {
            let same = match (a.key(), b.key()) {
                (Some(x), Some(y)) => {
                    x == y
                        || matches!((a.existing_id(), b.existing_id()), (Some(u), Some(v)) if u == v)
                }
                _ => false,
            };
            if same {
                bail!(
                    "{} {} and {} {} name the same file; give each output its own path",
                    a.option,
                    a.given.display(),
                    b.option,
                    b.given.display()
                );
            }
        }
    }
    Ok(())
}

/// Refuses an output directory (`--out DIR`, `-o DIR`) that is, or lies
/// under, something other than a directory (a file, a device), before any
/// work: `OPTION DIR: is not a directory; ...` (or `OPTION DIR: ANCESTOR is
/// not a directory; ...`). A directory that does not exist yet passes (it
/// is made when the outputs are written).
pub fn check_output_dir(option: &str, dir: &Path) -> Result<()> {
    for p in dir.ancestors() {
        if p.as_os_str().is_empty() {
            break;
        }
        // Follows symlinks: a link to a directory is one.
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) => {
                // The directory itself is named once; an ancestor after it.
                let which = if p == dir {
                    String::new()
                } else {
                    format!(" {}", p.display())
                };
                bail!(
                    "{option} {}:{which} is not a directory; expected a directory for the outputs (or a path to create one at)",
                    dir.display()
                )
            }
            Err(_) => continue,
        }
    }
    Ok(())
}

/// An output directory made for a command's outputs, after
/// [`check_output_dir`] (so that a file in the way is refused by name
/// rather than with the OS's `File exists`).
///
/// The directories it made (the one given and any missing parents; never
/// one that already existed) are removed again, deepest first and only
/// while empty, when it is dropped without [`OutputDir::keep`]: a command
/// that fails (or is interrupted) before writing into it leaves no empty
/// directory behind.
#[must_use = "dropping it removes the directories it made"]
pub struct OutputDir {
    /// The directories made, deepest first.
    made: Vec<PathBuf>,
}

impl OutputDir {
    /// Checks `dir` (given with `option`, for messages) and makes it with
    /// its missing parents.
    pub fn create(option: &str, dir: &Path) -> Result<OutputDir> {
        check_output_dir(option, dir)?;
        // What is missing now is what this makes (nothing is ever made
        // where something, even a dangling link, already is).
        let made = dir
            .ancestors()
            .take_while(|p| !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_err())
            .map(Path::to_path_buf)
            .collect();
        // Made before creating, so that a failure half way removes the
        // parents already made.
        let out = OutputDir { made };
        std::fs::create_dir_all(dir).with_context(|| format!("{option} {}", dir.display()))?;
        Ok(out)
    }

    /// Keeps the directory (its outputs are written).
    pub fn keep(mut self) {
        self.made.clear();
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        for d in &self.made {
            // Fails on a directory that holds anything: it and its
            // parents stay.
            if std::fs::remove_dir(d).is_err() {
                break;
            }
        }
    }
}

/// Follows `path` through symlinks (at most 40) to the path that is not one.
fn follow_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = parent_dir(&p).join(link);
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// The directory of `path` (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A temporary file beside its destination, registered for removal on
/// SIGINT/SIGTERM and removed on drop unless persisted.
pub struct TempFile {
    path: PathBuf,
    persisted: bool,
}

impl TempFile {
    /// Creates `.tmp-PID-N-NAME` in the directory of `dest` (so the final
    /// rename is atomic; the name keeps the extension, which some writers
    /// read to pick a format).
    pub fn beside(dest: &Path) -> Result<TempFile> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let name = dest
            .file_name()
            .context("the output path has no file name")?;
        let path = parent_dir(dest).join(format!(
            ".tmp-{}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            name.to_string_lossy(),
        ));
        let t = TempFile {
            path,
            persisted: false,
        };
        interrupt::register_temp(&t.path);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&t.path)
            .with_context(|| format!("creating {}", t.path.display()))?;
        Ok(t)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens it for writing.
    pub fn file(&self) -> Result<File> {
        OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&self.path)
            .with_context(|| format!("opening {}", self.path.display()))
    }

    /// Renames it to `dest` (under the interruption lock, so a signal
    /// either removes the temporary first or finds it renamed).
    pub fn persist(mut self, dest: &Path) -> Result<()> {
        let r = interrupt::rename_registered(&self.path, dest);
        if r.is_ok() {
            self.persisted = true;
        }
        r.map_err(anyhow::Error::from)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = std::fs::remove_file(&self.path);
        }
        interrupt::unregister_temp(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that cannot be written leaves none of the others: the first
    /// output is not renamed into place when the second fails, and no
    /// temporary is left.
    #[test]
    fn write_all_bytes_writes_no_file_unless_all_are_staged() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let first = Output::new("-o", &dir.path().join("results.json")).unwrap();
        let second = Output::new("-o", &gone.join("samples.csv")).unwrap();
        std::fs::remove_dir(&gone).unwrap();
        let e = write_all_bytes(&[(&first, b"{}"), (&second, b"a,b\n")]).unwrap_err();
        assert!(format!("{e:#}").contains("samples.csv"), "{e:#}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        // and both land when both can be written
        std::fs::create_dir(&gone).unwrap();
        write_all_bytes(&[(&first, b"{}"), (&second, b"a,b\n")]).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("results.json")).unwrap(),
            b"{}"
        );
        assert_eq!(std::fs::read(gone.join("samples.csv")).unwrap(), b"a,b\n");
    }

    /// The shared staging loop: a failure to make a temporary is named by
    /// `staging`, to write one by `write` itself, to rename one into place
    /// by `persisting`; a failure before the renames lands no file and
    /// leaves no temporary.
    #[test]
    fn write_staged_names_each_step_and_lands_nothing_on_a_failed_write() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let b = dir.path().join("b.md");
        let gone = dir.path().join("gone").join("c.png");
        let staging = |n: &&str, d: &Path| format!("staging {n} {}", d.display());
        let persisting = |n: &&str, d: &Path| format!("persisting {n} {}", d.display());
        let fill = |n: &&str, tmp: &TempFile| -> Result<()> {
            if *n == "bad" {
                anyhow::bail!("cannot write {n}");
            }
            Ok(std::fs::write(tmp.path(), n)?)
        };
        let left = || {
            let mut v: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let stage = |files: [(&str, &Path); 2]| write_staged(files, fill, staging, persisting);
        // the temporary of the second cannot be made: the first does not land
        let e = stage([("x", a.as_path()), ("y", gone.as_path())]).unwrap_err();
        assert!(
            format!("{e:#}").starts_with(&format!("staging y {}: ", gone.display())),
            "{e:#}"
        );
        assert!(left().is_empty(), "{:?}", left());
        // the second cannot be written: named by the writer alone
        let e = stage([("x", a.as_path()), ("bad", b.as_path())]).unwrap_err();
        assert_eq!(format!("{e:#}"), "cannot write bad");
        assert!(left().is_empty(), "{:?}", left());
        // the second cannot be renamed over a directory with a file in it
        std::fs::create_dir(&b).unwrap();
        std::fs::write(b.join("keep"), "").unwrap();
        let e = stage([("x", a.as_path()), ("y", b.as_path())]).unwrap_err();
        assert!(
            format!("{e:#}").starts_with(&format!("persisting y {}: ", b.display())),
            "{e:#}"
        );
        assert_eq!(left(), ["a.csv", "b.md"]);
        // all written and renamed in place
        std::fs::remove_dir_all(&b).unwrap();
        stage([("x", a.as_path()), ("y", b.as_path())]).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "x");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "y");
        assert_eq!(left(), ["a.csv", "b.md"]);
    }

    #[test]
    fn dash_is_stdout_and_symlinks_resolve_to_their_target() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Output::new("-o", Path::new("-")).unwrap().is_stdout());
        let target = dir.path().join("real.txt");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        let o = Output::new("-o", &link).unwrap();
        assert_eq!(o.target, Target::File(dir.path().join("real.txt")));
        o.write_bytes(b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn an_input_or_a_second_output_on_the_same_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        std::fs::write(&input, "x").unwrap();
        let o = Output::new("-o", &input).unwrap();
        let err = o.check_not_input([input.as_path()]).unwrap_err();
        assert!(err.to_string().contains("is also an input"), "{err}");
        let other = dir.path().join("other.csv");
        assert!(Output::new("-o", &other)
            .unwrap()
            .check_not_input([input.as_path()])
            .is_ok());
        let a = Output::new("-o", &other).unwrap();
        let b = Output::new("--chart", &dir.path().join(".").join("other.csv")).unwrap();
        let err = check_distinct(&[&a, &b]).unwrap_err();
        assert!(err.to_string().contains("--chart"), "{err}");
        let s1 = Output::new("-o", Path::new("-")).unwrap();
        let s2 = Output::new("--samples", Path::new("-")).unwrap();
        assert!(check_distinct(&[&s1, &a]).is_ok());
        assert!(check_distinct(&[&s1, &s2]).is_err());
    }

    #[test]
    fn a_write_failure_is_named_by_the_output_whatever_wraps_it() {
        let o = Output::new("OUTPUT", Path::new("/dev/full")).unwrap();
        let r: Result<()> = o.write_with(|w| {
            w.write_all(&[0; 1 << 21])
                .context("in.cpt: I/O error (the input, wrongly)")?;
            Ok(())
        });
        let msg = format!("{:#}", r.unwrap_err());
        assert!(
            msg.starts_with("OUTPUT /dev/full: No space left on device") && !msg.contains("in.cpt"),
            "{msg}"
        );
        // an error that is not the writer's keeps its own words
        let r: Result<()> = o.write_with(|_| bail!("in.cpt: line 3: bad"));
        assert_eq!(r.unwrap_err().to_string(), "in.cpt: line 3: bad");
    }

    #[test]
    fn an_output_directory_that_is_a_file_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("afile");
        std::fs::write(&file, "x").unwrap();
        let err = OutputDir::create("--out", &file).err().unwrap().to_string();
        assert_eq!(
            err,
            format!(
                "--out {}: is not a directory; expected a directory for the outputs (or a path to create one at)",
                file.display()
            )
        );
        let under = file.join("sub");
        let err = OutputDir::create("-o", &under).err().unwrap().to_string();
        assert_eq!(
            err,
            format!(
                "-o {}: {} is not a directory; expected a directory for the outputs (or a path to create one at)",
                under.display(),
                file.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        let new = dir.path().join("a/b");
        check_output_dir("-o", &new).unwrap();
        assert!(!new.exists(), "the check makes nothing");
        OutputDir::create("-o", &new).unwrap().keep();
        assert!(new.is_dir());
        OutputDir::create("-o", &new).unwrap().keep();
    }

    #[test]
    fn a_made_output_directory_is_removed_unless_kept_or_written_into() {
        let dir = tempfile::tempdir().unwrap();
        // Made with its parents, then dropped unused: all of them go.
        let new = dir.path().join("a/b/c");
        drop(OutputDir::create("-o", &new).unwrap());
        assert!(!dir.path().join("a").exists());
        // A directory that was there is never removed, even empty.
        let old = dir.path().join("old");
        std::fs::create_dir(&old).unwrap();
        drop(OutputDir::create("-o", &old.join("x/y")).unwrap());
        assert!(old.is_dir() && !old.join("x").exists());
        drop(OutputDir::create("-o", &old).unwrap());
        assert!(old.is_dir());
        // One holding a file stays, with its parents.
        let d = OutputDir::create("-o", &new).unwrap();
        std::fs::write(new.join("results.json"), "{}").unwrap();
        drop(d);
        assert!(new.join("results.json").is_file());
        // Kept: stays empty.
        let kept = dir.path().join("kept");
        OutputDir::create("-o", &kept).unwrap().keep();
        assert!(kept.is_dir());
    }

    #[test]
    fn a_failed_write_leaves_neither_output_nor_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        let o = Output::new("-o", &p).unwrap();
        let r: Result<()> = o.write_with(|w| {
            w.write_all(b"partial")?;
            bail!("boom")
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
