//! Strided: a constant stride over an array, wrapping modulo its size.

/// State of a strided walk.
pub(super) struct Strided {
    base: u64,
    len: u64,
    stride: u64,
    elem: u32,
    off: u64,
}

impl Strided {
    pub(super) fn new(base: u64, array_bytes: u64, stride: u64, elem: u32) -> Strided {
        // Keep every element inside the array.
        let len = array_bytes - u64::from(elem) + 1;
        Strided {
            base,
            len,
            stride: stride % len.max(1),
            elem,
            off: 0,
        }
    }

    #[inline]
    pub(super) fn next(&mut self) -> (u64, u32) {
        let a = self.base + self.off;
        self.off += self.stride;
        if self.off >= self.len {
            self.off -= self.len;
        }
        (a, self.elem)
    }
}
