//! The agent methods: documents, read, strReplace, replaceRange, batchEdit, write.
//!
//! Every write follows the same path: take the write lanes of its documents (one
//! writer per document at a time, in arrival order), snapshot every document at
//! once, check each `baseRev`, plan every edit against the snapshot, refuse
//! overlaps, then either report the plan (dry run) or apply it through the editor.
//!
//! The planning steps ([`WriteRequest`], [`resolve_keys`], [`plan_documents`],
//! [`proposal`], [`report_applied`]) are shared with [`crate::headless`], which
//! takes file locks instead of lanes, snapshots the disk, and writes files instead
//! of asking the editor.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ropey::Rope;
use serde::de::DeserializeOwned;
use serde_json::Value;

use verbatim_engine::disk::line_ending_of;
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::history;
use verbatim_engine::line_endings;
use verbatim_engine::normalize::Normalization;
use verbatim_engine::plan::{self, Edit, PlanError, ReplaceRange, Replacement, StrReplace, sort_disjoint};
use verbatim_engine::rev::Rev;

use crate::service::deliver::deliver;
use crate::service::deliver::planned::PlannedDocument;
use crate::service::deliver::report::Outcome;
use crate::service::diagnostics::Ask;
use crate::service::error::{ErrorKind, ProtocolError, params_error};
use crate::service::feedback::{self, Context};
use crate::service::protocol::{
    BatchEditParams, BatchEntry, BatchResult, DiagnosticsLevel, DocumentInfo, EditResult, ReadParams, ReadResult,
    ReplaceRangeParams, StrReplaceParams, WriteParams,
};
use crate::service::registry::AgentInfo;
use crate::service::snapshot::{Snapshot, changed_under_quote, check_base_rev, disk_snapshot, take_snapshots};
use crate::service::state::State;

/// Parses params, turning serde's complaint into an `invalidParams` error.
pub fn parse_params<P: DeserializeOwned>(method: &str, params: Value) -> Result<P, ProtocolError> {
    serde_json::from_value(params).map_err(|error| params_error(method, &error))
}

pub fn documents(state: &State) -> Vec<DocumentInfo> {
    let store = state.documents.lock();
    let mut documents: Vec<DocumentInfo> = store
        .iter()
        .map(|(key, document)| DocumentInfo {
            uri: key.to_uri(),
            rev: document.rev().to_string(),
            language_id: document.language_id.clone(),
            line_count: document.text.len_lines(),
        })
        .collect();
    documents.sort_by(|a, b| a.uri.cmp(&b.uri));
    documents
}

/// How long a read or an edit waits for a change the editor has not sent yet (a
/// reload it was asked for, or an edit it said it applied) before it takes the buffer
/// as it is.
const EDITOR_TEXT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

pub async fn read(state: &State, params: ReadParams) -> Result<ReadResult, ProtocolError> {
    let key = parse_key(&params.uri)?;
    wait_for_editor_text(state, &key).await;
    let open = state.documents.lock().get(&key).map(|document| {
        (document.text.clone(), document.rev(), document.awaits_editor_text(), document.disk_baseline())
    });
    let (text, rev, source, note, file_text) = match open {
        Some((text, rev, awaiting, baseline)) => {
            (text.to_string(), rev, "editor", awaiting.then(|| UNSENT_NOTE.to_owned()), baseline)
        }
        None => {
            let snapshot = disk_snapshot(state, &key, false)?;
            (snapshot.text.to_string(), snapshot.rev.unwrap_or(Rev::of_bytes(b"")), "disk", None, None)
        }
    };
    Ok(ReadResult {
        uri: key.to_uri(),
        rev: rev.to_string(),
        line_ending: file_line_ending(&text, file_text.as_ref()).to_owned(),
        text,
        source: source.to_owned(),
        note,
    })
}

/// The line ending of the file: the buffer's, unless the buffer holds LF where the
/// file on disk (as it was when the buffer last agreed with it) holds CRLF, as Emacs
/// shows a CRLF file: then the file's, which is what a save writes.
fn file_line_ending(text: &str, file_text: Option<&Rope>) -> &'static str {
    let in_buffer = line_ending_of(text);
    match file_text {
        Some(file_text) if in_buffer == "lf" && line_ending_of(&file_text.to_string()) == "crlf" => "crlf",
        _ => in_buffer,
    }
}

/// Said of a read while the editor still owes a change it made.
const UNSENT_NOTE: &str = "the editor has changed this buffer (an edit it applied, or a reload from disk) but has not \
     sent the change yet, so this text is from before it. Some editors send changes only with the person's next \
     keystroke or save (Eglot): read again once they have.";

/// Waits (at most [`EDITOR_TEXT_WAIT`]) while the editor owes a change: a reload from
/// disk (so an agent that just wrote the file reads what it wrote, not the text the
/// reload is about to replace), or an edit it said it applied and has not sent.
async fn wait_for_editor_text(state: &State, key: &DocKey) {
    state
        .documents
        .wait_until(EDITOR_TEXT_WAIT, |store| store.get(key).is_none_or(|document| !document.awaits_editor_text()))
        .await;
}

pub async fn str_replace(
    state: &Arc<State>,
    agent: &AgentInfo,
    params: StrReplaceParams,
) -> Result<EditResult, ProtocolError> {
    run(state, agent, &WriteRequest::str_replace(params)).await?.into_single()
}

pub async fn replace_range(
    state: &Arc<State>,
    agent: &AgentInfo,
    params: ReplaceRangeParams,
) -> Result<EditResult, ProtocolError> {
    run(state, agent, &WriteRequest::replace_range(params)).await?.into_single()
}

pub async fn write(state: &Arc<State>, agent: &AgentInfo, params: WriteParams) -> Result<EditResult, ProtocolError> {
    run(state, agent, &WriteRequest::write(params)).await?.into_single()
}

pub async fn batch_edit(
    state: &Arc<State>,
    agent: &AgentInfo,
    params: BatchEditParams,
) -> Result<BatchResult, ProtocolError> {
    Ok(run(state, agent, &WriteRequest::batch(params)?).await?.into_batch())
}

fn batch_entry(entry: BatchEntry) -> Result<EntryRequest, ProtocolError> {
    let edit = match (entry.old_str, entry.from_str, entry.to_str) {
        (Some(old_str), None, None) => Edit::StrReplace(StrReplace {
            old_str,
            new_str: entry.new_str,
            after: entry.after,
            before: entry.before,
            occurrence: entry.occurrence,
            replace_all: entry.replace_all,
            exact: entry.exact,
        }),
        (None, Some(from_str), Some(to_str)) => {
            if entry.occurrence.is_some() || entry.replace_all {
                return Err(ProtocolError::invalid_params(
                    Some("occurrence"),
                    "`occurrence` and `replaceAll` apply to oldStr entries only; a fromStr/toStr entry must quote unique text.",
                ));
            }
            Edit::ReplaceRange(ReplaceRange {
                from_str,
                to_str,
                new_str: entry.new_str,
                after: entry.after,
                before: entry.before,
                exact: entry.exact,
            })
        }
        _ => {
            return Err(ProtocolError::invalid_params(
                None,
                "each edit needs either `oldStr` (a strReplace entry) or both `fromStr` and `toStr` (a replaceRange entry), not a mix.",
            ));
        }
    };
    Ok(EntryRequest { uri: entry.uri, base_rev: entry.base_rev, edit })
}

/// One edit request before its document is resolved.
#[derive(Debug, Clone)]
pub(crate) struct EntryRequest {
    pub(crate) uri: String,
    pub(crate) base_rev: Option<String>,
    pub(crate) edit: Edit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// strReplace, replaceRange: one entry.
    Single,
    /// batchEdit: errors name the entry.
    Batch,
    /// write: may create the file.
    Write,
}

/// A write as an agent asked for it: what every target (editor or disk) plans from.
#[derive(Debug, Clone)]
pub(crate) struct WriteRequest {
    pub(crate) entries: Vec<EntryRequest>,
    pub(crate) summary: String,
    pub(crate) dry_run: bool,
    pub(crate) mode: Mode,
    /// The write's `diagnostics` and `diagnosticsTimeoutMs`.
    pub(crate) diagnostics: (Option<DiagnosticsLevel>, Option<u64>),
    /// The agent's turn, for the journal.
    pub(crate) turn: Option<String>,
}

impl WriteRequest {
    pub(crate) fn str_replace(params: StrReplaceParams) -> Self {
        let entry = EntryRequest {
            uri: params.uri,
            base_rev: params.base_rev,
            edit: Edit::StrReplace(StrReplace {
                old_str: params.old_str,
                new_str: params.new_str,
                after: params.after,
                before: params.before,
                occurrence: params.occurrence,
                replace_all: params.replace_all,
                exact: params.exact,
            }),
        };
        Self {
            entries: vec![entry],
            summary: params.summary,
            dry_run: params.dry_run,
            mode: Mode::Single,
            diagnostics: (params.diagnostics, params.diagnostics_timeout_ms),
            turn: params.turn,
        }
    }

    pub(crate) fn replace_range(params: ReplaceRangeParams) -> Self {
        let entry = EntryRequest {
            uri: params.uri,
            base_rev: params.base_rev,
            edit: Edit::ReplaceRange(ReplaceRange {
                from_str: params.from_str,
                to_str: params.to_str,
                new_str: params.new_str,
                after: params.after,
                before: params.before,
                exact: params.exact,
            }),
        };
        Self {
            entries: vec![entry],
            summary: params.summary,
            dry_run: params.dry_run,
            mode: Mode::Single,
            diagnostics: (params.diagnostics, params.diagnostics_timeout_ms),
            turn: params.turn,
        }
    }

    pub(crate) fn write(params: WriteParams) -> Self {
        let entry =
            EntryRequest { uri: params.uri, base_rev: params.base_rev, edit: Edit::WriteAll { text: params.text } };
        Self {
            entries: vec![entry],
            summary: params.summary,
            dry_run: false,
            mode: Mode::Write,
            diagnostics: (params.diagnostics, params.diagnostics_timeout_ms),
            turn: params.turn,
        }
    }

    pub(crate) fn batch(params: BatchEditParams) -> Result<Self, ProtocolError> {
        if params.edits.is_empty() {
            return Err(ProtocolError::invalid_params(Some("edits"), "`edits` is empty: send at least one edit."));
        }
        let entries = params
            .edits
            .into_iter()
            .enumerate()
            .map(|(index, entry)| batch_entry(entry).map_err(|error| error.for_batch_entry(index)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            entries,
            summary: params.summary,
            dry_run: params.dry_run,
            mode: Mode::Batch,
            diagnostics: (params.diagnostics, params.diagnostics_timeout_ms),
            turn: params.turn,
        })
    }

    /// Names the batch entry an error is about (only batches have entries to name).
    pub(crate) fn name_entry(&self, error: ProtocolError, index: usize) -> ProtocolError {
        if self.mode == Mode::Batch { error.for_batch_entry(index) } else { error }
    }
}

async fn run(state: &Arc<State>, agent: &AgentInfo, request: &WriteRequest) -> Result<Outcome, ProtocolError> {
    let agent = &agent.for_write(None, request.turn.as_deref());
    let keys = resolve_keys(request)?;
    if !request.dry_run {
        let policy = state.path_policy();
        let workspace = state.workspace();
        for (index, key) in keys.iter().enumerate() {
            policy.check_write(key, &workspace).map_err(|error| request.name_entry(error, index))?;
        }
        if state.editor().is_none() {
            return Err(ProtocolError::editor_unavailable());
        }
    }
    let mut lane_keys = keys.clone();
    lane_keys.sort();
    lane_keys.dedup();
    let _lanes = if request.dry_run { Vec::new() } else { state.lock_lanes(&lane_keys).await };
    for key in &lane_keys {
        wait_for_editor_text(state, key).await;
    }

    let snapshots = take_snapshots(state, &keys, request.mode == Mode::Write)
        .map_err(|(error, index)| request.name_entry(error, index))?;
    let planned = plan_documents(request, &keys, &snapshots, agent, |key, snapshot, error| {
        explain(state, key, snapshot, agent, error)
    })?;
    let ask = Ask::of(request.diagnostics.0, request.diagnostics.1, agent);
    deliver(state, agent, &planned, &request.summary, request.dry_run, ask).await
}

/// Checks what needs no document: the summary, and that every uri names one.
pub(crate) fn resolve_keys(request: &WriteRequest) -> Result<Vec<DocKey>, ProtocolError> {
    if request.summary.trim().is_empty() {
        return Err(ProtocolError::invalid_params(
            Some("summary"),
            "`summary` is empty: every write needs a one-line summary saying why, shown to the person who reviews it.",
        ));
    }
    request
        .entries
        .iter()
        .enumerate()
        .map(|(index, entry)| parse_key(&entry.uri).map_err(|error| request.name_entry(error, index)))
        .collect()
}

/// Plans every entry against one snapshot of its documents: checks each `baseRev`,
/// matches the quotes (`explain` turns a refusal into the agent's error), adopts the
/// line endings around each edit, and refuses overlaps. Documents come out in
/// first-mention order.
pub(crate) fn plan_documents(
    request: &WriteRequest,
    keys: &[DocKey],
    snapshots: &BTreeMap<DocKey, Snapshot>,
    agent: &AgentInfo,
    explain: impl Fn(&DocKey, &Snapshot, PlanError) -> ProtocolError,
) -> Result<Vec<PlannedDocument>, ProtocolError> {
    let is_write = request.mode == Mode::Write;
    let mut order: Vec<DocKey> = Vec::new();
    let mut per_document: BTreeMap<DocKey, Vec<(usize, Replacement)>> = BTreeMap::new();
    let mut normalizations: BTreeMap<DocKey, BTreeSet<Normalization>> = BTreeMap::new();
    let mut rebased: BTreeMap<DocKey, String> = BTreeMap::new();
    for (index, (entry, key)) in request.entries.iter().zip(keys).enumerate() {
        let snapshot = snapshots.get(key).ok_or_else(|| {
            ProtocolError::new(ErrorKind::InvalidParams, format!("internal error: no snapshot of {key}"))
        })?;
        let name_entry = |error| request.name_entry(error, index);
        let rebase = check_base_rev(snapshot, entry.base_rev.as_deref(), is_write).map_err(name_entry)?;
        // An edit against an older revision is planned against the text the agent saw.
        let older;
        let seen = match &rebase {
            Some(rebase) => {
                older = Snapshot { text: rebase.text.clone(), rev: Some(rebase.from), ..snapshot.clone() };
                &older
            }
            None => snapshot,
        };
        let replacements = if snapshot.rev.is_none() {
            // Only `write` may name a file that does not exist: its text is inserted into an empty file.
            match &entry.edit {
                Edit::WriteAll { text } if !text.is_empty() => {
                    vec![Replacement { range: 0..0, new_text: text.clone() }]
                }
                _ => Vec::new(),
            }
        } else {
            let planned = plan::plan(&seen.text, &entry.edit).map_err(|error| name_entry(explain(key, seen, error)))?;
            normalizations.entry(key.clone()).or_default().extend(planned.normalizations);
            let adopted = line_endings::adopt(&seen.text, planned.replacements);
            if adopted
                .iter()
                .all(|replacement| seen.text.byte_slice(replacement.range.clone()) == replacement.new_text.as_str())
            {
                // The edit only changed line endings, which adopt the file's.
                return Err(name_entry(feedback::plan_error(PlanError::NoChange, feedback_context(seen, agent))));
            }
            match &rebase {
                Some(rebase) => {
                    let moved = history::rebase(&adopted, &rebase.edits)
                        .map_err(|touched| name_entry(changed_under_quote(snapshot, rebase, &touched)))?;
                    rebased.insert(key.clone(), rebase.from.to_string());
                    moved
                }
                None => adopted,
            }
        };
        if !order.contains(key) {
            order.push(key.clone());
        }
        per_document.entry(key.clone()).or_default().extend(replacements.into_iter().map(|r| (index, r)));
    }
    let mut planned = Vec::with_capacity(order.len());
    for key in &order {
        let snapshot = &snapshots[key];
        let items = per_document.remove(key).unwrap_or_default();
        let replacements =
            sort_disjoint(items).map_err(|error| feedback::plan_error(error, feedback_context(snapshot, agent)))?;
        let mut document =
            planned_document(key, snapshot, replacements, normalizations.remove(key).unwrap_or_default());
        document.rebased_from = rebased.remove(key);
        planned.push(document);
    }
    Ok(planned)
}

/// A document's plan: its replacements against the snapshot (creating the file when
/// it does not exist yet).
pub(crate) fn planned_document(
    key: &DocKey,
    snapshot: &Snapshot,
    replacements: Vec<Replacement>,
    normalizations: BTreeSet<Normalization>,
) -> PlannedDocument {
    PlannedDocument::edit(snapshot.plan_base(key), replacements).with_normalizations(normalizations)
}

/// A refused plan as an error for the agent; a quote that is not in the document is
/// also looked for, verbatim, in the other open documents.
pub(crate) fn explain(
    state: &State,
    key: &DocKey,
    snapshot: &Snapshot,
    agent: &AgentInfo,
    error: PlanError,
) -> ProtocolError {
    let needle = error.missing_quote().map(|searched| searched.needle.clone());
    let explained = feedback::plan_error(error, feedback_context(snapshot, agent));
    let Some(needle) = needle else { return explained };
    let workspace = state.workspace();
    let others: Vec<(String, String, Rope)> = state
        .documents
        .lock()
        .iter()
        .filter(|(other, _)| *other != key)
        .map(|(other, document)| (workspace.label(other), other.to_uri(), document.text.clone()))
        .collect();
    feedback::also_in(explained, &needle, &others)
}

pub(crate) fn feedback_context<'a>(snapshot: &'a Snapshot, agent: &AgentInfo) -> Context<'a> {
    Context {
        text: &snapshot.text,
        label: &snapshot.label,
        rev: snapshot.rev.unwrap_or(Rev::of_bytes(b"")),
        encoding: agent.encoding,
    }
}

pub fn parse_key(uri: &str) -> Result<DocKey, ProtocolError> {
    DocKey::parse(uri).map_err(|error| ProtocolError::invalid_params(Some("uri"), error.to_string()))
}
