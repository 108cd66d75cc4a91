//! The recent revisions of an open document and the changes between them, so that an
//! edit planned against an older revision can be moved over what changed since
//! (a *rebase*), when those changes do not touch the text it replaces.
//!
//! Each kept revision holds its text (a rope clone: it shares structure with the
//! live text, so a revision costs only the nodes later changes copied) and the byte
//! edits that led from it to the next revision. The history is bounded by
//! [`MAX_REVISIONS`], [`MAX_AGE`] and [`MAX_CHANGED_BYTES`]; the oldest revisions
//! are dropped first, and a revision older than the kept history cannot be rebased.

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
pub const MAX_CHANGED_BYTES: usize = 4 * 1024 * 1024;

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
    text: Rope,
    /// When the document left this revision.
    left_at: Instant,
    /// The edits from this revision to the next one, in the order they were applied.
    edits: Vec<ByteEdit>,
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
    /// Records that the document left `version`, whose text was `text`, through `edits`.
    pub fn record(&mut self, version: i32, text: Rope, edits: Vec<ByteEdit>) {
        let now = Instant::now();
        self.changed_bytes += edits.iter().map(ByteEdit::changed_bytes).sum::<usize>();
        self.revisions.push_back(Arc::new(Revision { version, text, left_at: now, edits }));
        while let Some(oldest) = self.revisions.front() {
            let too_many = self.revisions.len() > MAX_REVISIONS;
            let too_old = now.duration_since(oldest.left_at) > MAX_AGE;
            let too_big = self.changed_bytes > MAX_CHANGED_BYTES && self.revisions.len() > 1;
            if !(too_many || too_old || too_big) {
                break;
            }
            let dropped = self.revisions.pop_front();
            self.changed_bytes -=
                dropped.map_or(0, |revision| revision.edits.iter().map(ByteEdit::changed_bytes).sum());
        }
    }

    /// Forgets everything (the whole text was replaced, or a new session began).
    pub fn clear(&mut self) {
        self.revisions.clear();
        self.changed_bytes = 0;
    }

    /// How many revisions are kept.
    pub fn len(&self) -> usize {
        self.revisions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.revisions.is_empty()
    }

    /// The text of a kept revision.
    pub fn text_at(&self, version: i32) -> Option<&Rope> {
        self.revisions.iter().find(|revision| revision.version == version).map(|revision| &revision.text)
    }

    /// Every edit made since `version`, in order; `None` if it is not kept.
    pub fn edits_since(&self, version: i32) -> Option<Vec<ByteEdit>> {
        let start = self.revisions.iter().position(|revision| revision.version == version)?;
        Some(self.revisions.iter().skip(start).flat_map(|revision| revision.edits.iter().cloned()).collect())
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
            history.record(version, Rope::from_str("x"), vec![ByteEdit { range: 0..0, inserted: 1 }]);
        }
        assert_eq!(history.len(), MAX_REVISIONS);
        assert!(history.text_at(0).is_none());
        assert!(history.edits_since(20).is_some());
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof![Just("ab"), Just("c\n"), Just("é"), Just("xyz\n")], 4..30)
            .prop_map(|parts| parts.concat())
    }

    /// Where the agent's replacement lands in the current text, found independently:
    /// every byte is tagged with its offset in the base text (inserted bytes have
    /// none). `None` when the person's changes touched it.
    fn untouched_range(tags: &[Option<usize>], range: &Range<usize>, base_len: usize) -> Option<Range<usize>> {
        let find = |offset: usize| tags.iter().position(|tag| *tag == Some(offset));
        if range.is_empty() {
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
            for (at, len, inserted) in person {
                let at = boundary(&current, at);
                let until = boundary(&current, at + len).max(at);
                let edit = ByteEdit { range: at..until, inserted: inserted.len() };
                replace(&mut current, &edit, &inserted);
                tags.splice(at..until, std::iter::repeat_n(None, inserted.len()));
                edits.push(edit);
            }
            match (rebase(&agent, &edits), untouched_range(&tags, &agent[0].range, base.len())) {
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
