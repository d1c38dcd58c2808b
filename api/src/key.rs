/// `true` when `key` is empty or holds only white space, in the sense of Java's
/// `String::isBlank` (the seed's reference): a character counts as white space when it is
/// one of `\t \n \u{B} \u{C} \r`, one of the separators `\u{1C}`–`\u{1F}`, or a Unicode
/// space, line or paragraph separator other than the no-break spaces `\u{A0}`, `\u{2007}`
/// and `\u{202F}`.
///
/// This differs from [`char::is_whitespace`]: `\u{85}` and the no-break spaces are not white
/// space here, and `\u{1C}`–`\u{1F}` are.
///
/// # Example
///
/// ```
/// use ratelimit_lab_api::is_blank_key;
///
/// assert!(is_blank_key(""));
/// assert!(is_blank_key(" \t\u{2003}"));
/// assert!(!is_blank_key("\u{A0}"));
/// assert!(!is_blank_key(" a "));
/// ```
#[inline]
pub fn is_blank_key(key: &str) -> bool {
    // A key starting with a visible ASCII character (`!` to `~`, none of them white space) is
    // not blank: the usual key is decided on its first byte, without decoding characters.
    if key.as_bytes().first().is_some_and(u8::is_ascii_graphic) {
        return false;
    }
    all_java_whitespace(key)
}

/// The slow path of [`is_blank_key`], out of line so that the first-byte test inlines.
#[inline(never)]
fn all_java_whitespace(key: &str) -> bool {
    key.chars().all(is_java_whitespace)
}

fn is_java_whitespace(c: char) -> bool {
    match c {
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | '\u{1C}'..='\u{1F}' => true,
        '\u{A0}' | '\u{2007}' | '\u{202F}' => false,
        // Zs, Zl and Zp: with the control characters above excluded, these are exactly the
        // white-space characters that are not controls.
        c => c.is_whitespace() && !c.is_control(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_java_character_is_whitespace() {
        // Java's Character.isWhitespace is true for exactly these code points.
        let java: Vec<u32> = [
            0x9, 0xA, 0xB, 0xC, 0xD, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x1680,
        ]
        .into_iter()
        .chain(0x2000..=0x2006)
        .chain(0x2008..=0x200A)
        .chain([0x2028, 0x2029, 0x205F, 0x3000])
        .collect();
        for cp in 0..=0x10FFFFu32 {
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(is_java_whitespace(c), java.contains(&cp), "U+{cp:04X}");
            }
        }
    }
}
