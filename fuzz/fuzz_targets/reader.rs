//! Fuzz target `reader`: see `cachepart_fuzz::check_reader`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = cachepart_fuzz::check_reader(data);
});
