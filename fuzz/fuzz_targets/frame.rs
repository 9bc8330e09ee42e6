//! Fuzz target `frame`: see `cachepart_fuzz::check_frame`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachepart_fuzz::check_frame(data);
});
