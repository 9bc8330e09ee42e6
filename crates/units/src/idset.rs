//! Sets of small integer ids (colors, cores) in the `0-15,32` range syntax.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// A sorted set of ids, written as comma-separated ranges (`0-3,8,10-11`),
/// the syntax of Linux cpusets, Xen and Jailhouse configurations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IdSet(BTreeSet<u32>);

/// A range list that does not parse.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("invalid id list {text:?} at item {item:?}: {reason}")]
pub struct IdSetError {
    /// The whole text.
    pub text: String,
    /// The item that failed.
    pub item: String,
    /// What was expected.
    pub reason: &'static str,
}

impl IdSet {
    /// The empty set.
    pub fn new() -> Self {
        IdSet(BTreeSet::new())
    }

    /// Adds one id.
    pub fn insert(&mut self, id: u32) {
        self.0.insert(id);
    }

    /// True if `id` is in the set.
    pub fn contains(&self, id: u32) -> bool {
        self.0.contains(&id)
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if there is no id.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The ids in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    /// The largest id, if any.
    pub fn max(&self) -> Option<u32> {
        self.0.iter().next_back().copied()
    }
}

impl FromIterator<u32> for IdSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        IdSet(iter.into_iter().collect())
    }
}

impl fmt::Display for IdSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut it = self.0.iter().copied().peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end += 1;
                it.next();
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if end == start {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

impl FromStr for IdSet {
    type Err = IdSetError;
    fn from_str(s: &str) -> Result<Self, IdSetError> {
        let err = |item: &str, reason| IdSetError {
            text: s.to_string(),
            item: item.to_string(),
            reason,
        };
        let mut set = BTreeSet::new();
        if s.trim().is_empty() {
            return Ok(IdSet(set));
        }
        for item in s.split(',') {
            let item_t = item.trim();
            let (a, b) = match item_t.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (item_t, item_t),
            };
            let a: u32 = a
                .parse()
                .map_err(|_| err(item_t, "expected a number or a range like 0-15"))?;
            let b: u32 = b
                .parse()
                .map_err(|_| err(item_t, "expected a number or a range like 0-15"))?;
            if b < a {
                return Err(err(item_t, "range end is below its start"));
            }
            if b - a > 1 << 20 {
                return Err(err(item_t, "range is too large"));
            }
            set.extend(a..=b);
        }
        Ok(IdSet(set))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parse_and_print() {
        let s: IdSet = "0-3, 8,10-11".parse().unwrap();
        assert_eq!(s.len(), 7);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        assert!("3-1".parse::<IdSet>().is_err());
        assert!("a".parse::<IdSet>().is_err());
        assert!("".parse::<IdSet>().unwrap().is_empty());
    }

    proptest! {
        #[test]
        fn roundtrip(ids in proptest::collection::btree_set(0u32..200, 0..50)) {
            let s: IdSet = ids.iter().copied().collect();
            let back: IdSet = s.to_string().parse().unwrap();
            prop_assert_eq!(back, s);
        }
    }
}
