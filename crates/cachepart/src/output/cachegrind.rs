//! The nine totals of a cachegrind-compatible simulation as users read
//! them: cachegrind's own summary layout ([`to_table`]), one CSV row
//! ([`to_csv`]) and one JSON object ([`to_json`]), the columns being
//! cachegrind's event names in its order.

use cachepart_sim::{CachegrindSummary, EVENTS};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::output::{self, CsvOptions};

/// `n` with thousands separators, as cachegrind prints counts (`1,234`).
fn commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `100 * num / den` with `decimals` decimals, rounded half up (the
/// denominator is taken as 1 when it is 0, as cachegrind does).
fn percent(num: u64, den: u64, decimals: u32) -> String {
    let den = u128::from(den.max(1));
    let scale = 10u128.pow(decimals);
    let scaled = u128::from(num) * 100 * scale;
    let q = (2 * scaled + den) / (2 * den);
    if decimals == 0 {
        return q.to_string();
    }
    format!("{}.{:0w$}", q / scale, q % scale, w = decimals as usize)
}

/// The nine totals as cachegrind prints its summary (valgrind 3.19,
/// `--cache-sim=yes`), without valgrind's `==PID==` prefixes: the counts
/// with thousands separators in columns as wide as the I refs, D reads and
/// D writes, the rates to two decimals for instructions and one for data.
pub fn to_table(s: &CachegrindSummary) -> String {
    let w1 = commas(s.ir).len();
    let w2 = commas(s.dr).len();
    let w3 = commas(s.dw).len();
    let mut t = String::new();
    let one = |t: &mut String, label: &str, v: u64| {
        t.push_str(&format!("{label:<15}{:>w1$}\n", commas(v)));
    };
    let three = |t: &mut String, label: &str, all: u64, rd: u64, wr: u64| {
        t.push_str(&format!(
            "{label:<15}{:>w1$}  ({:>w2$} rd   + {:>w3$} wr)\n",
            commas(all),
            commas(rd),
            commas(wr)
        ));
    };
    let rates = |t: &mut String, label: &str, all: String, rd: String, wr: String| {
        t.push_str(&format!(
            "{label:<15}{all:>w1$}% ({rd:>w2$}%     + {wr:>w3$}%  )\n"
        ));
    };
    one(&mut t, "I   refs:", s.ir);
    one(&mut t, "I1  misses:", s.i1mr);
    one(&mut t, "LLi misses:", s.ilmr);
    t.push_str(&format!(
        "{:<15}{:>w1$}%\n",
        "I1  miss rate:",
        percent(s.i1mr, s.ir, 2)
    ));
    t.push_str(&format!(
        "{:<15}{:>w1$}%\n",
        "LLi miss rate:",
        percent(s.ilmr, s.ir, 2)
    ));
    t.push('\n');
    let d = s.dr + s.dw;
    three(&mut t, "D   refs:", d, s.dr, s.dw);
    three(&mut t, "D1  misses:", s.d1mr + s.d1mw, s.d1mr, s.d1mw);
    three(&mut t, "LLd misses:", s.dlmr + s.dlmw, s.dlmr, s.dlmw);
    let r = |n: u64, den: u64| percent(n, den, 1);
    rates(
        &mut t,
        "D1  miss rate:",
        r(s.d1mr + s.d1mw, d),
        r(s.d1mr, s.dr),
        r(s.d1mw, s.dw),
    );
    rates(
        &mut t,
        "LLd miss rate:",
        r(s.dlmr + s.dlmw, d),
        r(s.dlmr, s.dr),
        r(s.dlmw, s.dw),
    );
    t.push('\n');
    let (ll_r, ll_w) = (s.i1mr + s.d1mr, s.d1mw);
    three(&mut t, "LL refs:", ll_r + ll_w, ll_r, ll_w);
    let (m_r, m_w) = (s.ilmr + s.dlmr, s.dlmw);
    three(&mut t, "LL misses:", m_r + m_w, m_r, m_w);
    // cachegrind's denominators: each count taken as 1 when it is 0
    let (ir, d1, dr) = (s.ir.max(1), d.max(1), s.dr.max(1));
    rates(
        &mut t,
        "LL miss rate:",
        r(m_r + m_w, ir + d1),
        r(m_r, ir + dr),
        r(m_w, s.dw),
    );
    t
}

/// The nine totals as `(event, count)` pairs in cachegrind's order.
pub fn totals(s: &CachegrindSummary) -> Vec<(&'static str, u64)> {
    EVENTS.iter().copied().zip(s.values()).collect()
}

/// The nine totals as one row: cachegrind's event names (`Ir`, `I1mr`,
/// ...) as columns, in cachegrind's order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TotalsRow(pub [u64; 9]);

impl From<&CachegrindSummary> for TotalsRow {
    fn from(s: &CachegrindSummary) -> TotalsRow {
        TotalsRow(s.values())
    }
}

impl Serialize for TotalsRow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(EVENTS.len()))?;
        for (k, v) in EVENTS.iter().zip(self.0) {
            m.serialize_entry(k, &v)?;
        }
        m.end()
    }
}

/// The nine totals as CSV: a header row of cachegrind's event names
/// (`Ir,I1mr,...`) and one row of values.
pub fn to_csv(s: &CachegrindSummary) -> String {
    output::to_csv(&[TotalsRow::from(s)], CsvOptions::default())
}

/// The nine totals as one JSON object, keys in cachegrind's event order
/// (`Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw`).
pub fn to_json(s: &CachegrindSummary) -> String {
    output::to_json(&TotalsRow::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// valgrind 3.19's own summary of `ls /` (`valgrind --tool=cachegrind
    /// --cache-sim=yes ls /`), prefixes removed.
    const LS: &str = "\
I   refs:      569,883
I1  misses:      2,266
LLi misses:      2,006
I1  miss rate:    0.40%
LLi miss rate:    0.35%

D   refs:      203,568  (143,974 rd   + 59,594 wr)
D1  misses:      4,568  (  3,591 rd   +    977 wr)
LLd misses:      3,178  (  2,298 rd   +    880 wr)
D1  miss rate:     2.2% (    2.5%     +    1.6%  )
LLd miss rate:     1.6% (    1.6%     +    1.5%  )

LL refs:         6,834  (  5,857 rd   +    977 wr)
LL misses:       5,184  (  4,304 rd   +    880 wr)
LL miss rate:      0.7% (    0.6%     +    1.5%  )
";

    fn ls() -> CachegrindSummary {
        CachegrindSummary {
            ir: 569_883,
            i1mr: 2266,
            ilmr: 2006,
            dr: 143_974,
            d1mr: 3591,
            dlmr: 2298,
            dw: 59594,
            d1mw: 977,
            dlmw: 880,
        }
    }

    #[test]
    fn the_summary_is_laid_out_as_cachegrinds() {
        assert_eq!(to_table(&ls()), LS);
    }

    #[test]
    fn empty_totals_print_zero_rates() {
        let t = to_table(&CachegrindSummary::default());
        assert!(t.starts_with("I   refs:      0\n"), "{t}");
        assert!(t.contains("I1  miss rate: 0.00%\n"), "{t}");
        assert!(
            t.ends_with("LL miss rate:  0.0% (0.0%     + 0.0%  )\n"),
            "{t}"
        );
    }

    #[test]
    fn counts_and_rates_are_formatted_like_cachegrind() {
        assert_eq!(commas(0), "0");
        assert_eq!(commas(999), "999");
        assert_eq!(commas(1000), "1,000");
        assert_eq!(commas(1_234_567), "1,234,567");
        assert_eq!(percent(1, 3, 2), "33.33");
        assert_eq!(percent(2, 3, 1), "66.7");
        assert_eq!(percent(1, 8, 1), "12.5");
        assert_eq!(percent(1, 16, 1), "6.3"); // 6.25 rounds up
        assert_eq!(percent(5, 0, 1), "500.0");
    }

    #[test]
    fn json_has_the_nine_events_in_order() {
        let j = to_json(&ls());
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.len(), 9);
        assert_eq!(o["Ir"], 569_883);
        assert_eq!(o["DLmw"], 880);
        let keys: Vec<usize> = EVENTS
            .iter()
            .map(|k| j.find(&format!("\"{k}\"")).unwrap())
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{j}");
    }
}
