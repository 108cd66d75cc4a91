//! Incremental sync on arbitrary changes: positions in any encoding, past the ends
//! of lines and documents, splitting and joining CRLF pairs. No panic, and the rope
//! always equals a plain string model with the same clamping rules.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ropey::Rope;
use verbatim_engine::text_change::{TextChange, apply_change};
use verbatim_engine::position::{Position, PositionEncoding, position_to_char};

fuzz_target!(|data: &[u8]| {
    let mut chunks = data.chunks(6);
    let Some(first) = chunks.next() else { return };
    let encoding = match first[0] % 3 {
        0 => PositionEncoding::Utf8,
        1 => PositionEncoding::Utf16,
        _ => PositionEncoding::Utf32,
    };
    const PIECES: [&str; 8] = ["a", "é", "😀", "\r", "\n", "\r\n", "e\u{301}", ""];
    let mut rope = Rope::from_str("start\r\nmiddle\rend\n");
    let mut model = rope.to_string();
    for chunk in chunks {
        if chunk.len() < 6 {
            break;
        }
        let start = Position::new(u32::from(chunk[0] % 8), u32::from(chunk[1] % 16));
        let end = Position::new(u32::from(chunk[2] % 8), u32::from(chunk[3] % 16));
        let text = format!("{}{}", PIECES[usize::from(chunk[4] % 8)], PIECES[usize::from(chunk[5] % 8)]);
        // The model resolves positions through the same (separately tested) conversion
        // on a rope built from the model, then edits the string itself.
        let model_rope = Rope::from_str(&model);
        let a = model_rope.char_to_byte(position_to_char(&model_rope, start, encoding));
        let b = model_rope.char_to_byte(position_to_char(&model_rope, end, encoding));
        model.replace_range(a.min(b)..a.max(b), &text);
        apply_change(&mut rope, &TextChange { range: Some(start..end), text }, encoding);
        assert_eq!(rope.to_string(), model);
    }
});
