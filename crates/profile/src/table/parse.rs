//! Reading the PBBCache CSV format into a [`MetricsTable`]: the header's
//! required columns, one row per program and way count, numeric and text
//! columns told apart, and every cell checked, with errors that name the
//! file, the line and the column.

use super::{
    AppTable, MetricsTable, IPC_RANGE, MODEL_COLUMNS, NON_NEGATIVE_COLUMNS, REQUIRED_COLUMNS,
};
use crate::error::ProfileError;
use std::collections::HashMap;
use std::path::Path;

/// Parses metrics CSV text; `source` names it in errors.
pub(super) fn parse_csv(text: &str, source: &Path) -> Result<MetricsTable, ProfileError> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| ProfileError::parse(source, Some(1), None, e.to_string()))?
        .clone();
    let find = |name: &str| headers.iter().position(|h| h == name);
    let bench_col = find("BENCH")
        .ok_or_else(|| ProfileError::parse(source, Some(1), None, "header has no BENCH column"))?;
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
    let (numeric, text_cols): (Vec<usize>, Vec<usize>) = data.iter().partition(|&&i| is_numeric(i));
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

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::error::ProfileError;
    use std::path::Path;

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
