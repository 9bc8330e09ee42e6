//! `cachepart trace ...`: capture, inspect, convert and generate memory
//! traces.

use crate::common_args::{Format, FormatArg, OutputArg, PositionalOutputArg, QuietArg};
use crate::kind_arg::kind_parser_of;
use anyhow::{bail, Context, Result};
use cachepart::output::{self, CsvOptions};
use cachepart::trace::synth::SynthConfig;
use cachepart::trace::{
    convert_lackey_lenient, convert_stream, info, Header, TraceError, TraceFormat,
};
use cachepart::Kind as _;
use clap::{Subcommand, ValueEnum};
use serde::Serialize;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Subcommands of `cachepart trace`.
#[derive(Subcommand)]
pub enum TraceCommand {
    /// Summarise a binary trace: records by kind, instructions, footprint, bytes per access.
    Info {
        /// The trace file (.cpt).
        file: PathBuf,
        #[command(flatten)]
        format: FormatArg,
        #[command(flatten)]
        output: OutputArg,
    },
    /// Convert a lackey or Dinero text trace (or a .cpt) to the binary format.
    /// INPUT may be `-` to read a pipe, e.g.
    /// `valgrind --tool=lackey --trace-mem=yes CMD 2>&1 | cachepart trace convert --from lackey - out.cpt`.
    Convert {
        /// Input file, or `-` for standard input.
        input: PathBuf,
        /// Output binary trace.
        #[command(flatten)]
        output: PositionalOutputArg,
        /// Input format.
        #[arg(long, value_parser = kind_parser_of(FROM_FORMATS))]
        from: TraceFormat,
        /// `--from lackey`: skip lines that are neither trace lines nor
        /// valgrind's (the traced program's own output mixed in by `2>&1`)
        /// instead of failing, and report how many were skipped.
        #[arg(long)]
        lenient: bool,
        #[command(flatten)]
        quiet: QuietArg,
    },
    /// Generate a synthetic trace from a generator config (TOML or JSON).
    Generate {
        /// Generator config (`.toml` or `.json`; `-` reads TOML from
        /// standard input).
        config: PathBuf,
        /// Output binary trace.
        #[command(flatten)]
        output: PositionalOutputArg,
        #[command(flatten)]
        quiet: QuietArg,
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
    /// `--tool cpgrind` runs the program under valgrind with cachepart's
    /// own valgrind tool, built with gcc on first use against the headers
    /// and libraries of Debian's `valgrind` package into
    /// ~/.cache/cachepart/valgrind-tool: lackey's records (with `--ifetch`
    /// the same trace as lackey's), many times faster, and with dependency
    /// hints: a load whose address was computed from the data of a load at
    /// most `--dep-window` instructions earlier is marked dependent
    /// (pointer chasing).
    ///
    /// A program that exits with a non-zero status still yields its trace:
    /// cachepart warns and then exits with the program's status (128 + N
    /// for a program killed by signal N). Errors (valgrind, its tool
    /// headers, qemu-user or gcc missing, command not found, malformed tool output) exit with status 1
    /// and leave no output file. SIGINT (Ctrl-C) or SIGTERM stops the
    /// program, removes every temporary and exits with 130 or 143, without
    /// an output file. On a terminal a spinner shows the instructions seen
    /// and the records kept (`-q`: none).
    Capture {
        /// The capture route.
        #[arg(long, value_enum, default_value = "lackey")]
        tool: CaptureTool,
        /// Output binary trace.
        #[arg(short, long)]
        output: PathBuf,
        /// `--tool qemu` or `cpgrind`: also record an instruction fetch per
        /// executed instruction (lackey always records them).
        #[arg(long)]
        ifetch: bool,
        /// `--tool cpgrind`: mark a load dependent when its address comes
        /// from the data of a load at most N instructions earlier (0: no
        /// hints; default 256).
        #[arg(long, value_name = "N")]
        dep_window: Option<u64>,
        /// Leave out the program's first N instructions (its start-up):
        /// recording starts at the first record past them.
        #[arg(long, value_name = "N", default_value_t = 0)]
        skip: u64,
        /// Record N instructions (after --skip), then stop the program;
        /// the trace is complete and the capture succeeds.
        #[arg(long, value_name = "N")]
        instructions: Option<u64>,
        #[command(flatten)]
        quiet: QuietArg,
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
    /// valgrind with cachepart's own tool: lackey's records with dependency hints, from Debian's `valgrind` and `gcc`.
    Cpgrind,
}

/// Input formats of `trace convert`, in the order `--help` lists them.
const FROM_FORMATS: [TraceFormat; 3] = [TraceFormat::Lackey, TraceFormat::Din, TraceFormat::Cpt];

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
        TraceCommand::Info {
            file,
            format,
            output,
        } => {
            let out = output.resolve()?;
            out.check_not_input([file.as_path()])?;
            let i = info(&file).with_context(|| format!("{}", file.display()))?;
            out.write_bytes(render_info(&file, &i, format.format)?.as_bytes())
        }
        TraceCommand::Convert {
            input,
            output,
            from,
            lenient,
            quiet,
        } => {
            if lenient && from != TraceFormat::Lackey {
                bail!("--lenient: for --from lackey only (din and cpt inputs have no foreign lines to skip)");
            }
            let format = from;
            let header = Header::default()
                .with_meta("source-format", format.name())
                .with_meta("source", input.display().to_string());
            let out = output.resolve()?;
            out.check_not_input([input.as_path()])?;
            let (raw, size): (Box<dyn Read>, Option<u64>) = if input.as_os_str() == "-" {
                (Box::new(std::io::stdin().lock()), None)
            } else {
                let f = File::open(&input).with_context(|| format!("{}", input.display()))?;
                let size = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
                (Box::new(f), size)
            };
            let bar = quiet.read_bar(size);
            let raw: Box<dyn Read> = match &bar {
                Some(pb) => Box::new(pb.wrap_read(raw)),
                None => raw,
            };
            let reader: Box<dyn BufRead> = Box::new(BufReader::with_capacity(1 << 20, raw));
            let result = out.write_with(|w| {
                if lenient {
                    convert_lackey_lenient(reader, w, &header)
                } else {
                    convert_stream(reader, format, w, &header).map(|s| (s, 0))
                }
                .with_context(|| format!("{}", input.display()))
            });
            if let Some(pb) = &bar {
                pb.finish_and_clear();
            }
            let (summary, skipped) = result?;
            if lenient {
                eprintln!(
                    "{}: {} records, {} foreign lines skipped",
                    out.display(),
                    summary.records,
                    skipped
                );
            } else {
                eprintln!("{}: {} records", out.display(), summary.records);
            }
            if summary.records == 0 {
                // every later use refuses such a trace: say why now
                let what = match format {
                    TraceFormat::Lackey => {
                        "trace lines (lackey writes them with --trace-mem=yes, e.g. `valgrind \
                         --tool=lackey --trace-mem=yes CMD 2>&1`)"
                    }
                    TraceFormat::Din => "trace lines",
                    TraceFormat::Cpt => "records",
                };
                eprintln!(
                    "warning: {} holds no {what}: {} has no records, which curves and \
                     scenario runs refuse",
                    input.display(),
                    out.display()
                );
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
                Some("json") => serde_json::from_str(&text).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: {}",
                        config.display(),
                        cachepart::units::input::plain_type_names(&e.to_string())
                    )
                })?,
                Some("toml") => {
                    toml::from_str(&text).with_context(|| format!("{}", config.display()))?
                }
                _ => bail!(
                    "{}: expected a .toml or .json generator config",
                    config.display()
                ),
            };
            let out = output.resolve()?;
            out.check_not_input([config.as_path()])?;
            // A runaway config (1e15 accesses) is refused before it fills
            // the disk. The bound is loose on purpose: compressed regular
            // patterns take well under a byte per access (0.57 B for a
            // stride), so only one byte per 1024 accesses is assumed.
            out.check_space(
                cfg.accesses / 1024,
                "one byte per 1024 accesses at the least",
            )?;
            let bar = quiet.bar(
                None,
                "{spinner} [{elapsed_precise}] {bytes} written ({bytes_per_sec})",
            );
            // a config the generator refuses is named by its file
            let named = |e: TraceError| match e {
                TraceError::Config(_) => {
                    anyhow::Error::from(e).context(config.display().to_string())
                }
                e => e.into(),
            };
            let summary = out.write_with(|w| match &bar {
                Some(pb) => cfg.write_to(pb.wrap_write(w)).map_err(named),
                None => cfg.write_to(w).map_err(named),
            });
            if let Some(pb) = &bar {
                pb.finish_and_clear();
            }
            let summary = summary?;
            eprintln!("{}: {} records", out.display(), summary.records);
            Ok(())
        }
        TraceCommand::Capture {
            tool,
            output,
            ifetch,
            dep_window,
            command,
            skip,
            instructions,
            quiet,
        } => crate::capture_cmd::capture(
            tool,
            &output,
            crate::capture_cmd::Window {
                ifetch,
                dep_window,
                skip,
                instructions,
            },
            &command,
            &quiet,
        ),
    }
}

/// One line of `trace info`'s CSV.
#[derive(Default, Serialize)]
struct InfoField {
    field: String,
    value: String,
}

/// `trace info` in `format`: aligned text, `field,value` CSV rows (the
/// header's metadata as `meta.KEY`), or the JSON object.
fn render_info(file: &Path, i: &cachepart::trace::TraceInfo, format: Format) -> Result<String> {
    let c = &i.counts;
    let mut rows: Vec<(String, String)> = vec![
        ("file".into(), file.display().to_string()),
        ("records".into(), c.records.to_string()),
        ("accesses".into(), i.accesses.to_string()),
        ("loads".into(), c.loads.to_string()),
        ("stores".into(), c.stores.to_string()),
        ("modifies".into(), c.modifies.to_string()),
        ("ifetches".into(), c.ifetches.to_string()),
        ("escapes".into(), c.escapes.to_string()),
        ("instructions".into(), c.instructions.to_string()),
        ("footprint_pages".into(), i.footprint_pages.to_string()),
        ("page_size".into(), i.page_size.to_string()),
        ("frames".into(), i.frames.to_string()),
        ("file_bytes".into(), i.file_bytes.to_string()),
        (
            "bytes_per_access".into(),
            i.bytes_per_access
                .map_or_else(String::new, |b| format!("{b:.3}")),
        ),
    ];
    Ok(match format {
        Format::Json => {
            /// The JSON object: the file first, as in the table and CSV.
            #[derive(Serialize)]
            struct InfoJson<'a> {
                file: String,
                #[serde(flatten)]
                info: &'a cachepart::trace::TraceInfo,
            }
            let json = InfoJson {
                file: file.display().to_string(),
                info: i,
            };
            format!("{}\n", serde_json::to_string_pretty(&json)?)
        }
        Format::Csv => {
            rows.extend(i.meta.iter().map(|(k, v)| (format!("meta.{k}"), v.clone())));
            let rows: Vec<InfoField> = rows
                .into_iter()
                .map(|(field, value)| InfoField { field, value })
                .collect();
            output::to_csv(&rows, CsvOptions::default())
        }
        Format::Table => {
            let mut s = String::new();
            s += &format!("file              {}\n", file.display());
            s += &format!("records           {}\n", c.records);
            s += &format!("accesses          {}\n", i.accesses);
            s += &format!("  loads           {}\n", c.loads);
            s += &format!("  stores          {}\n", c.stores);
            s += &format!("  modifies        {}\n", c.modifies);
            s += &format!("  ifetches        {}\n", c.ifetches);
            s += &format!("escapes           {}\n", c.escapes);
            s += &format!("instructions      {}\n", c.instructions);
            s += &format!(
                "footprint         {} pages of {} bytes\n",
                i.footprint_pages, i.page_size
            );
            s += &format!("frames            {}\n", i.frames);
            s += &format!("file bytes        {}\n", i.file_bytes);
            match i.bytes_per_access {
                Some(b) => s += &format!("bytes per access  {b:.3}\n"),
                None => s += "bytes per access  - (no records)\n",
            }
            for (k, v) in &i.meta {
                s += &format!("meta {k:<12} {v}\n");
            }
            s
        }
    })
}
