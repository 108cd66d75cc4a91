//! What `verbatim mcp`'s tools put in `structuredContent`, and the `outputSchema`
//! that describes it.
//!
//! Claude Code and Codex show the model only the JSON of `structuredContent` for a
//! successful call, never the text content, so everything the text says for the model
//! is here too: `message` holds the same sentences (without the diffs, which are in
//! each file's `diff`), and the fields are those the model acts on: the `rev` to pass
//! as `base_rev` next, the hunks the person kept and left out with their lines and
//! reason, `rebased`, the diagnostics report. An error result carries `message` (its
//! whole text) and `error` (its kind and the protocol's `data`: every match of an
//! ambiguous quote, `stale_lines`, the closest texts of a near miss), so the one schema
//! describes both.
//!
//! Field names are snake_case, like the tools' parameters (`base_rev`). `read_file`
//! has no structured form on purpose: as JSON, the file's text would reach the model
//! escaped (`\n`, `\"`), and quoting it back exactly is the whole point of the tool.

use std::sync::Arc;

use rmcp::model::JsonObject;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::{Map, Value};
use verbatim_engine::doc_key::DocKey;

use crate::frontend::Via;
use crate::service::error::ProtocolError;
use crate::service::protocol::{
    DiagnosticsReport, DiagnosticsStatus, DocumentInfo, DocumentResult, HunkOutcome, ProblemItem,
};

/// The structured result of every editing tool (`str_replace`, `replace_range`,
/// `write_file`, `batch_edit`, `apply_patch`), success or error.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EditOutput {
    /// What happened, for the model: the same sentences as the text content, without the diffs.
    pub message: String,
    /// The change is in the file(s). False for a dry run, a refusal or an error.
    pub applied: bool,
    /// Nothing was written: the change was only computed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// `editor` (offered for review in the person's editor) or `headless` (written on disk, no editor serves the file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<&'static str>,
    /// The person applied some hunks and left others out: read the file again before building on the edit.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// Why the person left hunks out, in their words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Each file the change touched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileOutput>,
    /// What the editor's language servers reported after the edit (when asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsOutput>,
    /// The git commit of a headless write (`--git-commit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Why that commit failed; the file was written all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_error: Option<String>,
    /// Set when the call failed: nothing was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
}

/// One file of a change.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileOutput {
    /// The file's absolute path (its URI when it has no path).
    pub path: String,
    /// The file's rev now: pass it as `base_rev` to edit the file again. For a dry run, the rev it was computed against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// The rev the change was applied to; absent for a new file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rev: Option<String>,
    /// `create`, `delete` or `move` when the file itself was created, deleted or moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Where a moved file went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_path: Option<String>,
    /// The change as a unified diff (what was proposed).
    pub diff: String,
    /// The person changed the proposal during review; `editor_diff` is what was applied.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub modified_by_editor: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor_diff: Option<String>,
    /// The `base_rev` sent was older: the edit was moved over the changes made since (the person's typing), which did not touch it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rebased: bool,
    /// The `base_rev` the edit was planned against, when it was rebased.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebased_from: Option<String>,
    /// What it took to find the quotes (`lineNumbers`, `typography`, `lineEndings`, `trailingWhitespace`, `indentation`): quote exactly next time.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub normalizations: Vec<String>,
    /// The person kept some hunks of this file and left the others out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// Each hunk of the proposal and whether the person kept it (edits reviewed in the editor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hunks: Option<Vec<HunkOutput>>,
    /// The editor applied the change but has not sent its new text yet (some editors send it with the person's next keystroke or save): `rev` is absent; read the file before editing it again.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending_sync: bool,
}

/// One hunk of a proposal.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HunkOutput {
    /// Numbered across the whole change, from 0.
    pub index: usize,
    /// The person kept it.
    pub accepted: bool,
    /// Its first line (1-based) in the text before the edit.
    pub line: usize,
    /// Lines it replaces (0: it only inserts, before `line`).
    pub old_lines: usize,
    /// Lines it puts in their place.
    pub new_lines: usize,
}

/// The problems the editor's language servers reported after the edit.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiagnosticsOutput {
    /// `settled` (complete), `timedOut` (the lists may be incomplete) or `unavailable` (nothing reports on the file).
    pub status: String,
    pub waited_ms: u64,
    /// The language servers that reported.
    pub sources: Vec<String>,
    /// `errors` or `warnings` (errors and warnings).
    pub severity: String,
    pub introduced: Vec<ProblemOutput>,
    pub resolved: Vec<ProblemOutput>,
    /// Problems that were there before the edit and still are.
    pub existing: usize,
    pub other_files: Vec<ProblemOutput>,
    /// Items left out to keep the lists short.
    pub omitted: usize,
    /// Edited files nothing reported on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One problem.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProblemOutput {
    /// `path:line:column`, 1-based.
    pub location: String,
    pub severity: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    /// The source line, trimmed.
    pub text: String,
}

/// A failed call.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ErrorOutput {
    /// The error kind (`notFound`, `ambiguous`, `stale`, `rejected`, ...): `message` says what to send next.
    pub kind: String,
    /// What the kind carries, snake_case: `matches` of an ambiguous quote, `current_rev` and `stale_lines` of a stale one, the `closest` text of a quote not found (and `also_close`, a region nearly as close), ...
    #[serde(flatten)]
    pub data: Map<String, Value>,
}

/// The structured result of `timeline` and `revert`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct JournalOutput {
    /// The same words as the text content.
    pub message: String,
    /// The protocol's result (`verbatim/timeline` or `verbatim/revert`, see docs/protocol.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
}

/// The structured result of `list_documents`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocumentsOutput {
    /// The same words as the text content.
    pub message: String,
    /// The documents open in the person's editor.
    pub documents: Vec<OpenDocumentOutput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorOutput>,
}

/// One open document.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OpenDocumentOutput {
    pub path: String,
    /// Pass it as `base_rev` to edit this document.
    pub rev: String,
    pub line_count: usize,
    pub language_id: String,
}

/// A URI as the model names files: the path, when it has one.
fn path_of(uri: &str) -> String {
    DocKey::parse(uri)
        .ok()
        .and_then(|key| key.path().map(|path| path.display().to_string()))
        .unwrap_or_else(|| uri.to_owned())
}

impl FileOutput {
    pub fn from_result(document: &DocumentResult) -> Self {
        Self {
            path: path_of(&document.uri),
            rev: document.rev.clone(),
            base_rev: document.base_rev.clone(),
            operation: document.operation.clone(),
            new_path: document.new_uri.as_deref().map(path_of),
            diff: document.diff.clone(),
            modified_by_editor: document.modified_by_editor,
            editor_diff: document.editor_diff.clone(),
            rebased: document.rebased,
            rebased_from: document.rebased_from.clone(),
            normalizations: document.normalizations.clone(),
            partial: document.partial,
            hunks: document.hunks.as_ref().map(|hunks| hunks.iter().map(HunkOutput::from_outcome).collect()),
            pending_sync: document.pending_sync,
        }
    }
}

impl HunkOutput {
    fn from_outcome(hunk: &HunkOutcome) -> Self {
        Self {
            index: hunk.index,
            accepted: hunk.accepted,
            line: hunk.line,
            old_lines: hunk.old_lines,
            new_lines: hunk.new_lines,
        }
    }
}

impl DiagnosticsOutput {
    pub fn from_report(report: &DiagnosticsReport) -> Self {
        let problems = |items: &[ProblemItem]| items.iter().map(ProblemOutput::from_item).collect();
        Self {
            status: match report.status {
                DiagnosticsStatus::Settled => "settled",
                DiagnosticsStatus::TimedOut => "timedOut",
                DiagnosticsStatus::Unavailable => "unavailable",
            }
            .to_owned(),
            waited_ms: report.waited_ms,
            sources: report.sources.clone(),
            severity: report.severity.clone(),
            introduced: problems(&report.introduced),
            resolved: problems(&report.resolved),
            existing: report.existing,
            other_files: problems(&report.other_files),
            omitted: report.omitted,
            unchecked: report.unchecked.clone(),
            note: report.note.clone(),
        }
    }
}

impl ProblemOutput {
    fn from_item(item: &ProblemItem) -> Self {
        Self {
            location: item.location.clone(),
            severity: item.severity.clone(),
            source: item.source.clone(),
            code: item.code.clone(),
            message: item.message.clone(),
            text: item.text.clone(),
        }
    }
}

impl OpenDocumentOutput {
    pub fn from_info(info: &DocumentInfo) -> Self {
        Self {
            path: path_of(&info.uri),
            rev: info.rev.clone(),
            line_count: info.line_count,
            language_id: info.language_id.clone(),
        }
    }
}

impl EditOutput {
    /// A successful (or refused, or dry) change.
    pub fn new(message: String, applied: bool, dry_run: bool, via: &Via) -> Self {
        Self {
            message,
            applied,
            dry_run,
            via: Some(via.as_str()),
            partial: false,
            reason: None,
            files: Vec::new(),
            diagnostics: None,
            commit: None,
            commit_error: None,
            error: None,
        }
    }

    /// A failed call: its whole text as the message, its kind and data as `error`.
    pub fn failed(message: String, error: Option<&ProtocolError>) -> Self {
        Self {
            message,
            applied: false,
            dry_run: false,
            via: None,
            partial: false,
            reason: None,
            files: Vec::new(),
            diagnostics: None,
            commit: None,
            commit_error: None,
            error: error.map(ErrorOutput::from_error),
        }
    }
}

impl ErrorOutput {
    pub fn from_error(error: &ProtocolError) -> Self {
        let data = match snake_case_keys(Value::Object(error.data.clone())) {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self { kind: error.kind.as_str().to_owned(), data }
    }
}

/// `currentRev` → `current_rev`, in every object of `value`.
fn snake_case_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(key, value)| (snake_case(&key), snake_case_keys(value))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(snake_case_keys).collect()),
        other => other,
    }
}

fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A schema every client reads: no `format` (`uint64`, `uint`, ...: JSON Schema's
/// formats for integers are not standard, and Gemini CLI warns about each), an
/// unsigned integer says `minimum: 0` instead. The top-level title and description
/// go (they name the Rust type).
pub fn portable_schema(schema: &JsonObject) -> Arc<JsonObject> {
    let mut value = Value::Object(schema.clone());
    drop_integer_formats(&mut value);
    let Value::Object(mut object) = value else { return Arc::new(schema.clone()) };
    object.remove("title");
    object.remove("description");
    Arc::new(object)
}

fn drop_integer_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let format = map.get("format").and_then(Value::as_str).map(str::to_owned);
            if let Some(format) = format.filter(|format| format.starts_with("uint") || format.starts_with("int")) {
                map.remove("format");
                if format.starts_with("uint") && !map.contains_key("minimum") {
                    map.insert("minimum".into(), Value::from(0));
                }
            }
            map.values_mut().for_each(drop_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_integer_formats),
        _ => {}
    }
}

/// The input schema of a tool's parameters, portable.
pub fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    portable_schema(&rmcp::handler::server::tool::schema_for_type::<T>())
}

/// The output schema of a tool's structured result, portable.
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    portable_schema(&rmcp::handler::server::tool::schema_for_output::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn formats(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(format) = map.get("format").and_then(Value::as_str) {
                    out.push(format.to_owned());
                }
                map.values().for_each(|value| formats(value, out));
            }
            Value::Array(items) => items.iter().for_each(|value| formats(value, out)),
            _ => {}
        }
    }

    #[test]
    fn the_output_schemas_have_no_integer_formats_and_say_minimum_zero() {
        for schema in [output_schema::<EditOutput>(), output_schema::<DocumentsOutput>()] {
            let value = Value::Object((*schema).clone());
            let mut found = Vec::new();
            formats(&value, &mut found);
            assert!(found.is_empty(), "{found:?} in {value}");
            assert_eq!(value["type"], "object", "{value}");
            assert!(value["required"].as_array().is_some_and(|required| required.contains(&"message".into())));
        }
        let edit = Value::Object((*output_schema::<EditOutput>()).clone());
        let hunk = &edit["$defs"]["HunkOutput"]["properties"]["line"];
        assert_eq!(hunk["minimum"], 0, "{edit}");
    }

    #[test]
    fn error_data_keys_become_snake_case() {
        let error = ProtocolError::new(crate::service::error::ErrorKind::Stale, "changed")
            .with("currentRev", "e1.4")
            .with("staleLines", serde_json::json!([{"oldLine": 3}]));
        let output = serde_json::to_value(ErrorOutput::from_error(&error)).unwrap_or_default();
        assert_eq!(
            output,
            serde_json::json!({"kind": "stale", "current_rev": "e1.4", "stale_lines": [{"old_line": 3}]})
        );
    }
}
