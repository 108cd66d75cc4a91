//! The hunks of a proposal: what a person reviewing an edit keeps or leaves out.
//!
//! A proposal reaches the editor as minimal edits (a character diff inside each
//! replaced span, see [`crate::diff`]). Edits that touch the same or neighbouring
//! lines form one hunk; a whole unchanged line between two edits separates them.
//! The hunks are numbered in document order and every minimal edit belongs to
//! exactly one, so an editor can apply a subset and say which.
//!
//! An editor that does not say what it kept is understood from the text it ends
//! with: [`find_applied`] works out which hunks the live text holds, when it is the
//! base text with some of the hunks applied.

use std::collections::HashSet;
use std::ops::Range;

use ropey::Rope;

use crate::diff::minimal_edits;
use crate::plan::{self, Replacement};

/// One hunk: neighbouring minimal edits of one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposalHunk {
    /// From the first edit's start to the last edit's end, in the base text.
    pub range: Range<usize>,
    /// Sorted, disjoint, within `range`.
    pub edits: Vec<Replacement>,
}

impl ProposalHunk {
    /// The text `range` holds once the hunk is applied.
    pub fn new_text(&self, base: &Rope) -> String {
        let mut out = String::new();
        let mut at = self.range.start;
        for edit in &self.edits {
            out.push_str(&base.byte_slice(at..edit.range.start).to_string());
            out.push_str(&edit.new_text);
            at = edit.range.end;
        }
        out.push_str(&base.byte_slice(at..self.range.end).to_string());
        out
    }

    /// Where the hunk is, in lines of the base text: the 0-based first line, how
    /// many lines it replaces (0 when it only inserts whole lines) and how many
    /// it puts in their place.
    pub fn lines(&self, base: &Rope) -> HunkLines {
        let start_line = base.byte_to_line(self.range.start);
        let old_text = base.byte_slice(self.range.clone()).to_string();
        let new_text = self.new_text(base);
        let at_line_start = base.line_to_byte(start_line) == self.range.start;
        let inserts_whole_lines =
            self.range.is_empty() && at_line_start && (new_text.is_empty() || new_text.ends_with('\n'));
        let old_lines = if inserts_whole_lines {
            0
        } else {
            let end = self.range.end;
            let last = if end > self.range.start && base.line_to_byte(base.byte_to_line(end)) == end {
                base.byte_to_line(end) - 1
            } else {
                base.byte_to_line(end)
            };
            last - start_line + 1
        };
        let breaks = |text: &str| text.matches('\n').count();
        let new_lines = (old_lines + breaks(&new_text)).saturating_sub(breaks(&old_text));
        HunkLines { start_line, old_lines, new_lines }
    }
}

/// A hunk's place in lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HunkLines {
    /// 0-based, in the base text.
    pub start_line: usize,
    pub old_lines: usize,
    pub new_lines: usize,
}

/// Splits sorted, disjoint replacements of `base` into hunks of minimal edits.
pub fn split(base: &Rope, replacements: &[Replacement]) -> Vec<ProposalHunk> {
    let mut hunks: Vec<ProposalHunk> = Vec::new();
    for edit in minimal_edits(base, replacements) {
        match hunks.last_mut() {
            Some(hunk) if !whole_line_between(base, hunk.range.end, edit.range.start) => {
                hunk.range.end = edit.range.end;
                hunk.edits.push(edit);
            }
            _ => hunks.push(ProposalHunk { range: edit.range.clone(), edits: vec![edit] }),
        }
    }
    hunks
}

/// Whether the unchanged text `from..to` holds at least one whole line.
fn whole_line_between(base: &Rope, from: usize, to: usize) -> bool {
    let starts_a_line = from == 0 || base.byte(from - 1) == b'\n';
    let needed = if starts_a_line { 1 } else { 2 };
    base.byte_slice(from..to).bytes().filter(|&byte| byte == b'\n').take(needed).count() == needed
}

/// The base text with the hunks marked `true` applied.
pub fn apply_subset(base: &Rope, hunks: &[ProposalHunk], accepted: &[bool]) -> Rope {
    let edits: Vec<Replacement> = hunks
        .iter()
        .zip(accepted)
        .filter(|(_, accepted)| **accepted)
        .flat_map(|(hunk, _)| hunk.edits.iter().cloned())
        .collect();
    plan::apply(base, &edits)
}

/// The person's decisions, numbered across a whole edit (`(index, kept)`), as one list
/// per document of `counts[d]` hunks; `None` when they do not fit (an index out of
/// range, or a hunk left undecided).
pub fn kept_per_document(
    decisions: impl IntoIterator<Item = (usize, bool)>,
    counts: &[usize],
) -> Option<Vec<Vec<bool>>> {
    let mut flat: Vec<Option<bool>> = vec![None; counts.iter().sum()];
    for (index, kept) in decisions {
        *flat.get_mut(index)? = Some(kept);
    }
    let mut flat = flat.into_iter();
    counts.iter().map(|&count| flat.by_ref().take(count).collect()).collect()
}

/// Which hunks `live` holds, when it is `base` with some of `hunks` applied and
/// nothing else changed; `None` otherwise. Where both readings fit a hunk, the one
/// that explains the rest of the text wins (tried with the hunk applied first).
pub fn find_applied(base: &Rope, hunks: &[ProposalHunk], live: &Rope) -> Option<Vec<bool>> {
    let mut search = Search { base, hunks, live, dead_ends: HashSet::new(), steps: 0 };
    let mut chosen = Vec::with_capacity(hunks.len());
    search.walk(0, 0, &mut chosen).then_some(chosen)
}

/// At most this many hunk readings are tried before giving up.
const MAX_STEPS: usize = 100_000;

struct Search<'a> {
    base: &'a Rope,
    hunks: &'a [ProposalHunk],
    live: &'a Rope,
    /// (hunk index, live offset minus base offset) known not to lead anywhere.
    dead_ends: HashSet<(usize, isize)>,
    steps: usize,
}

impl Search<'_> {
    /// Matches hunk `index` onwards, with the live text `delta` bytes longer than
    /// the base text so far.
    fn walk(&mut self, index: usize, delta: isize, chosen: &mut Vec<bool>) -> bool {
        let gap_start = if index == 0 { 0 } else { self.hunks[index - 1].range.end };
        let gap_end = self.hunks.get(index).map_or(self.base.len_bytes(), |hunk| hunk.range.start);
        if !self.same_as_base(gap_start..gap_end, delta) {
            return false;
        }
        let Some(hunk) = self.hunks.get(index) else {
            return shifted(gap_end, delta) == Some(self.live.len_bytes());
        };
        if self.dead_ends.contains(&(index, delta)) || self.steps >= MAX_STEPS {
            return false;
        }
        self.steps += 1;
        let old_len = hunk.range.len();
        let new_text = hunk.new_text(self.base);
        for accepted in [true, false] {
            let holds = if accepted {
                self.live_has(hunk.range.start, delta, &new_text)
            } else {
                self.same_as_base(hunk.range.clone(), delta)
            };
            if !holds {
                continue;
            }
            let next_delta = if accepted { delta + new_text.len() as isize - old_len as isize } else { delta };
            chosen.push(accepted);
            if self.walk(index + 1, next_delta, chosen) {
                return true;
            }
            chosen.pop();
        }
        self.dead_ends.insert((index, delta));
        false
    }

    /// The live text holds the base text of `range`, shifted by `delta`.
    fn same_as_base(&self, range: Range<usize>, delta: isize) -> bool {
        let Some(start) = shifted(range.start, delta) else { return false };
        let end = start + range.len();
        end <= self.live.len_bytes()
            && self.live.byte_slice(start..end).chunks().flat_map(str::bytes).eq(self
                .base
                .byte_slice(range)
                .chunks()
                .flat_map(str::bytes))
    }

    /// The live text holds `text` at base offset `at`, shifted by `delta`.
    fn live_has(&self, at: usize, delta: isize, text: &str) -> bool {
        let Some(start) = shifted(at, delta) else { return false };
        let end = start + text.len();
        end <= self.live.len_bytes() && self.live.byte_slice(start..end).chunks().flat_map(str::bytes).eq(text.bytes())
    }
}

fn shifted(offset: usize, delta: isize) -> Option<usize> {
    offset.checked_add_signed(delta)
}

#[cfg(test)]
mod kept_tests {
    use super::kept_per_document;

    #[test]
    fn decisions_numbered_across_the_edit_are_split_per_document() {
        let decisions = [(2, true), (0, false), (1, true)];
        assert_eq!(kept_per_document(decisions, &[1, 2]), Some(vec![vec![false], vec![true, true]]));
        assert_eq!(kept_per_document([(0, true)], &[1, 1]), None, "a hunk left undecided");
        assert_eq!(kept_per_document([(0, true), (5, true)], &[1]), None, "an index out of range");
        assert_eq!(kept_per_document([], &[]), Some(vec![]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replace(base: &str, old: &str, new: &str) -> Replacement {
        let start = base.find(old).expect("old text in base");
        Replacement { range: start..start + old.len(), new_text: new.to_owned() }
    }

    #[test]
    fn a_whole_unchanged_line_separates_hunks() {
        let base = "a\nb\nc\nd\ne\n";
        let rope = Rope::from_str(base);
        let hunks = split(&rope, &[Replacement { range: 0..9, new_text: "A\nb\nC\nD\ne".into() }]);
        assert_eq!(hunks.len(), 2, "{hunks:?}");
        assert_eq!(hunks[0].edits.len(), 1);
        assert_eq!(hunks[1].edits.len(), 2, "neighbouring lines form one hunk");
        assert_eq!(hunks[1].lines(&rope), HunkLines { start_line: 2, old_lines: 2, new_lines: 2 });
    }

    #[test]
    fn two_edits_on_one_line_are_one_hunk() {
        let base = "let a = 1 + 2;\n";
        let rope = Rope::from_str(base);
        let hunks = split(&rope, &[Replacement { range: 0..14, new_text: "let b = 1 + 3;".into() }]);
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].edits.len(), 2);
    }

    #[test]
    fn inserted_and_deleted_lines_are_counted() {
        let base = "one\ntwo\nthree\n";
        let rope = Rope::from_str(base);
        let insert = split(&rope, &[Replacement { range: 4..4, new_text: "new\nlines\n".into() }]);
        assert_eq!(insert[0].lines(&rope), HunkLines { start_line: 1, old_lines: 0, new_lines: 2 });
        let delete = split(&rope, &[replace(base, "two\n", "")]);
        assert_eq!(delete[0].lines(&rope), HunkLines { start_line: 1, old_lines: 1, new_lines: 0 });
    }

    #[test]
    fn the_hunks_a_text_holds_are_found() {
        let base = "fn a() {}\n\nfn b() {}\n\nfn c() {}\n";
        let rope = Rope::from_str(base);
        let replacements = vec![
            replace(base, "fn a()", "fn alpha()"),
            replace(base, "fn b()", "fn beta()"),
            replace(base, "c()", "c(x: u8)"),
        ];
        let hunks = split(&rope, &replacements);
        assert_eq!(hunks.len(), 3);
        for mask in 0..8u8 {
            let accepted: Vec<bool> = (0..3).map(|bit| mask & (1 << bit) != 0).collect();
            let live = apply_subset(&rope, &hunks, &accepted);
            assert_eq!(find_applied(&rope, &hunks, &live), Some(accepted), "mask {mask}");
        }
        let typed = Rope::from_str("fn alpha() {}\n// typed\nfn b() {}\n\nfn c() {}\n");
        assert_eq!(find_applied(&rope, &hunks, &typed), None, "another change is not a subset");
    }

    #[test]
    fn an_ambiguous_hunk_is_read_by_the_rest_of_the_text() {
        // Accepting "x" -> "xx" followed by "x" reads like leaving it out followed by "xx".
        let base = "x\n\nx\n";
        let rope = Rope::from_str(base);
        let hunks = split(&rope, &[Replacement { range: 0..1, new_text: "xx".into() }]);
        assert_eq!(find_applied(&rope, &hunks, &Rope::from_str("xx\n\nx\n")), Some(vec![true]));
        assert_eq!(find_applied(&rope, &hunks, &Rope::from_str("x\n\nx\n")), Some(vec![false]));
    }
}
