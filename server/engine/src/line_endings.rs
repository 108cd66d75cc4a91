//! Line endings of new text: an edit adopts the line ending around it, so an agent
//! that writes `\n` into a CRLF file (or a CRLF region of a mixed file) produces
//! CRLF lines, and a file's line endings never drift because of an edit.
//!
//! "Around" is the line break that ends the line where the replaced range starts;
//! on the last line, which has none, the break that ends the line before. Text
//! without any line break imposes nothing: the new text is kept as written.

use std::borrow::Cow;

use ropey::Rope;

use crate::plan::Replacement;

/// The line break around byte `offset` of `text`: `"\n"`, `"\r\n"` or `"\r"`.
pub fn around(text: &Rope, offset: usize) -> Option<&'static str> {
    let len = text.len_bytes();
    let offset = offset.min(len);
    let line = text.byte_to_line(offset);
    line_break_of(text, line).or_else(|| line.checked_sub(1).and_then(|previous| line_break_of(text, previous)))
}

/// The break that ends line `line`, if any.
fn line_break_of(text: &Rope, line: usize) -> Option<&'static str> {
    if line >= text.len_lines() {
        return None;
    }
    let slice = text.line(line);
    let len = slice.len_bytes();
    let last = (len >= 1).then(|| slice.byte(len - 1))?;
    match last {
        b'\n' if len >= 2 && slice.byte(len - 2) == b'\r' => Some("\r\n"),
        b'\n' => Some("\n"),
        b'\r' => Some("\r"),
        _ => None,
    }
}

/// `new_text` with every line break (`\r\n`, `\n`, lone `\r`) written as `ending`.
pub fn with_ending<'a>(new_text: &'a str, ending: &str) -> Cow<'a, str> {
    let bytes = new_text.as_bytes();
    let uniform = {
        let mut at = 0;
        let mut uniform = true;
        while let Some(offset) = memchr::memchr2(b'\r', b'\n', &bytes[at..]) {
            let start = at + offset;
            let end = if bytes[start] == b'\r' && bytes.get(start + 1) == Some(&b'\n') { start + 2 } else { start + 1 };
            if &new_text[start..end] != ending {
                uniform = false;
                break;
            }
            at = end;
        }
        uniform
    };
    if uniform {
        return Cow::Borrowed(new_text);
    }
    let mut out = String::with_capacity(new_text.len() + new_text.len() / 16);
    let mut at = 0;
    while let Some(offset) = memchr::memchr2(b'\r', b'\n', &bytes[at..]) {
        let start = at + offset;
        out.push_str(&new_text[at..start]);
        out.push_str(ending);
        at = if bytes[start] == b'\r' && bytes.get(start + 1) == Some(&b'\n') { start + 2 } else { start + 1 };
    }
    out.push_str(&new_text[at..]);
    Cow::Owned(out)
}

/// Makes each replacement's new text adopt the line ending around it in `text`.
pub fn adopt(text: &Rope, replacements: Vec<Replacement>) -> Vec<Replacement> {
    replacements
        .into_iter()
        .map(|replacement| match around(text, replacement.range.start) {
            Some(ending) => match with_ending(&replacement.new_text, ending) {
                Cow::Borrowed(_) => replacement,
                Cow::Owned(new_text) => Replacement { new_text, ..replacement },
            },
            None => replacement,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_ending_around_an_offset() {
        let text = Rope::from_str("a\r\nb\nc\rlast");
        assert_eq!(around(&text, 0), Some("\r\n"));
        assert_eq!(around(&text, 3), Some("\n"));
        assert_eq!(around(&text, 5), Some("\r"));
        // The last line has no break: the one before it counts.
        assert_eq!(around(&text, 8), Some("\r"));
        assert_eq!(around(&text, 12), Some("\r"));
        assert_eq!(around(&Rope::from_str("no breaks"), 3), None);
        assert_eq!(around(&Rope::new(), 0), None);
        assert_eq!(around(&Rope::from_str("x\r\n"), 3), Some("\r\n"));
    }

    #[test]
    fn new_text_takes_the_ending() {
        assert_eq!(with_ending("a\nb\r\nc\rd", "\r\n"), "a\r\nb\r\nc\r\nd");
        assert_eq!(with_ending("a\r\nb\n", "\n"), "a\nb\n");
        assert!(matches!(with_ending("a\r\nb", "\r\n"), Cow::Borrowed(_)));
        assert!(matches!(with_ending("no breaks", "\r\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn each_replacement_adopts_its_own_region() {
        let text = Rope::from_str("crlf\r\nregion\r\nlf\nregion\n");
        let replacements = vec![
            Replacement { range: 0..4, new_text: "one\ntwo".into() },
            Replacement { range: 14..16, new_text: "three\r\nfour".into() },
        ];
        let adopted = adopt(&text, replacements);
        assert_eq!(adopted[0].new_text, "one\r\ntwo");
        assert_eq!(adopted[1].new_text, "three\nfour");
    }
}
