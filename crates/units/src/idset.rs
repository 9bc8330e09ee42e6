//! Sets of small integer ids (colors, cores) in the `0-15,32` range syntax.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// A sorted set of ids, written as comma-separated ranges (`0-3,8,10-11`),
/// the syntax of Linux cpusets, Xen and Jailhouse configurations.
///
/// Serde writes the range text (`"0-3,8"`) and reads either that text or
/// a list of numbers (`[0, 1, 2, 3, 8]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
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

    /// The smallest id, if any.
    pub fn min(&self) -> Option<u32> {
        self.0.iter().next().copied()
    }

    /// The first id that is not below `limit` (for checking a set against
    /// a count of colors or cores), if any.
    pub fn first_at_or_above(&self, limit: u32) -> Option<u32> {
        self.0.range(limit..).next().copied()
    }

    /// The ids of `self` that are not in `other`.
    pub fn difference(&self, other: &IdSet) -> IdSet {
        IdSet(self.0.difference(&other.0).copied().collect())
    }

    /// The ids of `self` or `other`.
    pub fn union(&self, other: &IdSet) -> IdSet {
        IdSet(self.0.union(&other.0).copied().collect())
    }

    /// The ids in both sets.
    pub fn intersection(&self, other: &IdSet) -> IdSet {
        IdSet(self.0.intersection(&other.0).copied().collect())
    }

    /// Removes one id; true if it was there.
    pub fn remove(&mut self, id: u32) -> bool {
        self.0.remove(&id)
    }
}

impl Serialize for IdSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

struct IdSetVisitor;

impl<'de> Visitor<'de> for IdSetVisitor {
    type Value = IdSet;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an id list like \"0-3,8\" or a list of numbers")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<IdSet, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<IdSet, E> {
        u32::try_from(v)
            .map(|id| IdSet(BTreeSet::from([id])))
            .map_err(|_| E::custom(format!("id {v} does not fit in 32 bits")))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IdSet, A::Error> {
        let mut set = BTreeSet::new();
        while let Some(id) = seq.next_element::<u32>()? {
            set.insert(id);
        }
        Ok(IdSet(set))
    }
}

impl<'de> Deserialize<'de> for IdSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IdSet, D::Error> {
        d.deserialize_any(IdSetVisitor)
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
        assert_eq!(s.first_at_or_above(9), Some(10));
        assert_eq!(s.first_at_or_above(12), None);
    }

    #[test]
    fn serde_as_range_text() {
        let s: IdSet = "0-3,8".parse().unwrap();
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(j, "\"0-3,8\"");
        assert_eq!(serde_json::from_str::<IdSet>(&j).unwrap(), s);
        assert_eq!(serde_json::from_str::<IdSet>("[8,0,1,2,3]").unwrap(), s);
        let e = serde_json::from_str::<IdSet>("\"4-2\"").unwrap_err();
        assert!(
            e.to_string().contains("range end is below its start"),
            "{e}"
        );
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
