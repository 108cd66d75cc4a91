//! One open document: a rope, the editor's version, and the incremental changes
//! that keep it equal to the editor's buffer.

use std::ops::Range;

use ropey::Rope;

use crate::position::{Position, PositionEncoding, position_to_char};
use crate::rev::Rev;

/// A live editor buffer.
#[derive(Debug, Clone)]
pub struct Document {
    /// The URI exactly as the editor sent it; used whenever we talk to the editor.
    pub editor_uri: String,
    pub language_id: String,
    /// The editor's version. Versions only grow but may jump (Neovim's changedtick).
    pub version: i32,
    /// Which `didOpen` started this session (see [`Rev`]).
    pub session: u64,
    pub text: Rope,
}

/// One entry of a `didChange`: a range in the editor's encoding, or the whole text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChange {
    pub range: Option<Range<Position>>,
    pub text: String,
}

impl Document {
    pub fn rev(&self) -> Rev {
        Rev::Editor { session: self.session, version: self.version }
    }

    /// Applies the changes of one `didChange`, in order, then takes the new version.
    pub fn apply_changes(&mut self, changes: &[TextChange], version: i32, encoding: PositionEncoding) {
        for change in changes {
            apply_change(&mut self.text, change, encoding);
        }
        self.version = version;
    }
}

/// Applies one change to a rope. Positions out of range are clamped, and a reversed
/// range is treated as the same range in order, so no input can panic.
pub fn apply_change(rope: &mut Rope, change: &TextChange, encoding: PositionEncoding) {
    match &change.range {
        None => *rope = Rope::from_str(&change.text),
        Some(range) => {
            let a = position_to_char(rope, range.start, encoding);
            let b = position_to_char(rope, range.end, encoding);
            let (start, end) = if a <= b { (a, b) } else { (b, a) };
            if start < end {
                rope.remove(start..end);
            }
            if !change.text.is_empty() {
                rope.insert(start, &change.text);
            }
        }
    }
}
