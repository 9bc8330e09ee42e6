//! Fuzz target `lackey`: see `cachepart_fuzz::check_lackey`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cachepart_fuzz::check_lackey(data);
});
