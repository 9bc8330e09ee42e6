//! Row structs handed to Python as Python objects: a serde serializer whose
//! output is a `list` of `dict`s (structs and maps become dicts in field
//! order, sequences lists, `None` `None`, unit enum variants their names),
//! so a Python frame gets the same rows and column names as the CLI's
//! `--format json`, without a round trip through JSON text.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde::ser::{self, Serialize};
use std::fmt::{self, Display};

use crate::CachepartError;

/// `value` as Python objects.
pub(crate) fn to_py<T: Serialize + ?Sized>(py: Python<'_>, value: &T) -> PyResult<PyObject> {
    value.serialize(PySerializer { py }).map_err(|e| {
        CachepartError::new_err(format!(
            "internal error (a bug in cachepart, please report it): {e}"
        ))
    })
}

/// Why a value could not be handed over.
#[derive(Debug)]
pub(crate) struct ToPyError(String);

impl Display for ToPyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToPyError {}

impl ser::Error for ToPyError {
    fn custom<T: Display>(msg: T) -> Self {
        ToPyError(msg.to_string())
    }
}

impl From<PyErr> for ToPyError {
    fn from(e: PyErr) -> Self {
        ToPyError(e.to_string())
    }
}

#[derive(Clone, Copy)]
struct PySerializer<'py> {
    py: Python<'py>,
}

/// A list being filled (sequences and tuples); `variant` wraps it as
/// `{variant: [...]}`.
struct ListBuilder<'py> {
    py: Python<'py>,
    items: Vec<PyObject>,
    variant: Option<&'static str>,
}

/// A dict being filled (maps and structs); `variant` wraps it as
/// `{variant: {...}}`.
struct DictBuilder<'py> {
    py: Python<'py>,
    dict: Bound<'py, PyDict>,
    key: Option<PyObject>,
    variant: Option<&'static str>,
}

fn wrap(
    py: Python<'_>,
    variant: Option<&'static str>,
    value: PyObject,
) -> Result<PyObject, ToPyError> {
    match variant {
        None => Ok(value),
        Some(v) => {
            let d = PyDict::new_bound(py);
            d.set_item(v, value)?;
            Ok(d.into_py(py))
        }
    }
}

impl<'py> ser::Serializer for PySerializer<'py> {
    type Ok = PyObject;
    type Error = ToPyError;
    type SerializeSeq = ListBuilder<'py>;
    type SerializeTuple = ListBuilder<'py>;
    type SerializeTupleStruct = ListBuilder<'py>;
    type SerializeTupleVariant = ListBuilder<'py>;
    type SerializeMap = DictBuilder<'py>;
    type SerializeStruct = DictBuilder<'py>;
    type SerializeStructVariant = DictBuilder<'py>;

    fn serialize_bool(self, v: bool) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_i8(self, v: i8) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_i16(self, v: i16) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_i32(self, v: i32) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_i64(self, v: i64) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_u8(self, v: u8) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_u16(self, v: u16) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_u32(self, v: u32) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_u64(self, v: u64) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_f32(self, v: f32) -> Result<PyObject, ToPyError> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<PyObject, ToPyError> {
        // as JSON writes it: a float that is not finite is null
        Ok(if v.is_finite() {
            v.into_py(self.py)
        } else {
            self.py.None()
        })
    }
    fn serialize_char(self, v: char) -> Result<PyObject, ToPyError> {
        Ok(v.to_string().into_py(self.py))
    }
    fn serialize_str(self, v: &str) -> Result<PyObject, ToPyError> {
        Ok(v.into_py(self.py))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<PyObject, ToPyError> {
        Ok(PyList::new_bound(self.py, v).into_py(self.py))
    }
    fn serialize_none(self) -> Result<PyObject, ToPyError> {
        Ok(self.py.None())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<PyObject, ToPyError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<PyObject, ToPyError> {
        Ok(self.py.None())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<PyObject, ToPyError> {
        Ok(self.py.None())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<PyObject, ToPyError> {
        Ok(variant.into_py(self.py))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<PyObject, ToPyError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<PyObject, ToPyError> {
        let inner = v.serialize(self)?;
        wrap(self.py, Some(variant), inner)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<ListBuilder<'py>, ToPyError> {
        Ok(ListBuilder {
            py: self.py,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<ListBuilder<'py>, ToPyError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<ListBuilder<'py>, ToPyError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<ListBuilder<'py>, ToPyError> {
        let mut b = self.serialize_seq(Some(len))?;
        b.variant = Some(variant);
        Ok(b)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<DictBuilder<'py>, ToPyError> {
        Ok(DictBuilder {
            py: self.py,
            dict: PyDict::new_bound(self.py),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<DictBuilder<'py>, ToPyError> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<DictBuilder<'py>, ToPyError> {
        let mut b = self.serialize_map(None)?;
        b.variant = Some(variant);
        Ok(b)
    }
}

impl ListBuilder<'_> {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        self.items.push(v.serialize(PySerializer { py: self.py })?);
        Ok(())
    }
    fn finish(self) -> Result<PyObject, ToPyError> {
        let list = PyList::new_bound(self.py, self.items).into_py(self.py);
        wrap(self.py, self.variant, list)
    }
}

impl ser::SerializeSeq for ListBuilder<'_> {
    type Ok = PyObject;
    type Error = ToPyError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        self.push(v)
    }
    fn end(self) -> Result<PyObject, ToPyError> {
        self.finish()
    }
}

impl ser::SerializeTuple for ListBuilder<'_> {
    type Ok = PyObject;
    type Error = ToPyError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        self.push(v)
    }
    fn end(self) -> Result<PyObject, ToPyError> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for ListBuilder<'_> {
    type Ok = PyObject;
    type Error = ToPyError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        self.push(v)
    }
    fn end(self) -> Result<PyObject, ToPyError> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant for ListBuilder<'_> {
    type Ok = PyObject;
    type Error = ToPyError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        self.push(v)
    }
    fn end(self) -> Result<PyObject, ToPyError> {
        self.finish()
    }
}

impl DictBuilder<'_> {
    fn entry<T: Serialize + ?Sized>(&mut self, key: PyObject, v: &T) -> Result<(), ToPyError> {
        let value = v.serialize(PySerializer { py: self.py })?;
        self.dict.set_item(key, value)?;
        Ok(())
    }
    fn finish(self) -> Result<PyObject, ToPyError> {
        let dict = self.dict.into_py(self.py);
        wrap(self.py, self.variant, dict)
    }
}

impl ser::SerializeMap for DictBuilder<'_> {
    type Ok = PyObject;
    type Error = ToPyError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), ToPyError> {
        self.key = Some(k.serialize(PySerializer { py: self.py })?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), ToPyError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| ToPyError("a map value without its key".into()))?;
        self.entry(key, v)
    }
    fn end(self) -> Result<PyObject, ToPyError> {
        self.finish()
    }
}

impl ser::SerializeStruct for DictBuilder<'_> {
    type Ok = PyObject;
    type Error = ToPyError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), ToPyError> {
        let key = key.into_py(self.py);
        self.entry(key, v)
    }
    fn end(self) -> Result<PyObject, ToPyError> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for DictBuilder<'_> {
    type Ok = PyObject;
    type Error = ToPyError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), ToPyError> {
        let key = key.into_py(self.py);
        self.entry(key, v)
    }
    fn end(self) -> Result<PyObject, ToPyError> {
        self.finish()
    }
}
