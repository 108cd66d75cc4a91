//! Diffs: the minimal edits sent to the editor, and unified diffs shown to agents.
//!
//! A replacement often rewrites a few characters of a long quote. Sending the whole
//! quote would move the person's cursor and marks inside it, so each replacement is
//! reduced to the smallest edits that turn its old text into its new text: a line
//! diff first, then a character diff inside each changed group of lines (with a
//! deadline, so a pathological input degrades to larger edits, never to a stall).
//! Unified diffs cover only the lines around the replacements, so their cost does
//! not grow with the size of the document.

use std::fmt::Write as _;
use std::ops::Range;
use std::time::Duration;

use ropey::Rope;
use similar::{DiffOp, DiffTag, TextDiff};

use crate::plan::Replacement;

/// Lines of context around each change in a unified diff.
const CONTEXT_LINES: usize = 3;
/// Above this many bytes a changed group of lines is not diffed by characters.
const CHAR_DIFF_LIMIT: usize = 16 * 1024;
/// The longest a single diff may take before it settles for a coarser result.
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// Reduces sorted, disjoint replacements of `base` to minimal sorted, disjoint
/// replacements with the same effect.
pub fn minimal_edits(base: &Rope, replacements: &[Replacement]) -> Vec<Replacement> {
    let mut out = Vec::new();
    for replacement in replacements {
        let old = base.byte_slice(replacement.range.clone()).to_string();
        for edit in minimal_edits_of(&old, &replacement.new_text) {
            out.push(Replacement {
                range: replacement.range.start + edit.range.start..replacement.range.start + edit.range.end,
                new_text: edit.new_text,
            });
        }
    }
    out
}

/// Minimal edits turning `old` into `new`, with ranges relative to `old`.
pub fn minimal_edits_of(old: &str, new: &str) -> Vec<Replacement> {
    let line_diff = TextDiff::configure().timeout(DIFF_TIMEOUT).diff_lines(old, new);
    let mut edits = Vec::new();
    let mut old_pos = 0;
    let mut new_pos = 0;
    for op in line_diff.ops() {
        let old_len: usize = op.old_range().map(|i| line_diff.old_slice(i).map_or(0, str::len)).sum();
        let new_len: usize = op.new_range().map(|i| line_diff.new_slice(i).map_or(0, str::len)).sum();
        if op.tag() != DiffTag::Equal {
            let old_part = &old[old_pos..old_pos + old_len];
            let new_part = &new[new_pos..new_pos + new_len];
            if old_part.len() + new_part.len() <= CHAR_DIFF_LIMIT && !old_part.is_empty() && !new_part.is_empty() {
                for edit in char_edits(old_part, new_part) {
                    push_merged(
                        &mut edits,
                        Replacement {
                            range: old_pos + edit.range.start..old_pos + edit.range.end,
                            new_text: edit.new_text,
                        },
                    );
                }
            } else {
                push_merged(
                    &mut edits,
                    Replacement { range: old_pos..old_pos + old_len, new_text: new_part.to_owned() },
                );
            }
        }
        old_pos += old_len;
        new_pos += new_len;
    }
    edits
}

fn char_edits(old: &str, new: &str) -> Vec<Replacement> {
    let diff = TextDiff::configure().timeout(DIFF_TIMEOUT).diff_chars(old, new);
    let mut edits = Vec::new();
    let mut old_pos = 0;
    let mut new_pos = 0;
    for op in diff.ops() {
        let old_len: usize = op.old_range().map(|i| diff.old_slice(i).map_or(0, str::len)).sum();
        let new_len: usize = op.new_range().map(|i| diff.new_slice(i).map_or(0, str::len)).sum();
        if op.tag() != DiffTag::Equal {
            push_merged(
                &mut edits,
                Replacement { range: old_pos..old_pos + old_len, new_text: new[new_pos..new_pos + new_len].to_owned() },
            );
        }
        old_pos += old_len;
        new_pos += new_len;
    }
    edits
}

/// Appends an edit, joining it to the previous one when they touch.
fn push_merged(edits: &mut Vec<Replacement>, edit: Replacement) {
    if let Some(last) = edits.last_mut()
        && last.range.end == edit.range.start
    {
        last.range.end = edit.range.end;
        last.new_text.push_str(&edit.new_text);
        return;
    }
    edits.push(edit);
}

/// A unified diff of `base` and `base` with `replacements` applied, showing only
/// the lines around the replacements. Empty when there are no replacements.
pub fn unified_diff(base: &Rope, replacements: &[Replacement], label: &str) -> String {
    let mut out = String::new();
    if replacements.is_empty() {
        return out;
    }
    let _ = write!(out, "--- a/{label}\n+++ b/{label}\n");
    let last_line = base.len_lines().saturating_sub(1);
    let mut line_delta: isize = 0;
    let mut index = 0;
    while index < replacements.len() {
        // Gather the replacements whose context spans touch into one region.
        let first_line = base.byte_to_line(replacements[index].range.start).saturating_sub(CONTEXT_LINES);
        let mut end_line = (base.byte_to_line(replacements[index].range.end) + CONTEXT_LINES).min(last_line);
        let mut next = index + 1;
        while next < replacements.len()
            && base.byte_to_line(replacements[next].range.start).saturating_sub(CONTEXT_LINES) <= end_line + 1
        {
            end_line = (base.byte_to_line(replacements[next].range.end) + CONTEXT_LINES).min(last_line);
            next += 1;
        }
        let region = base.line_to_byte(first_line)..base.line_to_byte(end_line + 1);
        let old = base.byte_slice(region.clone()).to_string();
        let new = apply_in_region(&old, region.start, &replacements[index..next]);
        let new_first_line = first_line as isize + line_delta;
        let diff = TextDiff::configure().timeout(DIFF_TIMEOUT).diff_lines(&old, &new);
        write_hunks(&mut out, &diff, first_line, usize::try_from(new_first_line).unwrap_or(0));
        line_delta += count_lines(&new) as isize - count_lines(&old) as isize;
        index = next;
    }
    out
}

/// A unified diff of two whole texts (used when the editor's result differs from
/// the proposal).
pub fn unified_diff_of_texts(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    let mut out = String::new();
    if old == new {
        return out;
    }
    let _ = write!(out, "--- {old_label}\n+++ {new_label}\n");
    let diff = TextDiff::configure().timeout(DIFF_TIMEOUT).diff_lines(old, new);
    write_hunks(&mut out, &diff, 0, 0);
    out
}

fn apply_in_region(old: &str, region_start: usize, replacements: &[Replacement]) -> String {
    let mut new = String::with_capacity(old.len());
    let mut pos = 0;
    for replacement in replacements {
        let range = replacement.range.start - region_start..replacement.range.end - region_start;
        new.push_str(&old[pos..range.start]);
        new.push_str(&replacement.new_text);
        pos = range.end;
    }
    new.push_str(&old[pos..]);
    new
}

fn count_lines(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

fn write_hunks(out: &mut String, diff: &TextDiff<'_, '_, str>, old_offset: usize, new_offset: usize) {
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let _ = writeln!(out, "@@ -{} +{} @@", hunk_range(&old_range, old_offset), hunk_range(&new_range, new_offset));
        for op in &group {
            write_op(out, diff, op);
        }
    }
}

fn write_op(out: &mut String, diff: &TextDiff<'_, '_, str>, op: &DiffOp) {
    for change in diff.iter_changes(op) {
        out.push_str(match change.tag() {
            similar::ChangeTag::Equal => " ",
            similar::ChangeTag::Delete => "-",
            similar::ChangeTag::Insert => "+",
        });
        out.push_str(change.value());
        if change.missing_newline() {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

fn hunk_range(range: &Range<usize>, offset: usize) -> String {
    let start = range.start + offset;
    match range.len() {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        len => format!("{},{len}", start + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn apply_str(old: &str, edits: &[Replacement]) -> String {
        apply_in_region(old, 0, edits)
    }

    #[test]
    fn a_small_change_in_a_long_quote_is_a_small_edit() {
        let edits = minimal_edits_of("let value = compute(1, 2);\n", "let value = compute(1, 3);\n");
        assert_eq!(edits, vec![Replacement { range: 23..24, new_text: "3".into() }]);
    }

    #[test]
    fn unified_diff_numbers_lines_of_the_whole_document() {
        let base: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let rope = Rope::from_str(&base);
        let start = base.find("line 10\n").unwrap_or_default();
        let replacements = [Replacement { range: start..start + 8, new_text: "ten\n".into() }];
        let diff = unified_diff(&rope, &replacements, "f.txt");
        assert_eq!(
            diff,
            "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+ten\n line 11\n line 12\n line 13\n"
        );
    }

    #[test]
    fn unified_diff_marks_a_missing_final_newline() {
        let rope = Rope::from_str("a\nb");
        let diff = unified_diff(&rope, &[Replacement { range: 2..3, new_text: "c".into() }], "f");
        assert_eq!(
            diff,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn later_hunks_account_for_earlier_line_changes() {
        let base: String = (1..=30).map(|i| format!("{i}\n")).collect();
        let rope = Rope::from_str(&base);
        let at = |needle: &str| base.find(needle).unwrap_or_default();
        let replacements = [
            Replacement { range: at("2\n")..at("2\n") + 2, new_text: "2a\n2b\n".into() },
            Replacement { range: at("25\n")..at("25\n") + 3, new_text: "x\n".into() },
        ];
        let diff = unified_diff(&rope, &replacements, "f");
        assert!(diff.contains("@@ -1,5 +1,6 @@"), "{diff}");
        assert!(diff.contains("@@ -22,7 +23,7 @@"), "{diff}");
    }

    proptest! {
        #[test]
        fn minimal_edits_reproduce_the_new_text(old in "[ab\n😀é]{0,60}", new in "[ab\n😀é]{0,60}") {
            let edits = minimal_edits_of(&old, &new);
            prop_assert_eq!(apply_str(&old, &edits), new);
            for pair in edits.windows(2) {
                prop_assert!(pair[0].range.end < pair[1].range.start);
            }
        }
    }
}
