//! Property tests of issue 43's promise: in every dialect (str_replace,
//! replaceRange, batch entries, `apply_patch` hunks, SEARCH/REPLACE blocks), an
//! edit sent with any one slip writes the intended file or is refused; it never
//! writes another file.
//!
//! A generated file of nested blocks (two spaces, four spaces or tabs; some lines
//! holding a string in ASCII quotes; optionally a copy of some of its lines one
//! level deeper, so that blocks repeat at another depth; optionally a block's opening
//! line continued on a line aligned with four spaces, as C in tabs writes it, so
//! that the file writes a depth two ways) is edited in its own indentation: one
//! line of a block rewritten, a line inserted, or one or two lines wrapped in a new
//! block (moved one level deeper by the edit). The edit is then
//! sent clean or with one slip: trailing whitespace on the quote, the quote (or
//! the old lines) shifted by one or two levels, the whole edit shifted, the quote
//! or the whole edit in tabs for spaces (or back), curly quotes in the quote,
//! line-number prefixes, a dropped `@@` anchor, or a one-letter typo. A typo is
//! always refused as not found. A slip that makes the quote occur exactly
//! elsewhere is an exact quote of that place (the protocol writes it as sent), and
//! is checked as such.

use proptest::prelude::*;
use ropey::Rope;

use crate::hunk::{HunkRules, plan_hunks};
use crate::patch::Hunk;
use crate::plan::{Edit, PlanError, ReplaceRange, StrReplace, apply, plan, sort_disjoint};

/// A file as `(level, content)` lines, written with `unit` per level.
#[derive(Debug, Clone)]
struct File {
    lines: Vec<(usize, String)>,
    unit: &'static str,
}

impl File {
    fn render(lines: &[(usize, String)], unit: &str) -> String {
        lines.iter().map(|(level, content)| format!("{}{content}\n", unit.repeat(*level))).collect()
    }

    fn text(&self) -> String {
        Self::render(&self.lines, self.unit)
    }
}

fn file() -> impl Strategy<Value = File> {
    let unit = prop_oneof![Just("  "), Just("    "), Just("\t")];
    (
        unit,
        proptest::collection::vec(0usize..3, 4..12),
        proptest::option::of((0usize..8, 2usize..5)),
        proptest::option::of(0usize..8),
    )
        .prop_map(|(unit, steps, repeat, continued)| {
            let mut levels = vec![0usize];
            for step in steps {
                let last = *levels.last().unwrap_or(&0);
                levels.push(match step {
                    0 => (last + 1).min(3),
                    1 => last,
                    _ => last.saturating_sub(1),
                });
            }
            let mut lines: Vec<(usize, String)> = levels
                .iter()
                .enumerate()
                .map(|(index, level)| {
                    let opens = levels.get(index + 1).is_some_and(|next| next > level);
                    let call = if index % 2 == 0 { format!("tok{index}(\"s\")") } else { format!("tok{index}") };
                    (*level, format!("{call}{}", if opens { " {" } else { ";" }))
                })
                .collect();
            // The same lines again, one level under a wrapper: blocks that repeat at
            // another depth.
            if let Some((from, len)) = repeat {
                let from = from % lines.len();
                let copy: Vec<(usize, String)> = lines[from..(from + len).min(lines.len())].to_vec();
                let lowest = copy.iter().map(|(level, _)| *level).min().unwrap_or(0);
                lines.push((0, "wrap {".into()));
                lines.extend(copy.into_iter().map(|(level, content)| (level - lowest + 1, content)));
                lines.push((0, "}".into()));
            }
            // A block's opening line continued on a line aligned with four spaces after
            // its indentation (C in tabs: `\tif (a &&` then `\t    b) {`), so that a
            // file in tabs writes a depth two ways; and a declaration continued the same
            // way at the margin.
            if let Some(which) = continued {
                let openers: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].1.ends_with(" {")).collect();
                if let Some(&at) = openers.get(which % openers.len().max(1)) {
                    let (level, content) = lines[at].clone();
                    lines[at].1 = format!("{} &&", content.trim_end_matches(" {"));
                    lines.insert(at + 1, (level, format!("    more{at}) {{")));
                }
                lines.insert(0, (0, "decl(a,".into()));
                lines.insert(1, (0, "    b);".into()));
            }
            File { lines, unit }
        })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slip {
    None,
    TrailingWhitespace,
    /// The quote (a hunk's context and removed lines) by so many levels.
    QuoteShifted(isize),
    /// Every line of the edit by so many levels.
    WholeShifted(isize),
    /// The quote (a hunk's context and removed lines) in the other kind of indentation.
    QuoteInOtherKind,
    WholeInOtherKind,
    CurlyQuotes,
    LineNumbers,
    DroppedAnchor,
    Typo,
}

fn slip() -> impl Strategy<Value = Slip> {
    let levels = prop_oneof![Just(-2isize), Just(-1), Just(1), Just(2)];
    prop_oneof![
        Just(Slip::None),
        Just(Slip::TrailingWhitespace),
        levels.clone().prop_map(Slip::QuoteShifted),
        levels.prop_map(Slip::WholeShifted),
        Just(Slip::QuoteInOtherKind),
        Just(Slip::WholeInOtherKind),
        Just(Slip::CurlyQuotes),
        Just(Slip::LineNumbers),
        Just(Slip::DroppedAnchor),
        Just(Slip::Typo),
    ]
}

/// One line of the edit: its level in the file, its content, and whether the
/// change made it (otherwise it is the file's line, kept).
type EditLine = (usize, String, bool);

/// How lines of the edit are written when sent.
#[derive(Debug, Clone, Copy)]
struct Writing<'a> {
    unit: &'a str,
    shift: isize,
}

impl Writing<'_> {
    fn line(&self, level: usize, content: &str) -> Option<String> {
        let level = usize::try_from(level as isize + self.shift).ok()?;
        Some(format!("{}{content}", self.unit.repeat(level)))
    }
}

/// The edit as sent: the quote's lines (old) and the new lines, with the hunk's
/// context pairs (lines kept by the change).
struct Sent {
    old: Vec<String>,
    new: Vec<String>,
    context: Vec<(usize, usize)>,
}

fn other_kind(unit: &str) -> &'static str {
    if unit == "\t" { "    " } else { "\t" }
}

/// The edit's lines as sent with `slip`; `written_once`: context lines are sent
/// once for old and new (a hunk of `apply_patch`), so they carry the quote's writing.
fn send(file: &File, block: &[(usize, String)], after: &[EditLine], slip: Slip, written_once: bool) -> Option<Sent> {
    let right = Writing { unit: file.unit, shift: 0 };
    let (quote_writing, new_writing) = match slip {
        Slip::QuoteShifted(levels) => (Writing { shift: levels, ..right }, right),
        Slip::WholeShifted(levels) => (Writing { shift: levels, ..right }, Writing { shift: levels, ..right }),
        Slip::QuoteInOtherKind => (Writing { unit: other_kind(file.unit), ..right }, right),
        Slip::WholeInOtherKind => {
            let other = Writing { unit: other_kind(file.unit), ..right };
            (other, other)
        }
        _ => (right, right),
    };
    let mut old: Vec<String> =
        block.iter().map(|(level, content)| quote_writing.line(*level, content)).collect::<Option<_>>()?;
    let mut context = Vec::new();
    let mut new = Vec::new();
    // Kept lines come in the block's order (a block may hold a line twice).
    let mut next = 0;
    for (j, (level, content, changed)) in after.iter().enumerate() {
        // A line the change moved (wrapped) is still the block's line: later kept
        // lines come after it.
        let found = (next..block.len()).find(|&i| block[i].1 == *content);
        if let Some(i) = found {
            next = i + 1;
        }
        let kept_at = if *changed { None } else { found };
        match kept_at {
            Some(i) if written_once => {
                context.push((i, j));
                new.push(old[i].clone());
            }
            _ => new.push(new_writing.line(*level, content)?),
        }
    }
    match slip {
        Slip::TrailingWhitespace => old.iter_mut().for_each(|line| line.push_str("  ")),
        Slip::CurlyQuotes => {
            old.iter_mut().for_each(|line| *line = line.replacen('"', "\u{201C}", 1).replacen('"', "\u{201D}", 1))
        }
        Slip::Typo => {
            let line = old.iter_mut().find(|line| line.contains("tok"))?;
            *line = line.replacen("tok", "tak", 1);
        }
        _ => {}
    }
    if written_once {
        // A context line is one line of the patch: whatever slipped in it slipped in both.
        for &(i, j) in &context {
            new[j] = old[i].clone();
        }
    }
    Some(Sent { old, new, context })
}

/// What the edit does to the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// One line rewritten.
    Rewrite,
    /// A line inserted.
    Insert,
    /// One or two lines wrapped in a new block, so one level deeper: lines the edit
    /// moves, which say nothing of the reading.
    Wrap,
    /// One line rewritten (most of it kept), and a line added after it when `added`,
    /// the rewritten line moved by `moved` levels: deeper only into the block that the
    /// line before it ends, shallower only out of the block it ends (the shape of issue
    /// 43's replay where a line rewritten among added ones, a stretch of another length,
    /// weighs as a pair, and of a commit that takes a branch's last statement out of it).
    Expand { moved: isize, added: bool },
}

impl Change {
    fn rewrite_or_insert(insert: bool) -> Self {
        if insert { Self::Insert } else { Self::Rewrite }
    }
}

/// The block after the change, in the file's levels (`previous`: the file's lines
/// before the block; `next`: its line after the block).
fn changed(
    previous: &[(usize, String)],
    block: &[(usize, String)],
    change: Change,
    at: usize,
    next: Option<&(usize, String)>,
) -> Vec<EditLine> {
    let mut out: Vec<EditLine> = block.iter().map(|(level, content)| (*level, content.clone(), false)).collect();
    let at = at % out.len();
    match change {
        Change::Insert => {
            let level = out.get(at + 1).filter(|_| out[at].1.ends_with('{')).map_or(out[at].0, |next| next.0);
            out.insert(at + 1, (level, "inserted();".into(), true));
        }
        Change::Rewrite => {
            out[at].1 = format!("{} // changed", out[at].1);
            out[at].2 = true;
        }
        Change::Wrap => {
            let level = out[at].0;
            let end = if out.get(at + 1).is_some_and(|next| next.0 == level) { at + 2 } else { at + 1 };
            for line in &mut out[at..end] {
                line.0 += 1;
                line.2 = true;
            }
            out.insert(end, (level, "} // wrapped".into(), true));
            out.insert(at, (level, "if wrapped {".into(), true));
        }
        Change::Expand { moved, added } => {
            // Deeper only into the block the line before it ends, one level under the
            // line that opened that block, at the moved line's own depth; shallower only
            // out of the block it ends, to the depth of the line that opened it, and never
            // its only line (a line moved otherwise leaves the lines around it at depths
            // no one writes, an opener with no body, or a line before the block's closing
            // `}`); a closing `}` stays where it is.
            let level = out[at].0;
            let lines_before: Vec<(usize, &str)> = previous
                .iter()
                .map(|(level, content)| (*level, content.as_str()))
                .chain(out[..at].iter().map(|(level, content, _)| (*level, content.as_str())))
                .collect();
            // The line that opens the block of a line at `depth` before line `before`.
            let opener = |before: usize, depth: usize| lines_before[..before].iter().rposition(|line| line.0 < depth);
            let opens = |k: usize, depth: usize| lines_before[k].0 == depth && lines_before[k].1.ends_with('{');
            let closes = out[at].1.starts_with('}');
            let following = out.get(at + 1).map(|(level, content, _)| (*level, content.as_str()));
            let ends_block = following
                .or(next.map(|(level, content)| (*level, content.as_str())))
                .is_none_or(|(next, content)| next < level && !content.starts_with('}'));
            let last = lines_before.len().checked_sub(1).filter(|_| !closes);
            let joins = last.is_some_and(|last| {
                lines_before[last].0 == level + 1
                    && !lines_before[last].1.ends_with('{')
                    && opener(last, level + 1).is_some_and(|k| opens(k, level))
            });
            let leaves = ends_block
                && level > 0
                && last.is_some_and(|last| {
                    lines_before[last].0 >= level
                        && opener(last + 1, level).is_some_and(|k| k < last && opens(k, level - 1))
                });
            let moved = match moved {
                1 if joins => 1,
                -1 if leaves => -1,
                _ => 0,
            };
            let level = level.saturating_add_signed(moved);
            out[at] = (level, format!("{} // 2", out[at].1), true);
            if added {
                out.insert(at + 1, (level, "added();".into(), true));
            }
        }
    }
    out
}

fn numbered(lines: &[String], first: usize) -> Vec<String> {
    lines.iter().enumerate().map(|(index, line)| format!("{:>6}\u{2192}{line}", first + index)).collect()
}

fn joined(lines: &[String]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// Checks one dialect's outcome: the intended file, an exact quote's literal
/// result, or a refusal (a typo: always `notFound`).
fn outcome(
    dialect: &str,
    result: Result<String, PlanError>,
    intended: &str,
    literal: Option<&str>,
    slip: Slip,
) -> Result<(), TestCaseError> {
    match result {
        Ok(text) if slip == Slip::Typo => {
            prop_assert!(false, "{dialect}: a typo was applied: {text:?}");
        }
        Ok(text) => prop_assert!(
            text == intended || literal == Some(text.as_str()),
            "{dialect} with {slip:?}: wrote {text:?}, intended {intended:?}"
        ),
        Err(error) if slip == Slip::Typo => {
            prop_assert!(matches!(error, PlanError::NotFound { .. }), "{dialect}: a typo gave {error:?}")
        }
        Err(_) => {}
    }
    Ok(())
}

fn applied(rope: &Rope, results: Vec<Result<crate::plan::Planned, PlanError>>) -> Result<String, PlanError> {
    let mut items = Vec::new();
    for (index, result) in results.into_iter().enumerate() {
        items.extend(result?.replacements.into_iter().map(|replacement| (index, replacement)));
    }
    sort_disjoint(items).map(|replacements| apply(rope, &replacements).to_string())
}

/// One dialect's result for one slipped edit, with what it may write.
struct Tried {
    dialect: &'static str,
    result: Result<String, PlanError>,
    intended: String,
    /// What an exact quote of another place writes, when the slip made one.
    literal: Option<String>,
}

/// An edit of `file` (a line of `len` lines from `from` rewritten or one inserted)
/// sent with `slip` in every dialect.
fn try_every_dialect(file: &File, from: usize, len: usize, change: Change, at: usize, slip: Slip) -> Vec<Tried> {
    let from = from % file.lines.len();
    let len = len.min(file.lines.len() - from);
    let block = &file.lines[from..from + len];
    let after = changed(&file.lines[..from], block, change, at, file.lines.get(from + len));
    let text = file.text();
    let rope = Rope::from_str(&text);
    let mut intended_lines = file.lines.clone();
    intended_lines.splice(from..from + len, after.iter().map(|(level, content, _)| (*level, content.clone())));
    let intended = File::render(&intended_lines, file.unit);
    let mut tried = Vec::new();
    let mut push = |dialect, result, intended: &str, literal: Option<String>| {
        tried.push(Tried { dialect, result, intended: intended.to_owned(), literal });
    };

    // Quotes as a str_replace, a replaceRange or a SEARCH/REPLACE block send them.
    if let Some(Sent { old, new, .. }) = send(file, block, &after, slip, false) {
        let (quote, new_text) = if slip == Slip::LineNumbers {
            (joined(&numbered(&old, from + 1)), joined(&numbered(&new, from + 1)))
        } else {
            (joined(&old), joined(&new))
        };
        let literal = text.contains(&quote).then(|| text.replacen(&quote, &new_text, 1));
        let str_replace =
            Edit::StrReplace(StrReplace { old_str: quote.clone(), new_str: new_text.clone(), ..StrReplace::default() });
        let result = plan(&rope, &str_replace).map(|planned| apply(&rope, &planned.replacements).to_string());
        push("str_replace", result, &intended, literal.clone());

        // A batch: the same entry beside an exact one on the first line (when the
        // block does not hold it).
        if from > 0 {
            let first = &file.lines[0].1;
            let too = format!("{first} // too");
            let other =
                Edit::StrReplace(StrReplace { old_str: first.clone(), new_str: too.clone(), ..StrReplace::default() });
            let result = applied(&rope, vec![plan(&rope, &str_replace), plan(&rope, &other)]);
            let twice = |text: &str| text.replacen(first.as_str(), &too, 1);
            push("batch", result, &twice(&intended), literal.as_deref().map(twice));
        }

        // replaceRange: the first and last quoted lines bound the block. A quote found
        // exactly may also bound another stretch: only normalized quotes are tried.
        let lines: Vec<&str> = quote.lines().collect();
        let exact_bound = |bound: &str| text.contains(bound);
        if lines.len() >= 2
            && slip != Slip::LineNumbers
            && literal.is_none()
            && !exact_bound(&format!("{}\n", lines[0]))
            && !exact_bound(&format!("{}\n", lines[lines.len() - 1]))
        {
            let range = Edit::ReplaceRange(ReplaceRange {
                from_str: format!("{}\n", lines[0]),
                to_str: format!("{}\n", lines[lines.len() - 1]),
                new_str: new_text.clone(),
                ..ReplaceRange::default()
            });
            let result = plan(&rope, &range).map(|planned| apply(&rope, &planned.replacements).to_string());
            push("replaceRange", result, &intended, None);
        }

        if slip != Slip::LineNumbers {
            let block_hunk = Hunk { line: 1, old_lines: old, new_lines: new, ..Hunk::default() };
            let result = applied(&rope, plan_hunks(&rope, &[block_hunk], HunkRules { in_order: false, exact: false }));
            push("SEARCH/REPLACE", result, &intended, literal);
        }
    }

    // An apply_patch hunk: context lines written once, an `@@` anchor on the line
    // before the block (dropped by the slip).
    if slip != Slip::LineNumbers
        && let Some(Sent { old, new, context }) = send(file, block, &after, slip, true)
    {
        let contexts =
            if from > 0 && slip != Slip::DroppedAnchor { vec![file.lines[from - 1].1.clone()] } else { Vec::new() };
        let (quote, new_text) = (joined(&old), joined(&new));
        let literal = text.contains(&quote).then(|| text.replacen(&quote, &new_text, 1));
        let hunk = Hunk { line: 1, contexts, old_lines: old, new_lines: new, end_of_file: false, context };
        let result = applied(&rope, plan_hunks(&rope, &[hunk], HunkRules { in_order: true, exact: false }));
        push("apply_patch", result, &intended, literal);
    }
    tried
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn a_slipped_edit_writes_the_intended_file_or_nothing_in_every_dialect(
        file in file(),
        from in 0usize..12,
        len in 2usize..5,
        insert in proptest::bool::ANY,
        at in 0usize..4,
        slip in slip(),
    ) {
        for tried in try_every_dialect(&file, from, len, Change::rewrite_or_insert(insert), at, slip) {
            outcome(tried.dialect, tried.result, &tried.intended, tried.literal.as_deref(), slip)?;
        }
    }

    /// The same with lines the edit itself moves one level deeper (a new block around
    /// them), the shape of issue 43's replay where a moved line was read as evidence.
    #[test]
    fn a_slipped_edit_that_wraps_lines_in_a_block_writes_the_intended_file_or_nothing(
        file in file(),
        from in 0usize..12,
        len in 2usize..5,
        at in 0usize..4,
        slip in slip(),
    ) {
        for tried in try_every_dialect(&file, from, len, Change::Wrap, at, slip) {
            outcome(tried.dialect, tried.result, &tried.intended, tried.literal.as_deref(), slip)?;
        }
    }

    /// The same with one line rewritten, and another added after it or not: a line
    /// rewritten among added ones (a stretch of another length) weighs as a pair.
    #[test]
    fn a_slipped_edit_that_rewrites_a_line_writes_the_intended_file_or_nothing(
        file in file(),
        from in 0usize..12,
        len in 2usize..5,
        at in 0usize..4,
        added in proptest::bool::ANY,
        slip in slip(),
    ) {
        for tried in try_every_dialect(&file, from, len, Change::Expand { moved: 0, added }, at, slip) {
            outcome(tried.dialect, tried.result, &tried.intended, tried.literal.as_deref(), slip)?;
        }
    }
}

proptest! {
    // Enough cases to meet the hazard (a few hundred do not); 400,000 by hand.
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// A line the edit rewrites and moves by a level across the edge of a block (a
    /// branch's last statement taken out of it, a statement taken into the branch
    /// before it), in a quote shifted by as much the other way: its pair lands on its
    /// old line under the other reading, so the edit reads the same as a rewrite in
    /// place shifted as a whole. Where both are well formed and such lines are all the
    /// evidence, it is refused (found in the fourth session, closed in the fifth).
    #[test]
    fn a_slipped_edit_that_moves_a_line_across_a_block_edge_writes_the_intended_file_or_nothing(
        file in file(),
        from in 0usize..12,
        len in 2usize..5,
        at in 0usize..4,
        moved in prop_oneof![Just(-1isize), Just(1isize)],
        added in proptest::bool::ANY,
        slip in slip(),
    ) {
        for tried in try_every_dialect(&file, from, len, Change::Expand { moved, added }, at, slip) {
            outcome(tried.dialect, tried.result, &tried.intended, tried.literal.as_deref(), slip)?;
        }
    }
}

/// The same edits, each sent with every slip, counted per dialect and slip: no
/// wrong file anywhere, every typo refused as not found, and the share recovered
/// (printed with `--nocapture`; the figures of BENCHMARKS.md).
#[test]
#[allow(clippy::print_stdout)]
fn every_slip_is_counted_in_every_dialect() {
    use std::collections::BTreeMap;

    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    let slips = [
        Slip::None,
        Slip::TrailingWhitespace,
        Slip::QuoteShifted(1),
        Slip::QuoteShifted(-1),
        Slip::WholeShifted(1),
        Slip::WholeShifted(-1),
        Slip::QuoteInOtherKind,
        Slip::WholeInOtherKind,
        Slip::CurlyQuotes,
        Slip::LineNumbers,
        Slip::DroppedAnchor,
        Slip::Typo,
    ];
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[43; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let edits = (file(), 0usize..12, 2usize..5, proptest::bool::ANY, 0usize..4);
    // (recovered, refused, exact elsewhere, wrong) per (dialect, slip).
    let mut counts: BTreeMap<(&str, String), [usize; 4]> = BTreeMap::new();
    let mut wrong = Vec::new();
    for _ in 0..400 {
        let Ok(tree) = edits.new_tree(&mut runner) else { continue };
        let (file, from, len, insert, at) = tree.current();
        for slip in slips {
            for tried in try_every_dialect(&file, from, len, Change::rewrite_or_insert(insert), at, slip) {
                let count = counts.entry((tried.dialect, format!("{slip:?}"))).or_default();
                match &tried.result {
                    Ok(text) if slip != Slip::Typo && *text == tried.intended => count[0] += 1,
                    Ok(text) if slip != Slip::Typo && tried.literal.as_deref() == Some(text.as_str()) => count[2] += 1,
                    Err(_) if slip != Slip::Typo => count[1] += 1,
                    Err(PlanError::NotFound { .. }) => count[1] += 1,
                    other => {
                        count[3] += 1;
                        wrong
                            .push(format!("{} with {slip:?}: {other:?}, intended {:?}", tried.dialect, tried.intended));
                    }
                }
            }
        }
    }
    for ((dialect, slip), [recovered, refused, elsewhere, wrong]) in &counts {
        let total = recovered + refused + elsewhere + wrong;
        println!(
            "slips {dialect} {slip}: {recovered} recovered, {refused} refused, {elsewhere} exact elsewhere, {wrong} wrong, of {total} ({:.1}%)",
            100.0 * *recovered as f64 / total.max(1) as f64
        );
    }
    assert!(wrong.is_empty(), "{} wrong:\n{}", wrong.len(), wrong.join("\n"));
}
