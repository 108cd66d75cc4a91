//! Turning a refused plan into an error an agent can act on at once: which quote,
//! where every match is (numbered, with line numbers and context), and what to send next.

use ropey::Rope;
use serde_json::json;

use crate::error::{ErrorKind, ProtocolError};
use crate::plan::{PlanError, QuoteField};
use crate::position::PositionEncoding;
use crate::rev::Rev;
use crate::to_proto;

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
    let Context { label, rev, .. } = context;
    match error {
        PlanError::EmptyQuote(quote) => ProtocolError::new(
            ErrorKind::EmptyQuote,
            format!(
                "{quote} is empty. Quote text that exists in {label}; to insert text, quote a neighbouring \
                 anchor and repeat it in newStr together with the new text."
            ),
        )
        .with("quote", quote.as_str()),
        PlanError::NotFound { quote, match_count, occurrence: Some(occurrence) } => ProtocolError::new(
            ErrorKind::NotFound,
            format!(
                "occurrence {occurrence} names no match: {quote} matches {match_count} time{} in the window of \
                 {label}. Send an occurrence between 1 and {match_count}.",
                plural(match_count)
            ),
        )
        .with("quote", quote.as_str())
        .with("matchCount", match_count),
        PlanError::NotFound { quote, .. } => ProtocolError::new(
            ErrorKind::NotFound,
            format!(
                "{quote} was not found in {label} (rev {rev}){}. Read the document again (verbatim/read) and \
                 quote it exactly, including whitespace, indentation and line endings.",
                window_note(quote)
            ),
        )
        .with("quote", quote.as_str())
        .with("matchCount", 0),
        PlanError::Ambiguous { quote, starts, quote_len } => ambiguous(quote, &starts, quote_len, context),
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
    }
}

fn window_note(quote: QuoteField) -> &'static str {
    match quote {
        QuoteField::After | QuoteField::Before => "",
        _ => " (within the window, if after/before were given)",
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

fn ambiguous(quote: QuoteField, starts: &[usize], quote_len: usize, context: Context<'_>) -> ProtocolError {
    let Context { text, label, encoding, .. } = context;
    let count = starts.len();
    let lines: Vec<usize> = starts.iter().map(|&start| text.byte_to_line(start) + 1).collect();
    let mut shown_lines: Vec<String> = lines.iter().take(MAX_LISTED_MATCHES).map(ToString::to_string).collect();
    if count > MAX_LISTED_MATCHES {
        shown_lines.push("…".into());
    }
    let advice = match quote {
        QuoteField::OldStr => format!("Resend with occurrence: N (1-{count}), or narrow the window with after/before."),
        QuoteField::After | QuoteField::Before => {
            format!("Quote more of the text around it so that {quote} is unique.")
        }
        QuoteField::FromStr | QuoteField::ToStr => {
            format!("Quote more of the text so that {quote} is unique, or narrow the window with after/before.")
        }
    };
    let hint = match quote {
        QuoteField::OldStr => "resend with occurrence: N, or narrow with after/before",
        _ => "quote more text so that the quote is unique",
    };
    let matches: Vec<_> = starts
        .iter()
        .take(MAX_LISTED_MATCHES)
        .enumerate()
        .map(|(index, &start)| {
            let line = text.byte_to_line(start);
            let column = text.byte_to_char(start) - text.line_to_char(line);
            json!({
                "occurrence": index + 1,
                "line": line + 1,
                "column": column + 1,
                "range": to_proto::range(text, &(start..start + quote_len), encoding),
                "context": snippet(text, start, start + quote_len),
            })
        })
        .collect();
    ProtocolError::new(
        ErrorKind::Ambiguous,
        format!("{quote} matches {count} times in {label} (lines {}). {advice}", shown_lines.join(", ")),
    )
    .with("quote", quote.as_str())
    .with("matchCount", count)
    .with("hint", hint)
    .with("matches", matches)
    .with("positionEncoding", encoding.as_str())
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
        let context = Context { text: &text, label: "src/main.rs", rev: Rev::Editor { session: 1, version: 4 }, encoding: PositionEncoding::Utf16 };
        let error = plan_error(PlanError::Ambiguous { quote: QuoteField::OldStr, starts: vec![16, 43], quote_len: 10 }, context);
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
}
