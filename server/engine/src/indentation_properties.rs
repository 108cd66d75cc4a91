//! Property tests of issue 34's promise: a quote or a patch hunk whose indentation
//! slipped is applied exactly as meant, or refused; it never writes any other file.
//!
//! A generated file of nested blocks (two spaces, four spaces or tabs) is edited in
//! its own indentation: one line of a block changed, a line inserted beside its
//! neighbours, a line deleted. The edit is then sent with the quote, the new text,
//! or both moved by one or two levels in either direction, and with spaces for tabs
//! or tabs for spaces; patch hunks move their context, removed and added lines
//! separately. The only accepted outcomes are the intended file or a refusal. One
//! more is exact by the protocol and checked as such: a quote that matches exactly
//! (nothing normalized) writes its new text as sent, shifted or not, since a
//! re-indented block is an ordinary edit.

use proptest::prelude::*;
use ropey::Rope;

use crate::hunk::{HunkRules, plan_hunks};
use crate::patch::Hunk;
use crate::plan::{Edit, PlanError, StrReplace, apply, plan, sort_disjoint};

/// A file as `(level, content)` lines; a line followed by a deeper one opens a block.
#[derive(Debug, Clone)]
struct Nested {
    lines: Vec<(usize, String)>,
    unit: &'static str,
}

impl Nested {
    fn render(&self, lines: &[(usize, String)], unit: &str, shift: isize) -> Option<String> {
        lines
            .iter()
            .map(|(level, content)| {
                let level = usize::try_from(*level as isize + shift).ok()?;
                Some(format!("{}{content}\n", unit.repeat(level)))
            })
            .collect()
    }

    fn text(&self) -> String {
        self.render(&self.lines, self.unit, 0).unwrap_or_default()
    }
}

fn nested() -> impl Strategy<Value = Nested> {
    let unit = prop_oneof![Just("  "), Just("    "), Just("\t")];
    (unit, proptest::collection::vec(0usize..3, 4..14)).prop_map(|(unit, steps)| {
        // Each line is at most one level deeper than the one before.
        let mut levels = vec![0usize];
        for step in steps {
            let last = *levels.last().unwrap_or(&0);
            levels.push(match step {
                0 => (last + 1).min(4),
                1 => last,
                _ => last.saturating_sub(1),
            });
        }
        let lines = levels
            .iter()
            .enumerate()
            .map(|(index, level)| {
                let opens = levels.get(index + 1).is_some_and(|next| next > level);
                (*level, format!("tok{index}{}", if opens { " {" } else { ";" }))
            })
            .collect();
        Nested { lines, unit }
    })
}

/// What the edit does to its block, in the file's own levels.
#[derive(Debug, Clone, Copy)]
enum Change {
    /// Rewrite one line, keeping its level.
    Rewrite(usize),
    /// Insert a line after this one of the block, at its level.
    InsertAfter(usize),
    /// Rewrite one line and delete the next.
    RewriteAndDelete(usize),
}

/// The block's lines after the change, and which of them are new.
fn changed(block: &[(usize, String)], change: Change) -> Vec<(usize, String, bool)> {
    let mut out: Vec<(usize, String, bool)> =
        block.iter().map(|(level, content)| (*level, content.clone(), false)).collect();
    match change {
        Change::Rewrite(at) => {
            let at = at % out.len();
            out[at].1 = format!("{} // changed", out[at].1);
            out[at].2 = true;
        }
        Change::InsertAfter(at) => {
            let at = at % out.len();
            // The new line sits at the level of a neighbour: the next line's when the
            // line before opens a block, else the line before's.
            let level = out.get(at + 1).filter(|_| out[at].1.ends_with('{')).map_or(out[at].0, |next| next.0);
            out.insert(at + 1, (level, "inserted();".into(), true));
        }
        Change::RewriteAndDelete(at) => {
            let at = at % out.len();
            out[at].1 = format!("{} // changed", out[at].1);
            out[at].2 = true;
            if at + 1 < out.len() && out.len() > 2 {
                out.remove(at + 1);
            }
        }
    }
    out
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0usize..4).prop_map(Change::Rewrite),
        (0usize..4).prop_map(Change::InsertAfter),
        (0usize..4).prop_map(Change::RewriteAndDelete),
    ]
}

/// A shift of one or two levels, either way.
fn levels() -> impl Strategy<Value = isize> {
    prop_oneof![Just(-2isize), Just(-1), Just(1), Just(2)]
}

/// The other kind of indentation than the file's (tabs for spaces, spaces for tabs).
fn other_unit(unit: &str) -> &'static str {
    if unit == "\t" { "    " } else { "\t" }
}

fn outcome(
    result: Result<String, PlanError>,
    intended: &str,
    literal: &str,
    exact: bool,
    sent: (&str, &str),
) -> Result<(), TestCaseError> {
    match result {
        Ok(text) if exact => prop_assert_eq!(text, literal, "an exact quote writes its new text as sent: {:?}", sent),
        Ok(text) => {
            prop_assert_eq!(text, intended, "a normalized quote writes the intended file or nothing: {:?}", sent)
        }
        Err(_) => {}
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// str_replace: the quote, the new text, or both moved by one or two levels
    /// (and written with the other kind of indentation).
    #[test]
    fn a_slipped_str_replace_writes_the_intended_file_or_nothing(
        file in nested(),
        from in 0usize..14,
        len in 1usize..5,
        change in change(),
        mode in 0usize..3,
        shift in levels(),
        quote_in_other_unit in proptest::bool::ANY,
        new_in_quote_unit in proptest::bool::ANY,
    ) {
        let from = from % file.lines.len();
        let len = len.min(file.lines.len() - from);
        let block = &file.lines[from..from + len];
        let after = changed(block, change);
        let after_lines: Vec<(usize, String)> = after.iter().map(|(level, content, _)| (*level, content.clone())).collect();
        let (quote_shift, new_shift) = match mode {
            0 => (shift, 0),
            1 => (0, shift),
            _ => (shift, shift),
        };
        let quote_unit = if quote_in_other_unit { other_unit(file.unit) } else { file.unit };
        let new_unit = if new_in_quote_unit { quote_unit } else { file.unit };
        let (Some(quote), Some(new)) = (
            file.render(block, quote_unit, quote_shift),
            file.render(&after_lines, new_unit, new_shift),
        ) else {
            return Ok(());
        };
        let text = file.text();
        let mut intended_lines = file.lines.clone();
        intended_lines.splice(from..from + len, after_lines.clone());
        let intended = file.render(&intended_lines, file.unit, 0).unwrap_or_default();
        // A quote at the file's own levels (exact, or only in the other kind of
        // indentation) has nothing to read: its new text lands at the levels sent.
        // A quote that starts mid-line (no indentation of its own) and occurs exactly
        // is an exact quote: its new text is written where it matched, as sent.
        let substring = !quote.starts_with([' ', '\t']) && text.contains(&quote);
        let exact = quote_shift == 0 || substring;
        let mut literal_lines = file.lines.clone();
        literal_lines.splice(from..from + len, after_lines.iter().map(|(level, content)| (*level, content.clone())));
        let literal = file.render(&literal_lines, file.unit, 0).map(|_| {
            let sent: Vec<(usize, String)> = after_lines.iter().map(|(level, content)| ((*level as isize + new_shift) as usize, content.clone())).collect();
            let mut lines = file.lines.clone();
            lines.splice(from..from + len, sent);
            file.render(&lines, file.unit, 0).unwrap_or_default()
        }).unwrap_or_default();
        let literal = if text.contains(&quote) { text.replacen(&quote, &new, 1) } else { literal };
        let rope = Rope::from_str(&text);
        let edit = Edit::StrReplace(StrReplace { old_str: quote.clone(), new_str: new.clone(), ..StrReplace::default() });
        let result = plan(&rope, &edit).map(|planned| apply(&rope, &planned.replacements).to_string());
        outcome(result, &intended, &literal, exact, (&quote, &new))?;
    }

    /// Patch hunks: the context, the removed and the added lines each moved or not.
    #[test]
    fn a_slipped_hunk_writes_the_intended_file_or_nothing(
        file in nested(),
        from in 0usize..14,
        len in 2usize..6,
        change in change(),
        shift in levels(),
        moved in 0u8..8,
        other_kind in proptest::bool::ANY,
    ) {
        let from = from % file.lines.len();
        let len = len.min(file.lines.len() - from);
        let block = &file.lines[from..from + len];
        let after = changed(block, change);
        // Context lines are the block's lines the change kept; a diff of old and new
        // lines (by content, which is unique) says which.
        let kept: Vec<&String> = after.iter().filter(|(_, _, new)| !new).map(|(_, content, _)| content).collect();
        let unit = if other_kind { other_unit(file.unit) } else { file.unit };
        let (context_shift, removed_shift, added_shift) = (
            if moved & 1 != 0 { shift } else { 0 },
            if moved & 2 != 0 { shift } else { 0 },
            if moved & 4 != 0 { shift } else { 0 },
        );
        let line = |level: usize, content: &str, delta: isize, unit: &str| -> Option<String> {
            let level = usize::try_from(level as isize + delta).ok()?;
            Some(format!("{}{content}", unit.repeat(level)))
        };
        let old_lines: Option<Vec<String>> = block
            .iter()
            .map(|(level, content)| {
                let is_context = kept.contains(&content);
                let delta = if is_context { context_shift } else { removed_shift };
                line(*level, content, delta, unit)
            })
            .collect();
        let new_lines: Option<Vec<String>> = after
            .iter()
            .map(|(level, content, new)| line(*level, content, if *new { added_shift } else { context_shift }, unit))
            .collect();
        let (Some(old_lines), Some(new_lines)) = (old_lines, new_lines) else { return Ok(()) };
        let text = file.text();
        let quote = format!("{}\n", old_lines.join("\n"));
        let new_text = format!("{}\n", new_lines.join("\n"));
        let mut intended_lines = file.lines.clone();
        intended_lines.splice(from..from + len, after.iter().map(|(level, content, _)| (*level, content.clone())));
        let intended = file.render(&intended_lines, file.unit, 0).unwrap_or_default();
        // Old lines at the file's own levels (exact, or only in the other kind of
        // indentation) leave nothing to read: the new lines land at the levels sent.
        let nothing_removed = block.iter().all(|(_, content)| kept.contains(&content));
        let everything_removed = kept.is_empty();
        let exact = (removed_shift == 0 || nothing_removed) && (context_shift == 0 || everything_removed);
        let sent: Vec<(usize, String)> = after
            .iter()
            .map(|(level, content, new)| ((*level as isize + if *new { added_shift } else { 0 }) as usize, content.clone()))
            .collect();
        let mut literal_lines = file.lines.clone();
        literal_lines.splice(from..from + len, sent);
        let literal = if text.contains(&quote) {
            text.replacen(&quote, &new_text, 1)
        } else {
            file.render(&literal_lines, file.unit, 0).unwrap_or_default()
        };
        let rope = Rope::from_str(&text);
        // The context lines, as a patch marks them.
        let context = after
            .iter()
            .enumerate()
            .filter(|(_, (_, _, new))| !new)
            .filter_map(|(j, (_, content, _))| block.iter().position(|(_, old)| old == content).map(|i| (i, j)))
            .collect();
        let hunk = Hunk { line: 1, contexts: Vec::new(), old_lines, new_lines, end_of_file: false, context };
        for in_order in [true, false] {
            let results = plan_hunks(&rope, std::slice::from_ref(&hunk), HunkRules { in_order, exact: false });
            let result = match results.into_iter().next() {
                Some(Ok(planned)) => sort_disjoint(planned.replacements.into_iter().map(|r| (0, r)).collect())
                    .map(|replacements| apply(&rope, &replacements).to_string()),
                Some(Err(error)) => Err(error),
                None => Err(PlanError::NoChange),
            };
            outcome(result, &intended, &literal, exact, (&quote, &new_text))?;
        }
    }
}
