//! cachepart-repro: the paper reproductions. Each is a sweep of simulator
//! scenarios that reproduces a paper's figure, described by one experiment
//! file and run by one command (`cachepart experiment run FILE`), on top
//! of the `cachepart` facade.
//!
//! An experiment file (TOML, kebab-case keys, unknown keys rejected) has
//! a base scenario (`[scenario]`, the keys of a scenario file without
//! apps), named programs (`[program.NAME]`, the keys of an `[[app]]`
//! without its name), a design (`[design] kind = ...`) that turns them
//! into independent runs, and the paper's claims (`[[claim]]`) with the
//! metric of ours that each one is compared with:
//!
//! * [`file`](mod@file): the file format and its checks;
//! * [`build`]: one run's scenario from the base, the programs and the
//!   run's overrides;
//! * [`design`]: the designs: `color-sweep` (Tam et al., Fig. 3), `split`
//!   (Fig. 4), `background` (COLORIS 4.2), `variants` (configurations
//!   side by side: COLORIS 4.3 and 4.4) and `mechanisms` (workloads under
//!   memory-system mechanisms: SWAP);
//! * [`window`]: a measurement window after a warm-up (the papers'
//!   fast-forward);
//! * [`runner`]: runs every run in parallel (rayon) and analyses them;
//! * [`table`]: the result table (CSV and markdown);
//! * [`plot`]: the figure (PNG, plotters);
//! * [`writeup`]: the markdown write-up, the paper's claims and our
//!   numbers side by side.
//!
//! Output is deterministic: the same file gives byte-identical CSV and
//! markdown (and the same PNG).

#![deny(missing_docs)]

pub mod build;
pub mod design;
pub mod file;
pub mod plot;
pub mod runner;
pub mod table;
pub mod window;
pub mod writeup;

pub use file::{Claim, ExperimentFile};
pub use runner::{
    output_files, output_names, run_experiment, Analysis, ExperimentOutput, OutputFile,
};
