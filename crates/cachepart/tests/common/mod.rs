//! The mix the online-controller tests run on the simulator: a
//! cache-sensitive app (2 MiB working set) beside a stream over 64 MiB,
//! on the Xeon 5160 (4 MiB, 16-way LLC), with no alone runs.

use cachepart::spec::scenario::{Scenario, ScenarioFile};

const APPS: &str = r#"
[[app]]
name = "sensitive"
synth = { seed = 1, accesses = 200_000, pattern = { class = "cache-sensitive", working-set-bytes = 2_097_152 } }
base-cpi = 0.8

[[app]]
name = "streaming"
synth = { seed = 2, accesses = 1_500_000, pattern = { class = "streaming", array-bytes = 67_108_864 } }
mlp = 4.0
"#;

/// The sensitive-and-streaming scenario named `name`: sampled every
/// `interval` cycles, with the top-level keys and sections of `head`
/// (a policy and its section).
pub fn sensitive_and_streaming(
    name: &str,
    interval: u64,
    head: &str,
) -> Result<Scenario, cachepart::Error> {
    let text = format!(
        "platform = \"xeon-5160\"\nseed = 3\ninterval-cycles = {interval}\n\
         instructions = 4_000_000\nalone = false\n{head}\n{APPS}"
    );
    let file: ScenarioFile = toml::from_str(&text).expect("valid TOML");
    Scenario::from_file(file, name.into(), None, None)
}
