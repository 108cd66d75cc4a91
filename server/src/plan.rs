//! Edit plans: from a quote-addressed request to a sorted list of disjoint
//! replacements in one snapshot of a document.
//!
//! This is the heart of the protocol's semantics: quotes must be non-empty and
//! unique in their window, `after`/`before` narrow the window, `occurrence` picks one
//! of several matches, `replaceAll` takes every non-overlapping match, and a change
//! that changes nothing is refused. Nothing here knows about LSP or JSON: offsets are
//! bytes into the snapshot's text.

use std::fmt;
use std::ops::Range;

use ropey::Rope;

use crate::quote::{count_up_to, find_all, non_overlapping};

/// Which field of a request a quote came from; errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuoteField {
    OldStr,
    FromStr,
    ToStr,
    After,
    Before,
}

impl QuoteField {
    /// The wire name of the field.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OldStr => "oldStr",
            Self::FromStr => "fromStr",
            Self::ToStr => "toStr",
            Self::After => "after",
            Self::Before => "before",
        }
    }
}

impl fmt::Display for QuoteField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Replace one quote (or several, with `occurrence`/`replace_all`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StrReplace {
    pub old_str: String,
    pub new_str: String,
    pub after: Option<String>,
    pub before: Option<String>,
    /// 1-based index of the match to take, within the window.
    pub occurrence: Option<u64>,
    pub replace_all: bool,
}

/// Replace a block from the start of one quote through the end of another.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplaceRange {
    pub from_str: String,
    pub to_str: String,
    pub new_str: String,
    pub after: Option<String>,
    pub before: Option<String>,
}

/// One requested change to one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    StrReplace(StrReplace),
    ReplaceRange(ReplaceRange),
    /// Replace the whole text.
    WriteAll { text: String },
}

/// One replacement in a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Byte range in the snapshot, on char boundaries.
    pub range: Range<usize>,
    pub new_text: String,
}

/// Why a request cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    EmptyQuote(QuoteField),
    /// The quote does not occur in the window, or `occurrence` is past the last match.
    NotFound { quote: QuoteField, match_count: usize, occurrence: Option<u64> },
    /// The quote occurs more than once; `starts` are the byte offsets of every match.
    Ambiguous { quote: QuoteField, starts: Vec<usize>, quote_len: usize },
    NoChange,
    /// `toStr` only occurs before `fromStr`, or `before` only before `after`.
    RangeOrder { quote: QuoteField },
    /// Two edits of one batch touch the same text (indexes into the batch).
    Overlap { first: usize, second: usize },
    /// Parameters that contradict each other.
    Invalid { field: &'static str, message: String },
}

/// Plans one edit against a snapshot.
pub fn plan_edit(text: &Rope, edit: &Edit) -> Result<Vec<Replacement>, PlanError> {
    match edit {
        Edit::StrReplace(request) => plan_str_replace(text, request),
        Edit::ReplaceRange(request) => plan_replace_range(text, request),
        Edit::WriteAll { text: new_text } => {
            if text.len_bytes() == new_text.len() && *text == new_text.as_str() {
                return Err(PlanError::NoChange);
            }
            Ok(vec![Replacement { range: 0..text.len_bytes(), new_text: new_text.clone() }])
        }
    }
}

fn plan_str_replace(text: &Rope, request: &StrReplace) -> Result<Vec<Replacement>, PlanError> {
    non_empty(&request.old_str, QuoteField::OldStr)?;
    if request.replace_all && request.occurrence.is_some() {
        return Err(PlanError::Invalid {
            field: "occurrence",
            message: "`occurrence` and `replaceAll` exclude each other: send one of them".into(),
        });
    }
    if request.occurrence == Some(0) {
        return Err(PlanError::Invalid {
            field: "occurrence",
            message: "`occurrence` counts from 1: send 1 for the first match".into(),
        });
    }
    if request.old_str == request.new_str {
        return Err(PlanError::NoChange);
    }
    let window = window(text, request.after.as_deref(), request.before.as_deref())?;
    let quote = QuoteField::OldStr;
    let starts = find_all(text, &request.old_str, window);
    let len = request.old_str.len();
    let replacement = |start: usize| Replacement { range: start..start + len, new_text: request.new_str.clone() };
    if request.replace_all {
        let kept = non_overlapping(&starts, len);
        if kept.is_empty() {
            return Err(PlanError::NotFound { quote, match_count: 0, occurrence: None });
        }
        return Ok(kept.into_iter().map(replacement).collect());
    }
    if let Some(occurrence) = request.occurrence {
        let index = usize::try_from(occurrence - 1).unwrap_or(usize::MAX);
        return match starts.get(index) {
            Some(&start) => Ok(vec![replacement(start)]),
            None => Err(PlanError::NotFound { quote, match_count: starts.len(), occurrence: Some(occurrence) }),
        };
    }
    let start = unique(starts, quote, len)?;
    Ok(vec![replacement(start)])
}

fn plan_replace_range(text: &Rope, request: &ReplaceRange) -> Result<Vec<Replacement>, PlanError> {
    non_empty(&request.from_str, QuoteField::FromStr)?;
    non_empty(&request.to_str, QuoteField::ToStr)?;
    let window = window(text, request.after.as_deref(), request.before.as_deref())?;
    let from_len = request.from_str.len();
    let from_start = unique(find_all(text, &request.from_str, window.clone()), QuoteField::FromStr, from_len)?;
    let from_end = from_start + from_len;
    let to_len = request.to_str.len();
    let to_starts = find_all(text, &request.to_str, from_end..window.end);
    if to_starts.is_empty() {
        return Err(if count_up_to(text, &request.to_str, window, 1) > 0 {
            PlanError::RangeOrder { quote: QuoteField::ToStr }
        } else {
            PlanError::NotFound { quote: QuoteField::ToStr, match_count: 0, occurrence: None }
        });
    }
    let to_start = unique(to_starts, QuoteField::ToStr, to_len)?;
    let range = from_start..to_start + to_len;
    if text.byte_slice(range.clone()) == request.new_str.as_str() {
        return Err(PlanError::NoChange);
    }
    Ok(vec![Replacement { range, new_text: request.new_str.clone() }])
}

/// The byte window left by `after` (unique in the document) and `before` (unique in
/// the text after `after`).
fn window(text: &Rope, after: Option<&str>, before: Option<&str>) -> Result<Range<usize>, PlanError> {
    let mut window = 0..text.len_bytes();
    if let Some(after) = after {
        non_empty(after, QuoteField::After)?;
        let start = unique(find_all(text, after, window.clone()), QuoteField::After, after.len())?;
        window.start = start + after.len();
    }
    if let Some(before) = before {
        non_empty(before, QuoteField::Before)?;
        let starts = find_all(text, before, window.clone());
        if starts.is_empty() && count_up_to(text, before, 0..text.len_bytes(), 1) > 0 {
            return Err(PlanError::RangeOrder { quote: QuoteField::Before });
        }
        window.end = unique(starts, QuoteField::Before, before.len())?;
    }
    Ok(window)
}

fn non_empty(quote: &str, field: QuoteField) -> Result<(), PlanError> {
    if quote.is_empty() { Err(PlanError::EmptyQuote(field)) } else { Ok(()) }
}

fn unique(starts: Vec<usize>, quote: QuoteField, quote_len: usize) -> Result<usize, PlanError> {
    match starts.as_slice() {
        [] => Err(PlanError::NotFound { quote, match_count: 0, occurrence: None }),
        [only] => Ok(*only),
        _ => Err(PlanError::Ambiguous { quote, starts, quote_len }),
    }
}

/// Sorts replacements gathered from several edits of one document and refuses any
/// two that overlap. Each item carries the index of the edit it came from. Two
/// insertions at the same point also count as overlapping: their order would be a guess.
pub fn sort_disjoint(mut items: Vec<(usize, Replacement)>) -> Result<Vec<Replacement>, PlanError> {
    items.sort_by_key(|(_, replacement)| (replacement.range.start, replacement.range.end));
    for pair in items.windows(2) {
        let (first, second) = (&pair[0], &pair[1]);
        if second.1.range.start < first.1.range.end || second.1.range.start == first.1.range.start {
            let (a, b) = (first.0.min(second.0), first.0.max(second.0));
            return Err(PlanError::Overlap { first: a, second: b });
        }
    }
    Ok(items.into_iter().map(|(_, replacement)| replacement).collect())
}

/// The text after applying sorted, disjoint replacements.
pub fn apply(text: &Rope, replacements: &[Replacement]) -> Rope {
    let mut out = text.clone();
    for replacement in replacements.iter().rev() {
        let start = out.byte_to_char(replacement.range.start);
        let end = out.byte_to_char(replacement.range.end);
        out.remove(start..end);
        out.insert(start, &replacement.new_text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plans `edit` against `before` and checks the resulting text, or the error.
    fn check(before: &str, edit: Edit, expected: Result<&str, PlanError>) {
        let rope = Rope::from_str(before);
        let got = plan_edit(&rope, &edit).map(|plan| apply(&rope, &plan).to_string());
        assert_eq!(got.as_deref().map_err(Clone::clone), expected, "edit: {edit:?}");
    }

    fn replace(old: &str, new: &str) -> StrReplace {
        StrReplace { old_str: old.into(), new_str: new.into(), ..StrReplace::default() }
    }

    fn sr(request: StrReplace) -> Edit {
        Edit::StrReplace(request)
    }

    fn range(from: &str, to: &str, new: &str) -> ReplaceRange {
        ReplaceRange { from_str: from.into(), to_str: to.into(), new_str: new.into(), ..ReplaceRange::default() }
    }

    use QuoteField::*;

    #[test]
    fn unique_quote_is_replaced() {
        check("let x = 1;\nlet y = 2;\n", sr(replace("x = 1", "x = 5")), Ok("let x = 5;\nlet y = 2;\n"));
        check("héllo 😀 wörld", sr(replace("😀", "🎉")), Ok("héllo 🎉 wörld"));
        check("a\r\nb\r\n", sr(replace("a\r\nb", "c")), Ok("c\r\n"));
    }

    #[test]
    fn missing_and_empty_quotes_fail() {
        check("abc", sr(replace("x", "y")), Err(PlanError::NotFound { quote: OldStr, match_count: 0, occurrence: None }));
        check("abc", sr(replace("", "y")), Err(PlanError::EmptyQuote(OldStr)));
        check("abc", sr(replace("b", "b")), Err(PlanError::NoChange));
    }

    #[test]
    fn ambiguous_quotes_list_every_match() {
        check("ab ab ab", sr(replace("ab", "x")), Err(PlanError::Ambiguous { quote: OldStr, starts: vec![0, 3, 6], quote_len: 2 }));
        check("aaa", sr(replace("aa", "b")), Err(PlanError::Ambiguous { quote: OldStr, starts: vec![0, 1], quote_len: 2 }));
    }

    #[test]
    fn occurrence_picks_one_match() {
        check("ab ab ab", sr(StrReplace { occurrence: Some(2), ..replace("ab", "x") }), Ok("ab x ab"));
        check("ab ab ab", sr(StrReplace { occurrence: Some(4), ..replace("ab", "x") }),
            Err(PlanError::NotFound { quote: OldStr, match_count: 3, occurrence: Some(4) }));
        check("ab", sr(StrReplace { occurrence: Some(u64::MAX), ..replace("ab", "x") }),
            Err(PlanError::NotFound { quote: OldStr, match_count: 1, occurrence: Some(u64::MAX) }));
        assert!(matches!(
            plan_edit(&Rope::from_str("ab"), &sr(StrReplace { occurrence: Some(0), ..replace("ab", "x") })),
            Err(PlanError::Invalid { field: "occurrence", .. })
        ));
    }

    #[test]
    fn replace_all_takes_non_overlapping_matches() {
        check("ab ab ab", sr(StrReplace { replace_all: true, ..replace("ab", "x") }), Ok("x x x"));
        check("aaaa", sr(StrReplace { replace_all: true, ..replace("aa", "b") }), Ok("bb"));
        check("aaaa", sr(StrReplace { replace_all: true, ..replace("c", "b") }),
            Err(PlanError::NotFound { quote: OldStr, match_count: 0, occurrence: None }));
    }

    #[test]
    fn after_and_before_narrow_the_window() {
        let text = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
        check(text, sr(StrReplace { after: Some("fn b".into()), ..replace("x();", "y();") }),
            Ok("fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n"));
        check(text, sr(StrReplace { before: Some("fn b".into()), ..replace("x();", "y();") }),
            Ok("fn a() {\n    y();\n}\nfn b() {\n    x();\n}\n"));
        // `before` need only be unique after `after`.
        check(text, sr(StrReplace { after: Some("fn b".into()), before: Some("}".into()), ..replace("x();", "z();") }),
            Ok("fn a() {\n    x();\n}\nfn b() {\n    z();\n}\n"));
        check(text, sr(StrReplace { after: Some("fn a".into()), before: Some("}".into()), ..replace("x();", "z();") }),
            Err(PlanError::Ambiguous { quote: Before, starts: vec![18, 38], quote_len: 1 }));
        check(text, sr(StrReplace { after: Some("fn".into()), ..replace("x();", "y();") }),
            Err(PlanError::Ambiguous { quote: After, starts: vec![0, 20], quote_len: 2 }));
        check(text, sr(StrReplace { after: Some("fn b".into()), before: Some("fn a".into()), ..replace("x", "y") }),
            Err(PlanError::RangeOrder { quote: Before }));
        check(text, sr(StrReplace { after: Some("".into()), ..replace("x", "y") }), Err(PlanError::EmptyQuote(After)));
        check(text, sr(StrReplace { after: Some("fn b".into()), ..replace("fn a", "y") }),
            Err(PlanError::NotFound { quote: OldStr, match_count: 0, occurrence: None }));
    }

    #[test]
    fn replace_range_covers_both_quotes() {
        let text = "a\nfn old() {\n  body\n}\nz\n";
        check(text, Edit::ReplaceRange(range("fn old", "}\n", "fn new() {}\n")), Ok("a\nfn new() {}\nz\n"));
        check(text, Edit::ReplaceRange(range("body", "fn old", "x")), Err(PlanError::RangeOrder { quote: ToStr }));
        check(text, Edit::ReplaceRange(range("fn old", "nope", "x")), Err(PlanError::NotFound { quote: ToStr, match_count: 0, occurrence: None }));
        check(text, Edit::ReplaceRange(range("fn old", "", "x")), Err(PlanError::EmptyQuote(ToStr)));
        check("x1 y x2 y", Edit::ReplaceRange(range("x1", "y", "z")), Err(PlanError::Ambiguous { quote: ToStr, starts: vec![3, 8], quote_len: 1 }));
        check("x1 y x2 y", Edit::ReplaceRange(ReplaceRange { before: Some("x2".into()), ..range("x1", "y", "z") }), Ok("z x2 y"));
        check("ab", Edit::ReplaceRange(range("a", "b", "ab")), Err(PlanError::NoChange));
    }

    #[test]
    fn write_all_replaces_everything() {
        check("old\n", Edit::WriteAll { text: "new\n".into() }, Ok("new\n"));
        check("same", Edit::WriteAll { text: "same".into() }, Err(PlanError::NoChange));
    }

    #[test]
    fn overlapping_batch_edits_are_refused() {
        let r = |range: Range<usize>| Replacement { range, new_text: String::new() };
        assert_eq!(sort_disjoint(vec![(0, r(5..8)), (1, r(0..2))]), Ok(vec![r(0..2), r(5..8)]));
        assert_eq!(sort_disjoint(vec![(0, r(0..4)), (1, r(3..5))]), Err(PlanError::Overlap { first: 0, second: 1 }));
        assert_eq!(sort_disjoint(vec![(2, r(3..3)), (0, r(3..3))]), Err(PlanError::Overlap { first: 0, second: 2 }));
        assert_eq!(sort_disjoint(vec![(0, r(0..3)), (1, r(3..5))]), Ok(vec![r(0..3), r(3..5)]));
    }
}
