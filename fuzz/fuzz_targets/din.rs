//! Fuzz target `din`: see `cachepart_fuzz::check_din`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachepart_fuzz::check_din(data);
});
