//! Fuzz target `trace_file`: see `cachepart_fuzz::check_trace_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = cachepart_fuzz::check_trace_file(data);
});
