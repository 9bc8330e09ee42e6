//! Fuzz target `synth`: see `cachepart_fuzz::check_synth`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachepart_fuzz::check_synth(data);
});
