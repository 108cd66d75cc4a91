//! What an edit changed in a language server's problems: the problems reported
//! before the edit are moved through the edit's own line changes, then compared
//! with those reported after it, so that a problem that only moved is not
//! reported as new (nor as gone).
//!
//! Two problems are the same when their severity, source, code and message agree
//! and they sit on the same line once moved. A problem inside a changed hunk moves
//! with the hunk: it is the same as an equal problem anywhere in the hunk's new
//! lines. Nothing here knows where the problems came from.

use std::collections::HashMap;

use ropey::Rope;

use crate::proposal_hunks::ProposalHunk;

/// How bad a problem is, worst first (LSP's numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error = 1,
    Warning = 2,
    Information = 3,
    Hint = 4,
}

impl Severity {
    /// From LSP's number; a diagnostic without one counts as an error, as LSP says
    /// clients may assume.
    pub fn from_lsp(number: Option<i64>) -> Self {
        match number {
            Some(2) => Self::Warning,
            Some(3) => Self::Information,
            Some(4) => Self::Hint,
            _ => Self::Error,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Information => "information",
            Self::Hint => "hint",
        }
    }
}

/// One problem a language server reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 0-based.
    pub line: usize,
    /// 0-based, in characters.
    pub column: usize,
    pub severity: Severity,
    pub source: Option<String>,
    pub code: Option<String>,
    pub message: String,
}

/// What makes two problems the same, wherever they are.
type Kind<'a> = (Severity, Option<&'a str>, Option<&'a str>, &'a str);

impl Problem {
    fn kind(&self) -> Kind<'_> {
        (self.severity, self.source.as_deref(), self.code.as_deref(), &self.message)
    }
}

/// Where a line of the text before an edit is after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// An unchanged line, now at this line.
    To(usize),
    /// A line of a changed hunk, whose new lines are `start..end`.
    IntoHunk { start: usize, end: usize },
}

/// The line changes of an edit: its applied hunks, in document order.
#[derive(Debug, Clone, Default)]
pub struct LineMap {
    /// (first old line, old line count, new line count) per hunk.
    hunks: Vec<(usize, usize, usize)>,
}

impl LineMap {
    /// The line changes of the hunks applied to `base`.
    pub fn new<'a>(base: &Rope, applied: impl IntoIterator<Item = &'a ProposalHunk>) -> Self {
        let hunks = applied
            .into_iter()
            .map(|hunk| {
                let lines = hunk.lines(base);
                (lines.start_line, lines.old_lines, lines.new_lines)
            })
            .collect();
        Self { hunks }
    }

    /// Where `line` (of the text before the edit) is now.
    pub fn map(&self, line: usize) -> Moved {
        let mut delta: isize = 0;
        for &(start, old, new) in &self.hunks {
            let new_start = start.saturating_add_signed(delta);
            if line < start {
                break;
            }
            if line < start + old {
                return Moved::IntoHunk { start: new_start, end: new_start + new.max(1) };
            }
            delta += new as isize - old as isize;
        }
        Moved::To(line.saturating_add_signed(delta))
    }
}

/// What changed between two sets of problems.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Indexes into the problems after the edit.
    pub introduced: Vec<usize>,
    /// Indexes into the problems before the edit.
    pub resolved: Vec<usize>,
    /// Problems there before and after.
    pub existing: usize,
}

/// Compares the problems of one document before and after an edit.
pub fn compare(before: &[Problem], after: &[Problem], map: &LineMap) -> Comparison {
    let moved: Vec<Moved> = before.iter().map(|problem| map.map(problem.line)).collect();
    // The problems before, by kind, in order: a file may have thousands.
    let mut by_kind: HashMap<Kind<'_>, Vec<usize>> = HashMap::new();
    for (index, problem) in before.iter().enumerate() {
        by_kind.entry(problem.kind()).or_default().push(index);
    }
    let mut matched_before = vec![false; before.len()];
    let mut matched_after = vec![false; after.len()];
    // Unchanged lines first, so that a problem inside a hunk cannot take the match of
    // one that merely moved.
    for pass in [Pass::Unchanged, Pass::InHunk] {
        for (index, problem) in after.iter().enumerate() {
            if matched_after[index] {
                continue;
            }
            let candidates = by_kind.get(&problem.kind()).map_or(&[][..], Vec::as_slice);
            let found = candidates
                .iter()
                .copied()
                .find(|old_index| !matched_before[*old_index] && pass.fits(moved[*old_index], problem.line));
            if let Some(old_index) = found {
                matched_before[old_index] = true;
                matched_after[index] = true;
            }
        }
    }
    Comparison {
        introduced: (0..after.len()).filter(|index| !matched_after[*index]).collect(),
        resolved: (0..before.len()).filter(|index| !matched_before[*index]).collect(),
        existing: matched_after.iter().filter(|matched| **matched).count(),
    }
}

#[derive(Debug, Clone, Copy)]
enum Pass {
    Unchanged,
    InHunk,
}

impl Pass {
    fn fits(self, moved: Moved, line: usize) -> bool {
        match (self, moved) {
            (Self::Unchanged, Moved::To(to)) => to == line,
            (Self::InHunk, Moved::IntoHunk { start, end }) => (start..end).contains(&line),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Replacement;
    use crate::proposal_hunks::split;

    fn problem(line: usize, code: &str, message: &str) -> Problem {
        Problem {
            line,
            column: 4,
            severity: Severity::Error,
            source: Some("ruff".into()),
            code: Some(code.into()),
            message: message.into(),
        }
    }

    fn numbered_lines(count: usize) -> String {
        (1..=count).map(|line| format!("line {line}\n")).collect()
    }

    #[test]
    fn deleting_lines_above_an_error_does_not_make_it_new() {
        let text = numbered_lines(40);
        let base = Rope::from_str(&text);
        // Delete lines 3..=16 (14 lines); an error sat on line 30 (0-based 29).
        let start = base.line_to_byte(2);
        let end = base.line_to_byte(16);
        let hunks = split(&base, &[Replacement { range: start..end, new_text: String::new() }]);
        let map = LineMap::new(&base, &hunks);
        let before = [problem(29, "F821", "Undefined name `x`")];
        let after = [problem(15, "F821", "Undefined name `x`")];
        let comparison = compare(&before, &after, &map);
        assert_eq!(comparison, Comparison { introduced: vec![], resolved: vec![], existing: 1 });
    }

    #[test]
    fn an_edit_that_uses_an_undefined_name_introduces_it() {
        let text = numbered_lines(10);
        let base = Rope::from_str(&text);
        let start = base.line_to_byte(4);
        let hunks = split(&base, &[Replacement { range: start..start + 6, new_text: "print(y)".into() }]);
        let map = LineMap::new(&base, &hunks);
        let before = [problem(8, "F401", "unused import")];
        let after = [problem(4, "F821", "Undefined name `y`"), problem(8, "F401", "unused import")];
        let comparison = compare(&before, &after, &map);
        assert_eq!(comparison, Comparison { introduced: vec![0], resolved: vec![], existing: 1 });
    }

    #[test]
    fn a_fixed_problem_is_resolved_and_one_inside_a_rewritten_hunk_moves_with_it() {
        let text = numbered_lines(10);
        let base = Rope::from_str(&text);
        // Lines 3-4 (0-based 2-3) become three lines.
        let (start, end) = (base.line_to_byte(2), base.line_to_byte(4));
        let hunks = split(&base, &[Replacement { range: start..end, new_text: "a\nb\nc\n".into() }]);
        let map = LineMap::new(&base, &hunks);
        assert_eq!(map.map(1), Moved::To(1));
        assert_eq!(map.map(3), Moved::IntoHunk { start: 2, end: 5 });
        assert_eq!(map.map(6), Moved::To(7));
        let before = [problem(3, "E1", "still there"), problem(6, "E2", "fixed")];
        let after = [problem(4, "E1", "still there")];
        let comparison = compare(&before, &after, &map);
        assert_eq!(comparison, Comparison { introduced: vec![], resolved: vec![1], existing: 1 });
    }

    #[test]
    fn the_same_message_on_another_unchanged_line_is_new() {
        let base = Rope::from_str(&numbered_lines(10));
        let map = LineMap::new(&base, &[]);
        let before = [problem(2, "E1", "x")];
        let after = [problem(2, "E1", "x"), problem(7, "E1", "x")];
        assert_eq!(compare(&before, &after, &map).introduced, vec![1]);
    }
}
