//! Kind names: the one way a kebab-case "kind" (an algorithm, a replacement
//! policy, a curve kind, a bandwidth model, ...) gets its names.
//!
//! A kind is a field-less enum marked [`#[kind]`](macro@crate::kind), which
//! derives strum's traits with `serialize_all = "kebab-case"`:
//!
//! ```
//! use cachepart_units::Kind;
//!
//! #[cachepart_units::kind]
//! #[derive(Clone, Copy, Debug, PartialEq, Eq)]
//! enum Shape {
//!     /// A square.
//!     #[strum(message = "four equal sides")]
//!     Square,
//!     /// A circle, also spelled `round`.
//!     #[strum(to_string = "circle", serialize = "round")]
//!     Circle,
//!     /// A long rectangle.
//!     LongRectangle,
//! }
//!
//! assert_eq!(Shape::LongRectangle.name(), "long-rectangle");
//! assert_eq!(Shape::LongRectangle.to_string(), "long-rectangle");
//! assert_eq!(Shape::from_name("round"), Some(Shape::Circle));
//! assert_eq!(Shape::names(), ["square", "circle", "long-rectangle"]);
//! assert_eq!(Shape::all().collect::<Vec<_>>(), [Shape::Square, Shape::Circle, Shape::LongRectangle]);
//! assert_eq!(Shape::expected(), "square, circle or long-rectangle");
//! assert_eq!(Shape::expected_quoted(), "\"square\", \"circle\" or \"long-rectangle\"");
//! assert_eq!(Shape::Square.help(), Some("four equal sides"));
//! ```
//!
//! `#[kind]` adds strum's `EnumString`, `IntoStaticStr`, `Display`,
//! `VariantArray`, `VariantNames` and `EnumMessage` derives (through this
//! crate's re-export of strum, so the enum's crate needs none of its own)
//! and kebab-case names. `EnumString` gives `FromStr` (extra spellings with
//! `serialize = "..."`; a crate's typed error with
//! `#[strum(parse_err_ty = ..., parse_err_fn = ...)]`, whose message lists
//! [`Kind::expected`]); `IntoStaticStr` and `Display` give the name;
//! `VariantArray` and `VariantNames` give every variant and every name, in
//! declaration order; `EnumMessage`'s `message` is the one-line help a
//! command-line flag shows beside the name. Where an enum is deserialised,
//! serde's `rename_all = "kebab-case"` spells the same names (a test in
//! the facade checks that serde and strum agree on every kind).
//! Every type with these derives is a [`Kind`].

use std::iter::Copied;
use std::slice::Iter;
use std::str::FromStr;
use strum::{EnumMessage, VariantArray, VariantNames};

/// A kebab-case kind: its names, parsing and the list of names for messages,
/// all from strum's derives (see the module docs). Implemented for every type
/// with those derives; nothing to implement by hand.
pub trait Kind:
    Copy + Eq + 'static + FromStr + VariantArray + VariantNames + EnumMessage + Into<&'static str>
{
    /// Its kebab-case name.
    fn name(self) -> &'static str {
        self.into()
    }

    /// Every variant, in declaration order.
    fn all() -> Copied<Iter<'static, Self>> {
        <Self as VariantArray>::VARIANTS.iter().copied()
    }

    /// Every name, in declaration order.
    fn names() -> &'static [&'static str] {
        <Self as VariantNames>::VARIANTS
    }

    /// The variant a name (or one of its extra spellings) stands for.
    fn from_name(s: &str) -> Option<Self> {
        s.parse().ok()
    }

    /// The names for a message: `a, b or c`.
    fn expected() -> String {
        either(Self::names().iter().map(|n| n.to_string()))
    }

    /// The names in double quotes for a message: `"a", "b" or "c"`.
    fn expected_quoted() -> String {
        either(Self::names().iter().map(|n| format!("{n:?}")))
    }

    /// Its one-line help for a command-line value (strum's `message`).
    fn help(self) -> Option<&'static str> {
        self.get_message()
    }
}

impl<T> Kind for T where
    T: Copy
        + Eq
        + 'static
        + FromStr
        + VariantArray
        + VariantNames
        + EnumMessage
        + Into<&'static str>
{
}

/// `a`, `a or b`, `a, b or c`.
fn either(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_joins_with_commas_and_a_final_or() {
        let s = |v: &[&str]| either(v.iter().map(|x| x.to_string()));
        assert_eq!(s(&[]), "");
        assert_eq!(s(&["a"]), "a");
        assert_eq!(s(&["a", "b"]), "a or b");
        assert_eq!(s(&["a", "b", "c"]), "a, b or c");
    }
}
