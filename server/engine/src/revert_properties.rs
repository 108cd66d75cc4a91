//! Property tests of issue 33's promise: for any interleaving of edits by several agents
//! and the person's typing, reverting an edit leaves the document equal to applying every
//! other change wherever they do not overlap it; where they overlap, the revert reports a
//! conflict and changes nothing there; a revert of a revert gives back the text before it.
//!
//! The model is a document of line identities, each rendered as a text of its own (so a
//! line diff of two documents is exactly what identities say), with line endings mixed
//! (every third line CRLF) so that they are checked byte for byte. An edit replaces a run
//! of lines with fresh ones, and is also kept by identity (the line before it, the lines
//! it deleted) so that the history can be replayed without some of its edits.
//!
//! Overlap, as diff3 defines it and as the model computes it from identities: the lines
//! edit `k` wrote are a range of the document after it (empty where it only deleted); the
//! later edits, taken together, are the hunks of the document after `k` against the
//! current one (a hunk: the lines deleted and inserted between two lines both keep). They
//! overlap when a hunk lies inside that range or touches it (`start <= range.end` and
//! `range.start <= end`): an insertion right before or after it, a deletion of the line
//! just before or after it.

use std::collections::HashSet;
use std::ops::Range;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use similar::{MergeResolution, TextMerge};

use crate::revert::{Recorded, RevertPlan, apply, plan_revert};

/// A line's identity.
type Line = u32;

/// Who edits: three agents and the person (the last one).
const ACTORS: usize = 4;

/// How a document of identities is written out.
#[derive(Debug, Clone, Copy)]
struct Style {
    /// Lines are `line <id % n>`: the same text on several lines, which the model cannot
    /// follow (only the reference can).
    alphabet: Option<u32>,
    final_newline: bool,
}

/// Every line its own text, every third one CRLF, a final line ending: what the model follows.
const EXACT: Style = Style { alphabet: None, final_newline: true };

fn render(lines: &[Line], style: Style) -> String {
    let mut text = String::new();
    for (index, &id) in lines.iter().enumerate() {
        text.push_str(&format!("line {}", style.alphabet.map_or(id, |n| id % n)));
        if index + 1 < lines.len() || style.final_newline {
            text.push_str(if id % 3 == 0 { "\r\n" } else { "\n" });
        }
    }
    text
}

/// One edit: the lines `deleted` at `at` (after the line `anchor`) replaced by `inserted`.
#[derive(Debug, Clone)]
struct Edit {
    actor: usize,
    at: usize,
    anchor: Option<Line>,
    deleted: Vec<Line>,
    inserted: Vec<Line>,
}

#[derive(Debug, Clone)]
struct History {
    /// `docs[i]` is the document before edit `i`; the last one is the current document.
    docs: Vec<Vec<Line>>,
    edits: Vec<Edit>,
}

impl History {
    fn current(&self) -> &[Line] {
        self.docs.last().map_or(&[], Vec::as_slice)
    }

    /// Edit `index` as the journal records it.
    fn recorded(&self, index: usize, style: Style) -> (String, String) {
        (render(&self.docs[index], style), render(&self.docs[index + 1], style))
    }
}

/// `zoned`: each actor edits only its own zone of the document, and zones are kept apart
/// by separator lines nobody edits, so no actor's edits overlap another's.
fn build(lines: usize, ops: Vec<(usize, u16, usize, usize)>, zoned: bool) -> History {
    let mut next: Line = 0;
    let mut fresh = move || {
        next += 1;
        next - 1
    };
    let mut doc = Vec::new();
    let mut separators = Vec::new();
    for _ in 0..if zoned { ACTORS } else { 1 } {
        if zoned {
            separators.push(fresh());
            doc.push(*separators.last().unwrap_or(&0));
        }
        doc.extend((0..lines).map(|_| fresh()));
    }
    let mut history = History { docs: Vec::new(), edits: Vec::new() };
    for (actor, seed, delete, insert) in ops {
        let position = |id: Line, doc: &[Line]| doc.iter().position(|&line| line == id).unwrap_or(0);
        let (low, high) = if zoned {
            let start = position(separators[actor], &doc) + 1;
            (start, separators.get(actor + 1).map_or(doc.len(), |&id| position(id, &doc)))
        } else {
            (0, doc.len())
        };
        let at = low + usize::from(seed) % (high - low + 1);
        let delete = delete.min(high - at);
        let insert = if delete == 0 { insert.max(1) } else { insert };
        let edit = Edit {
            actor,
            at,
            anchor: at.checked_sub(1).map(|index| doc[index]),
            deleted: doc[at..at + delete].to_vec(),
            inserted: (0..insert).map(|_| fresh()).collect(),
        };
        history.docs.push(doc.clone());
        doc.splice(at..at + delete, edit.inserted.iter().copied());
        history.edits.push(edit);
    }
    history.docs.push(doc);
    history
}

fn history(zoned: bool) -> impl Strategy<Value = History> {
    let op = (0..ACTORS, any::<u16>(), 0usize..4, 0usize..4);
    (2usize..12, proptest::collection::vec(op, 1..16)).prop_map(move |(lines, ops)| build(lines, ops, zoned))
}

/// The first document with `edits` replayed by identity; `None` where one of them no
/// longer finds its place (its line before it or the lines it deleted are gone).
fn replay(first: &[Line], edits: &[&Edit]) -> Option<Vec<Line>> {
    let mut doc = first.to_vec();
    for edit in edits {
        let at = match edit.anchor {
            None => 0,
            Some(id) => doc.iter().position(|&line| line == id)? + 1,
        };
        if doc.get(at..at + edit.deleted.len())? != edit.deleted.as_slice() {
            return None;
        }
        doc.splice(at..at + edit.deleted.len(), edit.inserted.iter().copied());
    }
    Some(doc)
}

/// The hunks from `base` to `current` by identity, as ranges of `base`.
fn hunks(base: &[Line], current: &[Line]) -> Vec<Range<usize>> {
    let in_current: HashSet<Line> = current.iter().copied().collect();
    let in_base: HashSet<Line> = base.iter().copied().collect();
    let (mut i, mut j) = (0, 0);
    let mut hunks = Vec::new();
    loop {
        let (base_start, current_start) = (i, j);
        while i < base.len() && !in_current.contains(&base[i]) {
            i += 1;
        }
        while j < current.len() && !in_base.contains(&current[j]) {
            j += 1;
        }
        if i > base_start || j > current_start {
            hunks.push(base_start..i);
        }
        if i == base.len() || j == current.len() {
            return hunks;
        }
        // Kept lines come in the same order on both sides.
        i += 1;
        j += 1;
    }
}

fn position(lines: &[Line], id: Line) -> usize {
    lines.iter().position(|&line| line == id).unwrap_or(usize::MAX)
}

/// `git revert` of each change, newest first (consecutive ones joined), with
/// similar's `TextMerge` directly; conflicts take the reverted side or the current one.
fn git_reverts(changes: &[(String, String)], current: &str, take_reverted: bool) -> String {
    let mut runs: Vec<(&str, &str)> = Vec::new();
    for (before, after) in changes {
        match runs.last_mut() {
            Some(run) if run.1 == before => run.1 = after,
            _ => runs.push((before, after)),
        }
    }
    let mut text = current.to_owned();
    for (before, after) in runs.into_iter().rev() {
        let merge = TextMerge::from_lines(after, text.as_str(), before);
        let mut merged = String::new();
        for region in merge.regions() {
            let theirs = match region.resolution() {
                MergeResolution::Theirs => true,
                MergeResolution::Conflict => take_reverted,
                _ => false,
            };
            if theirs {
                merged.extend(region.theirs_range().filter_map(|index| merge.theirs_line(index)));
            } else {
                merged.extend(region.ours_range().filter_map(|index| merge.ours_line(index)));
            }
        }
        text = merged;
    }
    text
}

fn plan_of(changes: &[(String, String)], current: &str) -> RevertPlan {
    let recorded: Vec<Recorded<'_>> = changes.iter().map(|(before, after)| Recorded { before, after }).collect();
    plan_revert(&recorded, current)
}

/// Whether taking every conflict's `reverted` but some (left as they are) gives `target`.
fn some_conflicts_left_give(plan: &RevertPlan, current: &str, target: &str) -> bool {
    let count = plan.conflicts.len().min(8);
    (0..1u32 << count).any(|left| {
        let mut chosen = plan.clone();
        for (index, conflict) in chosen.conflicts.iter_mut().enumerate().take(count) {
            if left & (1 << index) != 0 {
                conflict.reverted = conflict.current.clone();
            }
        }
        apply(current, &chosen, true).as_deref() == Some(target)
    })
}

/// What every plan promises, whatever it reverts.
fn check_shape(plan: &RevertPlan, current: &str) -> Result<(), TestCaseError> {
    let at_line_start =
        |offset: usize| offset == 0 || offset == current.len() || current.as_bytes()[offset - 1] == b'\n';
    let mut regions: Vec<(Range<usize>, bool)> =
        plan.replacements.iter().map(|replacement| (replacement.range.clone(), false)).collect();
    regions.extend(plan.conflicts.iter().map(|conflict| (conflict.range.clone(), true)));
    regions.sort_by_key(|(range, _)| (range.start, range.end));
    for pair in regions.windows(2) {
        let (first, second) = (&pair[0].0, &pair[1].0);
        prop_assert!(first.end <= second.start, "overlap: {plan:?}");
        prop_assert!(!(first.is_empty() && second.is_empty() && first.start == second.start), "same place: {plan:?}");
    }
    for (range, _) in &regions {
        prop_assert!(at_line_start(range.start) && at_line_start(range.end), "not whole lines: {plan:?}");
    }
    for replacement in &plan.replacements {
        prop_assert_ne!(&current[replacement.range.clone()], replacement.new_text.as_str());
    }
    for conflict in &plan.conflicts {
        prop_assert_eq!(&current[conflict.range.clone()], conflict.current.as_str());
        prop_assert_ne!(&conflict.current, &conflict.reverted);
        // A last line without a line ending ends at the end of the text.
        let lines_before = |offset: usize| {
            current[..offset].matches('\n').count()
                + usize::from(offset == current.len() && !current.is_empty() && !current.ends_with('\n'))
        };
        prop_assert_eq!(conflict.lines.clone(), lines_before(conflict.range.start)..lines_before(conflict.range.end));
    }
    Ok(())
}

/// What the model expects of reverting edit `k` alone.
enum Expected {
    /// No later change overlaps it: this document, and (when every other edit can be
    /// replayed) the replay agrees.
    Reverted(Vec<Line>),
    /// A later change overlaps it: one conflict over these lines of the current document,
    /// holding what reverting puts there, or nothing when the later changes already undid
    /// it there (diff3: both sides made the same change).
    Conflict {
        current: Range<usize>,
        reverted: Vec<Line>,
    },
    AlreadyUndone,
}

fn expected(history: &History, k: usize) -> Expected {
    let (after, current) = (&history.docs[k + 1], history.current());
    let edit = &history.edits[k];
    let written = edit.at..edit.at + edit.inserted.len();
    let touching: Vec<Range<usize>> = hunks(after, current)
        .into_iter()
        .filter(|hunk| hunk.start <= written.end && written.start <= hunk.end)
        .collect();
    // The lines just before and after the region are kept (a hunk that deleted them would
    // touch it), so they place it in the current document.
    let place = |start: usize, end: usize| {
        let from = if start == 0 { 0 } else { position(current, after[start - 1]) + 1 };
        let to = if end == after.len() { current.len() } else { position(current, after[end]) };
        from..to
    };
    if touching.is_empty() {
        let mut doc = current.to_vec();
        let region = place(written.start, written.end);
        doc.splice(region, edit.deleted.iter().copied());
        return Expected::Reverted(doc);
    }
    let start = touching.iter().map(|hunk| hunk.start).chain([written.start]).min().unwrap_or(0);
    let end = touching.iter().map(|hunk| hunk.end).chain([written.end]).max().unwrap_or(0);
    let mut reverted = after[start..written.start].to_vec();
    reverted.extend(&edit.deleted);
    reverted.extend(&after[written.end..end]);
    let region = place(start, end);
    if current[region.clone()] == reverted[..] {
        return Expected::AlreadyUndone;
    }
    Expected::Conflict { current: region, reverted }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn reverting_one_edit_keeps_every_other_change(history in history(false), k in any::<usize>()) {
        let k = k % history.edits.len();
        let current = render(history.current(), EXACT);
        let changes = [history.recorded(k, EXACT)];
        let plan = plan_of(&changes, &current);
        check_shape(&plan, &current)?;
        let kept = apply(&current, &plan, false).unwrap_or_default();
        let taken = apply(&current, &plan, true).unwrap_or_default();
        match expected(&history, k) {
            Expected::Reverted(doc) => {
                prop_assert!(plan.conflicts.is_empty(), "{plan:?}");
                prop_assert_eq!(&kept, &render(&doc, EXACT));
                let others: Vec<&Edit> =
                    history.edits.iter().enumerate().filter(|&(i, _)| i != k).map(|(_, edit)| edit).collect();
                if let Some(replayed) = replay(&history.docs[0], &others) {
                    prop_assert_eq!(replayed, doc);
                }
                // A revert of the revert gives back the text before it.
                let again = plan_of(&[(current.clone(), kept.clone())], &kept);
                prop_assert!(again.conflicts.is_empty());
                prop_assert_eq!(apply(&kept, &again, false).unwrap_or_default(), current);
            }
            Expected::Conflict { current: lines, reverted } => {
                prop_assert!(plan.replacements.is_empty(), "{plan:?}");
                prop_assert_eq!(plan.conflicts.len(), 1, "{:?}", plan);
                let conflict = &plan.conflicts[0];
                prop_assert_eq!(&conflict.lines, &lines);
                prop_assert_eq!(&conflict.reverted, &render(&reverted, EXACT));
                // Nothing changes there, or anywhere.
                prop_assert_eq!(&kept, &current);
                let mut doc = history.current().to_vec();
                doc.splice(lines, reverted);
                prop_assert_eq!(taken, render(&doc, EXACT));
            }
            Expected::AlreadyUndone => {
                prop_assert_eq!(&plan, &RevertPlan { planned_len: current.len(), ..RevertPlan::default() });
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn reverting_every_edit_of_one_agent_keeps_the_others(history in history(true), actor in 0..ACTORS - 1) {
        let current = render(history.current(), EXACT);
        let mine: Vec<usize> = (0..history.edits.len()).filter(|&i| history.edits[i].actor == actor).collect();
        let changes: Vec<(String, String)> = mine.iter().map(|&i| history.recorded(i, EXACT)).collect();
        let plan = plan_of(&changes, &current);
        check_shape(&plan, &current)?;
        prop_assert!(plan.conflicts.is_empty(), "{plan:?}");
        let others: Vec<&Edit> = history.edits.iter().filter(|edit| edit.actor != actor).collect();
        let replayed = replay(&history.docs[0], &others);
        prop_assert!(replayed.is_some());
        let replayed = replayed.unwrap_or_default();
        let reverted = apply(&current, &plan, false).unwrap_or_default();
        prop_assert_eq!(&reverted, &render(&replayed, EXACT));

        // The person types at the top of their zone; reverting the revert then gives the
        // agent's edits back, and keeps the typing.
        let person_separator = history.docs[0][history.docs[0].len() / ACTORS * (ACTORS - 1)];
        let typed_in = |doc: &[Line]| {
            let mut doc = doc.to_vec();
            doc.insert(position(&doc, person_separator) + 1, Line::MAX);
            render(&doc, EXACT)
        };
        let typed = typed_in(&replayed);
        let again = plan_of(&[(current, reverted)], &typed);
        prop_assert!(again.conflicts.is_empty(), "{again:?}");
        prop_assert_eq!(apply(&typed, &again, false).unwrap_or_default(), typed_in(history.current()));
    }

    #[test]
    fn reverting_everything_since_a_point_gives_the_text_then(history in history(false), since in any::<usize>()) {
        let since = since % history.edits.len();
        let current = render(history.current(), EXACT);
        let changes: Vec<(String, String)> = (since..history.edits.len()).map(|i| history.recorded(i, EXACT)).collect();
        let plan = plan_of(&changes, &current);
        prop_assert!(plan.conflicts.is_empty());
        prop_assert_eq!(apply(&current, &plan, false).unwrap_or_default(), render(&history.docs[since], EXACT));
    }

    /// Any agent's edits, among any others, in texts the model cannot follow (lines that
    /// repeat, no final line ending): the plan is the sequence of `git revert`s, exactly.
    #[test]
    fn a_plan_is_the_sequence_of_git_reverts(
        history in history(false),
        actor in 0..ACTORS,
        style in prop_oneof![
            Just(EXACT),
            Just(Style { alphabet: None, final_newline: false }),
            Just(Style { alphabet: Some(3), final_newline: true }),
            Just(Style { alphabet: Some(3), final_newline: false }),
        ],
    ) {
        let current = render(history.current(), style);
        let changes: Vec<(String, String)> = (0..history.edits.len())
            .filter(|&i| history.edits[i].actor == actor)
            .map(|i| history.recorded(i, style))
            .collect();
        let plan = plan_of(&changes, &current);
        check_shape(&plan, &current)?;
        let (kept, forced) = (git_reverts(&changes, &current, false), git_reverts(&changes, &current, true));
        if plan.conflicts.is_empty() {
            prop_assert_eq!(&kept, &forced);
            prop_assert_eq!(apply(&current, &plan, false).unwrap_or_default(), kept);
        } else {
            // Every conflict taken gives the reverts that always take the reverted side,
            // except where those give what the file holds: such a conflict offers the
            // clean reverts instead, so leaving it gives them.
            prop_assert!(some_conflicts_left_give(&plan, &current, &forced), "{plan:?}\nforced {forced:?}");
        }
    }
}

/// The model is not vacuous: edits reverted alone are often kept apart from later
/// changes, and often overlapped by them.
#[test]
fn the_model_reaches_every_outcome() {
    let mut runner = TestRunner::deterministic();
    let strategy = (history(false), any::<usize>());
    let (mut reverted, mut conflicts, mut undone) = (0, 0, 0);
    for _ in 0..1000 {
        let Ok(tree) = strategy.new_tree(&mut runner) else { continue };
        let (history, k) = tree.current();
        match expected(&history, k % history.edits.len()) {
            Expected::Reverted(_) => reverted += 1,
            Expected::Conflict { .. } => conflicts += 1,
            Expected::AlreadyUndone => undone += 1,
        }
    }
    assert!(
        reverted > 300 && conflicts > 100 && undone > 0,
        "{reverted} reverted, {conflicts} conflicts, {undone} undone"
    );
}
