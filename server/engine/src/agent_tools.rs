//! The agents' own file-editing tools as plain text functions, for their pre-write
//! hooks: what a string replacement (Claude Code's Edit and MultiEdit, Gemini CLI's
//! `replace`) makes of a file, and the other way round, the tool input that writes a
//! given text: a unique `old_string`/`new_string` pair, or the hunks of an
//! `apply_patch` `*** Update File` section.
//!
//! The patch hunks are written for Codex's own applier, which looks for each hunk's old
//! lines at their first exact occurrence after the previous hunk: every hunk is checked
//! to be found where it belongs under that rule, and is given more context until it is.

use std::ops::Range;

use similar::{DiffTag, capture_diff_slices};

/// Why a string replacement does not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplaceError {
    #[error("the text to replace is empty")]
    Empty,
    #[error("the text to replace is not in the file")]
    NotFound,
    #[error("the text to replace occurs {found} times, not {expected}")]
    Count { found: usize, expected: usize },
}

/// `text` with `old` replaced by `new`: every occurrence when `all`, else the one
/// occurrence there must be.
pub fn replace(text: &str, old: &str, new: &str, all: bool) -> Result<String, ReplaceError> {
    if old.is_empty() {
        return Err(ReplaceError::Empty);
    }
    let found = text.matches(old).count();
    match (found, all) {
        (0, _) => Err(ReplaceError::NotFound),
        (_, true) | (1, false) => Ok(text.replace(old, new)),
        (found, false) => Err(ReplaceError::Count { found, expected: 1 }),
    }
}

/// `text` with exactly `expected` occurrences of `old` replaced by `new` (Gemini CLI's
/// `expected_replacements`).
pub fn replace_expected(text: &str, old: &str, new: &str, expected: usize) -> Result<String, ReplaceError> {
    if old.is_empty() {
        return Err(ReplaceError::Empty);
    }
    match text.matches(old).count() {
        0 => Err(ReplaceError::NotFound),
        found if found == expected => Ok(text.replace(old, new)),
        found => Err(ReplaceError::Count { found, expected }),
    }
}

/// A replacement that turns one text into another: `old` occurs exactly once in the
/// first text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueEdit {
    pub old: String,
    pub new: String,
}

/// The smallest whole-line replacement whose `old` is unique in `from` and that turns
/// `from` into `to`; `None` when `from` is empty (nothing can be quoted) or the texts
/// are equal.
pub fn unique_edit(from: &str, to: &str) -> Option<UniqueEdit> {
    if from.is_empty() || from == to {
        return None;
    }
    let old_lines: Vec<&str> = from.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = to.split_inclusive('\n').collect();
    let prefix = old_lines.iter().zip(&new_lines).take_while(|(a, b)| a == b).count();
    let max_suffix = old_lines.len().min(new_lines.len()) - prefix;
    let suffix =
        old_lines.iter().rev().zip(new_lines.iter().rev()).take(max_suffix).take_while(|(a, b)| a == b).count();
    let (mut start, mut old_end, mut new_end) = (prefix, old_lines.len() - suffix, new_lines.len() - suffix);
    let mut grow_before = true;
    loop {
        let old: String = old_lines[start..old_end].concat();
        if !old.is_empty() && occurs_once(from, &old) {
            let new: String = new_lines[start..new_end].concat();
            return (from.replacen(old.as_str(), &new, 1) == to).then_some(UniqueEdit { old, new });
        }
        // One more line of context, alternately before and after.
        if grow_before && start > 0 {
            start -= 1;
        } else if old_end < old_lines.len() {
            old_end += 1;
            new_end += 1;
        } else if start > 0 {
            start -= 1;
        } else {
            return None;
        }
        grow_before = !grow_before;
    }
}

/// `needle` occurs exactly once in `haystack`, overlapping occurrences counted.
fn occurs_once(haystack: &str, needle: &str) -> bool {
    let Some(first) = haystack.find(needle) else { return false };
    let next = haystack[first..].char_indices().nth(1).map_or(haystack.len(), |(offset, _)| first + offset);
    !haystack[next..].contains(needle)
}

/// The lines of a text as Codex's applier splits them: on `\n`, without the empty
/// piece after a final line break.
fn codex_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// The hunks of an `apply_patch` `*** Update File` section (each starting with `@@`)
/// that turn `from` into `to` under Codex's applier; `None` when the texts are equal
/// or `from` is empty (an `*** Add File` writes that). Codex ends every file it writes
/// with a line break, so `to` is written with one.
pub fn update_hunks(from: &str, to: &str) -> Option<String> {
    let old = codex_lines(from);
    let new = codex_lines(to);
    if old.is_empty() || old == new {
        return None;
    }
    let ops = capture_diff_slices(similar::Algorithm::Myers, &old, &new);
    for context in [3, 5, 8, 13, 21, 34] {
        let groups = similar::group_diff_ops(ops.clone(), context);
        let hunks: Vec<(Range<usize>, Range<usize>)> = groups
            .iter()
            .filter(|group| group.iter().any(|op| op.tag() != DiffTag::Equal))
            .filter_map(|group| {
                let (first, last) = (group.first()?, group.last()?);
                Some((first.old_range().start..last.old_range().end, first.new_range().start..last.new_range().end))
            })
            .collect();
        if found_in_place(&old, &hunks) {
            return Some(render(&old, &new, &hunks));
        }
    }
    // One hunk of the whole file is always found where it belongs.
    Some(render(&old, &new, &[(0..old.len(), 0..new.len())]))
}

/// Every hunk's old lines are non-empty and first found, after the previous hunk, at
/// their own place.
fn found_in_place(old: &[&str], hunks: &[(Range<usize>, Range<usize>)]) -> bool {
    let mut from = 0;
    for (old_range, _) in hunks {
        let pattern = &old[old_range.clone()];
        if pattern.is_empty() {
            return false;
        }
        let first =
            (from..=old.len().saturating_sub(pattern.len())).find(|&at| &old[at..at + pattern.len()] == pattern);
        if first != Some(old_range.start) {
            return false;
        }
        from = old_range.end;
    }
    true
}

fn render(old: &[&str], new: &[&str], hunks: &[(Range<usize>, Range<usize>)]) -> String {
    let mut out = String::new();
    for (old_range, new_range) in hunks {
        out.push_str("@@\n");
        let ops = capture_diff_slices(similar::Algorithm::Myers, &old[old_range.clone()], &new[new_range.clone()]);
        for op in ops {
            let (tag, old_part, new_part) = op.as_tag_tuple();
            let old_part = &old[old_range.start + old_part.start..old_range.start + old_part.end];
            let new_part = &new[new_range.start + new_part.start..new_range.start + new_part.end];
            match tag {
                DiffTag::Equal => old_part.iter().for_each(|line| push_line(&mut out, ' ', line)),
                DiffTag::Delete => old_part.iter().for_each(|line| push_line(&mut out, '-', line)),
                DiffTag::Insert => new_part.iter().for_each(|line| push_line(&mut out, '+', line)),
                DiffTag::Replace => {
                    old_part.iter().for_each(|line| push_line(&mut out, '-', line));
                    new_part.iter().for_each(|line| push_line(&mut out, '+', line));
                }
            }
        }
    }
    out
}

fn push_line(out: &mut String, sign: char, line: &str) {
    out.push(sign);
    out.push_str(line);
    out.push('\n');
}

/// The lines of an `*** Add File` section that writes `text`.
pub fn add_file_lines(text: &str) -> String {
    let mut out = String::new();
    for line in codex_lines(text) {
        push_line(&mut out, '+', line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Codex's applier, as far as these hunks need it: each hunk's old lines at their
    /// first exact occurrence after the previous hunk, and a final line break.
    fn apply_like_codex(from: &str, hunks: &str) -> Option<String> {
        let mut lines: Vec<String> = codex_lines(from).into_iter().map(ToOwned::to_owned).collect();
        let mut at = 0;
        for hunk in hunks.split("@@\n").filter(|hunk| !hunk.is_empty()) {
            let (mut old, mut new) = (Vec::new(), Vec::new());
            for line in hunk.lines() {
                let (sign, rest) = line.split_at(1);
                match sign {
                    " " => {
                        old.push(rest.to_owned());
                        new.push(rest.to_owned());
                    }
                    "-" => old.push(rest.to_owned()),
                    "+" => new.push(rest.to_owned()),
                    _ => return None,
                }
            }
            let found =
                (at..=lines.len().checked_sub(old.len())?).find(|&start| lines[start..start + old.len()] == old[..])?;
            lines.splice(found..found + old.len(), new.iter().cloned());
            at = found + new.len();
        }
        Some(lines.iter().map(|line| format!("{line}\n")).collect())
    }

    #[test]
    fn replace_needs_one_occurrence_unless_all() {
        assert_eq!(replace("a b a", "b", "c", false), Ok("a c a".into()));
        assert_eq!(replace("a b a", "a", "c", false), Err(ReplaceError::Count { found: 2, expected: 1 }));
        assert_eq!(replace("a b a", "a", "c", true), Ok("c b c".into()));
        assert_eq!(replace("a", "z", "c", true), Err(ReplaceError::NotFound));
        assert_eq!(replace("a", "", "c", true), Err(ReplaceError::Empty));
        assert_eq!(replace_expected("x x", "x", "y", 2), Ok("y y".into()));
        assert_eq!(replace_expected("x x", "x", "y", 1), Err(ReplaceError::Count { found: 2, expected: 1 }));
    }

    #[test]
    fn a_unique_edit_grows_until_its_old_text_is_unique() {
        let from = "end\nx\nend\ny\n";
        let edit = unique_edit(from, "end\nx\nEND\ny\n").expect("an edit");
        assert_eq!(from.matches(edit.old.as_str()).count(), 1);
        assert_eq!(from.replacen(&edit.old, &edit.new, 1), "end\nx\nEND\ny\n");
        // A pure insertion quotes a neighbouring line.
        let edit = unique_edit("a\nb\n", "a\nnew\nb\n").expect("an edit");
        assert!(!edit.old.is_empty());
        assert_eq!(unique_edit("", "a\n"), None);
        assert_eq!(unique_edit("a\n", "a\n"), None);
    }

    #[test]
    fn repeated_lines_get_context_until_found_in_place() {
        let from = "}\n}\n}\nfn a() {\n}\n}\n}\n";
        let to = "}\n}\n}\nfn a() {\n}\n}\n}\nmore\n";
        let hunks = update_hunks(from, to).expect("hunks");
        assert_eq!(apply_like_codex(from, &hunks).as_deref(), Some(to));
    }

    proptest! {
        #[test]
        fn hunks_rebuild_the_target_under_codexs_rule(
            from in proptest::collection::vec(prop_oneof!["a", "b", "[}]", "", "fn x[(][)] [{]"], 1..40),
            edits in proptest::collection::vec((0usize..40, prop_oneof!["a", "b", "}", "new", ""], any::<bool>()), 0..6),
        ) {
            let mut to = from.clone();
            for (at, line, insert) in edits {
                let at = at % (to.len() + 1);
                if insert || at == to.len() { to.insert(at, line.to_owned()) } else { to[at] = line.to_owned() }
            }
            let from_text: String = from.iter().map(|line| format!("{line}\n")).collect();
            let to_text: String = to.iter().map(|line| format!("{line}\n")).collect();
            match update_hunks(&from_text, &to_text) {
                Some(hunks) => prop_assert_eq!(apply_like_codex(&from_text, &hunks), Some(to_text)),
                None => prop_assert_eq!(from_text, to_text),
            }
        }

        #[test]
        fn a_unique_edit_rebuilds_the_target(
            from in proptest::collection::vec(prop_oneof!["a", "b", "c", ""], 1..20),
            at in 0usize..20,
            line in prop_oneof!["a", "z", ""],
        ) {
            let mut to = from.clone();
            let at = at % to.len();
            to[at] = line.to_owned();
            let from_text: String = from.iter().map(|line| format!("{line}\n")).collect();
            let to_text: String = to.iter().map(|line| format!("{line}\n")).collect();
            match unique_edit(&from_text, &to_text) {
                Some(edit) => {
                    prop_assert_eq!(from_text.matches(edit.old.as_str()).count(), 1);
                    prop_assert_eq!(from_text.replacen(&edit.old, &edit.new, 1), to_text);
                }
                None => prop_assert_eq!(from_text, to_text),
            }
        }
    }
}
