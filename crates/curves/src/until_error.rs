//! [`UntilError`]: feeds a fallible record stream (a trace reader) to the
//! curve builders, which take plain records, and keeps the first error.

use cachepart_trace::Record;

/// Yields the `Ok` records of `inner` up to its first error, which
/// [`UntilError::finish`] returns.
///
/// ```
/// use cachepart_curves::{fully_associative, Options, UntilError};
/// use cachepart_trace::{Kind, Record, TraceError};
/// let recs: Vec<Result<Record, TraceError>> =
///     vec![Ok(Record::access(Kind::Load, 0, 8, 0).unwrap())];
/// let mut it = UntilError::new(recs);
/// let h = fully_associative(&mut it, &Options::default()).unwrap();
/// it.finish().unwrap();
/// assert_eq!(h.accesses, 1);
/// ```
pub struct UntilError<I, E> {
    inner: I,
    error: Option<E>,
}

impl<I, E> UntilError<I, E>
where
    I: Iterator<Item = Result<Record, E>>,
{
    /// Wraps a fallible record stream.
    pub fn new(inner: impl IntoIterator<IntoIter = I>) -> Self {
        UntilError {
            inner: inner.into_iter(),
            error: None,
        }
    }

    /// The first error met, if any.
    pub fn finish(self) -> Result<(), E> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl<I, E> Iterator for UntilError<I, E>
where
    I: Iterator<Item = Result<Record, E>>,
{
    type Item = Record;

    #[inline]
    fn next(&mut self) -> Option<Record> {
        if self.error.is_some() {
            return None;
        }
        match self.inner.next()? {
            Ok(r) => Some(r),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}
