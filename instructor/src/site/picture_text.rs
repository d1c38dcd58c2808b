//! Text written into the pictures: XML escaping (also used by the race picture and the
//! page), and the labels for times, counts, balances, retry estimates and keys.
use ratelimit_lab::lesson::words::tokens;
use ratelimit_lab::UNITS_PER_TOKEN;

/// Seconds for an axis label: exact up to six digits (`0 s`, `0.25 s`, `5.5 s`), else
/// compact (`≈9.2e9 s`); the exact time is in each mark's hover text.
pub(super) fn seconds(nanos: u64) -> String {
    let exact = tokens(u128::from(nanos));
    if exact.chars().filter(char::is_ascii_digit).count() <= 10 {
        format!("{exact} s")
    } else {
        format!(
            "{} s",
            compact(u128::from(nanos) / u128::from(UNITS_PER_TOKEN))
        )
    }
}

/// At most this many characters of an exact number; a longer one is written compactly.
const DIGITS: usize = 12;

/// `units` as tokens for a label: exact (`0.5`, `9`), or `≈9.2e18` when too long.
pub(super) fn token_label(units: u128) -> String {
    let exact = tokens(units);
    if exact.len() <= DIGITS {
        exact
    } else {
        compact(units / u128::from(ratelimit_lab::UNITS_PER_TOKEN))
    }
}

/// Nanoseconds for a label: `retry 500000000 ns`, or `retry ≈1.8e19 ns`.
pub(super) fn retry_label(nanos: u64) -> String {
    let exact = nanos.to_string();
    if exact.len() <= DIGITS {
        format!("retry {exact} ns")
    } else {
        format!("retry {} ns", compact(u128::from(nanos)))
    }
}

/// A count for a label: exact up to 999,999, else two significant digits (`≈9.2e18`).
pub(super) fn compact(n: u128) -> String {
    if n < 1_000_000 {
        return n.to_string();
    }
    let digits = n.to_string();
    let exponent = digits.len() - 1;
    format!("≈{}.{}e{exponent}", &digits[..1], &digits[1..2])
}

/// Text safe inside an XML element or attribute.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_exact_or_marked_approximate() {
        assert_eq!(token_label(500_000_000), "0.5");
        assert_eq!(token_label(1_000_000_000), "1");
        assert_eq!(
            token_label(9_223_372_036_854_775_807_000_000_000),
            "≈9.2e18"
        );
        assert_eq!(retry_label(500_000_000), "retry 500000000 ns");
        assert_eq!(retry_label(333_333_334), "retry 333333334 ns");
        assert_eq!(retry_label(u64::MAX), "retry ≈1.8e19 ns");
    }
}
