//! `cachepart platform list | show | colors`: the simulator's platforms
//! (built in, or a platform file) and their page colors.

use anyhow::{anyhow, Context, Result};
use cachepart::spec::platforms;
use cachepart_sim::memory::{AllocatorKind, ColorLayout, ColorReport, PageSize, FRAME_BYTES};
use clap::Subcommand;

/// `cachepart platform ...`
#[derive(Subcommand)]
pub enum PlatformCommand {
    /// List the built-in platforms.
    List,
    /// Print a platform (built-in name or file) as TOML.
    Show {
        /// Built-in name or platform file (`-`: a TOML platform from
        /// standard input).
        platform: String,
    },
    /// The page-color layout of a platform's LLC; with --colors, what a
    /// color set (range syntax, `0-15,32`) holds.
    Colors {
        /// Built-in name or platform file.
        platform: String,
        /// A color set to describe (`0-15,32`, as Xen and Jailhouse write
        /// them).
        #[arg(long)]
        colors: Option<String>,
        /// Page size in bytes (4096, or 2097152 for superpages).
        #[arg(long, default_value_t = FRAME_BYTES)]
        page: u64,
    },
}

/// Runs a `platform` subcommand.
pub fn run(cmd: PlatformCommand) -> Result<()> {
    match cmd {
        PlatformCommand::List => {
            for (name, what, _) in platforms::BUILTIN {
                println!("{name:<16} {what}");
            }
        }
        PlatformCommand::Show { platform } => {
            let p = platforms::resolve(&platform, None)?;
            print!("{}", toml::to_string(&p)?);
        }
        PlatformCommand::Colors {
            platform,
            colors,
            page,
        } => {
            let p = platforms::resolve(&platform, None)?;
            let g = p.llc.geometry()?;
            let size = PageSize::from_bytes(page).map_err(|e| anyhow!("--page: {e}"))?;
            let layout = ColorLayout::new(&g, size.bytes())?;
            let pool = match p.memory.allocator {
                AllocatorKind::Coloris => p.memory.coloris.pool_bytes,
                _ => p.memory.size_bytes,
            };
            // the color set is checked before anything is printed
            let set = match &colors {
                Some(text) if text.trim().is_empty() => {
                    return Err(anyhow!(
                        "--colors \"{text}\": empty color set; expected colors like 0-15,32"
                    ))
                }
                Some(text) => Some(
                    layout
                        .parse_colors(text)
                        .with_context(|| format!("--colors {text}"))?,
                ),
                None => None,
            };
            let report = ColorReport::new(&layout, g.ways(), g.slices(), Some(pool));
            println!("{}: {report}", p.name);
            if let Some(set) = set {
                println!("{}", report.describe_set(&set));
            }
        }
    }
    Ok(())
}
