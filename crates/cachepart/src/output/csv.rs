//! The CSV writer every command uses: a header row of the row struct's
//! field names, then one line per row, `\n`-terminated. A field is quoted
//! when it holds a comma, a double quote, a carriage return or a line feed
//! (inner quotes doubled), exactly as the `csv` crate quotes by default,
//! or always when its field is written with [`quoted`](super::quoted).

use serde::Serialize;
use std::borrow::Cow;

use super::cells::{record, Floats, Record};

/// How [`to_csv`] prints what the row struct does not decide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsvOptions {
    /// Floats of fields without their own format ([`fixed`](super::fixed)).
    pub floats: Floats,
}

impl CsvOptions {
    /// Floats with `decimals` decimals.
    pub fn fixed(decimals: usize) -> CsvOptions {
        CsvOptions {
            floats: Floats::Fixed(decimals),
        }
    }
}

/// One CSV field: `s` as is, or in double quotes with its quotes doubled
/// when it holds a comma, a quote, `\r` or `\n`.
pub fn csv_field(s: &str) -> Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        Cow::Owned(quote(s))
    } else {
        Cow::Borrowed(s)
    }
}

/// `s` in double quotes with its quotes doubled.
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

fn push_line(out: &mut String, cells: impl Iterator<Item = (String, bool)>) {
    for (i, (text, quoted)) in cells.enumerate() {
        if i > 0 {
            out.push(',');
        }
        if quoted {
            out.push_str(&quote(&text));
        } else {
            out.push_str(&csv_field(&text));
        }
    }
    out.push('\n');
}

fn flat<R: Serialize>(row: &R, floats: Floats) -> Record {
    record(row, floats)
        .unwrap_or_else(|e| panic!("{} is not a flat row: {e}", std::any::type_name::<R>()))
}

/// The rows as CSV: the header names the columns of the first row (of
/// `R::default()` when there is none, so an empty table still has its
/// header), then one line per row.
///
/// # Panics
///
/// When a row is not a struct of single values (a field holding a list,
/// map or struct): row types are fixed in code, and each has a test that
/// writes it.
pub fn to_csv<R: Serialize + Default>(rows: &[R], opts: CsvOptions) -> String {
    let records: Vec<Record> = rows.iter().map(|r| flat(r, opts.floats)).collect();
    let header = match records.first() {
        Some(r) => r.names.clone(),
        None => flat(&R::default(), opts.floats).names,
    };
    let mut out = String::new();
    push_line(&mut out, header.into_iter().map(|n| (n, false)));
    for rec in records {
        push_line(&mut out, rec.cells.into_iter().map(|c| (c.text, c.quoted)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{fixed, quoted, to_json};
    use super::*;
    use proptest::prelude::*;
    use serde::Serialize;

    #[derive(Clone, Debug, Default, Serialize)]
    struct Row {
        name: String,
        n: u64,
        x: f64,
        #[serde(serialize_with = "fixed::<2, _>")]
        y: f64,
        flag: Option<bool>,
        #[serde(serialize_with = "quoted")]
        colors: String,
    }

    #[test]
    fn quotes_what_needs_quoting() {
        for (s, q) in [
            ("plain", "plain"),
            ("a,b", "\"a,b\""),
            ("say \"x\"", "\"say \"\"x\"\"\""),
            ("two\nlines", "\"two\nlines\""),
            ("cr\r", "\"cr\r\""),
            ("", ""),
        ] {
            assert_eq!(csv_field(s), q, "{s:?}");
        }
        let rows = [Row {
            name: "a,b".into(),
            n: 1,
            x: 0.5,
            y: 1.0 / 3.0,
            flag: None,
            colors: "0-3".into(),
        }];
        assert_eq!(
            to_csv(&rows, CsvOptions::default()),
            "name,n,x,y,flag,colors\n\"a,b\",1,0.5,0.33,,\"0-3\"\n"
        );
        assert_eq!(
            to_csv(&rows, CsvOptions::fixed(3)).lines().nth(1),
            Some("\"a,b\",1,0.500,0.33,,\"0-3\"")
        );
    }

    #[test]
    fn an_empty_table_keeps_its_header() {
        assert_eq!(
            to_csv::<Row>(&[], CsvOptions::default()),
            "name,n,x,y,flag,colors\n"
        );
    }

    #[test]
    fn csv_and_json_carry_the_same_columns() {
        let rows = vec![Row::default(), Row::default()];
        let csv = to_csv(&rows, CsvOptions::default());
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let json: serde_json::Value = serde_json::from_str(&to_json(&rows)).unwrap();
        for obj in json.as_array().unwrap() {
            let keys: Vec<&str> = obj
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.as_str())
                .collect();
            let mut sorted = header.clone();
            sorted.sort_unstable();
            let mut keys_sorted = keys.clone();
            keys_sorted.sort_unstable();
            assert_eq!(keys_sorted, sorted);
        }
    }

    fn text() -> impl Strategy<Value = String> {
        prop::string::string_regex("[a-z0-9 ,\"\r\n|;é-]{0,12}").unwrap()
    }

    proptest! {
        /// Any row set reads back through the csv crate's reader with the
        /// same header and cells; and the lines are what the csv crate's
        /// own writer makes of the same cells.
        #[test]
        fn any_row_set_round_trips_through_the_csv_crate(
            rows in prop::collection::vec(
                (text(), any::<u64>(), any::<f64>(), text()), 0..8)
        ) {
            let rows: Vec<Row> = rows
                .into_iter()
                .map(|(name, n, x, colors)| Row { name, n, x, y: x, flag: Some(n % 2 == 0), colors })
                .collect();
            let out = to_csv(&rows, CsvOptions::default());
            let mut reader = ::csv::ReaderBuilder::new()
                .has_headers(true)
                .from_reader(out.as_bytes());
            let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
            prop_assert_eq!(header, ["name", "n", "x", "y", "flag", "colors"]);
            let back: Vec<Vec<String>> = reader
                .records()
                .map(|r| r.unwrap().iter().map(String::from).collect())
                .collect();
            prop_assert_eq!(back.len(), rows.len());
            for (r, b) in rows.iter().zip(&back) {
                let cells = [
                    r.name.clone(),
                    r.n.to_string(),
                    r.x.to_string(),
                    format!("{:.2}", r.y),
                    r.flag.unwrap().to_string(),
                    r.colors.clone(),
                ];
                prop_assert_eq!(b, &cells.to_vec());
            }
        }

        /// Fields are quoted as the csv crate's own writer quotes them.
        #[test]
        fn fields_are_quoted_as_the_csv_crate_quotes_them(
            cells in prop::collection::vec(text(), 2..6)
        ) {
            let mut ours = String::new();
            push_line(&mut ours, cells.iter().map(|c| (c.clone(), false)));
            let mut theirs = ::csv::WriterBuilder::new().from_writer(Vec::new());
            theirs.write_record(&cells).unwrap();
            let theirs = String::from_utf8(theirs.into_inner().unwrap()).unwrap();
            prop_assert_eq!(ours, theirs);
        }
    }
}
