//! cachegrind's cache options: the `SIZE,WAYS,LINE` syntax of `--I1`,
//! `--D1` and `--LL`, the checks cachegrind makes of each cache (its
//! refusals, in its own words), and the geometry it falls back to when an
//! option is omitted and it cannot read the host's caches.
//!
//! [`parse_cache_opt`] reads one option value; [`check_cache`] is
//! cachegrind's check of one cache, in cachegrind's order and with its
//! arithmetic (values are C `int`s: anything beyond `i32` is refused as an
//! overflow, as cachegrind does). [`CachegrindConfig::check`] checks all
//! three caches and names the option at fault. The messages are
//! cachegrind's (valgrind 3.19's `cg_arch.c`), for instance
//! `Cache set count is not a power of two.`; cachegrind divides by zero on
//! zero ways or a zero line size, which are refused here with messages of
//! our own.

use thiserror::Error;

use crate::cachegrind::CachegrindConfig;
use crate::error::SimError;
use crate::geometry::CacheConfig;
use crate::system::PlatformConfig;

/// cachegrind's smallest line size (`MIN_LINE_SIZE` in `cg_arch.c`).
pub const CACHEGRIND_MIN_LINE_SIZE: i64 = 16;

/// Why cachegrind refuses a cache option (the text is cachegrind's).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CacheOptError {
    /// Not three comma-separated integers.
    #[error("Bad argument '{0}': expected SIZE,WAYS,LINE, three integers (e.g. 32768,8,64)")]
    Syntax(String),
    /// A value does not fit cachegrind's `int`.
    #[error("One of the cache parameters was too large and overflowed.")]
    Overflow,
    /// `size / (ways x line)` is not a whole power of two.
    #[error("Cache set count is not a power of two.")]
    SetCount,
    /// The line size is not a power of two.
    #[error("Cache line size is not a power of two.")]
    LineNotPowerOfTwo,
    /// The line size is below [`CACHEGRIND_MIN_LINE_SIZE`].
    #[error("Cache line size is too small.")]
    LineTooSmall,
    /// The cache holds one line or less.
    #[error("Cache size <= line size.")]
    SizeNotAboveLine,
    /// More ways than lines.
    #[error("Cache associativity > (size / line size).")]
    AssocTooLarge,
    /// Zero ways (cachegrind itself dies of a division by zero).
    #[error("Cache associativity is 0: a cache needs at least one way.")]
    NoWays,
    /// A negative value (our words: cachegrind lets its later checks
    /// refuse it, as a set count or size that makes no sense).
    #[error("Cache {what} is negative ({value}): expected a positive integer.")]
    Negative {
        /// `size`, `associativity` or `line size`.
        what: &'static str,
        /// The value given.
        value: i64,
    },
    /// More ways than the simulator models (our words: cachegrind itself
    /// takes any associativity).
    #[error("Cache associativity {0} is above {MAX_WAYS}, the most this simulator models.")]
    TooManyWays(i64),
}

/// The most ways a cache of the simulator has (its masks are 64-bit).
pub const MAX_WAYS: i64 = 64;

/// Parses one `--I1`/`--D1`/`--LL` value, `SIZE,WAYS,LINE` in bytes, ways
/// and bytes, and checks it as cachegrind does, with two checks of our
/// own around cachegrind's: a negative value is refused as such first,
/// and more than [`MAX_WAYS`] ways last (the simulator's limit).
pub fn parse_cache_opt(value: &str) -> Result<CacheConfig, CacheOptError> {
    let syntax = || CacheOptError::Syntax(value.to_string());
    let mut parts = value.split(',');
    let mut field = || -> Result<i64, CacheOptError> {
        let p = parts.next().ok_or_else(syntax)?;
        let digits = p.strip_prefix(['-', '+']).unwrap_or(p);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(syntax());
        }
        // cachegrind reads a 64-bit integer, then refuses what an int
        // cannot hold
        let v: i64 = p.parse().map_err(|_| CacheOptError::Overflow)?;
        i32::try_from(v).map_err(|_| CacheOptError::Overflow)?;
        Ok(v)
    };
    let (size, ways, line) = (field()?, field()?, field()?);
    if parts.next().is_some() {
        return Err(syntax());
    }
    for (what, value) in [("size", size), ("associativity", ways), ("line size", line)] {
        if value < 0 {
            return Err(CacheOptError::Negative { what, value });
        }
    }
    check_cache(size, ways, line)?;
    if ways > MAX_WAYS {
        return Err(CacheOptError::TooManyWays(ways));
    }
    // the checks leave all three positive and within an int
    Ok(CacheConfig::lru(size as u64, ways as u32, line as u32))
}

/// cachegrind's check of one cache, in its order: a power-of-two set
/// count (the size a whole number of sets), a power-of-two line of at
/// least [`CACHEGRIND_MIN_LINE_SIZE`] bytes, a size above one line, and no
/// more ways than lines. The values are signed, as cachegrind's are.
pub fn check_cache(size: i64, ways: i64, line: i64) -> Result<(), CacheOptError> {
    if ways == 0 {
        return Err(CacheOptError::NoWays);
    }
    if line == 0 {
        return Err(CacheOptError::LineNotPowerOfTwo);
    }
    // cachegrind's log2 takes an unsigned int: a negative count wraps
    let pow2 = |v: i64| (v as u32).is_power_of_two();
    if size % (line * ways) != 0 || !pow2(size / line / ways) {
        return Err(CacheOptError::SetCount);
    }
    if !pow2(line) {
        return Err(CacheOptError::LineNotPowerOfTwo);
    }
    if line < CACHEGRIND_MIN_LINE_SIZE {
        return Err(CacheOptError::LineTooSmall);
    }
    if size <= line {
        return Err(CacheOptError::SizeNotAboveLine);
    }
    if ways > size / line {
        return Err(CacheOptError::AssocTooLarge);
    }
    Ok(())
}

impl CachegrindConfig {
    /// The geometry cachegrind falls back to when it cannot read the
    /// host's caches: I1 and D1 65536,2,64, LL 262144,8,64.
    pub fn cachegrind_default() -> Self {
        CachegrindConfig::lru((65536, 2, 64), (65536, 2, 64), (262_144, 8, 64))
    }

    /// A platform's L1I, L1D and LLC as cachegrind's I1, D1 and LL: size,
    /// ways and line only (LRU, one slice; a private L2 is left out, as
    /// cachegrind simulates two levels).
    pub fn from_platform(p: &PlatformConfig) -> Self {
        let lru = |c: &CacheConfig| CacheConfig::lru(c.size_bytes, c.ways, c.line_bytes);
        CachegrindConfig {
            i1: lru(&p.core.l1i),
            d1: lru(&p.core.l1d),
            ll: lru(&p.llc),
        }
    }

    /// cachegrind's checks of all three caches; the error names the option
    /// (`--LL=6291456,16,64`).
    pub fn check(&self) -> Result<(), SimError> {
        for (name, c) in [("I1", &self.i1), ("D1", &self.d1), ("LL", &self.ll)] {
            // what an int cannot hold, cachegrind refuses first
            let int = |v: u64| {
                i32::try_from(v)
                    .map(i64::from)
                    .map_err(|_| CacheOptError::Overflow)
            };
            (|| {
                let (size, ways, line) = (
                    int(c.size_bytes)?,
                    int(c.ways.into())?,
                    int(c.line_bytes.into())?,
                );
                check_cache(size, ways, line)
            })()
            .map_err(|source| SimError::CachegrindOption {
                option: format!("--{name}={}", c.valgrind_arg()),
                source,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(v: &str) -> String {
        parse_cache_opt(v).unwrap_err().to_string()
    }

    #[test]
    fn parses_size_ways_line() {
        let c = parse_cache_opt("32768,8,64").unwrap();
        assert_eq!((c.size_bytes, c.ways, c.line_bytes), (32768, 8, 64));
        // three ways and a power-of-two set count: cachegrind accepts it
        let c = parse_cache_opt("3072,3,64").unwrap();
        assert_eq!(c.geometry().unwrap().sets(), 16);
    }

    /// Each case is one that valgrind 3.19 refuses with this message
    /// (checked by hand with `valgrind --tool=cachegrind --I1=...`).
    #[test]
    fn refuses_with_cachegrinds_words() {
        let set = "Cache set count is not a power of two.";
        for v in [
            "1000,2,64",
            "1024,3,64",
            "1024,2,48",
            "0,2,64",
            "6291456,16,64",
        ] {
            assert_eq!(err(v), set, "{v}");
        }
        // negative values: cachegrind's own check, and the option's
        assert_eq!(
            check_cache(-1, 2, 64).unwrap_err().to_string(),
            set,
            "-1,2,64"
        );
        assert_eq!(
            check_cache(-1024, -2, 64).unwrap_err().to_string(),
            "Cache size <= line size."
        );
        assert_eq!(err("384,1,48"), "Cache line size is not a power of two.");
        assert_eq!(err("1024,2,8"), "Cache line size is too small.");
        assert_eq!(err("64,1,64"), "Cache size <= line size.");
        assert_eq!(
            err("99999999999999,2,64"),
            "One of the cache parameters was too large and overflowed."
        );
        assert_eq!(
            err("99999999999999999999999,2,64"),
            "One of the cache parameters was too large and overflowed."
        );
        for v in [
            "abc",
            "1024,2",
            "1024,2,64,5",
            "1024,2,64,",
            "1024,,64",
            " 1024,2,64",
            "1e3,2,64",
            "--5,2,64",
        ] {
            assert!(err(v).starts_with(&format!("Bad argument '{v}'")), "{v}");
        }
        assert!(err("1024,0,64").contains("associativity is 0"));
        assert_eq!(
            err("-1,2,64"),
            "Cache size is negative (-1): expected a positive integer."
        );
        assert_eq!(
            err("65536,-2,64"),
            "Cache associativity is negative (-2): expected a positive integer."
        );
        assert_eq!(
            err("65536,2,-64"),
            "Cache line size is negative (-64): expected a positive integer."
        );
        assert_eq!(
            err("65536,1024,64"),
            "Cache associativity 1024 is above 64, the most this simulator models."
        );
        assert!(parse_cache_opt("65536,64,64").is_ok());
        assert_eq!(err("1024,2,0"), "Cache line size is not a power of two.");
    }

    #[test]
    fn checks_name_the_option() {
        assert!(CachegrindConfig::cachegrind_default().check().is_ok());
        let bad = CachegrindConfig::lru((32768, 8, 64), (32768, 8, 64), (28_835_840, 11, 64));
        assert_eq!(
            bad.check().unwrap_err().to_string(),
            "bad option --LL=28835840,11,64: Cache set count is not a power of two."
        );
        let big = CachegrindConfig::lru((32768, 8, 64), (32768, 8, 64), (4 << 30, 16, 64));
        assert!(big.check().unwrap_err().to_string().contains("overflowed"));
    }
}
