//! Results and errors as plain text for people and models: what the CLI prints and
//! what the MCP tools answer. Nothing here prints.
//!
//! Protocol messages name protocol fields (`oldStr`, `verbatim/read`); a
//! [`Vocabulary`] rewrites them into the front-end's own words (`--old` and
//! `verbatim read` for the CLI, `old_str` and `read_file` for MCP), so that an error
//! says exactly what to send next in the language of the one reading it.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::frontend::Via;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::feedback::{BOTH_CLOSEST_IN_DATA, CLOSEST_IN_DATA};
use crate::service::journal::{Entry, Outcome};
use crate::service::protocol::{
    ApplyPatchResult, BatchResult, DiagnosticsReport, DiagnosticsStatus, DiscoveryFile, DocumentInfo, DocumentResult,
    EditResult, ProblemItem, ReadResult,
};

/// Whose words errors are told in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vocabulary {
    Protocol,
    Cli,
    Mcp,
}

impl Vocabulary {
    /// Pairs of (protocol term, front-end term), longest terms first.
    fn terms(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Protocol => &[],
            Self::Cli => &[
                ("occurrence: N", "--occurrence N"),
                ("after/before", "--after/--before"),
                ("verbatim/documents", "verbatim documents"),
                ("verbatim/read", "verbatim read"),
                ("verbatim/write", "verbatim write"),
                ("verbatim/strReplace", "verbatim edit"),
                ("verbatim/replaceRange", "verbatim replace-range"),
                ("verbatim/batchEdit", "verbatim batch"),
                ("verbatim/applyPatch", "verbatim patch"),
                ("replaceAll", "--all"),
                ("occurrence", "--occurrence"),
                ("baseRev", "--base-rev"),
                ("oldStr", "--old"),
                ("newStr", "--new"),
                ("fromStr", "--from"),
                ("toStr", "--to"),
            ],
            Self::Mcp => &[
                ("verbatim/documents", "list_documents"),
                ("verbatim/read", "read_file"),
                ("verbatim/write", "write_file"),
                ("verbatim/strReplace", "str_replace"),
                ("verbatim/replaceRange", "replace_range"),
                ("verbatim/batchEdit", "batch_edit"),
                ("verbatim/applyPatch", "apply_patch"),
                ("replaceAll", "replace_all"),
                ("baseRev", "base_rev"),
                ("oldStr", "old_str"),
                ("newStr", "new_str"),
                ("fromStr", "from_str"),
                ("toStr", "to_str"),
                ("dryRun", "dry_run"),
            ],
        }
    }

    /// `text` with every protocol term (as a whole word) in this vocabulary.
    pub fn translate(self, text: &str) -> String {
        let terms = self.terms();
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        'scan: while !rest.is_empty() {
            let at_word_start = out.chars().next_back().is_none_or(|c| !is_word(c));
            if at_word_start {
                for (from, to) in terms {
                    if let Some(after) = rest.strip_prefix(from) {
                        let at_word_end = after.chars().next().is_none_or(|c| !is_word(c));
                        // Already translated: `--occurrence` must not become `----occurrence`.
                        let prefixed = out.ends_with('-');
                        if at_word_end && !prefixed {
                            out.push_str(to);
                            rest = after;
                            continue 'scan;
                        }
                    }
                }
            }
            let mut chars = rest.chars();
            if let Some(c) = chars.next() {
                out.push(c);
            }
            rest = chars.as_str();
        }
        out
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// An error, with every match listed for `ambiguous` and the revs for `stale`.
pub fn error(error: &ProtocolError, vocabulary: Vocabulary) -> String {
    let mut out = vocabulary.translate(&error.message);
    match error.kind {
        ErrorKind::Ambiguous => {
            if let Some(matches) = error.data.get("matches").and_then(Value::as_array) {
                for found in matches {
                    let occurrence = found.get("occurrence").and_then(Value::as_u64).unwrap_or(0);
                    let line = found.get("line").and_then(Value::as_u64).unwrap_or(0);
                    let column = found.get("column").and_then(Value::as_u64).unwrap_or(0);
                    let context = found.get("context").and_then(Value::as_str).unwrap_or("");
                    let _ = write!(out, "\n\noccurrence {occurrence} (line {line}, column {column}):\n{context}");
                }
                let count = error.data.get("matchCount").and_then(Value::as_u64).unwrap_or(0);
                if count as usize > matches.len() {
                    let _ = write!(out, "\n\n… and {} more", count as usize - matches.len());
                }
            }
        }
        ErrorKind::Stale => {
            if let Some(current) = error.data.get("currentRev").and_then(Value::as_str) {
                let _ = write!(out, "\ncurrent rev: {current}");
            }
        }
        ErrorKind::NotFound => {
            out = regions_follow(out);
            closest_regions(&mut out, &error.data);
        }
        _ => {}
    }
    // The other failures of a patch: each missing quote's closest text too.
    let others =
        error.data.get("failures").and_then(Value::as_array).and_then(|failures| failures.get(1..)).unwrap_or(&[]);
    for failure in others {
        let Some(failure) = failure.as_object().filter(|failure| failure.contains_key("closest")) else { continue };
        out = regions_follow(out);
        let line = failure.get("line").and_then(Value::as_u64).unwrap_or(0);
        let path = failure.get("path").and_then(Value::as_str).unwrap_or("");
        let _ = write!(out, "\n\nFor patch line {line} ({path}):");
        closest_regions(&mut out, failure);
    }
    out
}

/// The message says the closest regions follow, instead of where `data` holds them.
fn regions_follow(message: String) -> String {
    message
        .replace(CLOSEST_IN_DATA, "; it follows, with a diff from your quote")
        .replace(BOTH_CLOSEST_IN_DATA, "; both follow, with diffs from your quote")
}

/// The `closest` region of an error's (or a patch failure's) data, and those
/// `alsoClose`.
fn closest_regions(out: &mut String, data: &Map<String, Value>) {
    let Some(closest) = data.get("closest") else { return };
    closest_region(out, closest, "The closest text");
    let others = data.get("alsoClose").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for other in others {
        closest_region(out, other, "Nearly as close");
    }
}

/// Lines of the closest region, and of its diff, shown in an error's text.
const MAX_SHOWN_LINES: usize = 40;

/// The closest region of a quote that was not found, as the text front-ends show
/// it: the region with its line numbers, then the diff from the quote, each cut at
/// [`MAX_SHOWN_LINES`], so the next call can quote it without another read.
fn closest_region(out: &mut String, closest: &Value, heading: &str) {
    let first = closest.get("startLine").and_then(Value::as_u64).unwrap_or(1);
    let text = closest.get("text").and_then(Value::as_str).unwrap_or("");
    let diff = closest.get("diff").and_then(Value::as_str).unwrap_or("");
    let _ = write!(out, "\n\n{heading} (line {first} on):");
    let lines: Vec<&str> = text.split('\n').collect();
    for (index, line) in lines.iter().take(MAX_SHOWN_LINES).enumerate() {
        let _ = write!(out, "\n{:>6} | {line}", first as usize + index);
    }
    if lines.len() > MAX_SHOWN_LINES {
        let _ = write!(out, "\n       … {} more lines", lines.len() - MAX_SHOWN_LINES);
    }
    let diff_lines: Vec<&str> = diff.lines().collect();
    if !diff_lines.is_empty() {
        out.push_str("\n\nFrom your quote to that text:");
        for line in diff_lines.iter().take(MAX_SHOWN_LINES) {
            let _ = write!(out, "\n{line}");
        }
        if diff_lines.len() > MAX_SHOWN_LINES {
            let _ = write!(out, "\n… {} more lines", diff_lines.len() - MAX_SHOWN_LINES);
        }
    }
}

/// The name of a document in a result: the path in its diff, else its URI.
fn name_of(document: &DocumentResult) -> String {
    document
        .diff
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("--- a/").or_else(|| line.strip_prefix("--- ")))
        .filter(|name| !name.is_empty() && *name != "/dev/null")
        .map_or_else(|| document.uri.clone(), str::to_owned)
}

fn rev_change(document: &DocumentResult) -> String {
    match (&document.base_rev, &document.rev) {
        (Some(base), Some(rev)) => format!("rev {base} → {rev}"),
        (None, Some(rev)) => format!("created, rev {rev}"),
        (_, None) if document.pending_sync => {
            "new rev not known yet: the editor has not sent its changed text; read the file before editing it again"
                .to_owned()
        }
        (_, None) => "rev unknown".to_owned(),
    }
}

fn where_to(via: &Via) -> &'static str {
    match via {
        Via::Editor { .. } => "in the editor",
        Via::Headless => "on disk",
    }
}

/// Whether a result's text shows the diffs, or only the sentences around them (the
/// `message` of MCP's structured results, whose diffs are fields of their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Diffs {
    Shown,
    Omitted,
}

fn document(out: &mut String, document: &DocumentResult, applied: bool, dry_run: bool, via: &Via, diffs: Diffs) {
    let name = name_of(document);
    let change = match (document.operation.as_deref(), &document.new_uri) {
        (Some("move"), Some(target)) => format!(" (moved to {target})"),
        (Some("create"), _) => " (a new file)".to_owned(),
        (Some("delete"), _) => " (deleted)".to_owned(),
        _ => String::new(),
    };
    let name = format!("{name}{change}");
    // Each heading introduces the diff that follows it; without the diff, it ends the sentence.
    let end = match diffs {
        Diffs::Shown => ":",
        Diffs::Omitted => ".",
    };
    if dry_run {
        let _ = writeln!(
            out,
            "{name}: would change (rev {}){end}",
            document.base_rev.as_deref().unwrap_or("none, new file")
        );
    } else if !applied {
        let _ = writeln!(out, "{name}: not applied{end}");
    } else if document.partial {
        let what = if diffs == Diffs::Shown { " What was applied:" } else { "" };
        let _ = writeln!(
            out,
            "{name}: {} applied {} ({}); {}.{what}",
            hunks_applied(document),
            where_to(via),
            rev_change(document),
            left_out(document)
        );
    } else if document.modified_by_editor {
        let what = if diffs == Diffs::Shown { " The proposal was:" } else { "" };
        let _ = writeln!(
            out,
            "{name}: applied {}, but changed during review ({}).{what}",
            where_to(via),
            rev_change(document)
        );
    } else {
        let _ = writeln!(out, "{name}: applied {} ({}){end}", where_to(via), rev_change(document));
    }
    // How the new text's indentation was read is a note of its own, not something ignored.
    let (readings, ignored): (Vec<&String>, Vec<&String>) =
        document.normalizations.iter().partition(|name| name.starts_with("newText"));
    if !ignored.is_empty() {
        let ignored: Vec<&str> = ignored.iter().map(|name| name.as_str()).collect();
        let _ = writeln!(
            out,
            "(quoted almost verbatim; found by ignoring: {}. Quote exactly next time.)",
            ignored.join(", ")
        );
    }
    for reading in readings {
        let note = match reading.as_str() {
            "newTextKept" => "new text kept as written: it already fit the file's indentation",
            "newTextReindented" => "new text re-indented by the quote's shift, like the quote",
            other => other,
        };
        let _ = writeln!(out, "({note}.)");
    }
    if document.rebased && applied {
        let _ = writeln!(
            out,
            "(planned against rev {}, then moved over the changes made since, which did not touch it)",
            document.rebased_from.as_deref().unwrap_or("older")
        );
    }
    if diffs == Diffs::Shown {
        out.push_str(&document.diff);
        if let Some(editor_diff) = &document.editor_diff {
            let _ = write!(out, "What the editor applied differs from the proposal:\n{editor_diff}");
        }
    } else if document.editor_diff.is_some() {
        out.push_str("What the editor applied differs from the proposal (see editor_diff).\n");
    }
}

/// "2 of 3 hunks" (of a document whose person left some out).
fn hunks_applied(document: &DocumentResult) -> String {
    let hunks = document.hunks.as_deref().unwrap_or_default();
    let kept = hunks.iter().filter(|hunk| hunk.accepted).count();
    format!("{kept} of {} hunk{}", hunks.len(), if hunks.len() == 1 { "" } else { "s" })
}

/// "the person left out lines 40–44 and 52" (in the text before the edit).
fn left_out(document: &DocumentResult) -> String {
    let places: Vec<String> = document
        .hunks
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|hunk| !hunk.accepted)
        .map(|hunk| match hunk.old_lines {
            0 => format!("the {} line{} to insert before line {}", hunk.new_lines, plural(hunk.new_lines), hunk.line),
            1 => format!("line {}", hunk.line),
            count => format!("lines {}–{}", hunk.line, hunk.line + count - 1),
        })
        .collect();
    format!("the person left out {}", join_words(&places))
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// "a", "a and b", "a, b and c".
fn join_words(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The person's reason for leaving hunks out, if they gave one.
fn reason_line(out: &mut String, reason: Option<&str>) {
    if let Some(reason) = reason {
        let _ = writeln!(out, "Their reason: {reason}");
    }
}

/// The result of `strReplace`, `replaceRange` or `write`.
pub fn edit_result(result: &EditResult, via: &Via) -> String {
    edit_result_with(result, via, Diffs::Shown)
}

/// The result of `strReplace`, `replaceRange` or `write`, with or without its diff.
pub fn edit_result_with(result: &EditResult, via: &Via, diffs: Diffs) -> String {
    let mut out = String::new();
    if result.dry_run {
        out.push_str("Dry run: nothing was written.\n");
    }
    document(&mut out, &result.document, result.applied, result.dry_run, via, diffs);
    reason_line(&mut out, result.reason.as_deref());
    diagnostics(&mut out, result.diagnostics.as_ref());
    out
}

/// The result of `batchEdit`.
pub fn batch_result(result: &BatchResult, via: &Via) -> String {
    batch_result_with(result, via, Diffs::Shown)
}

/// The result of `batchEdit`, with or without its diffs.
pub fn batch_result_with(result: &BatchResult, via: &Via, diffs: Diffs) -> String {
    let mut out = String::new();
    if result.dry_run {
        out.push_str("Dry run: nothing was written.\n");
    }
    for item in &result.documents {
        document(&mut out, item, result.applied, result.dry_run, via, diffs);
    }
    reason_line(&mut out, result.reason.as_deref());
    diagnostics(&mut out, result.diagnostics.as_ref());
    out
}

/// What the editor's language servers reported after the write, under a neutral
/// heading: what changed, never an order.
fn diagnostics(out: &mut String, report: Option<&DiagnosticsReport>) {
    let Some(report) = report else { return };
    let sources = if report.sources.is_empty() { String::new() } else { format!("; {}", report.sources.join(", ")) };
    let status = match report.status {
        DiagnosticsStatus::Settled => format!("settled after {} ms{sources}", report.waited_ms),
        DiagnosticsStatus::TimedOut => format!("incomplete: not settled after {} ms{sources}", report.waited_ms),
        DiagnosticsStatus::Unavailable => "unavailable".to_owned(),
    };
    let _ = writeln!(out, "\nDiagnostics after the edit ({}, {status}):", report.severity);
    if report.status != DiagnosticsStatus::Unavailable {
        let list = |out: &mut String, heading: &str, items: &[ProblemItem]| {
            if items.is_empty() {
                return;
            }
            let _ = writeln!(out, "{heading}:");
            for item in items {
                let code = match (&item.source, &item.code) {
                    (Some(source), Some(code)) => format!(" [{source} {code}]"),
                    (Some(source), None) => format!(" [{source}]"),
                    (None, Some(code)) => format!(" [{code}]"),
                    (None, None) => String::new(),
                };
                let _ = writeln!(out, "  {} {}{code}: {}", item.location, item.severity, item.message);
                if !item.text.is_empty() {
                    let _ = writeln!(out, "      {}", item.text);
                }
            }
        };
        list(out, "Introduced", &report.introduced);
        list(out, "Resolved", &report.resolved);
        list(out, "In other files", &report.other_files);
        if report.omitted > 0 {
            let _ = writeln!(out, "… {} more", report.omitted);
        }
        let nothing_new = report.introduced.is_empty() && report.resolved.is_empty() && report.other_files.is_empty();
        if nothing_new && report.status == DiagnosticsStatus::Settled {
            let checked = if report.unchecked.is_empty() { "" } else { " in the files checked" };
            let _ = writeln!(out, "No problem introduced or resolved{checked}.");
        }
        let _ = writeln!(out, "Already there before the edit: {}.", report.existing);
    }
    if let Some(note) = &report.note {
        let _ = writeln!(out, "{note}");
    }
}

/// The result of `applyPatch`.
pub fn patch_result(result: &ApplyPatchResult, via: &Via) -> String {
    patch_result_with(result, via, Diffs::Shown)
}

/// The result of `applyPatch`, with or without its diffs.
pub fn patch_result_with(result: &ApplyPatchResult, via: &Via, diffs: Diffs) -> String {
    let batch = BatchResult {
        applied: result.applied,
        dry_run: result.dry_run,
        modified_by_editor: result.modified_by_editor,
        documents: result.documents.clone(),
        partial: result.partial,
        reason: result.reason.clone(),
        diagnostics: result.diagnostics.clone(),
    };
    batch_result_with(&batch, via, diffs)
}

/// A one-line header for a read: name, rev, line endings, and where the text came from.
pub fn read_header(result: &ReadResult, label: &str) -> String {
    read_header_with(result, label, true)
}

/// [`read_header`], saying what becomes of edits to a file no editor serves: written
/// straight to it, or (`headless_writes` off) refused.
pub fn read_header_with(result: &ReadResult, label: &str, headless_writes: bool) -> String {
    let lines = if result.text.is_empty() { 0 } else { result.text.lines().count() };
    let source = match result.source.as_str() {
        "editor" => "the editor's buffer, unsaved changes included",
        "disk" => "disk; not open in the editor",
        "headless" if headless_writes => "disk; no editor serves it, edits are written straight to the file",
        "headless" => "disk; no editor serves it, so Verbatim will not edit it: use your own edit tool",
        other => other,
    };
    let mut header = format!(
        "{label} · rev {} · {} line{} · {} line endings · from {source}",
        result.rev,
        lines,
        if lines == 1 { "" } else { "s" },
        result.line_ending
    );
    if let Some(note) = &result.note {
        header.push_str(" · note: ");
        header.push_str(note);
    }
    header
}

/// `verbatim/documents`.
pub fn documents(documents: &[DocumentInfo]) -> String {
    if documents.is_empty() {
        return "No documents are open (or no editor with verbatim serves this directory).\n".to_owned();
    }
    let mut out = String::new();
    for item in documents {
        let _ = writeln!(out, "{}  rev {}  {} lines  {}", item.uri, item.rev, item.line_count, item.language_id);
    }
    out
}

/// The running servers.
pub fn editors(servers: &[DiscoveryFile]) -> String {
    if servers.is_empty() {
        return "No editor with verbatim is running for this user (in any of its runtime directories).\n".to_owned();
    }
    let mut out = String::new();
    for server in servers {
        let editor = server.client_info.as_ref().map_or_else(
            || "unknown editor".to_owned(),
            |info| match &info.version {
                Some(version) => format!("{} {version}", info.name),
                None => info.name.clone(),
            },
        );
        let _ = writeln!(out, "pid {}  {editor}  since {}", server.pid, server.started_at);
        let _ = writeln!(out, "  socket  {}", server.socket);
        for folder in &server.workspace_folders {
            let _ = writeln!(out, "  folder  {folder}");
        }
    }
    out
}

/// One journal entry; with `diff`, the diff too.
pub fn journal_entry(entry: &Entry, with_diff: bool) -> String {
    let outcome = match (&entry.outcome, &entry.reason, &entry.error_kind) {
        (Outcome::Rejected, Some(reason), _) => format!("rejected ({reason})"),
        (Outcome::Error, _, Some(kind)) => format!("error ({kind})"),
        (outcome, _, _) => outcome.as_str().to_owned(),
    };
    let source = match entry.source {
        crate::service::journal::Source::Editor => "editor",
        crate::service::journal::Source::Headless => "headless",
        crate::service::journal::Source::Disk => "disk",
    };
    let mut out =
        format!("{}  {outcome}  {}  via {source}  {}  \"{}\"", entry.time, entry.agent, entry.uri, entry.summary);
    if let Some(commit) = &entry.commit {
        let _ = write!(out, "  commit {}", commit.get(..12).unwrap_or(commit));
    }
    out.push('\n');
    if with_diff {
        out.push_str(&entry.diff);
        if let Some(editor_diff) = &entry.editor_diff {
            out.push_str(editor_diff);
        }
    }
    out
}

/// Journal entries (newest first), under a line for each session and turn.
pub fn journal_grouped(entries: &[&crate::service::timeline::Journaled], with_diff: bool) -> String {
    let mut out = String::new();
    let mut shown: Option<(&str, &str)> = None;
    for journaled in entries {
        let group = (journaled.session.as_str(), journaled.turn.as_str());
        if shown != Some(group) {
            if shown.is_some() {
                out.push('\n');
            }
            let _ = writeln!(out, "session {}  turn {}", journaled.session, journaled.turn);
            shown = Some(group);
        }
        let _ = write!(out, "  {}  ", journaled.id);
        out.push_str(&journal_entry(&journaled.entry, with_diff));
    }
    out
}

/// What `verbatim revert` did (or would do), for a person.
pub fn revert(result: &crate::service::protocol::RevertResult) -> String {
    let mut out = format!("{}\n", result.message);
    for file in &result.files {
        let _ =
            writeln!(out, "  {} {}  via {}  {} hunk(s)  {}", file.action, file.uri, file.via, file.hunks, file.outcome);
        for conflict in &file.conflicts {
            let _ = writeln!(
                out,
                "    conflict, lines {}-{} ({}): now\n{}    reverting would give\n{}",
                conflict.start_line,
                conflict.end_line,
                if conflict.chosen == "reverted" { "reverted" } else { "left as it is" },
                indent(&conflict.current),
                indent(&conflict.reverted)
            );
        }
    }
    for skipped in &result.skipped {
        let _ = writeln!(out, "  skipped {}: {}", skipped.id, skipped.why);
    }
    if let Some(write_id) = &result.write_id {
        let _ = writeln!(out, "  journaled as {write_id} (revert it in turn with: verbatim revert {write_id})");
    }
    out
}

/// A timeline, for a model or a person: sessions, turns and writes with their ids.
pub fn timeline(result: &crate::service::protocol::TimelineResult) -> String {
    let mut out = String::new();
    if result.sessions.is_empty() {
        out.push_str("No changes in the journal yet.\n");
    }
    for session in &result.sessions {
        let _ =
            writeln!(out, "session {} ({}, {} to {})", session.session, session.agent, session.started, session.ended);
        for turn in &session.turns {
            let _ = writeln!(out, "  turn {}", turn.turn);
            for edit in &turn.edits {
                let reverted = edit.reverted_by.as_ref().map(|by| format!(", reverted by {by}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "    {} {} {}: \"{}\" ({}{reverted})",
                    edit.write_id, edit.time, edit.agent, edit.summary, edit.outcome
                );
                for file in &edit.files {
                    let why = file.why_not.as_ref().map(|why| format!(", not revertible: {why}")).unwrap_or_default();
                    let _ = writeln!(out, "      {} {} +{} -{}{why}", file.id, file.uri, file.added, file.removed);
                }
            }
        }
    }
    if result.truncated {
        out.push_str("(older sessions left out)\n");
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|line| format!("      | {line}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_terms_become_front_end_terms() {
        let message = "oldStr matches 2 times in a.rs (lines 1, 3). Resend with occurrence: N (1-2), or narrow the window with after/before.";
        assert_eq!(
            Vocabulary::Cli.translate(message),
            "--old matches 2 times in a.rs (lines 1, 3). Resend with --occurrence N (1-2), or narrow the window with --after/--before."
        );
        assert_eq!(
            Vocabulary::Mcp.translate(message),
            "old_str matches 2 times in a.rs (lines 1, 3). Resend with occurrence: N (1-2), or narrow the window with after/before."
        );
        assert_eq!(
            Vocabulary::Mcp.translate("read it again (verbatim/read); baseRev e1"),
            "read it again (read_file); base_rev e1"
        );
        // Words that merely contain a term stay.
        assert_eq!(Vocabulary::Cli.translate("occurrences toStrings"), "occurrences toStrings");
        assert_eq!(Vocabulary::Cli.translate("occurrence 4 names no match"), "--occurrence 4 names no match");
    }

    use crate::service::protocol::HunkOutcome;

    #[test]
    fn a_partial_acceptance_says_what_was_left_out_and_why() {
        let hunk = |index, accepted, line, old_lines| HunkOutcome { index, accepted, line, old_lines, new_lines: 2 };
        let document = DocumentResult {
            uri: "file:///p/a.rs".into(),
            base_rev: Some("e1.1".into()),
            rev: Some("e1.2".into()),
            edits: Vec::new(),
            replaced: Vec::new(),
            diff: "@@ -3 +3 @@\n".into(),
            modified_by_editor: false,
            editor_diff: None,
            normalizations: Vec::new(),
            operation: None,
            new_uri: None,
            rebased: false,
            rebased_from: None,
            hunks: Some(vec![hunk(0, true, 3, 1), hunk(1, false, 40, 5), hunk(2, false, 52, 0)]),
            partial: true,
            pending_sync: false,
        };
        let result = EditResult {
            applied: true,
            dry_run: false,
            document,
            reason: Some("keep the API".into()),
            diagnostics: None,
        };
        let text = edit_result(&result, &Via::Editor { socket: "/tmp/v.sock".into() });
        assert!(
            text.contains("1 of 3 hunks applied")
                && text.contains("the person left out lines 40–44 and the 2 lines to insert before line 52"),
            "{text}"
        );
        assert!(text.contains("Their reason: keep the API"), "{text}");
    }

    #[test]
    fn a_settled_report_with_an_unchecked_file_claims_only_the_files_checked() {
        let report = DiagnosticsReport {
            status: DiagnosticsStatus::Settled,
            waited_ms: 320,
            sources: vec!["ruff".into()],
            severity: "errors".into(),
            introduced: Vec::new(),
            resolved: Vec::new(),
            existing: 0,
            other_files: Vec::new(),
            omitted: 0,
            unchecked: vec!["notes.txt".into()],
            unsaved: false,
            note: Some("Not checked: notes.txt. …".into()),
        };
        let mut out = String::new();
        diagnostics(&mut out, Some(&report));
        assert!(out.contains("settled after 320 ms; ruff"), "{out}");
        assert!(out.contains("No problem introduced or resolved in the files checked."), "{out}");
        assert!(out.contains("Not checked: notes.txt."), "{out}");
    }
}
