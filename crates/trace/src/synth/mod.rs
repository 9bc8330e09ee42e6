//! Seeded synthetic generators for the application classes of the papers.
//!
//! A [`SynthConfig`] names a [`Pattern`] (streaming, cache-sensitive, light,
//! strided, or a sequence of phases), an instruction [`InstructionMix`], a seed and a
//! number of accesses; [`Generator`] turns it into the same [`Record`]s the
//! readers yield. The same configuration always gives the same records.
//! The mix's `accesses-per-instr` is at least 1e-12
//! ([`MIN_ACCESSES_PER_INSTR`]), and a configuration's mean instruction
//! count (`accesses / accesses-per-instr`) at most 2^58, so that every
//! gap fits one `InstrGap` escape and the count a u64; sparser
//! configurations are refused rather than written with wrong counts.
//! Configurations deserialise from TOML or JSON with kebab-case names:
//!
//! ```
//! use cachepart_trace::synth::SynthConfig;
//! let cfg: SynthConfig = serde_json::from_str(r#"{
//!     "seed": 7, "accesses": 1000,
//!     "pattern": { "class": "cache-sensitive", "working-set-bytes": 65536,
//!                  "distribution": "zipf" }
//! }"#).unwrap();
//! let records: Vec<_> = cfg.generator().unwrap().collect();
//! assert!(records.iter().filter(|r| r.is_access()).count() == 1000);
//! ```

mod mix;
mod pattern;
mod phases;
mod streaming;
mod strided;
mod working_set;
mod zipf;

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Result, TraceError};
use crate::header::Header;
use crate::record::{AfterGap, Kind, Record, MAX_SIZE};
use crate::writer::{WriteSummary, Writer};

pub use mix::{InstructionMix, MIN_ACCESSES_PER_INSTR};
pub use pattern::{Distribution, Pattern, Phase};

use phases::Phases;
use streaming::Streaming;
use strided::Strided;
use working_set::WorkingSet;

/// Highest address a generator may touch (user half of 48-bit space).
const ADDR_LIMIT: u64 = 1 << 47;

/// The most instructions a configuration may make on average
/// (`accesses / accesses-per-instr`): 2^58, so that even gaps all at their
/// longest draw (about 37 times the mean) keep the count within a u64.
const MAX_MEAN_INSTRUCTIONS: f64 = (1u64 << 58) as f64;

/// A synthetic application: pattern, instruction mix, seed and length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SynthConfig {
    /// Seed of the generator's random stream.
    pub seed: u64,
    /// Number of access records to generate (escapes not counted).
    pub accesses: u64,
    /// The address pattern.
    pub pattern: Pattern,
    /// Loads, stores and instructions between accesses.
    #[serde(default)]
    pub mix: InstructionMix,
    /// Lowest address of the pattern's data.
    #[serde(default = "default_base")]
    pub base: u64,
    /// Cache line size, in bytes, for line-granular patterns.
    #[serde(default = "default_line")]
    pub line_bytes: u32,
}

fn default_base() -> u64 {
    0x1000_0000
}
fn default_line() -> u32 {
    64
}
fn invalid(msg: impl Into<String>) -> TraceError {
    TraceError::Config(msg.into())
}

/// One pattern's state.
enum State {
    Streaming(Streaming),
    WorkingSet(WorkingSet),
    Strided(Strided),
    Phases(Phases),
}

impl State {
    fn new(p: &Pattern, base: u64, line: u32) -> Result<State> {
        let check_elem = |e: u32| {
            if e == 0 || e > MAX_SIZE {
                Err(invalid(format!("element-bytes {e} outside 1..=127")))
            } else {
                Ok(())
            }
        };
        let check_span = |bytes: u64| {
            if base > ADDR_LIMIT || bytes > ADDR_LIMIT - base {
                Err(invalid("pattern runs past the 47-bit user address space"))
            } else {
                Ok(())
            }
        };
        Ok(match *p {
            Pattern::Streaming {
                array_bytes,
                element_bytes,
            } => {
                check_elem(element_bytes)?;
                check_span(array_bytes)?;
                if array_bytes < u64::from(element_bytes) {
                    return Err(invalid("array-bytes smaller than one element"));
                }
                State::Streaming(Streaming::new(base, array_bytes, element_bytes))
            }
            Pattern::CacheSensitive {
                working_set_bytes,
                distribution,
                zipf_exponent,
            } => {
                check_span(working_set_bytes)?;
                // Checked whatever the distribution: the configuration is
                // recorded as JSON in trace headers, which has no NaN or inf.
                if !zipf_exponent.is_finite() {
                    return Err(invalid(format!(
                        "zipf-exponent {zipf_exponent} must be finite"
                    )));
                }
                State::WorkingSet(WorkingSet::new(
                    base,
                    working_set_bytes,
                    line,
                    distribution,
                    zipf_exponent,
                )?)
            }
            Pattern::Light { working_set_bytes } => {
                check_span(working_set_bytes)?;
                State::WorkingSet(WorkingSet::new(
                    base,
                    working_set_bytes,
                    line,
                    Distribution::Uniform,
                    0.0,
                )?)
            }
            Pattern::Strided {
                array_bytes,
                stride_bytes,
                element_bytes,
            } => {
                check_elem(element_bytes)?;
                check_span(array_bytes)?;
                if stride_bytes == 0 || array_bytes < u64::from(element_bytes) {
                    return Err(invalid(
                        "stride-bytes must be positive and array-bytes at least one element",
                    ));
                }
                State::Strided(Strided::new(base, array_bytes, stride_bytes, element_bytes))
            }
            Pattern::Phases { ref phases } => {
                if phases.is_empty() || phases.iter().any(|p| p.accesses == 0) {
                    return Err(invalid("phases must be non-empty, each with accesses > 0"));
                }
                let states = phases
                    .iter()
                    .map(|ph| {
                        let at = base.checked_add(ph.offset_bytes).ok_or_else(|| {
                            invalid("phase offset-bytes runs past the 47-bit user address space")
                        })?;
                        Ok((ph.accesses, State::new(&ph.pattern, at, line)?))
                    })
                    .collect::<Result<Vec<_>>>()?;
                State::Phases(Phases::new(states))
            }
        })
    }

    /// Whether the last access was a pointer chase's (its address came
    /// from the previous one's data).
    fn chases(&self) -> bool {
        match self {
            State::WorkingSet(s) => s.chases(),
            State::Phases(s) => s.chases(),
            State::Streaming(_) | State::Strided(_) => false,
        }
    }

    /// The next address and access size.
    fn next(&mut self, rng: &mut ChaCha8Rng) -> (u64, u32) {
        match self {
            State::Streaming(s) => s.next(),
            State::WorkingSet(s) => s.next(rng),
            State::Strided(s) => s.next(),
            State::Phases(s) => s.next(rng),
        }
    }
}

impl SynthConfig {
    /// A generator for this configuration (checks it first).
    pub fn generator(&self) -> Result<Generator> {
        if !self.line_bytes.is_power_of_two() || self.line_bytes > 4096 {
            return Err(invalid("line-bytes must be a power of two up to 4096"));
        }
        self.mix.check()?;
        // Every gap is at most about 37 times the mean: under this bound
        // on the mean count, the trace's instructions fit a u64.
        let instructions = self.accesses as f64 / self.mix.accesses_per_instr;
        if instructions > MAX_MEAN_INSTRUCTIONS {
            return Err(invalid(format!(
                "accesses {} at accesses-per-instr {} make about {instructions:.3e} instructions, more than a trace counts (at most 2^58, about {MAX_MEAN_INSTRUCTIONS:.3e}); lower accesses or raise accesses-per-instr",
                self.accesses, self.mix.accesses_per_instr
            )));
        }
        Ok(Generator {
            rng: ChaCha8Rng::seed_from_u64(self.seed),
            state: State::new(&self.pattern, self.base, self.line_bytes)?,
            mix: self.mix.clone(),
            left: self.accesses,
            pending: AfterGap::default(),
        })
    }

    /// Generates the trace into a binary trace file at `path`; the
    /// configuration is recorded in the header as JSON (`synth`).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<WriteSummary> {
        self.write_to(BufWriter::new(File::create(path)?))
    }

    /// Generates the trace into `out` (a file, a pipe, stdout), like
    /// [`SynthConfig::write`].
    pub fn write_to<W: std::io::Write>(&self, out: W) -> Result<WriteSummary> {
        let gen = self.generator()?;
        let json = serde_json::to_string(self).map_err(|e| invalid(e.to_string()))?;
        let header = Header::default()
            .with_meta("source-format", "synth")
            .with_meta("synth", json);
        let mut w = Writer::new(out, &header)?;
        w.extend(gen)?;
        Ok(w.finish()?.1)
    }
}

/// Yields the records of a [`SynthConfig`]; deterministic for a seed.
pub struct Generator {
    rng: ChaCha8Rng,
    state: State,
    mix: InstructionMix,
    left: u64,
    pending: AfterGap,
}

impl Iterator for Generator {
    type Item = Record;

    #[inline]
    fn next(&mut self) -> Option<Record> {
        if let Some(r) = self.pending.next() {
            return Some(r);
        }
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (addr, size) = self.state.next(&mut self.rng);
        let mut kind = self.mix.kind(&mut self.rng);
        if kind == Kind::Load && self.mix.dependency_hints && self.state.chases() {
            kind = Kind::DepLoad;
        }
        let gap = self.mix.gap(&mut self.rng);
        // Fields were checked when the generator was built.
        let rec = Record::access(kind, addr, size, 0).expect("generator fields are valid");
        // The escapes of a large gap (if any), then the record.
        self.pending = rec.after_gap(gap);
        self.pending.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the synth fuzz check: a non-finite zipf-exponent with a uniform
    /// distribution was accepted, then recorded in the trace header as JSON
    /// `null`, which does not parse back.
    #[test]
    fn non_finite_zipf_exponent_is_rejected_for_every_distribution() {
        for text in ["nan", "inf", "-inf"] {
            let cfg: SynthConfig = toml::from_str(&format!(
                "seed = 1\naccesses = 10\n[pattern]\nclass = \"cache-sensitive\"\n\
                 working-set-bytes = 4096\nzipf-exponent = {text}\n"
            ))
            .unwrap();
            let err = cfg.generator().err().expect(text);
            assert!(err.to_string().contains("must be finite"), "{err}");
        }
        let cfg: SynthConfig = toml::from_str(
            "seed = 1\naccesses = 10\n[pattern]\nclass = \"cache-sensitive\"\n\
             working-set-bytes = 4096\nzipf-exponent = -2.0\n",
        )
        .unwrap();
        let json = serde_json::to_string(&cfg).unwrap();
        assert_eq!(serde_json::from_str::<SynthConfig>(&json).unwrap(), cfg);
        assert!(cfg.generator().is_ok());
    }

    fn sparse(accesses: u64, api: &str) -> SynthConfig {
        toml::from_str(&format!(
            "seed = 1\naccesses = {accesses}\n[mix]\naccesses-per-instr = {api}\n\
             [pattern]\nclass = \"light\"\nworking-set-bytes = 4096\n"
        ))
        .unwrap()
    }

    /// Found by a robustness probe: below about 1.1e-16 every gap was 1
    /// (1000 instructions for 1000 accesses), and near 1e-14 the count was
    /// 8% short; gaps past 2^48 were clamped.
    #[test]
    fn sparse_mixes_count_their_instructions_or_are_refused() {
        let count = |cfg: &SynthConfig| {
            let mut c = crate::Counts::default();
            for r in cfg.generator().unwrap() {
                c.add(r);
            }
            c.instructions
        };
        let n = count(&sparse(1000, "1e-12")) as f64;
        assert!((0.9e15..1.1e15).contains(&n), "{n}");
        for api in ["1e-14", "1e-17", "1e-300"] {
            let err = sparse(1000, api).generator().err().expect(api).to_string();
            assert!(err.contains("outside [1e-12, 64]"), "{err}");
        }
        let err = sparse(1_000_000, "1e-12").generator().err().unwrap();
        assert!(
            err.to_string().contains("more than a trace counts"),
            "{err}"
        );
        assert!(sparse(1_000_000, "1e-11").generator().is_ok());
    }
}
