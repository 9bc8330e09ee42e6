//! The metrics table: per-app measurements at every way count, read from the
//! PBBCache CSV format (`BENCH,NR_WAYS,ipc,llcmpki,...`).
//!
//! Rows may come in any order. The columns the model reads
//! ([`MODEL_COLUMNS`]) must hold finite numbers; every other column is kept:
//! as numbers when all its cells are numbers ([`MetricsTable::column`]),
//! else as text, empty cells included ([`MetricsTable::text_column`]). Each
//! app must have one row for every way count `1..=W`, with the same `W` for
//! all apps.

use crate::error::ProfileError;
use cachepart_machine::AppCurves;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Columns the model needs in every metrics table.
pub const REQUIRED_COLUMNS: [&str; 4] = ["ipc", "llcmpki", "llcmpkc", "bandwidth_mbps"];

/// Columns the model reads when present (the required ones, the rates the
/// sharing estimate and the bandwidth models use, Dunn's stalls): each cell
/// must be a finite number. Other columns may hold anything.
pub const MODEL_COLUMNS: [&str; 10] = [
    "ipc",
    "llcmpki",
    "llcmpkc",
    "bandwidth_mbps",
    "llcrpki",
    "stalls_total",
    "stalls_l3_miss",
    "stalls_ldm_pending",
    "stalls_store_buf",
    "stalls_l2_miss",
];

/// The columns the model reads that are counts or rates and so can not be
/// negative (a negative miss rate or bandwidth would silently change the
/// sharing estimate and the bandwidth models): every one of
/// [`MODEL_COLUMNS`] but `ipc`, which has its own range ([`IPC_RANGE`]).
pub const NON_NEGATIVE_COLUMNS: &[&str] = MODEL_COLUMNS.split_at(1).1;

/// The IPC range a table may hold. Slowdowns are ratios of IPCs, so this
/// bounds every slowdown by 10^12 and keeps the mix metrics (whose
/// variance squares slowdowns) finite.
pub const IPC_RANGE: (f64, f64) = (1e-6, 1e6);

/// One app's rows: every column at every way count.
#[derive(Clone, Debug, PartialEq)]
pub struct AppTable {
    /// Program name (`BENCH`).
    pub name: String,
    /// `values[c][w - 1]`: numeric column `c` of the table at `w` ways.
    values: Vec<Vec<f64>>,
    /// `text[c][w - 1]`: text column `c` at `w` ways, as written.
    text: Vec<Vec<String>>,
}

/// All apps of a metrics file.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsTable {
    source: PathBuf,
    ways: usize,
    columns: Vec<String>,
    text_columns: Vec<String>,
    apps: Vec<AppTable>,
    by_name: HashMap<String, usize>,
}

impl AppTable {
    /// Column `c` (index into [`MetricsTable::columns`]) at every way count.
    pub fn values(&self, c: usize) -> &[f64] {
        &self.values[c]
    }

    /// Text column `c` (index into [`MetricsTable::text_columns`]) at
    /// every way count, as written.
    pub fn text(&self, c: usize) -> &[String] {
        &self.text[c]
    }
}

impl MetricsTable {
    /// Reads a metrics CSV file (`-`: standard input).
    pub fn from_path(path: &Path) -> Result<Self, ProfileError> {
        let text = cachepart_units::input::read_text(path).map_err(|source| ProfileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_csv_str(&text, path)
    }

    /// Parses metrics CSV text; `source` names it in errors.
    pub fn from_csv_str(text: &str, source: &Path) -> Result<Self, ProfileError> {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let headers = rdr
            .headers()
            .map_err(|e| ProfileError::parse(source, Some(1), None, e.to_string()))?
            .clone();
        let find = |name: &str| headers.iter().position(|h| h == name);
        let bench_col = find("BENCH").ok_or_else(|| {
            ProfileError::parse(source, Some(1), None, "header has no BENCH column")
        })?;
        let ways_col = find("NR_WAYS").ok_or_else(|| {
            ProfileError::parse(source, Some(1), None, "header has no NR_WAYS column")
        })?;
        for req in REQUIRED_COLUMNS {
            if find(req).is_none() {
                return Err(ProfileError::parse(
                    source,
                    Some(1),
                    None,
                    format!(
                        "header has no {req} column (required: BENCH, NR_WAYS, {})",
                        REQUIRED_COLUMNS.join(", ")
                    ),
                ));
            }
        }
        let data: Vec<usize> = (0..headers.len())
            .filter(|&i| i != bench_col && i != ways_col)
            .collect();
        {
            let mut seen = HashMap::new();
            for &i in &data {
                if seen.insert(&headers[i], i).is_some() {
                    return Err(ProfileError::parse(
                        source,
                        Some(1),
                        Some(headers[i].to_string()),
                        "column name appears twice in the header",
                    ));
                }
            }
        }

        let mut records = Vec::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| {
                let line = e.position().map(|p| p.line());
                ProfileError::parse(source, line, None, format!("malformed CSV row: {e}"))
            })?;
            let line = rec.position().map(|p| p.line()).unwrap_or(0);
            if rec.iter().all(|f| f.is_empty()) {
                continue;
            }
            if rec.len() != headers.len() {
                return Err(ProfileError::parse(
                    source,
                    Some(line),
                    None,
                    format!(
                        "row has {} fields, the header has {}",
                        rec.len(),
                        headers.len()
                    ),
                ));
            }
            records.push((line, rec));
        }
        // A column the model does not read is numeric when every cell is a
        // finite number, else kept as text.
        let is_numeric = |i: usize| {
            MODEL_COLUMNS.contains(&&headers[i])
                || records
                    .iter()
                    .all(|(_, r)| r[i].parse::<f64>().is_ok_and(f64::is_finite))
        };
        let (numeric, text_cols): (Vec<usize>, Vec<usize>) =
            data.iter().partition(|&&i| is_numeric(i));
        let columns: Vec<String> = numeric.iter().map(|&i| headers[i].to_string()).collect();
        let text_columns: Vec<String> = text_cols.iter().map(|&i| headers[i].to_string()).collect();

        // name -> (way -> (line, values, text))
        let mut order: Vec<String> = Vec::new();
        type Row = (u64, Vec<f64>, Vec<String>);
        let mut rows: HashMap<String, HashMap<usize, Row>> = HashMap::new();
        for (line, rec) in records {
            let name = rec[bench_col].to_string();
            if name.is_empty() {
                return Err(ProfileError::parse(
                    source,
                    Some(line),
                    Some("BENCH".into()),
                    "empty program name",
                ));
            }
            let w_text = &rec[ways_col];
            let w: usize = match w_text.parse::<usize>() {
                Ok(w) if (1..=64).contains(&w) => w,
                _ => {
                    return Err(ProfileError::parse(
                        source,
                        Some(line),
                        Some("NR_WAYS".into()),
                        format!("expected a way count from 1 to 64, found {w_text:?}"),
                    ))
                }
            };
            let mut vals = Vec::with_capacity(numeric.len());
            for &i in &numeric {
                let t = &rec[i];
                let v: f64 = t.parse().map_err(|_| {
                    ProfileError::parse(
                        source,
                        Some(line),
                        Some(headers[i].to_string()),
                        format!("expected a number, found {t:?}"),
                    )
                })?;
                if !v.is_finite() {
                    return Err(ProfileError::parse(
                        source,
                        Some(line),
                        Some(headers[i].to_string()),
                        format!("expected a finite number, found {t:?}"),
                    ));
                }
                if v < 0.0 && NON_NEGATIVE_COLUMNS.contains(&&headers[i]) {
                    return Err(ProfileError::parse(
                        source,
                        Some(line),
                        Some(headers[i].to_string()),
                        format!("expected a number >= 0, found {t:?}"),
                    ));
                }
                vals.push(v);
            }
            let per_app = rows.entry(name.clone()).or_insert_with(|| {
                order.push(name.clone());
                HashMap::new()
            });
            if let Some((prev, _, _)) = per_app.get(&w) {
                return Err(ProfileError::parse(
                    source,
                    Some(line),
                    Some("NR_WAYS".into()),
                    format!("duplicated row: {name} at {w} ways already given on line {prev}"),
                ));
            }
            let text = text_cols.iter().map(|&i| rec[i].to_string()).collect();
            per_app.insert(w, (line, vals, text));
        }
        if order.is_empty() {
            return Err(ProfileError::parse(source, None, None, "no data rows"));
        }
        let ways = rows
            .values()
            .map(|r| r.keys().copied().max().unwrap_or(0))
            .max()
            .unwrap_or(0);
        let ipc_c = columns.iter().position(|c| c == "ipc").expect("checked");
        let mut apps = Vec::with_capacity(order.len());
        for name in &order {
            let r = &rows[name];
            let mut values = vec![vec![0.0; ways]; columns.len()];
            let mut text = vec![vec![String::new(); ways]; text_columns.len()];
            for w in 1..=ways {
                let Some((line, vals, texts)) = r.get(&w) else {
                    return Err(ProfileError::parse(
                        source,
                        None,
                        Some("NR_WAYS".into()),
                        format!("program {name} has no row for {w} ways (every program needs rows for 1..={ways})"),
                    ));
                };
                let ipc = vals[ipc_c];
                if !(IPC_RANGE.0..=IPC_RANGE.1).contains(&ipc) {
                    return Err(ProfileError::parse(
                        source,
                        Some(*line),
                        Some("ipc".into()),
                        format!(
                            "expected an IPC from {:e} to {:e}, found {ipc}",
                            IPC_RANGE.0, IPC_RANGE.1
                        ),
                    ));
                }
                for (c, v) in vals.iter().enumerate() {
                    values[c][w - 1] = *v;
                }
                for (c, t) in texts.iter().enumerate() {
                    text[c][w - 1].clone_from(t);
                }
            }
            apps.push(AppTable {
                name: name.clone(),
                values,
                text,
            });
        }
        let by_name = order
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Ok(MetricsTable {
            source: source.to_path_buf(),
            ways,
            columns,
            text_columns,
            apps,
            by_name,
        })
    }

    /// Where the table was read from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Number of way counts `W` (rows per app).
    pub fn ways(&self) -> usize {
        self.ways
    }

    /// Numeric column names, in file order (the text ones are
    /// [`MetricsTable::text_columns`]).
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Names of the columns kept as text (those the model does not read
    /// that hold a cell that is not a finite number, such as an empty one),
    /// in file order.
    pub fn text_columns(&self) -> &[String] {
        &self.text_columns
    }

    /// A text column of an app by names, at every way count.
    pub fn text_column(&self, app: &str, column: &str) -> Option<&[String]> {
        let c = self.text_columns.iter().position(|n| n == column)?;
        Some(self.app(app)?.text(c))
    }

    /// Index of a numeric column by name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// Apps in file order of first appearance.
    pub fn apps(&self) -> &[AppTable] {
        &self.apps
    }

    /// An app by name.
    pub fn app(&self, name: &str) -> Option<&AppTable> {
        self.by_name.get(name).map(|&i| &self.apps[i])
    }

    /// Index of an app by name.
    pub fn app_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// A column of an app by names.
    pub fn column(&self, app: &str, column: &str) -> Option<&[f64]> {
        let a = self.app(app)?;
        Some(a.values(self.column_index(column)?))
    }

    /// The closest known program name to `name`, for error hints.
    pub fn suggest(&self, name: &str) -> Option<&str> {
        let lower = name.to_lowercase();
        self.apps
            .iter()
            .map(|a| a.name.as_str())
            .min_by_key(|n| edit_distance(&n.to_lowercase(), &lower))
            .filter(|n| edit_distance(&n.to_lowercase(), &lower) <= 3)
    }

    /// The policy view of an app: IPC, MPKI, MPKC, bandwidth, slowdown and,
    /// if present, `stalls_l2_miss`.
    pub fn curves(&self, app: usize) -> AppCurves {
        let a = &self.apps[app];
        let col = |n: &str| {
            a.values(self.column_index(n).expect("required column"))
                .to_vec()
        };
        let mut c = AppCurves::new(
            &a.name,
            col("ipc"),
            col("llcmpki"),
            col("llcmpkc"),
            col("bandwidth_mbps"),
        );
        c.stalls_l2_miss = self
            .column_index("stalls_l2_miss")
            .map(|i| a.values(i).to_vec());
        c
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const HDR: &str = "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps,extra\n";

    fn parse(body: &str) -> Result<MetricsTable, ProfileError> {
        MetricsTable::from_csv_str(&format!("{HDR}{body}"), Path::new("m.csv"))
    }

    #[test]
    fn refuses_negative_rates_and_absurd_ipcs() {
        let e = parse("a,1,1.0,-2,2,20,8\n").unwrap_err().to_string();
        assert!(
            e.contains("m.csv:2 column llcmpki") && e.contains(">= 0"),
            "{e}"
        );
        let e = parse("a,1,1.0,2,2,-20,8\n").unwrap_err().to_string();
        assert!(e.contains("column bandwidth_mbps"), "{e}");
        let e = parse("a,1,1e-300,2,2,20,8\n").unwrap_err().to_string();
        assert!(e.contains("column ipc") && e.contains("1e-6"), "{e}");
        let e = parse("a,1,0,2,2,20,8\n").unwrap_err().to_string();
        assert!(e.contains("column ipc"), "{e}");
        let e = MetricsTable::from_csv_str(
            "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps,stalls_l2_miss\na,1,1.0,2,2,20,-1\n",
            Path::new("m.csv"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("column stalls_l2_miss"), "{e}");
        // columns the model does not read may be negative
        assert!(parse("a,1,1.0,2,2,20,-8\n").is_ok());
    }

    #[test]
    fn reads_rows_in_any_order_and_keeps_extra_columns() {
        let t = parse("a,2,2.0,1,1,10,7\na,1,1.0,2,2,20,8\n").unwrap();
        assert_eq!(t.ways(), 2);
        assert_eq!(t.column("a", "ipc").unwrap(), &[1.0, 2.0]);
        assert_eq!(t.column("a", "extra").unwrap(), &[8.0, 7.0]);
        let c = t.curves(0);
        assert_eq!(c.slowdown, vec![2.0, 1.0]);
    }

    #[test]
    fn keeps_text_and_empty_extra_columns_as_text() {
        let text = "BENCH,NR_WAYS,ipc,note,llcmpki,llcmpkc,bandwidth_mbps,empty,extra\n\
                    a,2,2.0,fast,1,1,10,,7\na,1,1.0,\"slow, cold\",2,2,20,,8\n";
        let t = MetricsTable::from_csv_str(text, Path::new("m.csv")).unwrap();
        assert_eq!(
            t.columns(),
            ["ipc", "llcmpki", "llcmpkc", "bandwidth_mbps", "extra"]
        );
        assert_eq!(t.text_columns(), ["note", "empty"]);
        assert_eq!(t.text_column("a", "note").unwrap(), ["slow, cold", "fast"]);
        assert_eq!(t.text_column("a", "empty").unwrap(), ["", ""]);
        assert_eq!(t.column("a", "extra").unwrap(), &[8.0, 7.0]);
        assert!(t.column("a", "note").is_none());
        // a column with one number and one empty cell is text
        let t = parse("a,2,2.0,1,1,10,\na,1,1.0,2,2,20,8\n").unwrap();
        assert_eq!(t.text_column("a", "extra").unwrap(), ["8", ""]);
        // a column the model reads must still be numbers
        let e = MetricsTable::from_csv_str(
            "BENCH,NR_WAYS,ipc,llcmpki,llcmpkc,bandwidth_mbps,stalls_total\na,1,1.0,2,2,20,\n",
            Path::new("m.csv"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("m.csv:2 column stalls_total"), "{e}");
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("a,1,1.0,2,2,20,8\na,2,x,1,1,10,7\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "m.csv:3 column ipc: expected a number, found \"x\"");
        let e = parse("a,1,1.0,2,2,20,8\na,1,1.0,2,2,20,8\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("m.csv:3") && e.contains("duplicated row"), "{e}");
        let e = parse("a,1,1.0,2,2,20,8\na,2,1.0,2,2,20,8\nb,1,1.0,2,2,20,8\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("program b has no row for 2 ways"), "{e}");
        let e = parse("a,0,1.0,2,2,20,8\n").unwrap_err().to_string();
        assert!(e.contains("column NR_WAYS"), "{e}");
        let e = MetricsTable::from_csv_str("BENCH,NR_WAYS,ipc\n", Path::new("m.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no llcmpki column"), "{e}");
        let e = parse("a,1,1.0,2\n").unwrap_err().to_string();
        assert!(e.contains("m.csv:2"), "{e}");
    }
}
