//! Edits a client said it applied but has not sent yet, and how its late change is
//! reconciled with them.
//!
//! A plain LSP client (Eglot) may answer `workspace/applyEdit` with `applied: true`
//! and send the `didChange` that carries the edit only at the person's next keystroke.
//! The server knows exactly what it sent, so its copy takes the edit at once (see
//! [`crate::document::Document::assume_applied`]); what it keeps here is the text the
//! client last sent, because the client's later `didChange` is relative to that text.
//! When the change arrives it is replayed on that text: the client's text is the
//! truth from then on, and [`Reconciled`] says whether it held what the client said it
//! applied (possibly followed by the person's typing) or disagreed with it.

use ropey::Rope;

use crate::history::ByteEdit;
use crate::plan::Replacement;
use crate::position::PositionEncoding;
use crate::text_change::{TextChange, apply_change};

/// The text and version a client last sent, before edits it said it applied.
#[derive(Debug, Clone)]
pub struct Unsent {
    /// What the client's next `didChange` is relative to.
    pub text: Rope,
    pub version: i32,
    /// The text after each edit the server took since, oldest first (the last is the
    /// server's copy).
    pub steps: Vec<Rope>,
}

/// What a client's late change said about the edits the server assumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reconciled {
    /// The change holds every assumed edit; `more`: followed by more changes (the
    /// person's typing).
    Agreed { more: bool },
    /// The change holds the first assumed edits, exactly, and no more: the rest are
    /// still to come (a client that sends one change per edit). Nothing to report.
    Partway,
    /// The change never passes through the assumed text: the client did something
    /// else than what it said it applied. Both texts are kept, for the journal.
    Disagreed { assumed: String, client: String },
}

/// Replays a client's late change on the text it last sent, and returns the
/// client's text, with what it says about the assumed edits. For
/// [`Reconciled::Partway`], `unsent` is moved to the client's text, past the edits it
/// holds.
pub fn replay(unsent: &mut Unsent, changes: &[TextChange], encoding: PositionEncoding) -> (Rope, Reconciled) {
    let mut client = unsent.text.clone();
    let reached_at = |client: &Rope| unsent.steps.iter().rposition(|step| same_text(client, step));
    let mut reached = reached_at(&client);
    for change in changes {
        apply_change(&mut client, change, encoding);
        reached = reached.max(reached_at(&client));
    }
    let last = unsent.steps.len().saturating_sub(1);
    let assumed = unsent.steps.last().cloned().unwrap_or_default();
    let reconciled = match reached {
        Some(step) if step == last => Reconciled::Agreed { more: !same_text(&client, &assumed) },
        Some(step) if same_text(&client, &unsent.steps[step]) => {
            unsent.steps.drain(..=step);
            Reconciled::Partway
        }
        _ => Reconciled::Disagreed { assumed: assumed.to_string(), client: client.to_string() },
    };
    if reconciled == Reconciled::Partway {
        unsent.text = client.clone();
    }
    (client, reconciled)
}

fn same_text(a: &Rope, b: &Rope) -> bool {
    a.len_bytes() == b.len_bytes() && a == b
}

/// The byte edits that apply sorted, disjoint `replacements` of `base`, in the order
/// they are applied (last first, so each offset is of the text it is applied to),
/// each with the text it removed.
pub fn edits_of_replacements(base: &Rope, replacements: &[Replacement]) -> Vec<(ByteEdit, String)> {
    replacements
        .iter()
        .rev()
        .map(|replacement| {
            let removed = base.byte_slice(replacement.range.clone()).to_string();
            (ByteEdit { range: replacement.range.clone(), inserted: replacement.new_text.len() }, removed)
        })
        .collect()
}

/// One byte edit that turns `old` into `new`: the middle between their common prefix
/// and common suffix (empty when they are equal).
pub fn edit_between(old: &Rope, new: &Rope) -> Option<(ByteEdit, String)> {
    if same_text(old, new) {
        return None;
    }
    let (old_bytes, new_bytes) = (old.bytes().collect::<Vec<u8>>(), new.bytes().collect::<Vec<u8>>());
    let mut prefix = old_bytes.iter().zip(&new_bytes).take_while(|(a, b)| a == b).count();
    let limit = old_bytes.len().min(new_bytes.len()) - prefix;
    let mut suffix = old_bytes.iter().rev().zip(new_bytes.iter().rev()).take(limit).take_while(|(a, b)| a == b).count();
    // Keep both ends on character boundaries of both texts.
    while prefix > 0 && !(is_boundary(&old_bytes, prefix) && is_boundary(&new_bytes, prefix)) {
        prefix -= 1;
    }
    while suffix > 0
        && !(is_boundary(&old_bytes, old_bytes.len() - suffix) && is_boundary(&new_bytes, new_bytes.len() - suffix))
    {
        suffix -= 1;
    }
    let removed = prefix..old_bytes.len() - suffix;
    let text = String::from_utf8_lossy(&old_bytes[removed.clone()]).into_owned();
    Some((ByteEdit { range: removed, inserted: new_bytes.len() - suffix - prefix }, text))
}

fn is_boundary(bytes: &[u8], at: usize) -> bool {
    at >= bytes.len() || (bytes[at] & 0b1100_0000) != 0b1000_0000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Position;

    fn insert_at(line: u32, character: u32, text: &str) -> TextChange {
        let at = Position::new(line, character);
        TextChange { range: Some(at..at), text: text.into() }
    }

    #[test]
    fn a_change_that_holds_the_edit_then_typing_agrees() {
        let mut unsent =
            Unsent { text: Rope::from_str("alpha\nbeta\n"), version: 1, steps: vec![Rope::from_str("alpha\nBETA\n")] };
        let edit = TextChange { range: Some(Position::new(1, 0)..Position::new(1, 4)), text: "BETA".into() };
        let (client, reconciled) = replay(&mut unsent, &[edit, insert_at(0, 5, "!")], PositionEncoding::Utf16);
        assert_eq!(client.to_string(), "alpha!\nBETA\n");
        assert_eq!(reconciled, Reconciled::Agreed { more: true });
    }

    #[test]
    fn a_change_that_never_holds_the_edit_disagrees() {
        let mut unsent =
            Unsent { text: Rope::from_str("alpha\nbeta\n"), version: 1, steps: vec![Rope::from_str("alpha\nBETA\n")] };
        let (client, reconciled) = replay(&mut unsent, &[insert_at(0, 5, "!")], PositionEncoding::Utf16);
        assert_eq!(client.to_string(), "alpha!\nbeta\n");
        assert!(matches!(reconciled, Reconciled::Disagreed { .. }));
    }

    #[test]
    fn one_change_per_assumed_edit_is_partway_until_the_last() {
        let steps = vec![Rope::from_str("ab\n"), Rope::from_str("abc\n")];
        let mut unsent = Unsent { text: Rope::from_str("a\n"), version: 1, steps };
        let (client, reconciled) = replay(&mut unsent, &[insert_at(0, 1, "b")], PositionEncoding::Utf16);
        assert_eq!((client.to_string().as_str(), reconciled), ("ab\n", Reconciled::Partway));
        let (client, reconciled) = replay(&mut unsent, &[insert_at(0, 2, "c")], PositionEncoding::Utf16);
        assert_eq!((client.to_string().as_str(), reconciled), ("abc\n", Reconciled::Agreed { more: false }));
    }

    #[test]
    fn the_edit_between_two_texts_rebuilds_the_new_one_on_char_boundaries() {
        for (old, new) in [("abc", "abXc"), ("héllo", "hèllo"), ("", "x"), ("same", "same"), ("aaa", "aa")] {
            let (old_rope, new_rope) = (Rope::from_str(old), Rope::from_str(new));
            match edit_between(&old_rope, &new_rope) {
                None => assert_eq!(old, new),
                Some((edit, removed)) => {
                    assert_eq!(&old[edit.range.clone()], removed);
                    let inserted = &new[edit.range.start..edit.range.start + edit.inserted];
                    let mut rebuilt = old.to_owned();
                    rebuilt.replace_range(edit.range.clone(), inserted);
                    assert_eq!(rebuilt, new);
                }
            }
        }
    }
}
