//! Plain-text tables with `|`-separated columns padded to their widest cell.

/// Renders `header` and `rows` as lines `a | b | c`, a `-+-` rule under the header, each
/// column as wide as its widest cell (counted in characters); the last column is not padded.
/// Rows shorter than the header are padded with empty cells.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| -> String {
        let mut out = String::new();
        for (i, width) in widths.iter().enumerate() {
            let cell = cells.next().unwrap_or("");
            if i > 0 {
                out.push_str(" | ");
            }
            out.push_str(cell);
            if i + 1 < columns {
                let pad = width.saturating_sub(cell.chars().count());
                out.push_str(&" ".repeat(pad));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut out = line(&mut header.iter().copied());
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&rule.join("-+-"));
    out.push('\n');
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_on_the_widest_cell() {
        let rows = vec![
            vec!["1".to_owned(), "long action".to_owned(), "x".to_owned()],
            vec!["10".to_owned(), "a".to_owned()],
        ];
        let text = render(&["step", "action", "end"], &rows);
        assert_eq!(
            text,
            "step | action      | end\n\
             -----+-------------+----\n\
             1    | long action | x\n\
             10   | a           |\n"
        );
    }

    #[test]
    fn width_counts_characters_not_bytes() {
        let rows = vec![vec!["×".to_owned(), "b".to_owned()]];
        assert_eq!(render(&["a", "b"], &rows), "a | b\n--+--\n× | b\n");
    }
}
