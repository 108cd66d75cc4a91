//! Undoing recorded changes of one file in the text it holds now, as `git revert` does.
//!
//! The journal keeps the whole text of a file before and after each change
//! ([`Recorded`]). [`plan_revert`] undoes a file's changes newest first, each with a
//! three-way merge by lines ([`crate::merge`]): base = the text after the change, ours =
//! the text now, theirs = the text before it. A region only the change touched goes back
//! to what it was; a region a later change also touched is a conflict: left as the file
//! has it, and reported with what reverting would put there. Changes that follow each
//! other with nothing between them (one's `after` is the next one's `before`) are undone
//! as one change, in one merge.
//!
//! **Overlap** is diff3's, as similar's `TextMerge` and git's xdiff cluster changes. Take
//! the lines the change wrote as a range of the text after it (an empty range where it
//! only deleted), and everything that happened since as one line diff from that text to
//! the current one. They overlap when a hunk of that diff deletes or inserts lines inside
//! the range or touching it: an insertion right before or right after it, a deletion of
//! the line just before or just after it. A conflict then covers the change's range and
//! every hunk that touches it. Lines are compared whole, line ending included, so CRLF
//! and a last line without a line ending are kept byte for byte.
//!
//! **Several changes.** Each merge runs on the text the newer changes' reverts left, so
//! two texts are followed along, each as replacements of the current text (an
//! `Overlay`): the *kept* one, where every conflict stays as the file has it, and the
//! *forced* one, where every conflict takes the reverted side (a sequence of `git revert`s
//! that always takes theirs). A conflict found at one step is mapped back to the current
//! text through the kept replacements made so far, widened to whole replacements where
//! it cuts into one. At the end, the regions of the current text that either text
//! replaces and the conflicts' regions are merged where they overlap. A merged region
//! holding a conflict, or where the two texts disagree, is one [`RevertConflict`]: what
//! the file holds there, and the forced text. Everywhere else the kept text's
//! replacements are the plan. So the plan applied gives the kept text outside the
//! conflicts and the current text inside them, and applied with every conflict's
//! `reverted` it gives the forced text. A conflict's region is left whole, even where
//! part of it was a newer change that alone would have gone back cleanly: the editor
//! offers each region as one hunk, and rejecting it must leave the file as it is. One
//! exception: where the forced text is what the file holds (repeated lines can align so)
//! and the kept text is not, the conflict offers the kept text, so that no revert is
//! dropped without a word. Without conflicts, the kept and forced texts are the same,
//! and the plan gives it.

use std::ops::Range;

use crate::merge::{Merged, merge};
use crate::plan::Replacement;

/// One recorded change of one file: its whole text before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded<'a> {
    /// The text before the change; empty for a file it created.
    pub before: &'a str,
    /// The text after the change.
    pub after: &'a str,
}

/// Undoing recorded changes of one file in its current text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RevertPlan {
    /// Replacements of the current text that undo the changes where nothing later touched
    /// them; sorted, disjoint, whole lines each, and never overlapping a conflict.
    pub replacements: Vec<Replacement>,
    /// Regions where a later change touched what a recorded change did, left as they are;
    /// sorted and disjoint.
    pub conflicts: Vec<RevertConflict>,
    /// The length in bytes of the text the plan was made for: [`apply`] refuses another.
    pub planned_len: usize,
}

/// A region of the current text that is not reverted, because a later change touched it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertConflict {
    /// Byte range of the current text: whole lines.
    pub range: Range<usize>,
    /// The same region as 0-based line indexes (lines end at `\n`); empty where the later
    /// change deleted every line of the region.
    pub lines: Range<usize>,
    /// What the file holds there now.
    pub current: String,
    /// What reverting would put there, over the later changes: what every merge taking
    /// the reverted side gives, or where that is what the file holds, what the merges that
    /// found no conflict give. Never equal to `current`.
    pub reverted: String,
}

/// Plans undoing `changes` (one file's, oldest first: one edit, or every edit of a turn or
/// a session) in `current`, the text the file holds now.
pub fn plan_revert(changes: &[Recorded<'_>], current: &str) -> RevertPlan {
    let mut kept = Overlay::default();
    // `None` while no step has found a conflict: until then both texts are the kept one.
    let mut forced: Option<Overlay> = None;
    let mut conflicts = Vec::new();
    for run in runs(changes).iter().rev().filter(|run| run.before != run.after) {
        let view = kept.text(current);
        let merged = merge(run.after, &view, run.before);
        match forced.as_mut() {
            Some(forced) => {
                let forced_view = forced.text(current);
                forced.apply(current, &forced_view, taking_theirs(merge(run.after, &forced_view, run.before)));
            }
            None if !merged.conflicts.is_empty() => {
                let mut fork = kept.clone();
                fork.apply(current, &view, taking_theirs(merged.clone()));
                forced = Some(fork);
            }
            None => {}
        }
        conflicts.extend(merged.conflicts.iter().map(|conflict| kept.to_current(conflict.ours_range.clone())));
        kept.apply(current, &view, merged.replacements);
    }
    match forced {
        Some(forced) => assemble(current, &kept, &forced, conflicts),
        // No step found a conflict, so the forced text is the kept one.
        None => RevertPlan { replacements: kept.pieces, conflicts: Vec::new(), planned_len: current.len() },
    }
}

/// `current` with the plan's replacements, and with each conflict's `reverted` too when
/// `take_conflicts` (a person who picks "reverted" everywhere). `None` when `current` is
/// not the text the plan was made for.
pub fn apply(current: &str, plan: &RevertPlan, take_conflicts: bool) -> Option<String> {
    if current.len() != plan.planned_len {
        return None;
    }
    let replacements = plan.replacements.iter().map(|replacement| (&replacement.range, replacement.new_text.as_str()));
    let conflicts =
        plan.conflicts.iter().filter(|_| take_conflicts).map(|conflict| (&conflict.range, conflict.reverted.as_str()));
    let mut edits: Vec<_> = replacements.chain(conflicts).collect();
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut text = String::with_capacity(current.len());
    let mut pos = 0;
    for (range, new_text) in edits {
        text.push_str(current.get(pos..range.start)?);
        text.push_str(new_text);
        pos = range.end;
    }
    text.push_str(current.get(pos..)?);
    Some(text)
}

/// The changes with consecutive ones joined: `a → b` then `b → c` is `a → c`.
fn runs<'a>(changes: &[Recorded<'a>]) -> Vec<Recorded<'a>> {
    let mut runs: Vec<Recorded<'a>> = Vec::with_capacity(changes.len());
    for change in changes {
        match runs.last_mut() {
            Some(run) if run.after == change.before => run.after = change.after,
            _ => runs.push(*change),
        }
    }
    runs
}

/// A merge's replacements with its conflicts resolved to theirs; sorted.
fn taking_theirs(merged: Merged) -> Vec<Replacement> {
    let mut edits = merged.replacements;
    edits.extend(
        merged
            .conflicts
            .into_iter()
            .map(|conflict| Replacement { range: conflict.ours_range, new_text: conflict.theirs_text }),
    );
    edits.sort_by_key(|edit| (edit.range.start, edit.range.end));
    edits
}

/// A text made from the current one by replacing some of its stretches: what a sequence
/// of reverts has made of it so far (its *view*).
#[derive(Debug, Clone, Default)]
struct Overlay {
    /// Byte ranges of the current text and what the view holds instead; sorted, disjoint,
    /// each changing something, and no two adjacent in the view (they are joined).
    pieces: Vec<Replacement>,
}

impl Overlay {
    fn text(&self, current: &str) -> String {
        let mut text = String::with_capacity(current.len());
        let mut pos = 0;
        for piece in &self.pieces {
            text.push_str(&current[pos..piece.range.start]);
            text.push_str(&piece.new_text);
            pos = piece.range.end;
        }
        text.push_str(&current[pos..]);
        text
    }

    /// Each piece with the byte range its text takes in the view.
    fn spans(&self) -> impl Iterator<Item = (&Replacement, Range<usize>)> {
        let (mut added, mut removed) = (0, 0);
        self.pieces.iter().map(move |piece| {
            let start = piece.range.start + added - removed;
            added += piece.new_text.len();
            removed += piece.range.len();
            (piece, start..start + piece.new_text.len())
        })
    }

    /// Replaces stretches of the view `view` (`edits`: sorted, disjoint byte ranges of it).
    /// An edit that touches a piece, or another edit, joins it into one piece.
    fn apply(&mut self, current: &str, view: &str, edits: Vec<Replacement>) {
        if edits.is_empty() {
            return;
        }
        let mut items: Vec<Item> = self.spans().map(|(piece, span)| Item::Piece(piece.clone(), span)).collect();
        items.extend(edits.into_iter().map(Item::Edit));
        // Stable: the edits keep their order among themselves.
        items.sort_by_key(|item| item.span().start);
        let mut pieces = Vec::with_capacity(items.len());
        // How much the pieces before the current group added to and removed from the
        // current text: a view offset outside pieces is `current offset + added - removed`.
        let (mut added, mut removed) = (0, 0);
        let mut items = items.into_iter().peekable();
        while let Some(first) = items.next() {
            let start = first.span().start;
            let mut end = first.span().end;
            let mut group = vec![first];
            while let Some(next) = items.next_if(|next| next.span().start <= end) {
                end = end.max(next.span().end);
                group.push(next);
            }
            let current_start = start + removed - added;
            let mut new_text = String::new();
            let mut pos = start;
            for item in group {
                match item {
                    Item::Piece(piece, _) => {
                        added += piece.new_text.len();
                        removed += piece.range.len();
                    }
                    Item::Edit(edit) => {
                        new_text.push_str(&view[pos..edit.range.start]);
                        new_text.push_str(&edit.new_text);
                        pos = edit.range.end;
                    }
                }
            }
            new_text.push_str(&view[pos..end]);
            let range = current_start..end + removed - added;
            if current[range.clone()] != new_text {
                pieces.push(Replacement { range, new_text });
            }
        }
        self.pieces = pieces;
    }

    /// The region of the current text that a byte range of the view comes from, widened to
    /// the whole of any piece it cuts into. A piece whose text is empty (a deletion) at the
    /// range's start lies before it, one at its end after it.
    fn to_current(&self, view: Range<usize>) -> Range<usize> {
        let (mut added, mut removed) = (0, 0);
        let mut start = None;
        for (piece, span) in self.spans() {
            if span.end <= view.start {
                added += piece.new_text.len();
                removed += piece.range.len();
                continue;
            }
            if span.start < view.start {
                if view.is_empty() {
                    return piece.range.clone();
                }
                start = Some(piece.range.start);
            }
            break;
        }
        let start = start.unwrap_or(view.start + removed - added);
        if view.is_empty() {
            return start..start;
        }
        let (mut added, mut removed) = (0, 0);
        for (piece, span) in self.spans() {
            if span.start >= view.end {
                break;
            }
            if span.end > view.end {
                return start..piece.range.end;
            }
            added += piece.new_text.len();
            removed += piece.range.len();
        }
        start..view.end + removed - added
    }
}

/// A piece of an overlay, or an edit of its view, while the edit is applied.
enum Item {
    /// With its span in the view.
    Piece(Replacement, Range<usize>),
    Edit(Replacement),
}

impl Item {
    fn span(&self) -> Range<usize> {
        match self {
            Item::Piece(_, span) => span.clone(),
            Item::Edit(edit) => edit.range.clone(),
        }
    }
}

/// What a region of the current text gathers while the plan is assembled: a piece of the
/// kept or the forced text, or a conflict a merge found there.
#[derive(Debug, Clone, Copy)]
enum Part<'a> {
    Kept(&'a Replacement),
    Forced(&'a Replacement),
    Conflict,
}

/// The plan: the kept text's pieces, the forced text's and the conflicts' regions merged
/// where they overlap; see the module's documentation.
fn assemble(current: &str, kept: &Overlay, forced: &Overlay, conflicts: Vec<Range<usize>>) -> RevertPlan {
    let mut parts: Vec<(Range<usize>, Part<'_>)> =
        kept.pieces.iter().map(|piece| (piece.range.clone(), Part::Kept(piece))).collect();
    parts.extend(forced.pieces.iter().map(|piece| (piece.range.clone(), Part::Forced(piece))));
    parts.extend(conflicts.into_iter().map(|range| (range, Part::Conflict)));
    parts.sort_by_key(|(range, _)| (range.start, range.end));

    let mut regions: Vec<(Range<usize>, Vec<Part<'_>>)> = Vec::new();
    for (range, part) in parts {
        if let Some((region, members)) = regions.last_mut().filter(|(region, _)| overlaps(region, &range)) {
            region.end = region.end.max(range.end);
            members.push(part);
        } else {
            regions.push((range, vec![part]));
        }
    }

    let mut plan = RevertPlan { planned_len: current.len(), ..RevertPlan::default() };
    let mut line_index = LineIndex::new(current);
    for (range, members) in regions {
        let (mut kept_pieces, mut forced_pieces, mut conflicted) = (Vec::new(), Vec::new(), false);
        for part in members {
            match part {
                Part::Kept(piece) => kept_pieces.push(piece),
                Part::Forced(piece) => forced_pieces.push(piece),
                Part::Conflict => conflicted = true,
            }
        }
        let kept_text = splice(current, &range, &kept_pieces);
        let forced_text = splice(current, &range, &forced_pieces);
        if !conflicted && kept_text == forced_text {
            plan.replacements.extend(kept_pieces.into_iter().cloned());
            continue;
        }
        let now = &current[range.clone()];
        // Where reverting over everything comes back to what the file holds (lines that
        // repeat can make it), the clean reverts are the one change there is to offer:
        // left out silently, a revert would report success and change nothing.
        let reverted = if forced_text != now { forced_text } else { kept_text };
        if reverted != now {
            let lines = line_index.of(range.start)..line_index.of(range.end);
            plan.conflicts.push(RevertConflict { current: now.to_owned(), range, lines, reverted });
        }
    }
    plan
}

/// Whether `next` (sorted after `region`) belongs with it: they share bytes, or one of
/// them is empty and they touch. An empty range is an insertion, and at the edge of
/// another range the current text's offsets cannot say on which side of it the inserted
/// lines go (one overlay can hold them just after a conflict's lines, another inside its
/// replacement of them), so the two are taken together.
fn overlaps(region: &Range<usize>, next: &Range<usize>) -> bool {
    next.start < region.end || (next.start == region.end && (region.is_empty() || next.is_empty()))
}

/// The current text's `range` with `pieces` (sorted, inside it) in place.
fn splice(current: &str, range: &Range<usize>, pieces: &[&Replacement]) -> String {
    let mut text = String::new();
    let mut pos = range.start;
    for piece in pieces {
        text.push_str(&current[pos..piece.range.start]);
        text.push_str(&piece.new_text);
        pos = piece.range.end;
    }
    text.push_str(&current[pos..range.end]);
    text
}

/// Line numbers of byte offsets that start a line (or end the text), asked in order.
struct LineIndex<'a> {
    text: &'a str,
    /// The last offset asked, and how many `\n` come before it.
    pos: usize,
    newlines: usize,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0, newlines: 0 }
    }

    fn of(&mut self, offset: usize) -> usize {
        if offset < self.pos {
            (self.pos, self.newlines) = (0, 0);
        }
        self.newlines += memchr::memchr_iter(b'\n', &self.text.as_bytes()[self.pos..offset]).count();
        self.pos = offset;
        // The end of a text whose last line has no line ending comes after that line.
        let unterminated = offset == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n');
        self.newlines + usize::from(unterminated)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// `check(changes, current, expected, conflicts)`: `changes` as `(before, after)`,
    /// oldest first; `expected` is `current` with the plan applied; `conflicts` as
    /// `(current, reverted)`.
    fn check(changes: &[(&str, &str)], current: &str, expected: &str, conflicts: &[(&str, &str)]) {
        let changes: Vec<Recorded<'_>> = changes.iter().map(|&(before, after)| Recorded { before, after }).collect();
        let plan = plan_revert(&changes, current);
        assert_eq!(apply(current, &plan, false).unwrap(), expected, "{plan:#?}");
        let got: Vec<(&str, &str)> =
            plan.conflicts.iter().map(|conflict| (conflict.current.as_str(), conflict.reverted.as_str())).collect();
        assert_eq!(got, conflicts, "{plan:#?}");
        for conflict in &plan.conflicts {
            assert_eq!(current[conflict.range.clone()], conflict.current);
        }
    }

    #[test]
    fn a_change_nothing_touched_since_gives_the_text_before_it() {
        check(&[("a\nb\nc\n", "a\nB\nc\n")], "a\nB\nc\n", "a\nb\nc\n", &[]);
    }

    #[test]
    fn typing_elsewhere_is_kept() {
        check(&[("a\nb\nc\nd\ne\n", "a\nB\nc\nd\ne\n")], "a\nB\nc\nd\nE\n", "a\nb\nc\nd\nE\n", &[]);
    }

    #[test]
    fn typing_on_the_changed_line_is_a_conflict_left_as_it_is() {
        check(&[("a\nb\nc\n", "a\nB\nc\n")], "a\nB!\nc\n", "a\nB!\nc\n", &[("B!\n", "b\n")]);
    }

    #[test]
    fn typing_on_the_next_line_is_a_conflict_too() {
        // diff3 clusters changes that touch: the person's line C and the change's line B.
        check(&[("a\nb\nc\nd\n", "a\nB\nc\nd\n")], "a\nB\nC\nd\n", "a\nB\nC\nd\n", &[("B\nC\n", "b\nc\n")]);
    }

    #[test]
    fn one_unchanged_line_between_keeps_them_apart() {
        check(&[("a\nb\nc\nd\n", "a\nB\nc\nd\n")], "a\nB\nc\nD\n", "a\nb\nc\nD\n", &[]);
    }

    #[test]
    fn lines_the_person_deleted_since_are_a_conflict_with_nothing_now() {
        let plan = plan_revert(&[Recorded { before: "a\nb\nc\n", after: "a\nB\nc\n" }], "a\nc\n");
        assert_eq!(
            plan.conflicts,
            vec![RevertConflict { range: 2..2, lines: 1..1, current: String::new(), reverted: "b\n".to_owned() }]
        );
        assert_eq!(apply("a\nc\n", &plan, true).unwrap(), "a\nb\nc\n");
    }

    #[test]
    fn the_person_s_own_undo_leaves_nothing_to_do() {
        check(&[("a\nb\nc\n", "a\nB\nc\n")], "a\nb\nc\n", "a\nb\nc\n", &[]);
    }

    #[test]
    fn crlf_stays_byte_exact() {
        check(&[("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n")], "a\r\nB\r\nc\r\nd\r\n", "a\r\nb\r\nc\r\nd\r\n", &[]);
        check(&[("a\r\nb\r\n", "a\r\nb\r\nc\n")], "x\r\na\r\nb\r\nc\n", "x\r\na\r\nb\r\n", &[]);
    }

    #[test]
    fn a_last_line_without_a_line_ending_is_reverted() {
        check(&[("a\nb", "a\nB")], "x\na\nB", "x\na\nb", &[]);
        check(&[("a\nb", "a\nb\n")], "x\na\nb\n", "x\na\nb", &[]);
        check(&[("a\nb\n", "a\nb")], "x\na\nb", "x\na\nb\n", &[]);
    }

    #[test]
    fn a_created_file_is_emptied() {
        check(&[("", "a\nb\n")], "a\nb\n", "", &[]);
        // Lines added at its end since touch what the creation wrote.
        check(&[("", "a\nb\n")], "a\nb\nc\n", "a\nb\nc\n", &[("a\nb\nc\n", "")]);
    }

    #[test]
    fn deleted_lines_come_back() {
        check(&[("a\nb\nc\n", "a\nc\n")], "a\nc\nd\n", "a\nb\nc\nd\n", &[]);
        check(&[("a\nb\n", "")], "", "a\nb\n", &[]);
    }

    #[test]
    fn two_changes_with_typing_between_are_both_undone() {
        let first = ("a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n");
        let second = ("A\nb\nC\nd\ne\n", "A\nb\nC\nd\nE\n");
        check(&[first, second], "A\nb\nC\nd\nE\n", "a\nb\nC\nd\ne\n", &[]);
    }

    #[test]
    fn consecutive_changes_are_undone_as_one() {
        let changes = [("a\nb\n", "a\nB\n"), ("a\nB\n", "a\nBB\n"), ("a\nBB\n", "a\nBBB\n")];
        check(&changes, "x\na\nBBB\n", "x\na\nb\n", &[]);
        let recorded: Vec<Recorded<'_>> = changes.iter().map(|&(before, after)| Recorded { before, after }).collect();
        assert_eq!(runs(&recorded), vec![Recorded { before: "a\nb\n", after: "a\nBBB\n" }]);
    }

    #[test]
    fn a_line_two_changes_wrote_and_the_person_retyped_is_one_conflict() {
        // The first change wrote B, the person typed D, the second wrote B2, the person
        // typed B3 over it: reverting both offers b for B3, and keeps D.
        let first = ("a\nb\nc\nd\n", "a\nB\nc\nd\n");
        let second = ("a\nB\nc\nD\n", "a\nB2\nc\nD\n");
        check(&[first, second], "a\nB3\nc\nD\n", "a\nB3\nc\nD\n", &[("B3\n", "b\n")]);
    }

    #[test]
    fn where_reverting_everything_gives_what_is_there_the_clean_reverts_are_offered() {
        // An agent added "x"; someone else replaced it with "y1", "y2"; the agent deleted
        // those. Reverting the agent's two edits: the deletion goes back cleanly, the
        // addition conflicts with the replacement, and taking its reverted side removes
        // y1 and y2, which is what the file holds. The conflict offers them back.
        let changes = [("a\nb\n", "x\na\nb\n"), ("y1\ny2\na\nb\n", "a\nb\n")];
        check(&changes, "a\nb\n", "a\nb\n", &[("", "y1\ny2\n")]);
    }

    #[test]
    fn a_revert_reverted_gives_the_text_back() {
        let current = "a\nB\nc\nD\n";
        let plan = plan_revert(&[Recorded { before: "a\nb\nc\nd\n", after: "a\nB\nc\nd\n" }], current);
        let reverted = apply(current, &plan, false).unwrap();
        assert_eq!(reverted, "a\nb\nc\nD\n");
        let again = plan_revert(&[Recorded { before: current, after: &reverted }], &reverted);
        assert_eq!(apply(&reverted, &again, false).unwrap(), current);
    }

    #[test]
    fn conflicts_know_their_lines() {
        let plan = plan_revert(&[Recorded { before: "a\nb\nc\nd", after: "a\nb\nc\nD" }], "a\nb\nc\nD!");
        assert_eq!(plan.conflicts[0].lines, 3..4);
        assert_eq!(plan.conflicts[0].range, 6..8);
    }

    #[test]
    fn nothing_to_revert_plans_nothing() {
        let plan = plan_revert(&[], "a\n");
        assert_eq!(plan, RevertPlan { planned_len: 2, ..RevertPlan::default() });
        assert_eq!(plan_revert(&[Recorded { before: "x\n", after: "x\n" }], "a\n").replacements, vec![]);
    }

    #[test]
    fn a_plan_refuses_another_text() {
        let plan = plan_revert(&[Recorded { before: "a\n", after: "b\n" }], "b\n");
        assert_eq!(apply("b\n", &plan, false).as_deref(), Some("a\n"));
        assert_eq!(apply("bb\n", &plan, false), None);
    }
}
