//! `cachepart trace ...`: capture, inspect, convert and generate memory
//! traces.

use crate::output::Output;
use anyhow::{bail, Context, Result};
use cachepart::trace::synth::SynthConfig;
use cachepart::trace::{convert_lackey_lenient, convert_stream, info, Header, TraceFormat};
use clap::{Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::PathBuf;

/// Subcommands of `cachepart trace`.
#[derive(Subcommand)]
pub enum TraceCommand {
    /// Summarise a binary trace: records by kind, instructions, footprint, bytes per access.
    Info {
        /// The trace file (.cpt).
        file: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: InfoFormat,
    },
    /// Convert a lackey or Dinero text trace (or a .cpt) to the binary format.
    /// INPUT may be `-` to read a pipe, e.g.
    /// `valgrind --tool=lackey --trace-mem=yes CMD 2>&1 | cachepart trace convert --from lackey - out.cpt`.
    Convert {
        /// Input file, or `-` for standard input.
        input: PathBuf,
        /// Output binary trace, or `-` for standard output.
        output: PathBuf,
        /// Input format.
        #[arg(long, value_enum)]
        from: FromFormat,
        /// `--from lackey`: skip lines that are neither trace lines nor
        /// valgrind's (the traced program's own output mixed in by `2>&1`)
        /// instead of failing, and report how many were skipped.
        #[arg(long)]
        lenient: bool,
    },
    /// Generate a synthetic trace from a generator config (TOML or JSON).
    Generate {
        /// Generator config (`.toml` or `.json`; `-` reads TOML from
        /// standard input).
        config: PathBuf,
        /// Output binary trace, or `-` for standard output.
        output: PathBuf,
        /// No progress line (shown on a terminal only).
        #[arg(long, short = 'q')]
        quiet: bool,
    },
    /// Record a real program's memory accesses, e.g.
    /// `cachepart trace capture -o ls.cpt -- ls -la /usr/lib`.
    ///
    /// `--tool lackey` (the default) runs the program under
    /// `valgrind --tool=lackey --trace-mem=yes` (Debian package `valgrind`)
    /// and streams its log through a FIFO into the binary format: lackey's
    /// text never reaches the disk. The program's stdin, stdout and stderr
    /// are the terminal's. A one-line summary goes to stderr.
    ///
    /// `--tool qemu` runs the program under qemu-user (Debian package
    /// `qemu-user`) with cachepart's own TCG plugin, built with gcc on first
    /// use into ~/.cache/cachepart/qemu-plugin (or $CACHEPART_CACHE_DIR,
    /// $XDG_CACHE_HOME): loads and stores with the instruction counts
    /// between them, plus one instruction fetch per instruction with
    /// `--ifetch`. Much faster than lackey; x86 read-modify-write
    /// instructions give a load and a store instead of lackey's modify.
    ///
    /// A program that exits with a non-zero status still yields its trace:
    /// cachepart warns and then exits with the program's status (128 + N
    /// for a program killed by signal N). Errors (valgrind, qemu-user or gcc
    /// missing, command not found, malformed tool output) exit with status 1
    /// and leave no output file. SIGINT (Ctrl-C) or SIGTERM stops the
    /// program, removes every temporary and exits with 130 or 143, without
    /// an output file.
    Capture {
        /// The capture route.
        #[arg(long, value_enum, default_value = "lackey")]
        tool: CaptureTool,
        /// Output binary trace.
        #[arg(short, long)]
        output: PathBuf,
        /// `--tool qemu`: also record an instruction fetch per executed
        /// instruction (lackey always records them).
        #[arg(long)]
        ifetch: bool,
        /// The program and its arguments, after `--`.
        #[arg(last = true, required = true)]
        command: Vec<OsString>,
    },
    /// Build the SHARDS sample index of a trace, `FILE.shards` next to it:
    /// its base sample (1/32 of the lines, and the reference sample's
    /// distances). `cachepart curves FILE --kind shards` then reads the
    /// index instead of the trace for rates up to 1/32, with the same
    /// estimate. Rebuild it when the trace changes (a stale index is an
    /// error).
    ShardsIndex {
        /// The trace file (.cpt).
        file: PathBuf,
        /// Cache line size in bytes (must match the curves' --line).
        #[arg(long, default_value_t = 64)]
        line: u64,
        /// Count instruction fetches as references (must match the curves' --ifetch).
        #[arg(long)]
        ifetch: bool,
        /// Store the reference sample's distances up to this many lines
        /// (SHARDS' exact-below-lines, at most this when served).
        #[arg(long, default_value_t = cachepart::curves::DEFAULT_EXACT_BELOW)]
        exact_below: u32,
    },
}

/// Routes of `trace capture`.
#[derive(Clone, Copy, ValueEnum)]
pub enum CaptureTool {
    /// valgrind lackey: slow but exact, from Debian's `valgrind` package.
    Lackey,
    /// qemu-user with cachepart's TCG plugin: fast, from Debian's `qemu-user` and `gcc`.
    Qemu,
}

/// `trace info` output formats.
#[derive(Clone, Copy, ValueEnum)]
pub enum InfoFormat {
    /// Aligned text.
    Table,
    /// JSON object.
    Json,
}

/// Input formats of `trace convert`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FromFormat {
    /// valgrind lackey `--trace-mem=yes` output.
    Lackey,
    /// Dinero `din` text.
    Din,
    /// cachepart's binary format (re-encodes it).
    Cpt,
}

/// Runs a `trace` subcommand.
pub fn run(cmd: TraceCommand) -> Result<()> {
    match cmd {
        TraceCommand::ShardsIndex {
            file,
            line,
            ifetch,
            exact_below,
        } => {
            let opts = cachepart::curves::Options::default()
                .with_line_bytes(line)
                .with_ifetch(ifetch);
            let s = cachepart::curves::build_index(&file, &opts, exact_below)?;
            println!(
                "{}: {} bytes; {} of {} line references ({} lines) in the base sample, {} in the reference sample",
                s.path.display(),
                s.bytes,
                s.sampled_refs,
                s.accesses,
                s.sampled_lines,
                s.ref_samples
            );
            Ok(())
        }
        TraceCommand::Info { file, format } => {
            let i = info(&file).with_context(|| format!("{}", file.display()))?;
            match format {
                InfoFormat::Json => println!("{}", serde_json::to_string_pretty(&i)?),
                InfoFormat::Table => {
                    let c = &i.counts;
                    println!("file              {}", file.display());
                    println!("records           {}", c.records);
                    println!("accesses          {}", i.accesses);
                    println!("  loads           {}", c.loads);
                    println!("  stores          {}", c.stores);
                    println!("  modifies        {}", c.modifies);
                    println!("  ifetches        {}", c.ifetches);
                    println!("escapes           {}", c.escapes);
                    println!("instructions      {}", c.instructions);
                    println!(
                        "footprint         {} pages of {} bytes",
                        i.footprint_pages, i.page_size
                    );
                    println!("frames            {}", i.frames);
                    println!("file bytes        {}", i.file_bytes);
                    println!("bytes per access  {:.3}", i.bytes_per_access);
                    for (k, v) in &i.meta {
                        println!("meta {k:<12} {v}");
                    }
                }
            }
            Ok(())
        }
        TraceCommand::Convert {
            input,
            output,
            from,
            lenient,
        } => {
            if lenient && from != FromFormat::Lackey {
                bail!("--lenient: for --from lackey only (din and cpt inputs have no foreign lines to skip)");
            }
            let format = match from {
                FromFormat::Lackey => TraceFormat::Lackey,
                FromFormat::Din => TraceFormat::Din,
                FromFormat::Cpt => TraceFormat::Cpt,
            };
            let header = Header::default()
                .with_meta("source-format", format.name())
                .with_meta("source", input.display().to_string());
            let out = Output::new("OUTPUT", &output)?;
            out.check_not_input([input.as_path()])?;
            let reader: Box<dyn BufRead> = if input.as_os_str() == "-" {
                Box::new(BufReader::with_capacity(1 << 20, std::io::stdin().lock()))
            } else {
                Box::new(BufReader::with_capacity(
                    1 << 20,
                    File::open(&input).with_context(|| format!("{}", input.display()))?,
                ))
            };
            let (summary, skipped) = out.write_with(|w| {
                if lenient {
                    convert_lackey_lenient(reader, w, &header)
                } else {
                    convert_stream(reader, format, w, &header).map(|s| (s, 0))
                }
                .with_context(|| format!("{}", input.display()))
            })?;
            if lenient {
                eprintln!(
                    "{}: {} records, {} foreign lines skipped",
                    output.display(),
                    summary.records,
                    skipped
                );
            } else {
                eprintln!("{}: {} records", output.display(), summary.records);
            }
            Ok(())
        }
        TraceCommand::Generate {
            config,
            output,
            quiet,
        } => {
            let text = cachepart::units::input::read_text(&config)
                .with_context(|| format!("{}", config.display()))?;
            let stdin = cachepart::units::input::is_stdin(&config);
            let ext = if stdin {
                Some("toml")
            } else {
                config.extension().and_then(|e| e.to_str())
            };
            let cfg: SynthConfig = match ext {
                Some("json") => {
                    serde_json::from_str(&text).with_context(|| format!("{}", config.display()))?
                }
                Some("toml") => {
                    toml::from_str(&text).with_context(|| format!("{}", config.display()))?
                }
                _ => bail!(
                    "{}: expected a .toml or .json generator config",
                    config.display()
                ),
            };
            let out = Output::new("OUTPUT", &output)?;
            out.check_not_input([config.as_path()])?;
            // A runaway config (1e15 accesses) is refused before it fills
            // the disk. The bound is loose on purpose: compressed regular
            // patterns take well under a byte per access (0.57 B for a
            // stride), so only one byte per 1024 accesses is assumed.
            out.check_space(
                cfg.accesses / 1024,
                "one byte per 1024 accesses at the least",
            )?;
            let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
                let pb = ProgressBar::new_spinner();
                pb.set_style(
                    ProgressStyle::with_template(
                        "{spinner} [{elapsed_precise}] {bytes} written ({bytes_per_sec})",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                pb
            });
            let summary = out.write_with(|w| match &bar {
                Some(pb) => Ok(cfg.write_to(pb.wrap_write(w))?),
                None => Ok(cfg.write_to(w)?),
            });
            if let Some(pb) = &bar {
                pb.finish_and_clear();
            }
            let summary = summary?;
            eprintln!("{}: {} records", output.display(), summary.records);
            Ok(())
        }
        TraceCommand::Capture {
            tool,
            output,
            ifetch,
            command,
        } => crate::capture_cmd::capture(tool, &output, ifetch, &command),
    }
}
