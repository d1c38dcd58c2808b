//! Plain-text tables with columns padded to their widest cell: `|`-separated, or separated by
//! two spaces where width is short.

/// Renders `header` and `rows` as lines `a | b | c`, a `-+-` rule under the header, each
/// column as wide as its widest cell (counted in characters); the last column is not padded.
/// Rows shorter than the header are padded with empty cells.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    render_with(header, rows, " | ", "-+-")
}

/// As [`render`], with columns separated by two spaces (and the rule's dashes likewise): three
/// columns fewer of separators per line, for a table that must fit a terminal.
pub fn render_spaced(header: &[&str], rows: &[Vec<String>]) -> String {
    render_with(header, rows, "  ", "  ")
}

fn render_with(header: &[&str], rows: &[Vec<String>], separator: &str, rule_joint: &str) -> String {
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
                out.push_str(separator);
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
    out.push_str(&rule.join(rule_joint));
    out.push('\n');
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

/// The width down to which [`render_fitted`] narrows the columns it may wrap first.
pub const COMFORTABLE: usize = 20;

/// As [`render`], fitted to `max_width` columns: while the table is wider, the widest column
/// that can still give a column up is narrowed, and cells wrap at spaces inside their column,
/// a row taking as many lines as its tallest cell. The columns not in `keep` give way first,
/// down to [`COMFORTABLE`] columns; then any column does, never below its header or its
/// longest word. A table whose words alone are too wide stays wider than `max_width`.
pub fn render_fitted(
    header: &[&str],
    rows: &[Vec<String>],
    max_width: usize,
    keep: &[usize],
) -> String {
    let columns = header.len();
    let chars = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = header.iter().map(|h| chars(h)).collect();
    let mut floors = widths.clone();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(chars(cell));
            let longest_word = cell.split(' ').map(chars).max().unwrap_or(0);
            floors[i] = floors[i].max(longest_word);
        }
    }
    let separators = 3 * columns.saturating_sub(1);
    let first_floors: Vec<usize> = (0..columns)
        .map(|i| {
            if keep.contains(&i) {
                widths[i]
            } else {
                floors[i].max(COMFORTABLE)
            }
        })
        .collect();
    for floors in [&first_floors, &floors] {
        while widths.iter().sum::<usize>() + separators > max_width {
            let widest = (0..columns)
                .filter(|&i| widths[i] > floors[i])
                .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)));
            match widest {
                Some(i) => widths[i] -= 1,
                None => break,
            }
        }
    }
    let mut out = fitted_row(header, &widths);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&rule.join("-+-"));
    out.push('\n');
    for row in rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        out.push_str(&fitted_row(&cells, &widths));
    }
    out
}

/// One row of a fitted table: its cells wrapped in their columns, as many lines as the
/// tallest cell needs, each ending in a newline.
fn fitted_row(cells: &[&str], widths: &[usize]) -> String {
    let wrapped: Vec<Vec<String>> = widths
        .iter()
        .enumerate()
        .map(|(i, width)| wrap(cells.get(i).copied().unwrap_or(""), *width))
        .collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    let mut out = String::new();
    for line_index in 0..height {
        let mut line = String::new();
        for (i, cell_lines) in wrapped.iter().enumerate() {
            let part = cell_lines.get(line_index).map_or("", String::as_str);
            if i > 0 {
                line.push_str(" | ");
            }
            line.push_str(part);
            if i + 1 < widths.len() {
                line.push_str(&" ".repeat(widths[i].saturating_sub(part.chars().count())));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `text` as a paragraph of lines at most `width` wide, broken at spaces, each line after
/// the first starting with `indent`; ends with a newline.
pub fn wrapped(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let first = wrap(text, width);
    let mut rest = String::new();
    for (i, line) in first.iter().enumerate() {
        if i == 0 {
            out.push_str(line);
            out.push('\n');
        } else {
            if !rest.is_empty() {
                rest.push(' ');
            }
            rest.push_str(line);
        }
    }
    if !rest.is_empty() {
        for line in wrap(&rest, width.saturating_sub(indent.chars().count())) {
            out.push_str(indent);
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// `text` broken at spaces into lines of at most `width` characters; a word longer than
/// `width` gets a line of its own. Never empty: an empty text is one empty line.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let needed = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if !line.is_empty() && needed > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
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
    fn spaced_columns_use_two_spaces() {
        let rows = vec![vec!["fails R1".to_owned(), "x".to_owned()]];
        assert_eq!(
            render_spaced(&["expected", "b"], &rows),
            "expected  b\n--------  -\nfails R1  x\n"
        );
    }

    #[test]
    fn a_fitted_table_wraps_its_widest_column() {
        let rows = vec![vec![
            "1".to_owned(),
            "allowed; nothing remains of the budget".to_owned(),
        ]];
        let text = render_fitted(&["step", "outcome"], &rows, 24, &[]);
        assert_eq!(
            text,
            "step | outcome\n\
             -----+------------------\n\
             1    | allowed; nothing\n     | remains of the\n     | budget\n"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 24), "{text}");
        // Already narrow enough: the same as `render`.
        assert_eq!(
            render_fitted(&["step", "outcome"], &rows, 200, &[0]),
            render(&["step", "outcome"], &rows)
        );
    }

    #[test]
    fn width_counts_characters_not_bytes() {
        let rows = vec![vec!["×".to_owned(), "b".to_owned()]];
        assert_eq!(render(&["a", "b"], &rows), "a | b\n--+--\n× | b\n");
    }
}
