//! Line/column positions in a rope, in any of the three LSP position encodings.
//!
//! A [`Position`] is a 0-based line and a 0-based column counted in the units of a
//! [`PositionEncoding`]. Only `\n`, `\r\n` and a lone `\r` end a line (ropey is built
//! with `cr_lines` and without `unicode_lines`, so U+2028 and NEL are ordinary text).
//! Out-of-range positions are clamped as the LSP specification says: a column past the
//! end of a line means the end of that line (before its line break), a line past the
//! last line means the end of the document. A column that falls inside a character
//! (the middle of a surrogate pair or of a UTF-8 sequence) is rounded down to the
//! start of that character.

use std::ops::Range;

use ropey::Rope;

/// The unit in which columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PositionEncoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units (the LSP default).
    Utf16,
    /// Unicode scalar values.
    Utf32,
}

impl PositionEncoding {
    /// The name used on the wire (`"utf-8"`, `"utf-16"`, `"utf-32"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Utf8 => "utf-8",
            Self::Utf16 => "utf-16",
            Self::Utf32 => "utf-32",
        }
    }

    /// Parses a wire name; unknown names give `None`.
    pub fn from_wire(name: &str) -> Option<Self> {
        match name {
            "utf-8" => Some(Self::Utf8),
            "utf-16" => Some(Self::Utf16),
            "utf-32" => Some(Self::Utf32),
            _ => None,
        }
    }

    /// Picks the encoding for a peer that offers `offered`: utf-8 when offered, else
    /// utf-16 (also when nothing is offered, as the specification requires), unless
    /// utf-32 is the only thing offered.
    pub fn negotiate<'a>(offered: impl IntoIterator<Item = &'a str>) -> Self {
        let offered: Vec<Self> = offered.into_iter().filter_map(Self::from_wire).collect();
        if offered.contains(&Self::Utf8) {
            Self::Utf8
        } else if offered.contains(&Self::Utf16) || offered.is_empty() {
            Self::Utf16
        } else {
            Self::Utf32
        }
    }
}

/// A 0-based line and a 0-based column in some [`PositionEncoding`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

impl Position {
    pub const fn new(line: u32, character: u32) -> Self {
        Self { line, character }
    }
}

/// The char index just past the last character of `line`, before its line break.
/// `line` must be a valid line index.
fn line_content_end_char(rope: &Rope, line: usize) -> usize {
    let start = rope.line_to_char(line);
    let mut end = if line + 1 < rope.len_lines() { rope.line_to_char(line + 1) } else { rope.len_chars() };
    if end > start && rope.char(end - 1) == '\n' {
        end -= 1;
        if end > start && rope.char(end - 1) == '\r' {
            end -= 1;
        }
    } else if end > start && rope.char(end - 1) == '\r' {
        end -= 1;
    }
    end
}

/// Converts a position to a char index, clamping as described in the module docs.
pub fn position_to_char(rope: &Rope, position: Position, encoding: PositionEncoding) -> usize {
    let line = position.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let start = rope.line_to_char(line);
    let end = line_content_end_char(rope, line);
    let column = position.character as usize;
    match encoding {
        PositionEncoding::Utf32 => start.saturating_add(column).min(end),
        PositionEncoding::Utf16 => {
            let start_cu = rope.char_to_utf16_cu(start);
            let end_cu = rope.char_to_utf16_cu(end);
            rope.utf16_cu_to_char(start_cu.saturating_add(column).min(end_cu))
        }
        PositionEncoding::Utf8 => {
            let start_byte = rope.char_to_byte(start);
            let end_byte = rope.char_to_byte(end);
            rope.byte_to_char(start_byte.saturating_add(column).min(end_byte))
        }
    }
}

/// Converts a char index (at most `len_chars()`) to a position.
pub fn char_to_position(rope: &Rope, char_idx: usize, encoding: PositionEncoding) -> Position {
    let char_idx = char_idx.min(rope.len_chars());
    let line = rope.char_to_line(char_idx);
    let start = rope.line_to_char(line);
    let column = match encoding {
        PositionEncoding::Utf32 => char_idx - start,
        PositionEncoding::Utf16 => rope.char_to_utf16_cu(char_idx) - rope.char_to_utf16_cu(start),
        PositionEncoding::Utf8 => rope.char_to_byte(char_idx) - rope.char_to_byte(start),
    };
    Position::new(saturate_u32(line), saturate_u32(column))
}

/// Converts a byte offset (on a char boundary) to a position.
pub fn byte_to_position(rope: &Rope, byte_idx: usize, encoding: PositionEncoding) -> Position {
    char_to_position(rope, rope.byte_to_char(byte_idx.min(rope.len_bytes())), encoding)
}

/// Converts a byte range to a pair of positions.
pub fn byte_range_to_positions(rope: &Rope, range: &Range<usize>, encoding: PositionEncoding) -> (Position, Position) {
    (byte_to_position(rope, range.start, encoding), byte_to_position(rope, range.end, encoding))
}

/// The width of `text` in the units of `encoding`.
pub fn text_width(text: &str, encoding: PositionEncoding) -> usize {
    match encoding {
        PositionEncoding::Utf8 => text.len(),
        PositionEncoding::Utf16 => text.encode_utf16().count(),
        PositionEncoding::Utf32 => text.chars().count(),
    }
}

fn saturate_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use PositionEncoding::*;

    fn check(text: &str, line: u32, col: u32, enc: PositionEncoding, expected_char: usize) {
        let rope = Rope::from_str(text);
        let got = position_to_char(&rope, Position::new(line, col), enc);
        assert_eq!(got, expected_char, "{text:?} {line}:{col} {enc:?}");
    }

    #[test]
    fn negotiation_prefers_utf8_then_utf16() {
        assert_eq!(PositionEncoding::negotiate(["utf-16", "utf-8"]), Utf8);
        assert_eq!(PositionEncoding::negotiate(["utf-16", "utf-32"]), Utf16);
        assert_eq!(PositionEncoding::negotiate(["utf-32"]), Utf32);
        assert_eq!(PositionEncoding::negotiate([]), Utf16);
        assert_eq!(PositionEncoding::negotiate(["latin-1"]), Utf16);
    }

    #[test]
    fn columns_in_each_encoding() {
        // "a😀b": 😀 is 4 bytes, 2 UTF-16 units, 1 char.
        let text = "a😀b\n";
        check(text, 0, 1, Utf8, 1);
        check(text, 0, 5, Utf8, 2);
        check(text, 0, 3, Utf16, 2);
        check(text, 0, 2, Utf32, 2);
        // Inside the emoji: rounded down to its start.
        check(text, 0, 2, Utf16, 1);
        check(text, 0, 3, Utf8, 1);
    }

    #[test]
    fn columns_past_the_end_clamp_to_the_line_end() {
        check("ab\r\ncd", 0, 99, Utf16, 2);
        check("ab\rcd", 0, 99, Utf8, 2);
        check("ab\ncd", 1, 99, Utf32, 5);
        check("ab\ncd", 7, 0, Utf32, 5);
    }

    #[test]
    fn line_breaks_are_lf_crlf_and_cr_only() {
        let rope = Rope::from_str("a\r\nb\rc\nd\u{2028}e");
        assert_eq!(rope.len_lines(), 4);
        assert_eq!(char_to_position(&rope, 5, Utf16), Position::new(2, 0));
        assert_eq!(char_to_position(&rope, 9, Utf16), Position::new(3, 2));
    }

    #[test]
    fn combining_marks_count_as_their_own_code_points() {
        // "e" + U+0301 COMBINING ACUTE ACCENT.
        let rope = Rope::from_str("e\u{301}x");
        assert_eq!(char_to_position(&rope, 2, Utf32), Position::new(0, 2));
        assert_eq!(char_to_position(&rope, 2, Utf8), Position::new(0, 3));
    }

    #[test]
    fn round_trips_every_char_boundary() {
        let rope = Rope::from_str("x😀é\r\n\r\n€z\rq");
        for enc in [Utf8, Utf16, Utf32] {
            for c in 0..=rope.len_chars() {
                // Between the `\r` and `\n` of a CRLF has no LSP position.
                if c > 0 && c < rope.len_chars() && rope.char(c - 1) == '\r' && rope.char(c) == '\n' {
                    continue;
                }
                let position = char_to_position(&rope, c, enc);
                assert_eq!(position_to_char(&rope, position, enc), c, "{enc:?} char {c}");
            }
        }
    }
}
