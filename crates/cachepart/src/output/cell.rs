//! One value of a row as one text cell: numbers and booleans as Rust
//! prints them, floats as the writer or the field's [`fixed`](super::fixed)
//! says, `None` as an empty cell, a unit enum variant as its serde name;
//! anything holding more than one value is refused.

use serde::ser::{Impossible, Serialize, Serializer};

use super::cells::{Cell, Floats, NotFlat, FIXED, QUOTED};

/// One value as one cell, floats printed as `floats` says unless the
/// field's own format does.
pub(crate) struct CellSerializer {
    pub(crate) floats: Floats,
}

fn plain(text: String) -> Result<Cell, NotFlat> {
    Ok(Cell {
        text,
        quoted: false,
    })
}

fn not_a_cell(what: &str) -> NotFlat {
    NotFlat(format!("a cell holds one value, not {what}"))
}

impl Serializer for CellSerializer {
    type Ok = Cell;
    type Error = NotFlat;
    type SerializeSeq = Impossible<Cell, NotFlat>;
    type SerializeTuple = Impossible<Cell, NotFlat>;
    type SerializeTupleStruct = Impossible<Cell, NotFlat>;
    type SerializeTupleVariant = Impossible<Cell, NotFlat>;
    type SerializeMap = Impossible<Cell, NotFlat>;
    type SerializeStruct = Impossible<Cell, NotFlat>;
    type SerializeStructVariant = Impossible<Cell, NotFlat>;

    fn serialize_bool(self, v: bool) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_i128(self, v: i128) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_u128(self, v: u128) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_f32(self, v: f32) -> Result<Cell, NotFlat> {
        plain(match self.floats {
            Floats::Shortest => v.to_string(),
            Floats::Fixed(d) => format!("{v:.d$}"),
        })
    }
    fn serialize_f64(self, v: f64) -> Result<Cell, NotFlat> {
        plain(self.floats.format(v))
    }
    fn serialize_char(self, v: char) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<Cell, NotFlat> {
        plain(v.to_string())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Cell, NotFlat> {
        Err(not_a_cell("bytes"))
    }
    fn serialize_none(self) -> Result<Cell, NotFlat> {
        plain(String::new())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Cell, NotFlat> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Cell, NotFlat> {
        plain(String::new())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Cell, NotFlat> {
        plain(String::new())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Cell, NotFlat> {
        plain(variant.to_string())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<Cell, NotFlat> {
        if name == QUOTED {
            let mut cell = v.serialize(self)?;
            cell.quoted = true;
            return Ok(cell);
        }
        match FIXED.iter().position(|n| *n == name) {
            Some(decimals) => v.serialize(CellSerializer {
                floats: Floats::Fixed(decimals),
            }),
            None => v.serialize(self),
        }
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Cell, NotFlat> {
        Err(not_a_cell("an enum with data"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotFlat> {
        Err(not_a_cell("a list"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotFlat> {
        Err(not_a_cell("a tuple"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotFlat> {
        Err(not_a_cell("a tuple struct"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotFlat> {
        Err(not_a_cell("an enum with data"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotFlat> {
        Err(not_a_cell("a map"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NotFlat> {
        Err(not_a_cell("a struct"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotFlat> {
        Err(not_a_cell("an enum with data"))
    }
}
