//! Streaming: sequential sweeps over an array, one element after another,
//! so no line is touched twice within a sweep.

/// State of a streaming sweep.
pub(super) struct Streaming {
    base: u64,
    len: u64,
    elem: u32,
    off: u64,
}

impl Streaming {
    pub(super) fn new(base: u64, array_bytes: u64, elem: u32) -> Streaming {
        let len = array_bytes - array_bytes % u64::from(elem);
        Streaming {
            base,
            len,
            elem,
            off: 0,
        }
    }

    #[inline]
    pub(super) fn next(&mut self) -> (u64, u32) {
        let a = self.base + self.off;
        self.off += u64::from(self.elem);
        if self.off >= self.len {
            self.off = 0;
        }
        (a, self.elem)
    }
}
