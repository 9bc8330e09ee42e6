//! The options several commands share, defined once and flattened into
//! each command (`#[command(flatten)]`), so that they are spelled and mean
//! the same everywhere:
//!
//! - `-o/--output FILE` ([`OutputArg`]): where the result goes; `-` (and
//!   no `-o`) is standard output; written safely by [`Output`];
//!   [`PositionalOutputArg`] also takes it as a positional `OUTPUT`;
//! - `--format table|csv|json` ([`FormatArg`]): aligned text, CSV with a
//!   header row, or JSON;
//! - `-q/--quiet` ([`QuietArg`]): no progress bar or line (they are drawn
//!   on a terminal only, on standard error);
//! - `--threads N` ([`ThreadsArg`]): worker threads, at least 1, capped at
//!   a few per core (with a warning);
//! - `--builtin debian|parametric` ([`BuiltinSetArg`]): a built-in data
//!   set (`--set`, its former spelling on `profile builtin`, is a hidden
//!   alias).

use crate::kind_arg::kind_parser;
use crate::output::Output;
use anyhow::Result;
use cachepart::linux::doctor::Roots;
use cachepart::linux::resctrl::{mount, DEFAULT_MOUNT};
use cachepart::spec::builtin::BuiltinSet;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;

/// `-o/--output`.
#[derive(Args)]
pub struct OutputArg {
    /// Write the result to FILE instead of standard output (`-`: standard
    /// output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArg {
    /// The resolved output (standard output when none was given).
    pub fn resolve(&self) -> Result<Output> {
        Output::or_stdout("-o", self.output.as_deref())
    }
}

/// The output of a command that writes one file and takes it either as a
/// positional `OUTPUT` or with `-o/--output` (`trace convert`, `trace
/// generate`): exactly one of the two.
#[derive(Args)]
pub struct PositionalOutputArg {
    /// The output file, or `-` for standard output (or give it with -o).
    #[arg(
        value_name = "OUTPUT",
        required_unless_present = "output",
        conflicts_with = "output"
    )]
    pub output_path: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputArg,
}

impl PositionalOutputArg {
    /// The resolved output, named in messages by the way it was given
    /// (`OUTPUT` or `-o`).
    pub fn resolve(&self) -> Result<Output> {
        match (&self.output_path, &self.output.output) {
            (Some(p), None) => Output::new("OUTPUT", p),
            (None, Some(p)) => Output::new("-o", p),
            _ => anyhow::bail!("give the output once: as OUTPUT or with -o"),
        }
    }
}

/// Output formats (`--format`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
pub enum Format {
    /// Aligned text for people.
    Table,
    /// Comma-separated values with a header row.
    Csv,
    /// JSON.
    Json,
}

/// `--format table|csv|json`.
#[derive(Args)]
pub struct FormatArg {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

/// `-q/--quiet`.
#[derive(Args)]
pub struct QuietArg {
    /// No progress bar or progress line (shown on a terminal only, on
    /// standard error).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl QuietArg {
    /// Whether to draw progress: not quiet, and standard error is a terminal.
    pub fn progress(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }

    /// A progress bar drawn with `template` when [`QuietArg::progress`]:
    /// of length `len`, or a spinner when the length is unknown (`None`).
    pub fn bar(&self, len: Option<u64>, template: &str) -> Option<ProgressBar> {
        self.progress().then(|| match len {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        })
    }

    /// Runs `work` with a bar of `what` done: `work` calls the progress
    /// function it is given once per finished run, with the runs done and
    /// the runs in all (from any thread); the bar is cleared when `work`
    /// returns.
    pub fn with_runs_bar<T>(
        &self,
        what: &str,
        work: impl FnOnce(&(dyn Fn(usize, usize) + Sync)) -> T,
    ) -> T {
        let bar = self.bar(
            Some(1),
            &format!("[{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {what} ({{eta}})"),
        );
        // One call per finished run: counting calls keeps the bar monotone
        // when parallel runs report out of order.
        let progress = |_done: usize, all: usize| {
            if let Some(pb) = &bar {
                pb.set_length(all as u64);
                pb.inc(1);
            }
        };
        let out = work(&progress);
        if let Some(pb) = &bar {
            pb.finish_and_clear();
        }
        out
    }

    /// A bar of bytes read out of `size` (a spinner of bytes read when the
    /// size is unknown, as for a pipe).
    pub fn read_bar(&self, size: Option<u64>) -> Option<ProgressBar> {
        self.bar(
            size,
            match size {
                Some(_) => "[{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} read ({bytes_per_sec}, {eta})",
                None => "{spinner} [{elapsed_precise}] {bytes} read ({bytes_per_sec})",
            },
        )
    }
}

/// Where a command that manages this Linux machine finds its kernel
/// interfaces: the resctrl mount and the roots of `/proc`, `/sys` and
/// `/dev` (`run`, `daemon`, `profile measure`; tests point them elsewhere).
#[derive(Args)]
pub struct HostArgs {
    /// The resctrl mount (default: the one in /proc/mounts, else /sys/fs/resctrl).
    #[arg(long)]
    pub resctrl: Option<PathBuf>,
    /// The resctrl mount is a plain directory tree laid out like one (tests).
    #[arg(long)]
    pub resctrl_plain: bool,
    /// Where /proc is.
    #[arg(long, default_value = "/proc")]
    pub proc_root: PathBuf,
    /// Where /sys is.
    #[arg(long, default_value = "/sys")]
    pub sys_root: PathBuf,
    /// Where /dev is.
    #[arg(long, default_value = "/dev")]
    pub dev_root: PathBuf,
}

impl HostArgs {
    /// The roots: `--resctrl`, else the mount in `/proc/mounts`, else
    /// `/sys/fs/resctrl`; `/boot` for the kernel configuration.
    pub fn roots(&self) -> Roots {
        let resctrl = match &self.resctrl {
            Some(p) => p.clone(),
            None => mount::find(&self.proc_root)
                .ok()
                .flatten()
                .map_or(PathBuf::from(DEFAULT_MOUNT), |m| m.path),
        };
        Roots {
            proc_root: self.proc_root.clone(),
            sys: self.sys_root.clone(),
            dev: self.dev_root.clone(),
            boot: "/boot".into(),
            resctrl,
        }
    }
}

/// `--threads`.
#[derive(Args)]
pub struct ThreadsArg {
    /// Worker threads (default: all cores); at least 1, and more than 4 per
    /// core are capped at that, with a warning.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// `--builtin`, with its former spelling as a hidden alias.
#[derive(Args)]
pub struct BuiltinSetArg {
    /// The built-in data set.
    #[arg(
        long,
        value_parser = kind_parser::<BuiltinSet>(),
        default_value = "debian",
        alias = "set"
    )]
    pub builtin: BuiltinSet,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        out: OutputArg,
        #[command(flatten)]
        format: FormatArg,
        #[command(flatten)]
        quiet: QuietArg,
        #[command(flatten)]
        threads: ThreadsArg,
        #[command(flatten)]
        builtin: BuiltinSetArg,
    }

    #[test]
    fn shared_options_parse_and_the_old_spelling_is_an_alias() {
        let c = Cli::try_parse_from([
            "x",
            "-o",
            "-",
            "--format",
            "csv",
            "-q",
            "--threads",
            "3",
            "--set",
            "parametric",
        ])
        .unwrap();
        assert_eq!(c.out.output.as_deref(), Some(std::path::Path::new("-")));
        assert_eq!(c.format.format, Format::Csv);
        assert!(c.quiet.quiet && !c.quiet.progress());
        assert_eq!(c.threads.threads, Some(3));
        assert!(matches!(c.builtin.builtin, BuiltinSet::Parametric));
        let c = Cli::try_parse_from(["x", "--builtin", "parametric"]).unwrap();
        assert!(matches!(c.builtin.builtin, BuiltinSet::Parametric));
        assert!(Cli::try_parse_from(["x", "--format", "xml"]).is_err());
        assert!(Cli::try_parse_from(["x", "--threads", "-1"]).is_err());
        // the alias is hidden from the help
        let help = <Cli as clap::CommandFactory>::command()
            .render_help()
            .to_string();
        assert!(
            help.contains("--builtin") && !help.contains("--set"),
            "{help}"
        );
    }
}
