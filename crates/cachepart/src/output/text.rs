//! The text-table writer every command uses: a header line and one line per
//! row, each column as wide as its widest cell (counted in characters),
//! columns two spaces apart, trailing spaces trimmed.

/// Where a cell sits in its column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Padded on the right (names).
    Left,
    /// Padded on the left (numbers).
    Right,
}

/// A table of text cells under a header.
#[derive(Clone, Debug, PartialEq)]
pub struct TextTable {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// An empty table with these columns.
    pub fn new(columns: &[(&str, Align)]) -> TextTable {
        TextTable {
            header: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    ///
    /// # Panics
    ///
    /// When the row has not one cell per column.
    pub fn push(&mut self, row: Vec<String>) {
        assert_eq!(
            row.len(),
            self.header.len(),
            "a text-table row has one cell per column"
        );
        self.rows.push(row);
    }

    /// The table as text, one `\n`-terminated line per row after the
    /// header's.
    pub fn render(&self) -> String {
        let lines = || std::iter::once(&self.header).chain(&self.rows);
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| lines().map(|l| l[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for l in lines() {
            let mut line = String::new();
            for (c, cell) in l.iter().enumerate() {
                if c > 0 {
                    line.push_str("  ");
                }
                let w = widths[c];
                match self.align[c] {
                    Align::Left => line.push_str(&format!("{cell:<w$}")),
                    Align::Right => line.push_str(&format!("{cell:>w$}")),
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_lines_are_trimmed() {
        let mut t = TextTable::new(&[
            ("app", Align::Left),
            ("IPC", Align::Right),
            ("note", Align::Left),
        ]);
        t.push(vec!["xz".into(), "1.234".into(), String::new()]);
        t.push(vec!["sqlite3".into(), "0.5".into(), "é".into()]);
        assert_eq!(
            t.render(),
            "app        IPC  note\nxz       1.234\nsqlite3    0.5  é\n"
        );
    }

    #[test]
    #[should_panic(expected = "one cell per column")]
    fn a_short_row_is_refused() {
        TextTable::new(&[("a", Align::Left)]).push(vec![]);
    }
}
