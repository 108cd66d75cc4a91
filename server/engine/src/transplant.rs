//! What a reviewed edit of a buffer makes of the file on disk.
//!
//! An agent that writes files itself (Claude Code's Edit, Gemini CLI's edits) asks the
//! editor first; the person reviews the edit in the live buffer, where it lands on top
//! of their unsaved changes. The agent then writes the file, and it must write the disk
//! text plus what the person kept, never the person's other unsaved changes.
//!
//! [`transplant`] computes that text: the changes the review made to the buffer
//! (`before` → `after`: the kept hunks, and whatever the person typed inside them while
//! deciding), moved onto the disk text wherever the buffer still agreed with the disk.
//! A change that touches lines where the buffer and the disk differ (the person's own
//! unsaved lines) is left out: those lines are the person's business, not the agent's.

use std::ops::Range;
use std::time::Duration;

use similar::{DiffTag, TextDiff};

use crate::diff::minimal_edits_of;

/// The longest the alignment of disk and buffer may take before it settles for a
/// coarser one (a coarser alignment only leaves more changes out, never misplaces one).
const ALIGN_TIMEOUT: Duration = Duration::from_millis(500);

/// The text the file should hold: `disk` with the changes `before` → `after` applied
/// where `before` agrees with `disk`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transplanted {
    pub text: String,
    /// How many changes touched lines where the buffer differs from the disk, and
    /// were therefore left out.
    pub left_out: usize,
}

/// A stretch of text that the buffer and the disk hold alike.
#[derive(Debug, Clone)]
struct Aligned {
    /// Byte range in the buffer (`before`).
    buffer: Range<usize>,
    /// Where the same bytes start on disk.
    disk_start: usize,
}

/// Moves the changes `before` → `after` onto `disk`. When `before == disk` the result
/// is `after`.
pub fn transplant(disk: &str, before: &str, after: &str) -> Transplanted {
    if before == disk {
        return Transplanted { text: after.to_owned(), left_out: 0 };
    }
    let aligned = align(disk, before);
    let mut text = String::with_capacity(disk.len() + after.len().saturating_sub(before.len()));
    let mut disk_pos = 0;
    let mut left_out = 0;
    for change in minimal_edits_of(before, after) {
        let Some(segment) = aligned
            .iter()
            .find(|segment| segment.buffer.start <= change.range.start && change.range.end <= segment.buffer.end)
        else {
            left_out += 1;
            continue;
        };
        let start = segment.disk_start + (change.range.start - segment.buffer.start);
        let end = segment.disk_start + (change.range.end - segment.buffer.start);
        // Changes are sorted and disjoint in the buffer, and the alignment keeps order,
        // so their places on disk are too.
        if start < disk_pos {
            left_out += 1;
            continue;
        }
        text.push_str(&disk[disk_pos..start]);
        text.push_str(&change.new_text);
        disk_pos = end;
    }
    text.push_str(&disk[disk_pos..]);
    Transplanted { text, left_out }
}

/// The stretches of whole lines that `buffer` and `disk` share, in order.
fn align(disk: &str, buffer: &str) -> Vec<Aligned> {
    let diff = TextDiff::configure().timeout(ALIGN_TIMEOUT).diff_lines(disk, buffer);
    // The start of both texts is a place they share, even when their first lines differ.
    let mut aligned = vec![Aligned { buffer: 0..0, disk_start: 0 }];
    let (mut disk_pos, mut buffer_pos) = (0, 0);
    for op in diff.ops() {
        let disk_len: usize = op.old_range().map(|index| diff.old_slice(index).map_or(0, str::len)).sum();
        let buffer_len: usize = op.new_range().map(|index| diff.new_slice(index).map_or(0, str::len)).sum();
        if op.tag() == DiffTag::Equal {
            aligned.push(Aligned { buffer: buffer_pos..buffer_pos + buffer_len, disk_start: disk_pos });
        }
        disk_pos += disk_len;
        buffer_pos += buffer_len;
    }
    // And so is their end.
    aligned.push(Aligned { buffer: buffer.len()..buffer.len(), disk_start: disk.len() });
    aligned
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(disk: &str, before: &str, after: &str, expected: &str) {
        let got = transplant(disk, before, after);
        assert_eq!(got.text, expected, "disk {disk:?}, before {before:?}, after {after:?}");
    }

    #[test]
    fn a_clean_buffer_gives_the_reviewed_text() {
        check("a\nb\n", "a\nb\n", "a\nB\n", "a\nB\n");
    }

    #[test]
    fn the_persons_unsaved_line_stays_out_of_the_file() {
        // The person added "typed" at the top; the review changed line "c".
        let disk = "a\nb\nc\nd\n";
        let before = "typed\na\nb\nc\nd\n";
        let after = "typed\na\nb\nC\nd\n";
        check(disk, before, after, "a\nb\nC\nd\n");
    }

    #[test]
    fn a_kept_hunk_next_to_the_persons_change_is_still_transplanted() {
        // The person changed line 2; the kept hunk changes line 3, right below it.
        let disk = "one\ntwo\nthree\nfour\n";
        let before = "one\nTWO!\nthree\nfour\n";
        let after = "one\nTWO!\nthree 3\nfour\n";
        check(disk, before, after, "one\ntwo\nthree 3\nfour\n");
    }

    #[test]
    fn an_insertion_at_the_edge_of_the_persons_lines_lands_there_on_disk() {
        let disk = "a\nb\n";
        let before = "a\nmine\nb\n";
        let after = "a\nmine\nb\nnew\n";
        check(disk, before, after, "a\nb\nnew\n");
    }

    #[test]
    fn a_change_inside_the_persons_lines_is_left_out() {
        let disk = "a\nb\nc\n";
        let before = "a\nB mine\nc\n";
        let after = "a\nB mine, edited\nc\n";
        let got = transplant(disk, before, after);
        assert_eq!(got.text, disk);
        assert_eq!(got.left_out, 1);
    }

    #[test]
    fn several_hunks_around_several_unsaved_changes() {
        let disk = "1\n2\n3\n4\n5\n6\n7\n";
        let before = "1\n2 mine\n3\n4\n5\n6 mine\n7\n";
        let after = "0\n1\n2 mine\n3\nfour\n5\n6 mine\n7\n8\n";
        check(disk, before, after, "0\n1\n2\n3\nfour\n5\n6\n7\n8\n");
    }

    #[test]
    fn crlf_and_emoji_are_kept_byte_for_byte() {
        let disk = "é\r\n🙂 b\r\nc\r\n";
        let before = "é\r\n🙂 b\r\nmine\r\nc\r\n";
        let after = "É\r\n🙂 b\r\nmine\r\nc\r\n";
        check(disk, before, after, "É\r\n🙂 b\r\nc\r\n");
    }

    #[test]
    fn a_created_file() {
        check("", "", "new file\n", "new file\n");
    }

    fn lines() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(prop::sample::select(vec!["a", "b", "c", "dd", "é", "🙂", ""]), 0..12)
            .prop_map(|lines| lines.into_iter().map(|line| format!("{line}\n")).collect())
    }

    proptest! {
        /// With nothing unsaved, the file gets exactly what the review left in the buffer.
        #[test]
        fn equal_disk_and_buffer_give_after(before in lines(), after in lines()) {
            let before: String = before.concat();
            let after: String = after.concat();
            prop_assert_eq!(transplant(&before, &before, &after).text, after);
        }

        /// A review that changed nothing writes the disk back unchanged.
        #[test]
        fn no_change_keeps_the_disk(disk in lines(), before in lines()) {
            let disk: String = disk.concat();
            let before: String = before.concat();
            prop_assert_eq!(transplant(&disk, &before, &before).text, disk);
        }

        /// Unsaved lines the review did not touch never reach the file: a change made
        /// only below an appended unsaved block lands exactly once, and the block does not.
        #[test]
        fn unsaved_lines_never_reach_the_disk(disk in lines(), edited in lines()) {
            let disk: String = disk.concat();
            let edited: String = edited.concat();
            let before = format!("{disk}UNSAVED\n");
            let after = format!("{edited}UNSAVED\n");
            let got = transplant(&disk, &before, &after);
            prop_assert!(!got.text.contains("UNSAVED"));
            prop_assert_eq!(got.text, edited);
        }
    }
}
