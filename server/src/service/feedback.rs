//! Turning a refused plan into an error an agent can act on at once: which quote,
//! where every match is (numbered, with line numbers and context), what it took to
//! find them, for a quote that is not there the region most like it (with a diff;
//! two regions when a second one is nearly as close), and what to send next.

use std::collections::BTreeSet;
use std::ops::Range;

use ropey::Rope;
use serde_json::json;

use verbatim_engine::near_miss;
use verbatim_engine::normalize::{LADDER, Normalization};
use verbatim_engine::plan::{PlanError, QuoteField, Searched};
use verbatim_engine::position::PositionEncoding;
use verbatim_engine::quote::find_all;
use verbatim_engine::rev::Rev;

use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::to_proto;

/// At most this many matches are listed in an `ambiguous` error.
const MAX_LISTED_MATCHES: usize = 20;
/// Longer lines are cut in context snippets.
const MAX_CONTEXT_LINE: usize = 160;

/// The document a plan was refused for.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub text: &'a Rope,
    /// How the document is named in messages (a workspace-relative path).
    pub label: &'a str,
    pub rev: Rev,
    /// The agent's position encoding, for ranges in `data`.
    pub encoding: PositionEncoding,
}

pub fn plan_error(error: PlanError, context: Context<'_>) -> ProtocolError {
    let Context { label, .. } = context;
    match error {
        PlanError::EmptyQuote(quote) => ProtocolError::new(
            ErrorKind::EmptyQuote,
            format!(
                "{quote} is empty. Quote text that exists in {label}; to insert text, quote a neighbouring \
                 anchor and repeat it in newStr together with the new text."
            ),
        )
        .with("quote", quote.as_str()),
        PlanError::NotFound { quote, match_count, occurrence: Some(occurrence), .. } => ProtocolError::new(
            ErrorKind::NotFound,
            format!(
                "occurrence {occurrence} names no match: {quote} matches {match_count} time{} in the window of \
                 {label}. Send an occurrence between 1 and {match_count}.",
                plural(match_count)
            ),
        )
        .with("quote", quote.as_str())
        .with("matchCount", match_count),
        PlanError::NotFound { quote, searched, .. } => not_found(quote, &searched, context),
        PlanError::Ambiguous { quote, ranges, normalizations } => ambiguous(quote, &ranges, &normalizations, context),
        PlanError::NoChange => ProtocolError::new(
            ErrorKind::NoChange,
            format!(
                "newStr is identical to the text it would replace in {label}: nothing to do. If the document \
                 already reads the way you want, skip this edit."
            ),
        ),
        PlanError::RangeOrder { quote: QuoteField::Before } => ProtocolError::new(
            ErrorKind::RangeOrder,
            format!(
                "before occurs in {label} only before the end of after, so the window between them is empty. \
                 Quote a before that comes after the after quote."
            ),
        )
        .with("quote", "before"),
        PlanError::RangeOrder { quote } => ProtocolError::new(
            ErrorKind::RangeOrder,
            format!(
                "toStr occurs in {label} only before the end of fromStr. replaceRange replaces from the start of \
                 fromStr through the end of toStr: quote a toStr that comes after fromStr."
            ),
        )
        .with("quote", quote.as_str()),
        PlanError::Overlap { first, second } => ProtocolError::new(
            ErrorKind::Overlap,
            format!(
                "edits[{first}] and edits[{second}] change overlapping text in {label}. Merge them into one edit, \
                 or quote text that does not overlap."
            ),
        )
        .with("edits", json!([first, second])),
        PlanError::Invalid { field, message } => ProtocolError::invalid_params(Some(field), message),
        PlanError::UndecidedIndentation { quote, range } => undecided_indentation(quote, &range, context),
    }
}

/// At most this many lines of a match are shown when its new text's indentation
/// is refused.
const MAX_SHOWN_LINES: usize = 40;

/// A quote found only by ignoring indentation, whose new text could be read as
/// written for the file or as shifted like the quote: the real lines, with their
/// indentation made visible, so that the next try is exact.
fn undecided_indentation(quote: QuoteField, range: &Range<usize>, context: Context<'_>) -> ProtocolError {
    let Context { text, label, .. } = context;
    let first = text.byte_to_line(range.start);
    let last = text.byte_to_line(range.end.saturating_sub(1).max(range.start));
    let lines: Vec<(usize, String)> = (first..=last.min(first + MAX_SHOWN_LINES - 1))
        .map(|line| (line + 1, text.line(line).chars().filter(|c| *c != '\n' && *c != '\r').collect()))
        .collect();
    let visible: Vec<String> = lines
        .iter()
        .map(|(number, content)| {
            let body = content.trim_start_matches([' ', '\t']);
            let indent: String =
                content[..content.len() - body.len()].chars().map(|c| if c == '\t' { '→' } else { '·' }).collect();
            format!("{number:>5} | {indent}{body}")
        })
        .collect();
    let new_field = if quote == QuoteField::OldLines { "the hunk's new lines" } else { "newStr" };
    ProtocolError::new(
        ErrorKind::Ambiguous,
        format!(
            "{quote} was found in {label} (lines {}-{}) only by ignoring indentation, and the indentation of \
             {new_field} does not say whether it is written for the file as it stands or shifted like the quote \
             (both readings fit, or neither): nothing was written. The lines as {label} has them (· is a space, \
             → a tab):\n{}\nResend {quote} with this indentation, and {new_field} indented the way the file is.",
            first + 1,
            last + 1,
            visible.join("\n")
        ),
    )
    .with("quote", quote.as_str())
    .with("reason", "indentation")
    .with("matchCount", 1)
    .with("hint", "quote the lines with their real indentation, and indent the new text the same way")
    .with(
        "matchedLines",
        lines.iter().map(|(number, content)| json!({"line": number, "text": content})).collect::<Vec<_>>(),
    )
}

/// At most this many lines are listed where a quote occurs outside its window.
const MAX_LISTED_LINES: usize = 5;

fn not_found(quote: QuoteField, searched: &Searched, context: Context<'_>) -> ProtocolError {
    let Context { text, label, rev, encoding } = context;
    let whole = 0..text.len_bytes();
    let mut notes = Vec::new();
    let ladder_note = if searched.ladder {
        let ignored: Vec<&str> = LADDER.iter().map(|step| step.describe()).collect();
        format!(", not even ignoring {}", listed(&ignored, "or"))
    } else {
        String::new()
    };
    let outside: Vec<usize> = if searched.window != whole {
        find_all(text, &searched.needle, whole)
            .into_iter()
            .take(MAX_LISTED_LINES)
            .map(|start| text.byte_to_line(start) + 1)
            .collect()
    } else {
        Vec::new()
    };
    if !outside.is_empty() {
        let lines: Vec<String> = outside.iter().map(ToString::to_string).collect();
        notes.push(format!(
            "It does occur outside the window that after/before leave (line {}): check those quotes.",
            lines.join(", ")
        ));
    }
    let region_label = |lines: &Range<usize>| format!("{label} lines {}-{}", lines.start + 1, lines.end);
    let regions: Vec<near_miss::NearMiss> = near_miss::closest(text, &searched.needle, searched.window.clone(), "")
        .into_iter()
        .map(|mut near| {
            near.diff = near.diff.replacen("+++ \n", &format!("+++ {}\n", region_label(&near.lines)), 1);
            near
        })
        .collect();
    let alike = |near: &near_miss::NearMiss| format!("{:.0}% alike", near.similarity * 100.0);
    match regions.as_slice() {
        [] => {}
        [near] => notes.push(format!(
            "The closest text is {} ({}{CLOSEST_IN_DATA}). Quote it exactly.",
            region_label(&near.lines),
            alike(near)
        )),
        [near, other, ..] => notes.push(format!(
            "The closest text is {} ({}), and {} is nearly as close ({}{BOTH_CLOSEST_IN_DATA}). Quote the one you \
             meant exactly{}.",
            region_label(&near.lines),
            alike(near),
            region_label(&other.lines),
            alike(other),
            unique_advice(quote)
        )),
    }
    if regions.is_empty() {
        notes.push(format!(
            "Read the document again (verbatim/read) and quote it exactly, including whitespace, indentation and line \
             endings{}.",
            if quote == QuoteField::OldLines {
                "; a patch hunk's context and - lines must be the file's lines"
            } else {
                ""
            }
        ));
    }
    let mut error = ProtocolError::new(
        ErrorKind::NotFound,
        format!("{quote} was not found in {label} (rev {rev}){}{ladder_note}. {}", window_note(quote), notes.join(" ")),
    )
    .with("quote", quote.as_str())
    .with("matchCount", 0);
    if !outside.is_empty() {
        error = error.with("outsideWindow", outside);
    }
    let region_data = |near: &near_miss::NearMiss| {
        json!({
            "startLine": near.lines.start + 1,
            "endLine": near.lines.end,
            "similarity": (f64::from(near.similarity) * 100.0).round() / 100.0,
            "range": to_proto::range(text, &near.range, encoding),
            "text": near.text,
            "diff": near.diff,
        })
    };
    if let Some((near, others)) = regions.split_first() {
        error = error.with("closest", region_data(near)).with("positionEncoding", encoding.as_str());
        if !others.is_empty() {
            error = error.with("alsoClose", others.iter().map(region_data).collect::<Vec<_>>());
        }
    }
    error
}

/// How to make the quote unique once it is copied from one of two regions alike.
fn unique_advice(quote: QuoteField) -> &'static str {
    match quote {
        QuoteField::OldStr | QuoteField::FromStr | QuoteField::ToStr => {
            " (if both read the same, narrow the window with after/before)"
        }
        QuoteField::OldLines => " (if both read the same, quote the lines around it too, so that it is unique)",
        QuoteField::After | QuoteField::Before | QuoteField::Context => {
            " (if both read the same, quote more of the text around it)"
        }
    }
}

/// Where the closest region of a missing quote is, in the message; the text
/// front-ends print the region itself instead (`frontend/render.rs`).
pub const CLOSEST_IN_DATA: &str =
    "; its text and a diff from your quote are in data.closest, and printed below by the CLI and the MCP tools";

/// [`CLOSEST_IN_DATA`] when a second region is nearly as close.
pub const BOTH_CLOSEST_IN_DATA: &str = "; their texts and diffs from your quote are in data.closest and data.alsoClose, \
     and printed below by the CLI and the MCP tools";

/// Says which other open documents hold the quote verbatim (`documents` pairs a
/// name for messages with the document's URI and text).
pub fn also_in(error: ProtocolError, needle: &str, documents: &[(String, String, Rope)]) -> ProtocolError {
    let holding: Vec<&(String, String, Rope)> = documents
        .iter()
        .filter(|(_, _, text)| verbatim_engine::quote::count_up_to(text, needle, 0..text.len_bytes(), 1) > 0)
        .collect();
    if holding.is_empty() {
        return error;
    }
    let names: Vec<&str> = holding.iter().map(|(label, _, _)| label.as_str()).collect();
    let uris: Vec<&str> = holding.iter().map(|(_, uri, _)| uri.as_str()).collect();
    let message = format!(
        "{} It does occur verbatim in {}: did you mean {}?",
        error.message,
        names.join(", "),
        if names.len() == 1 { "that document" } else { "one of those documents" }
    );
    ProtocolError { message, ..error }.with("alsoIn", uris)
}

/// `a, b or c` (with `or` or `and`).
fn listed(items: &[&str], last: &str) -> String {
    match items {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [init @ .., tail] => format!("{} {last} {tail}", init.join(", ")),
    }
}

fn window_note(quote: QuoteField) -> &'static str {
    match quote {
        QuoteField::After | QuoteField::Before | QuoteField::Context => "",
        QuoteField::OldLines => " (after the hunk's @@ lines and the hunks before it)",
        _ => " (within the window, if after/before were given)",
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

fn ambiguous(
    quote: QuoteField,
    ranges: &[Range<usize>],
    normalizations: &BTreeSet<Normalization>,
    context: Context<'_>,
) -> ProtocolError {
    let Context { text, label, encoding, .. } = context;
    let count = ranges.len();
    let lines: Vec<usize> = ranges.iter().map(|range| text.byte_to_line(range.start) + 1).collect();
    let mut shown_lines: Vec<String> = lines.iter().take(MAX_LISTED_MATCHES).map(ToString::to_string).collect();
    if count > MAX_LISTED_MATCHES {
        shown_lines.push("…".into());
    }
    let advice = match quote {
        QuoteField::OldStr => format!("Resend with occurrence: N (1-{count}), or narrow the window with after/before."),
        QuoteField::After | QuoteField::Before | QuoteField::Context => {
            format!("Quote more of the text around it so that {quote} is unique.")
        }
        QuoteField::FromStr | QuoteField::ToStr => {
            format!("Quote more of the text so that {quote} is unique, or narrow the window with after/before.")
        }
        QuoteField::OldLines => {
            "Add context lines (or an @@ line naming the enclosing function) so that the hunk is unique.".into()
        }
    };
    let hint = match quote {
        QuoteField::OldStr => "resend with occurrence: N, or narrow with after/before",
        _ => "quote more text so that the quote is unique",
    };
    let ignoring = if normalizations.is_empty() {
        String::new()
    } else {
        let ignored: Vec<&str> = normalizations.iter().map(|step| step.describe()).collect();
        format!(" when ignoring {}", listed(&ignored, "and"))
    };
    let matches: Vec<_> = ranges
        .iter()
        .take(MAX_LISTED_MATCHES)
        .enumerate()
        .map(|(index, range)| {
            let line = text.byte_to_line(range.start);
            let column = text.byte_to_char(range.start) - text.line_to_char(line);
            json!({
                "occurrence": index + 1,
                "line": line + 1,
                "column": column + 1,
                "range": to_proto::range(text, range, encoding),
                "context": snippet(text, range.start, range.end),
            })
        })
        .collect();
    let mut error = ProtocolError::new(
        ErrorKind::Ambiguous,
        format!("{quote} matches {count} times in {label}{ignoring} (lines {}). {advice}", shown_lines.join(", ")),
    )
    .with("quote", quote.as_str())
    .with("matchCount", count)
    .with("hint", hint)
    .with("matches", matches)
    .with("positionEncoding", encoding.as_str());
    if !normalizations.is_empty() {
        error = error.with("normalizations", normalizations.iter().map(|step| step.as_str()).collect::<Vec<_>>());
    }
    error
}

/// The lines of a match with one line of context on each side, numbered, the
/// matched lines marked with `>`.
pub fn snippet(text: &Rope, start: usize, end: usize) -> String {
    let first_match_line = text.byte_to_line(start);
    let last_match_line = text.byte_to_line(end.saturating_sub(1).max(start));
    let first = first_match_line.saturating_sub(1);
    let last = (last_match_line + 1).min(text.len_lines().saturating_sub(1));
    let mut out = Vec::new();
    for line in first..=last {
        let content: String = text.line(line).chars().filter(|c| *c != '\n' && *c != '\r').collect();
        let content = if content.chars().count() > MAX_CONTEXT_LINE {
            let cut: String = content.chars().take(MAX_CONTEXT_LINE).collect();
            format!("{cut}…")
        } else {
            content
        };
        let marker = if (first_match_line..=last_match_line).contains(&line) { '>' } else { ' ' };
        out.push(format!("{marker}{:>4} | {content}", line + 1));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ambiguous_errors_number_every_match() {
        let text = Rope::from_str("fn main() {\n    let x = 1;\n    run(x);\n    let x = 1;\n}\n");
        let context = Context {
            text: &text,
            label: "src/main.rs",
            rev: Rev::Editor { session: 1, version: 4 },
            encoding: PositionEncoding::Utf16,
        };
        let ambiguous = PlanError::Ambiguous {
            quote: QuoteField::OldStr,
            ranges: vec![16..26, 43..53],
            normalizations: BTreeSet::new(),
        };
        let error = plan_error(ambiguous, context);
        assert_eq!(error.kind, ErrorKind::Ambiguous);
        assert_eq!(
            error.message,
            "oldStr matches 2 times in src/main.rs (lines 2, 4). Resend with occurrence: N (1-2), or narrow the window with after/before."
        );
        let matches = &error.data["matches"];
        assert_eq!(matches[1]["occurrence"], 2);
        assert_eq!(matches[1]["line"], 4);
        assert_eq!(matches[1]["column"], 5);
        assert_eq!(matches[0]["context"], "    1 | fn main() {\n>   2 |     let x = 1;\n    3 |     run(x);");
        assert_eq!(matches[0]["range"]["start"], json!({"line": 1, "character": 4}));
    }

    #[test]
    fn a_missing_quote_points_at_the_closest_region_with_a_diff() {
        let text = Rope::from_str("fn main() {\n}\n\nfn start() {\n    let x = 1;\n    run(x);\n}\n");
        let context = Context {
            text: &text,
            label: "src/main.rs",
            rev: Rev::Editor { session: 3, version: 17 },
            encoding: PositionEncoding::Utf16,
        };
        let searched =
            Searched { needle: "    let x = 2;\n    run(x);\n".into(), window: 0..text.len_bytes(), ladder: true };
        let error = plan_error(
            PlanError::NotFound { quote: QuoteField::OldStr, match_count: 0, occurrence: None, searched },
            context,
        );
        assert_eq!(error.kind, ErrorKind::NotFound);
        assert_eq!(
            error.message,
            "oldStr was not found in src/main.rs (rev e3.17) (within the window, if after/before were given), not even \
             ignoring line-number prefixes, typographic quotes, dashes and non-breaking spaces, line endings, trailing \
             whitespace or indentation. The closest text is src/main.rs lines 5-6 (95% alike; its text and a diff from \
             your quote are in data.closest, and printed below by the CLI and the MCP tools). Quote it exactly."
        );
        assert_eq!(
            error.data["closest"],
            json!({
                "startLine": 5, "endLine": 6, "similarity": 0.95,
                "range": {"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 11}},
                "text": "    let x = 1;\n    run(x);",
                "diff": "--- quote\n+++ src/main.rs lines 5-6\n-    let x = 2;\n+    let x = 1;\n     run(x);\n",
            })
        );
        let elsewhere = also_in(
            error,
            "run(x);",
            &[("src/other.rs".into(), "file:///p/src/other.rs".into(), Rope::from_str("run(x);\n"))],
        );
        assert!(
            elsewhere.message.ends_with("It does occur verbatim in src/other.rs: did you mean that document?"),
            "{}",
            elsewhere.message
        );
        assert_eq!(elsewhere.data["alsoIn"], json!(["file:///p/src/other.rs"]));
    }

    #[test]
    fn a_quote_outside_the_window_is_pointed_at() {
        let text = Rope::from_str("a\nb\nc\n");
        let context = Context {
            text: &text,
            label: "f",
            rev: Rev::Editor { session: 1, version: 1 },
            encoding: PositionEncoding::Utf8,
        };
        let searched = Searched { needle: "a".into(), window: 2..6, ladder: false };
        let error = plan_error(
            PlanError::NotFound { quote: QuoteField::OldStr, match_count: 0, occurrence: None, searched },
            context,
        );
        assert!(
            error.message.contains("It does occur outside the window that after/before leave (line 1)"),
            "{}",
            error.message
        );
        assert_eq!(error.data["outsideWindow"], json!([1]));
    }
}
