//! A row struct as text cells: a serde serializer that turns one flat
//! struct (or map) into its column names and one text cell per column,
//! with the float formatting the CSV writer asks for.
//!
//! Field-level formatting travels through serde's newtype structs: a field
//! written with [`fixed`] or [`quoted`] reaches this serializer as a
//! newtype of a reserved name and is formatted accordingly, while every
//! other serializer (serde_json included) sees the plain value.

use serde::ser::{self, Impossible, Serialize, Serializer};
use std::fmt::{self, Display};

use super::cell::CellSerializer;

/// How a float cell is printed when its field does not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Floats {
    /// Rust's shortest round-trip form (`0.1`, `3`, `NaN`).
    #[default]
    Shortest,
    /// This many decimals (`{:.N}`).
    Fixed(usize),
}

impl Floats {
    pub(crate) fn format(self, v: f64) -> String {
        match self {
            Floats::Shortest => v.to_string(),
            Floats::Fixed(d) => format!("{v:.d$}"),
        }
    }
}

/// The newtype names that carry a fixed number of decimals (index = N).
pub(crate) const FIXED: [&str; 10] = [
    "cachepart::output::Fixed0",
    "cachepart::output::Fixed1",
    "cachepart::output::Fixed2",
    "cachepart::output::Fixed3",
    "cachepart::output::Fixed4",
    "cachepart::output::Fixed5",
    "cachepart::output::Fixed6",
    "cachepart::output::Fixed7",
    "cachepart::output::Fixed8",
    "cachepart::output::Fixed9",
];

/// The newtype name of a text cell written in quotes whatever it holds.
pub(crate) const QUOTED: &str = "cachepart::output::Quoted";

/// `serialize_with` helper: the float printed with `N` decimals in CSV
/// (`N` at most 9); JSON and other formats get the plain number.
pub fn fixed<const N: usize, S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    match FIXED.get(N) {
        Some(name) => s.serialize_newtype_struct(name, v),
        None => s.serialize_f64(*v),
    }
}

/// [`fixed`] for an optional float (`None` is an empty cell, JSON `null`).
pub fn fixed_opt<const N: usize, S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => fixed::<N, S>(x, s),
        None => s.serialize_none(),
    }
}

/// `serialize_with` helper: the text always in double quotes in CSV (a
/// column that readers expect quoted, such as a color list); other
/// formats get the plain string.
pub fn quoted<T: AsRef<str>, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_newtype_struct(QUOTED, v.as_ref())
}

/// One cell's text, and whether it is written quoted whatever it holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cell {
    pub(crate) text: String,
    pub(crate) quoted: bool,
}

/// A row as column names and cells, in field order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Record {
    pub(crate) names: Vec<String>,
    pub(crate) cells: Vec<Cell>,
}

/// Why a value is not a row of cells.
#[derive(Debug)]
pub(crate) struct NotFlat(pub(crate) String);

impl Display for NotFlat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotFlat {}

impl ser::Error for NotFlat {
    fn custom<T: Display>(msg: T) -> Self {
        NotFlat(msg.to_string())
    }
}

/// Splits `row` into named cells; floats without a field-level format are
/// printed as `floats` says. Refuses a value that is not a struct or map
/// of single values.
pub(crate) fn record<R: Serialize + ?Sized>(row: &R, floats: Floats) -> Result<Record, NotFlat> {
    row.serialize(RowSerializer { floats })
}

struct RowSerializer {
    floats: Floats,
}

struct RowBuilder {
    floats: Floats,
    record: Record,
    key: Option<String>,
}

impl RowBuilder {
    fn push<T: Serialize + ?Sized>(&mut self, name: String, value: &T) -> Result<(), NotFlat> {
        let cell = value
            .serialize(CellSerializer {
                floats: self.floats,
            })
            .map_err(|e| NotFlat(format!("column {name}: {e}")))?;
        self.record.names.push(name);
        self.record.cells.push(cell);
        Ok(())
    }
}

fn not_a_row(what: &str) -> NotFlat {
    NotFlat(format!(
        "a row is a struct or map of single values, not {what}"
    ))
}

macro_rules! refuse {
    ($err:expr; $($name:ident($($arg:ty),*);)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<Self::Ok, Self::Error> {
            Err($err(stringify!($name)))
        })*
    };
}

impl Serializer for RowSerializer {
    type Ok = Record;
    type Error = NotFlat;
    type SerializeSeq = Impossible<Record, NotFlat>;
    type SerializeTuple = Impossible<Record, NotFlat>;
    type SerializeTupleStruct = Impossible<Record, NotFlat>;
    type SerializeTupleVariant = Impossible<Record, NotFlat>;
    type SerializeMap = RowBuilder;
    type SerializeStruct = RowBuilder;
    type SerializeStructVariant = Impossible<Record, NotFlat>;

    refuse! { |w: &str| not_a_row(w.trim_start_matches("serialize_"));
        serialize_bool(bool); serialize_i8(i8); serialize_i16(i16); serialize_i32(i32);
        serialize_i64(i64); serialize_u8(u8); serialize_u16(u16); serialize_u32(u32);
        serialize_u64(u64); serialize_f32(f32); serialize_f64(f64); serialize_char(char);
        serialize_str(&str); serialize_bytes(&[u8]); serialize_none(); serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Record, NotFlat> {
        v.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Record, NotFlat> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Record, NotFlat> {
        Err(not_a_row("an enum"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotFlat> {
        Err(not_a_row("a list"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotFlat> {
        Err(not_a_row("a tuple"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotFlat> {
        Err(not_a_row("a tuple struct"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotFlat> {
        Err(not_a_row("an enum"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<RowBuilder, NotFlat> {
        Ok(RowBuilder {
            floats: self.floats,
            record: Record::default(),
            key: None,
        })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<RowBuilder, NotFlat> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotFlat> {
        Err(not_a_row("an enum"))
    }
}

impl ser::SerializeStruct for RowBuilder {
    type Ok = Record;
    type Error = NotFlat;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), NotFlat> {
        self.push(key.to_string(), value)
    }
    fn end(self) -> Result<Record, NotFlat> {
        Ok(self.record)
    }
}

impl ser::SerializeMap for RowBuilder {
    type Ok = Record;
    type Error = NotFlat;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), NotFlat> {
        let cell = key.serialize(CellSerializer {
            floats: Floats::Shortest,
        })?;
        self.key = Some(cell.text);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NotFlat> {
        let key = self
            .key
            .take()
            .ok_or_else(|| NotFlat("a map value without its key".into()))?;
        self.push(key, value)
    }
    fn end(self) -> Result<Record, NotFlat> {
        Ok(self.record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    #[serde(rename_all = "kebab-case")]
    enum Class {
        Light,
        Streaming,
    }

    #[derive(Serialize)]
    struct Row {
        #[serde(rename = "BENCH")]
        bench: &'static str,
        ways: u32,
        ipc: f64,
        #[serde(serialize_with = "fixed::<3, _>")]
        kib: f64,
        #[serde(serialize_with = "fixed_opt::<1, _>")]
        opt: Option<f64>,
        proven: Option<bool>,
        class: Class,
        #[serde(serialize_with = "quoted")]
        colors: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        seconds: Option<f64>,
    }

    fn row() -> Row {
        Row {
            bench: "xz",
            ways: 3,
            ipc: 0.1,
            kib: 2.0 / 3.0,
            opt: None,
            proven: Some(true),
            class: Class::Streaming,
            colors: "0-7".into(),
            seconds: None,
        }
    }

    #[test]
    fn fields_become_named_cells() {
        let r = record(&row(), Floats::Shortest).unwrap();
        assert_eq!(
            r.names,
            ["BENCH", "ways", "ipc", "kib", "opt", "proven", "class", "colors"]
        );
        let text: Vec<&str> = r.cells.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            text,
            ["xz", "3", "0.1", "0.667", "", "true", "streaming", "0-7"]
        );
        let quoted: Vec<bool> = r.cells.iter().map(|c| c.quoted).collect();
        assert_eq!(
            quoted,
            [false, false, false, false, false, false, false, true]
        );
        let _ = Class::Light;
    }

    #[test]
    fn floats_follow_the_writer_unless_the_field_says() {
        let r = record(&row(), Floats::Fixed(6)).unwrap();
        assert_eq!(r.cells[2].text, "0.100000");
        assert_eq!(r.cells[3].text, "0.667", "the field's own decimals win");
        let json = serde_json::to_value(row()).unwrap();
        assert_eq!(
            json["kib"],
            serde_json::json!(2.0 / 3.0),
            "JSON keeps every digit"
        );
        assert_eq!(json["colors"], "0-7");
    }

    #[test]
    fn maps_are_rows_and_nested_values_are_refused() {
        let m: BTreeMap<&str, u8> = [("a", 1), ("b", 2)].into();
        assert_eq!(record(&m, Floats::Shortest).unwrap().names, ["a", "b"]);
        #[derive(Serialize)]
        struct Nested {
            points: Vec<u8>,
        }
        let e = record(&Nested { points: vec![1] }, Floats::Shortest).unwrap_err();
        assert_eq!(
            e.to_string(),
            "column points: a cell holds one value, not a list"
        );
        let e = record(&3u8, Floats::Shortest).unwrap_err();
        assert!(e.to_string().contains("not u8"), "{e}");
    }
}
