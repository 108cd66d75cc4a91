//! The recent revisions of an open document and the changes between them, so that an
//! edit planned against an older revision can be moved over what changed since
//! (a *rebase*), when those changes do not touch the text it replaces.
//!
//! Each kept revision holds only the byte edits that led from it to the next one,
//! with the text each removed: an older text is rebuilt from the live text by undoing
//! the edits since, so a revision costs what was typed, not a copy of the document.
//! The history is bounded by [`MAX_REVISIONS`], [`MAX_AGE`] and [`MAX_CHANGED_BYTES`];
//! the oldest revisions are dropped first, and a revision older than the kept history
//! cannot be rebased. A change that replaces the whole text ends the history: nothing
//! planned before it can be moved over it.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ropey::Rope;

use crate::plan::Replacement;

/// At most this many revisions are kept per document.
pub const MAX_REVISIONS: usize = 512;
/// Revisions older than this are dropped.
pub const MAX_AGE: Duration = Duration::from_secs(10 * 60);
/// At most this many bytes of inserted and removed text are kept per document.
pub const MAX_CHANGED_BYTES: usize = 1024 * 1024;

/// One change, in the byte offsets of the text it was applied to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteEdit {
    /// The bytes removed.
    pub range: Range<usize>,
    /// How many bytes were inserted at `range.start`.
    pub inserted: usize,
}

impl ByteEdit {
    fn changed_bytes(&self) -> usize {
        self.range.len() + self.inserted
    }
}

/// A kept revision.
#[derive(Debug)]
struct Revision {
    version: i32,
    /// When the document left this revision.
    left_at: Instant,
    /// The edits from this revision to the next one, in the order they were applied,
    /// each with the text it removed.
    edits: Vec<(ByteEdit, String)>,
}

impl Revision {
    fn changed_bytes(&self) -> usize {
        self.edits.iter().map(|(edit, _)| edit.changed_bytes()).sum()
    }
}

/// The revisions of one document before its current one, oldest first.
#[derive(Debug, Clone, Default)]
pub struct History {
    revisions: VecDeque<Arc<Revision>>,
    changed_bytes: usize,
}

/// A replacement whose text a later change touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    /// Which replacement (index into the planned ones).
    pub replacement: usize,
    /// The changed bytes, in the current text.
    pub range: Range<usize>,
}

impl History {
    /// Records that the document left `version` through `edits` (each with the text
    /// it removed).
    pub fn record(&mut self, version: i32, edits: Vec<(ByteEdit, String)>) {
        let now = Instant::now();
        let revision = Revision { version, left_at: now, edits };
        self.changed_bytes += revision.changed_bytes();
        self.revisions.push_back(Arc::new(revision));
        while let Some(oldest) = self.revisions.front() {
            let too_many = self.revisions.len() > MAX_REVISIONS;
            let too_old = now.duration_since(oldest.left_at) > MAX_AGE;
            let too_big = self.changed_bytes > MAX_CHANGED_BYTES && self.revisions.len() > 1;
            if !(too_many || too_old || too_big) {
                break;
            }
            let dropped = self.revisions.pop_front();
            self.changed_bytes -= dropped.map_or(0, |revision| revision.changed_bytes());
        }
    }

    /// Forgets everything (the whole text was replaced, or a new session began).
    pub fn clear(&mut self) {
        self.revisions.clear();
        self.changed_bytes = 0;
    }

    /// Whether recording one more revision might drop `version` (it is near the end
    /// of what the bounds keep); `true` when it is not kept at all.
    pub fn may_drop(&self, version: i32) -> bool {
        let Some(index) = self.revisions.iter().position(|revision| revision.version == version) else {
            return true;
        };
        let by_count = index + MAX_REVISIONS < self.revisions.len() + 2;
        let by_bytes = self.changed_bytes > MAX_CHANGED_BYTES / 2;
        let by_age = self.revisions[index].left_at.elapsed() > MAX_AGE / 2;
        by_count || by_bytes || by_age
    }

    /// How many revisions are kept.
    pub fn len(&self) -> usize {
        self.revisions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.revisions.is_empty()
    }

    /// The text of a kept revision, rebuilt from the current text by undoing every
    /// edit since, newest first.
    pub fn text_at(&self, version: i32, current: &Rope) -> Option<Rope> {
        let start = self.revisions.iter().position(|revision| revision.version == version)?;
        let mut text = current.clone();
        for revision in self.revisions.iter().skip(start).rev() {
            for (edit, removed) in revision.edits.iter().rev() {
                let start = edit.range.start.min(text.len_bytes());
                let inserted_end = (start + edit.inserted).min(text.len_bytes());
                let (from, to) = (text.byte_to_char(start), text.byte_to_char(inserted_end));
                text.remove(from..to);
                text.insert(from, removed);
            }
        }
        Some(text)
    }

    /// Every edit made since `version`, in order; `None` if it is not kept.
    pub fn edits_since(&self, version: i32) -> Option<Vec<ByteEdit>> {
        let start = self.revisions.iter().position(|revision| revision.version == version)?;
        let kept = self.revisions.iter().skip(start);
        Some(kept.flat_map(|revision| revision.edits.iter().map(|(edit, _)| edit.clone())).collect())
    }
}

/// Moves sorted, disjoint replacements of an older text over `edits` (made since, in
/// order), giving the same replacements of the current text. Refused when an edit
/// touches a replaced range: overlaps it, or inserts strictly inside it (or exactly
/// where an empty replacement inserts). An edit that only borders a range moves it.
pub fn rebase(replacements: &[Replacement], edits: &[ByteEdit]) -> Result<Vec<Replacement>, Touched> {
    let mut ranges: Vec<Range<usize>> = replacements.iter().map(|replacement| replacement.range.clone()).collect();
    for edit in edits.iter().filter(|edit| edit.changed_bytes() > 0) {
        let delta = edit.inserted as isize - edit.range.len() as isize;
        for (index, range) in ranges.iter_mut().enumerate() {
            let (start, end) = (edit.range.start, edit.range.end);
            let overlaps = start < range.end && end > range.start;
            let inserts_inside = start == end && start > range.start && start < range.end;
            let at_empty = range.start == range.end && start <= range.start && end >= range.start;
            if overlaps || inserts_inside || at_empty {
                let touched = start..start + edit.inserted;
                return Err(Touched { replacement: index, range: current_range(touched, edits, edit) });
            }
            if end <= range.start {
                range.start = shift(range.start, delta);
                range.end = shift(range.end, delta);
            }
        }
    }
    Ok(replacements
        .iter()
        .zip(ranges)
        .map(|(replacement, range)| Replacement { range, new_text: replacement.new_text.clone() })
        .collect())
}

/// Where the bytes an edit inserted are now, after the edits that followed it.
fn current_range(mut range: Range<usize>, edits: &[ByteEdit], from: &ByteEdit) -> Range<usize> {
    let later = edits.iter().skip_while(|edit| !std::ptr::eq(*edit, from)).skip(1);
    for edit in later {
        let delta = edit.inserted as isize - edit.range.len() as isize;
        if edit.range.end <= range.start {
            range = shift(range.start, delta)..shift(range.end, delta);
        } else if edit.range.start < range.end {
            range = range.start.min(edit.range.start)..shift(range.end.max(edit.range.end), delta);
        }
    }
    range
}

fn shift(offset: usize, delta: isize) -> usize {
    offset.saturating_add_signed(delta)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn replace(text: &mut String, edit: &ByteEdit, inserted: &str) {
        text.replace_range(edit.range.clone(), inserted);
    }

    fn apply(text: &str, replacements: &[Replacement]) -> String {
        let mut out = text.to_owned();
        for replacement in replacements.iter().rev() {
            out.replace_range(replacement.range.clone(), &replacement.new_text);
        }
        out
    }

    #[test]
    fn an_edit_before_the_range_moves_it_and_one_after_leaves_it() {
        let replacements = [Replacement { range: 10..15, new_text: "X".into() }];
        let edits = [ByteEdit { range: 2..2, inserted: 3 }, ByteEdit { range: 30..31, inserted: 0 }];
        assert_eq!(rebase(&replacements, &edits).unwrap()[0].range, 13..18);
    }

    #[test]
    fn an_edit_inside_or_overlapping_the_range_is_refused() {
        let replacements = [Replacement { range: 10..15, new_text: "X".into() }];
        assert!(rebase(&replacements, &[ByteEdit { range: 12..12, inserted: 1 }]).is_err());
        assert!(rebase(&replacements, &[ByteEdit { range: 14..20, inserted: 0 }]).is_err());
        // Bordering is not touching.
        assert!(rebase(&replacements, &[ByteEdit { range: 15..15, inserted: 4 }]).is_ok());
        assert!(rebase(&replacements, &[ByteEdit { range: 10..10, inserted: 4 }]).is_ok());
    }

    #[test]
    fn an_insertion_at_the_point_of_an_empty_replacement_is_refused() {
        let replacements = [Replacement { range: 10..10, new_text: "X".into() }];
        assert!(rebase(&replacements, &[ByteEdit { range: 10..10, inserted: 1 }]).is_err());
        assert!(rebase(&replacements, &[ByteEdit { range: 9..9, inserted: 1 }]).is_ok());
    }

    #[test]
    fn history_is_bounded_by_count() {
        let mut history = History::default();
        for version in 0..(MAX_REVISIONS as i32 + 10) {
            history.record(version, vec![(ByteEdit { range: 0..0, inserted: 1 }, String::new())]);
        }
        assert_eq!(history.len(), MAX_REVISIONS);
        assert!(history.text_at(0, &Rope::from_str("x")).is_none());
        assert!(history.edits_since(20).is_some());
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof![Just("ab"), Just("c\n"), Just("é"), Just("xyz\n")], 4..30)
            .prop_map(|parts| parts.concat())
    }

    /// Where the agent's range is in a tagged text (each byte tagged with its offset
    /// in the base text; inserted bytes have none), found without moving offsets;
    /// `None` when its bytes are gone or split.
    fn place(tags: &[Option<usize>], range: &Range<usize>, base_len: usize) -> Option<Range<usize>> {
        let find = |offset: usize| tags.iter().position(|tag| *tag == Some(offset));
        if range.start == range.end {
            let at = range.start;
            return match (at.checked_sub(1).map(find), (at < base_len).then(|| find(at))) {
                (Some(Some(before)), Some(Some(after))) => (after == before + 1).then_some(after..after),
                (None, Some(Some(after))) => (after == 0).then_some(0..0),
                (Some(Some(before)), None) => (before + 1 == tags.len()).then_some(tags.len()..tags.len()),
                (None, None) => tags.is_empty().then_some(0..0),
                _ => None,
            };
        }
        let first = find(range.start)?;
        let contiguous = (0..range.len()).all(|i| tags.get(first + i) == Some(&Some(range.start + i)));
        contiguous.then_some(first..first + range.len())
    }

    /// Whether a change (`at..until` removed, `inserted` bytes put there) touches a
    /// range's place: overlaps it, inserts strictly inside it, or, for an empty
    /// range, changes anything at its point.
    fn touches(place: &Range<usize>, at: usize, until: usize, inserted: usize) -> bool {
        if at == until && inserted == 0 {
            return false;
        }
        if place.start == place.end {
            return at <= place.start && until >= place.start;
        }
        (at < place.end && until > place.start) || (at == until && at > place.start && at < place.end)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// Random documents, an agent edit planned at revision R, random changes by the
        /// person after R: when the changes leave the replaced text alone, the rebased
        /// edit gives the person's changes applied to (the agent's edit applied to R);
        /// otherwise it is refused. Never anything else.
        #[test]
        fn a_rebase_applies_exactly_when_the_changes_leave_the_quote_alone(
            base in text(),
            agent_start in 0usize..60, agent_len in 0usize..8, agent_text in "[A-Z]{0,3}",
            person in proptest::collection::vec((0usize..60, 0usize..4, "[a-z]{0,2}"), 1..6),
        ) {
            let boundary = |text: &str, at: usize| {
                let mut at = at.min(text.len());
                while !text.is_char_boundary(at) { at -= 1; }
                at
            };
            let start = boundary(&base, agent_start);
            let end = boundary(&base, start + agent_len).max(start);
            let agent = vec![Replacement { range: start..end, new_text: agent_text.clone() }];
            let mut current = base.clone();
            let mut tags: Vec<Option<usize>> = (0..base.len()).map(Some).collect();
            let mut edits = Vec::new();
            let mut touched = false;
            for (at, len, inserted) in person {
                let at = boundary(&current, at);
                let until = boundary(&current, at + len).max(at);
                match place(&tags, &agent[0].range, base.len()) {
                    Some(place) if !touches(&place, at, until, inserted.len()) => {}
                    _ => touched = true,
                }
                let edit = ByteEdit { range: at..until, inserted: inserted.len() };
                replace(&mut current, &edit, &inserted);
                tags.splice(at..until, std::iter::repeat_n(None, inserted.len()));
                edits.push(edit);
            }
            let expected = if touched { None } else { place(&tags, &agent[0].range, base.len()) };
            match (rebase(&agent, &edits), expected) {
                (Ok(rebased), Some(expected_range)) => {
                    prop_assert_eq!(&rebased[0].range, &expected_range);
                    let mut expected = current.clone();
                    expected.replace_range(expected_range, &agent_text);
                    prop_assert_eq!(apply(&current, &rebased), expected);
                }
                (Err(_), None) => {}
                (result, oracle) => prop_assert!(false, "rebase {result:?} but the text says {oracle:?}"),
            }
        }
    }
}
