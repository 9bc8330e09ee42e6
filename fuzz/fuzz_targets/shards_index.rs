//! Fuzz target `shards_index`: see `fuzz/src/shards_index_check.rs`.
#![no_main]

#[path = "../src/shards_index_check.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    check::check_shards_index(data);
});
