//! One incremental change of the LSP (`TextDocumentContentChangeEvent`) applied to a
//! rope, in any position encoding, and what it did (the bytes it changed, the text it
//! removed): shared by an open document and by the changes a plain client has not
//! sent yet (`unsent.rs`).

use std::ops::Range;

use ropey::Rope;

use crate::history::ByteEdit;
use crate::position::{Position, PositionEncoding, position_to_char};

/// One entry of a `didChange`: a range in the editor's encoding, or the whole text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChange {
    pub range: Option<Range<Position>>,
    pub text: String,
}

/// What one change did to a rope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedChange {
    /// The change in bytes of the text it was applied to.
    pub edit: ByteEdit,
    /// The text it removed; `None` when it replaced the whole text.
    pub removed: Option<String>,
}

/// Applies one change to a rope, and says what it did. Positions out of range are
/// clamped, and a reversed range is treated as the same range in order, so no input
/// can panic.
pub fn apply_change(rope: &mut Rope, change: &TextChange, encoding: PositionEncoding) -> AppliedChange {
    match &change.range {
        None => {
            let removed = 0..rope.len_bytes();
            *rope = Rope::from_str(&change.text);
            AppliedChange { edit: ByteEdit { range: removed, inserted: change.text.len() }, removed: None }
        }
        Some(range) => {
            let a = position_to_char(rope, range.start, encoding);
            let b = position_to_char(rope, range.end, encoding);
            let (start, end) = if a <= b { (a, b) } else { (b, a) };
            let bytes = rope.char_to_byte(start)..rope.char_to_byte(end);
            let removed = rope.slice(start..end).to_string();
            if start < end {
                rope.remove(start..end);
            }
            if !change.text.is_empty() {
                rope.insert(start, &change.text);
            }
            AppliedChange { edit: ByteEdit { range: bytes, inserted: change.text.len() }, removed: Some(removed) }
        }
    }
}
