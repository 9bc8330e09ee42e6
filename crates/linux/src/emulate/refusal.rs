//! How the emulated kernel says no: an errno, and the text it leaves in
//! `info/last_cmd_status`, parsed the way the kernel's `kstrto*` helpers
//! parse numbers.

/// A refused operation: `errno` for the system call, and whether the
/// kernel wrote a reason into `last_cmd_status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The errno (`EINVAL`, `ENOSPC`, `ESRCH`, ...).
    pub errno: i32,
    /// The line appended to `last_cmd_status` (without its newline), if
    /// the kernel writes one for this refusal.
    pub status: Option<String>,
}

impl Refusal {
    /// A refusal with a `last_cmd_status` line.
    pub fn with(errno: i32, status: impl Into<String>) -> Self {
        Refusal {
            errno,
            status: Some(status.into()),
        }
    }

    /// A refusal that leaves `last_cmd_status` as it is.
    pub fn bare(errno: i32) -> Self {
        Refusal {
            errno,
            status: None,
        }
    }

    /// `EINVAL` with a status line.
    pub fn inval(status: impl Into<String>) -> Self {
        Refusal::with(libc::EINVAL, status)
    }
}

/// Result of an emulated operation.
pub type Outcome<T = ()> = std::result::Result<T, Refusal>;

/// `kstrtoul(s, base)`: an optional `+`, for base 16 an optional `0x`,
/// digits of the base, an optional single trailing newline; `None` on
/// anything else or overflow.
pub fn kstrtoul(s: &str, base: u32) -> Option<u64> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let s = s.strip_prefix('+').unwrap_or(s);
    let s = if base == 16 {
        s.strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .unwrap_or(s)
    } else {
        s
    };
    if s.is_empty() || !s.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    u64::from_str_radix(s, base).ok()
}

/// `kstrtoint(s, 0)`: a signed 32-bit number in C notation (`0x` hex,
/// leading `0` octal, else decimal).
pub fn kstrtoint(s: &str) -> Option<i32> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        kstrtoul(h, 16)?
    } else if body.len() > 1 && body.starts_with('0') {
        kstrtoul(&body[1..], 8)?
    } else {
        kstrtoul(body, 10)?
    };
    let v = i64::try_from(v).ok()?;
    i32::try_from(if neg { -v } else { v }).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_number_parsing() {
        assert_eq!(kstrtoul("7ff", 16), Some(0x7ff));
        assert_eq!(kstrtoul("0x7ff", 16), Some(0x7ff));
        assert_eq!(kstrtoul("+10\n", 10), Some(10));
        assert_eq!(kstrtoul(" 10", 10), None);
        assert_eq!(kstrtoul("", 10), None);
        assert_eq!(kstrtoul("1x", 10), None);
        assert_eq!(kstrtoul("fffffffffffffffff", 16), None);
        assert_eq!(kstrtoint("1234"), Some(1234));
        assert_eq!(kstrtoint("0x10"), Some(16));
        assert_eq!(kstrtoint("010"), Some(8));
        assert_eq!(kstrtoint("-5"), Some(-5));
        assert_eq!(kstrtoint("abc"), None);
        assert_eq!(kstrtoint("99999999999"), None);
    }
}
