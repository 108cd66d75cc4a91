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
use std::path::PathBuf;
use std::sync::Arc;

use ropey::Rope;
use serde::de::DeserializeOwned;
use serde_json::Value;

use verbatim_engine::diff::{unified_diff, unified_diff_of_texts};
use verbatim_engine::disk::{DiskError, line_ending_of, read_text};
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::history::{self, ByteEdit, History, Touched};
use verbatim_engine::line_endings;
use verbatim_engine::merge;
use verbatim_engine::normalize::Normalization;
use verbatim_engine::plan::{self, Edit, PlanError, ReplaceRange, Replacement, StrReplace, sort_disjoint};
use verbatim_engine::rev::Rev;

use crate::service::apply::{AppliedDocument, HunkReview, Offer, Origin, PlannedDocument, apply_through_editor};
use crate::service::diagnostics::{self, Ask};
use crate::service::error::{ErrorKind, ProtocolError, params_error};
use crate::service::feedback::{self, Context};
use crate::service::journal::{DocumentTexts, RevertWrite, Source, WriteInfo};
use crate::service::protocol::{
    BatchEditParams, BatchEntry, BatchResult, DiagnosticsLevel, DiagnosticsReport, DocumentInfo, DocumentResult,
    EditResult, HunkOutcome, ReadParams, ReadResult, ReplaceRangeParams, StrReplaceParams, WriteParams,
};
use crate::service::registry::AgentInfo;
use crate::service::state::State;
use crate::service::to_proto::wire_edits;

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

/// What a write did (or would do) to each of its documents.
pub(crate) struct Outcome {
    pub(crate) applied: bool,
    pub(crate) dry_run: bool,
    pub(crate) documents: Vec<DocumentResult>,
    /// Why the person left hunks out.
    pub(crate) reason: Option<String>,
    /// What the editor's language servers report after the write, when asked.
    pub(crate) diagnostics: Option<DiagnosticsReport>,
    /// Per document: the text the edit was last offered against, and the live text
    /// once it arrived (`None` when it never reached a buffer). Empty for a dry run.
    pub(crate) texts: Vec<(Rope, Option<Rope>)>,
    /// The journal's id of the write, once journaled.
    pub(crate) write_id: Option<String>,
}

impl Outcome {
    /// The result of a one-document method.
    pub(crate) fn into_single(mut self) -> Result<EditResult, ProtocolError> {
        let document = self.documents.pop().ok_or_else(|| {
            ProtocolError::new(ErrorKind::InvalidParams, "internal error: the plan covered no document")
        })?;
        Ok(EditResult {
            applied: self.applied,
            dry_run: self.dry_run,
            document,
            reason: self.reason,
            diagnostics: self.diagnostics,
        })
    }

    pub(crate) fn into_batch(self) -> BatchResult {
        BatchResult {
            applied: self.applied,
            dry_run: self.dry_run,
            modified_by_editor: self.documents.iter().any(|document| document.modified_by_editor),
            partial: self.documents.iter().any(|document| document.partial),
            reason: self.reason,
            diagnostics: self.diagnostics,
            documents: self.documents,
        }
    }
}

/// A document as it was when the plan was made.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) editor_uri: String,
    pub(crate) label: String,
    pub(crate) text: Rope,
    /// `None` when the file does not exist yet.
    pub(crate) rev: Option<Rev>,
    pub(crate) open: Option<(u64, i32)>,
    /// An open document's recent revisions, to rebase an edit planned against one.
    pub(crate) history: Option<History>,
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
    PlannedDocument {
        key: key.clone(),
        editor_uri: snapshot.editor_uri.clone(),
        label: snapshot.label.clone(),
        predicted: plan::apply(&snapshot.text, &replacements),
        base: snapshot.text.clone(),
        base_rev: snapshot.rev,
        open: snapshot.open,
        replacements,
        create: snapshot.rev.is_none(),
        delete: false,
        rename_to: None,
        normalizations,
        rebased_from: None,
        hunk_notes: Default::default(),
    }
}

/// Reports a plan (dry run) or applies it through the editor, with one result per
/// document; a write that reaches the editor is journaled, whatever its outcome.
pub(crate) async fn deliver(
    state: &Arc<State>,
    agent: &AgentInfo,
    planned: &[PlannedDocument],
    summary: &str,
    dry_run: bool,
    diagnostics: Option<Ask>,
) -> Result<Outcome, ProtocolError> {
    if dry_run {
        let documents = planned.iter().map(|document| proposal(document, agent)).collect();
        return Ok(Outcome {
            applied: false,
            dry_run: true,
            documents,
            reason: None,
            diagnostics: None,
            texts: Vec::new(),
            write_id: None,
        });
    }
    deliver_as(state, agent, Origin::Agent, planned, summary, diagnostics, RevertWrite::default()).await
}

/// Applies a plan through the editor as `origin` proposes it: offered again over the
/// person's typing, journaled (with `reverts`, for a revert), with diagnostics when
/// asked.
pub(crate) async fn deliver_as(
    state: &Arc<State>,
    agent: &AgentInfo,
    origin: Origin,
    planned: &[PlannedDocument],
    summary: &str,
    diagnostics: Option<Ask>,
    revert: RevertWrite<'_>,
) -> Result<Outcome, ProtocolError> {
    let mut planned = planned.to_vec();
    let mut rebases = 0;
    let mut offer = Offer::default();
    let mut baseline = None;
    let applied = loop {
        if let Some(ask) = diagnostics {
            baseline = Some(diagnostics::baseline(state, &planned, ask).await);
        }
        // After the last wait, right before sending.
        let applied = match recheck_unopened(state, &mut planned) {
            Ok(()) => apply_through_editor(state, agent, origin, summary, &planned, &mut offer).await,
            Err(error) => Err(error),
        };
        // The person typed while the edit waited for review, and the editor refused the
        // old version: the edit is moved over what they typed and offered again, unless
        // it touched the edit's text.
        if let Err(error) = &applied
            && error.kind == ErrorKind::Stale
            && rebases < MAX_REBASES_IN_REVIEW
            // The agent already has its answer from the person's decision.
            && !offer.id.is_some_and(|id| state.early_decisions.answered_early(id))
        {
            match rebase_onto_current(state, &planned) {
                Ok(Some(moved)) => {
                    rebases += 1;
                    tracing::info!(agent = %agent.name, "the document moved during review; offering the edit again");
                    planned = moved;
                    continue;
                }
                Ok(None) => {}
                Err(touched) => break Err(touched),
            }
        }
        break applied;
    };
    let planned = &planned[..];
    let mut results: Vec<DocumentResult> = planned.iter().map(|document| proposal(document, agent)).collect();
    let reason = applied.as_ref().ok().and_then(|applied| applied.reason.clone());
    let report = match (&applied, diagnostics, baseline) {
        (Ok(applied), Some(ask), Some(baseline)) => {
            Some(diagnostics::after(state, planned, &applied.documents, baseline, ask).await)
        }
        _ => None,
    };
    let texts: Vec<(Rope, Option<Rope>)> = match &applied {
        Ok(applied) => planned
            .iter()
            .zip(&applied.documents)
            .map(|(document, outcome)| (document.base.clone(), outcome.live.clone()))
            .collect(),
        Err(_) => Vec::new(),
    };
    let kept = match &applied {
        Ok(applied) => {
            planned.iter().zip(&applied.documents).map(|(document, outcome)| texts_of(document, outcome)).collect()
        }
        Err(_) => Vec::new(),
    };
    let applied = applied.map(|applied| report_applied(&mut results, planned, applied.documents));
    let mut write_id = None;
    if let Some(journal) = &state.journal {
        let workspace = state.workspace();
        let roots: Vec<Option<PathBuf>> = planned
            .iter()
            .map(|document| document.key.path().and_then(|path| workspace.folder_of(path)).map(ToOwned::to_owned))
            .collect();
        let write = WriteInfo {
            source: Source::Editor,
            agent: &agent.name,
            summary,
            commit: None,
            reason: reason.as_deref(),
            diagnostics: report.as_ref(),
            session: &agent.session,
            turn: agent.turn.as_deref(),
            revert,
        };
        write_id = Some(journal.record(&write, &roots, &results, applied.as_ref().err(), &kept));
        state.journal_changed(&results);
    }
    applied?;
    tracing::info!(agent = %agent.name, "applied: {summary}");
    Ok(Outcome { applied: true, dry_run: false, documents: results, reason, diagnostics: report, texts, write_id })
}

/// What a document held before and after a write that was applied, for the journal.
pub(crate) fn texts_of(document: &PlannedDocument, outcome: &AppliedDocument) -> DocumentTexts {
    DocumentTexts {
        before: (!document.create).then(|| document.base.clone()),
        after: (!document.delete).then(|| outcome.live.clone().unwrap_or_else(|| document.predicted.clone())),
    }
}

/// How many times one edit is offered again because the document moved during review.
const MAX_REBASES_IN_REVIEW: usize = 8;

/// Moves a plan over the changes made since it was planned. `Ok(None)` when there is
/// nothing to move (no open document moved, or one that cannot be rebased: closed,
/// created, deleted, moved, or older than the kept history); `Err` when a change
/// touched the edit's text.
fn rebase_onto_current(
    state: &State,
    planned: &[PlannedDocument],
) -> Result<Option<Vec<PlannedDocument>>, ProtocolError> {
    let store = state.documents.lock();
    let mut moved_any = false;
    let mut out = Vec::with_capacity(planned.len());
    for document in planned {
        let Some((session, version)) = document.open else {
            match store.get(&document.key) {
                // The editor opened the file after the edit was sent to it as a file that
                // is not open (`version: null`), and refused it: the edit moves onto the
                // buffer it opened.
                Some(current) if !document.changes_the_file() => {
                    out.push(onto_opened_buffer(document, current)?);
                    moved_any = true;
                }
                _ => out.push(document.clone()),
            }
            continue;
        };
        let Some(current) = store.get(&document.key) else { return Ok(None) };
        if document.create || document.delete || document.rename_to.is_some() {
            return Ok(None);
        }
        if current.session == session && current.version == version {
            out.push(document.clone());
            continue;
        }
        // Only the version moved, or the editor closed and opened the document again:
        // the text is the one the plan was made on. Neovim does both when it reloads
        // a buffer from disk that holds what the disk holds (after an agent wrote an
        // edit the person accepted there itself). The edit is offered again as it is.
        let unchanged = current.text == document.base;
        if current.session != session && !unchanged {
            return Ok(None);
        }
        let edits = if unchanged {
            Vec::new()
        } else {
            let Some(edits) = current.history.edits_since(version) else { return Ok(None) };
            edits
        };
        let from = Rev::Editor { session, version };
        let replacements = match history::rebase(&document.replacements, &edits) {
            Ok(replacements) => replacements,
            Err(touched) => {
                let snapshot = Snapshot {
                    editor_uri: current.editor_uri.clone(),
                    label: document.label.clone(),
                    text: current.text.clone(),
                    rev: Some(current.rev()),
                    open: Some((current.session, current.version)),
                    history: None,
                };
                let rebase = Rebase { from, text: document.base.clone(), edits };
                return Err(changed_under_quote(&snapshot, &rebase, &touched));
            }
        };
        moved_any = true;
        out.push(PlannedDocument {
            predicted: plan::apply(&current.text, &replacements),
            base: current.text.clone(),
            base_rev: Some(current.rev()),
            open: Some((current.session, current.version)),
            replacements,
            rebased_from: document.rebased_from.clone().or_else(|| document.base_rev.map(|rev| rev.to_string())),
            ..document.clone()
        });
    }
    Ok(moved_any.then_some(out))
}

/// A plan made on the disk's text moved onto the buffer the editor opened since: as
/// it is when the buffer holds that text, else merged three ways by lines (the disk
/// text as the base, the buffer as ours, the plan's result as theirs), as a change on
/// disk is merged into a buffer. A region the buffer changed too is a conflict, and
/// the edit is `stale`: never merged blind.
fn onto_opened_buffer(
    document: &PlannedDocument,
    current: &verbatim_engine::document::Document,
) -> Result<PlannedDocument, ProtocolError> {
    let replacements = if current.text == document.base {
        document.replacements.clone()
    } else {
        let merged =
            merge::merge(&document.base.to_string(), &current.text.to_string(), &document.predicted.to_string());
        if let Some(conflict) = merged.conflicts.first() {
            let lines = &conflict.ours_lines;
            let lines = if lines.len() <= 1 {
                format!("line {}", lines.start + 1)
            } else {
                format!("lines {}-{}", lines.start + 1, lines.end)
            };
            return Err(ProtocolError::new(
                ErrorKind::Stale,
                format!(
                    "{} was opened in the editor while the edit was on its way, and the buffer differs from the file \
                     you read where the edit goes ({lines} of the buffer). Nothing was applied; read it again (now \
                     from the editor) and redo the edit against its text.",
                    document.label
                ),
            )
            .with("baseRev", document.base_rev.map(|rev| rev.to_string()))
            .with("currentRev", current.rev().to_string()));
        }
        merged.replacements
    };
    Ok(PlannedDocument {
        predicted: plan::apply(&current.text, &replacements),
        base: current.text.clone(),
        base_rev: Some(current.rev()),
        open: Some((current.session, current.version)),
        editor_uri: current.editor_uri.clone(),
        replacements,
        hunk_notes: Default::default(),
        rebased_from: document.rebased_from.clone().or_else(|| document.base_rev.map(|rev| rev.to_string())),
        ..document.clone()
    })
}

/// Fills the proposals with what was applied: the new revs, and what the editor changed.
pub(crate) fn report_applied(
    results: &mut [DocumentResult],
    planned: &[PlannedDocument],
    applied: Vec<AppliedDocument>,
) {
    for ((result, document), outcome) in results.iter_mut().zip(planned).zip(applied) {
        result.rev = outcome.rev.map(|rev| rev.to_string());
        result.pending_sync = outcome.pending_sync;
        if let Some(review) = &outcome.review {
            result.hunks = Some(hunk_outcomes(&document.base, review));
            if !review.all_kept() {
                result.partial = true;
                let kept: Vec<Replacement> = review
                    .hunks
                    .iter()
                    .zip(&review.kept)
                    .filter(|(_, kept)| **kept)
                    .flat_map(|(hunk, _)| hunk.edits.iter().cloned())
                    .collect();
                result.diff = unified_diff(&document.base, &kept, &document.label);
            }
        }
        if let Some(actual) = outcome.differs {
            result.modified_by_editor = true;
            result.editor_diff = Some(unified_diff_of_texts(
                &document.predicted.to_string(),
                &actual.to_string(),
                &format!("proposed/{}", document.label),
                &format!("editor/{}", document.label),
            ));
        }
    }
}

/// Each hunk of a reviewed document, where it is and whether it was kept.
fn hunk_outcomes(base: &Rope, review: &HunkReview) -> Vec<HunkOutcome> {
    review
        .hunks
        .iter()
        .zip(&review.kept)
        .enumerate()
        .map(|(index, (hunk, kept))| {
            let lines = hunk.lines(base);
            HunkOutcome {
                index: review.first_index + index,
                accepted: *kept,
                line: lines.start_line + 1,
                old_lines: lines.old_lines,
                new_lines: lines.new_lines,
            }
        })
        .collect()
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

/// The result as proposed, before the editor has answered.
pub(crate) fn proposal(document: &PlannedDocument, agent: &AgentInfo) -> DocumentResult {
    DocumentResult {
        uri: document.key.to_uri(),
        base_rev: document.base_rev.map(|rev| rev.to_string()),
        rev: document.base_rev.map(|rev| rev.to_string()),
        edits: wire_edits(&document.base, &document.replacements, agent.encoding),
        replaced: document
            .replacements
            .iter()
            .map(|replacement| document.base.byte_slice(replacement.range.clone()).to_string())
            .collect(),
        diff: unified_diff(&document.base, &document.replacements, &document.label),
        modified_by_editor: false,
        editor_diff: None,
        hunks: None,
        partial: false,
        normalizations: document.normalizations.iter().map(|step| step.as_str().to_owned()).collect(),
        operation: if document.create {
            Some("create".into())
        } else if document.delete {
            Some("delete".into())
        } else {
            document.rename_to.as_ref().map(|_| "move".into())
        },
        new_uri: document.rename_to.as_ref().map(|(target, _)| target.to_uri()),
        rebased: document.rebased_from.is_some(),
        rebased_from: document.rebased_from.clone(),
        pending_sync: false,
    }
}

pub fn parse_key(uri: &str) -> Result<DocKey, ProtocolError> {
    DocKey::parse(uri).map_err(|error| ProtocolError::invalid_params(Some("uri"), error.to_string()))
}

/// Snapshots every document at one moment: open documents under one lock, the rest from disk.
pub(crate) fn take_snapshots(
    state: &State,
    keys: &[DocKey],
    allow_create: bool,
) -> Result<BTreeMap<DocKey, Snapshot>, (ProtocolError, usize)> {
    let workspace = state.workspace();
    let mut snapshots = BTreeMap::new();
    {
        let store = state.documents.lock();
        for key in keys {
            if let Some(document) = store.get(key) {
                snapshots.insert(
                    key.clone(),
                    Snapshot {
                        editor_uri: document.editor_uri.clone(),
                        label: workspace.label(key),
                        text: document.text.clone(),
                        rev: Some(document.rev()),
                        open: Some((document.session, document.version)),
                        history: Some(document.history.clone()),
                    },
                );
            }
        }
    }
    for (index, key) in keys.iter().enumerate() {
        if snapshots.contains_key(key) {
            continue;
        }
        let snapshot = disk_snapshot(state, key, allow_create).map_err(|error| (error, index))?;
        snapshots.insert(key.clone(), snapshot);
    }
    Ok(snapshots)
}

/// Reads a document that is not open from disk, inside the workspace only.
fn disk_snapshot(state: &State, key: &DocKey, allow_create: bool) -> Result<Snapshot, ProtocolError> {
    let workspace = state.workspace();
    let uri = key.to_uri();
    let Some(path) = key.path() else {
        return Err(ProtocolError::new(
            ErrorKind::UnknownDocument,
            format!("{uri} is not open in the editor, and only file: URIs can be read from disk. List open documents with verbatim/documents."),
        )
        .with("uri", uri));
    };
    if !workspace.contains(path) {
        let folders = workspace.folder_uris();
        let message = if folders.is_empty() {
            format!(
                "{} is not open in the editor, and the editor has no workspace folder, so files on disk are out of reach. Open the file in the editor first.",
                path.display()
            )
        } else {
            format!(
                "{} is not open in the editor and lies outside the workspace folders ({}). Open it in the editor, or edit a file inside the workspace.",
                path.display(),
                folders.join(", ")
            )
        };
        return Err(ProtocolError::new(ErrorKind::OutsideWorkspace, message)
            .with("uri", uri)
            .with("workspaceFolders", folders));
    }
    state.path_policy().check_read(key)?;
    let label = workspace.label(key);
    match read_text(path) {
        Ok(disk) => Ok(Snapshot {
            editor_uri: uri,
            label,
            text: Rope::from_str(&disk.text),
            rev: Some(disk.rev),
            open: None, history: None,
        }),
        Err(DiskError::Missing) if allow_create => Ok(Snapshot {
            editor_uri: uri,
            label,
            text: Rope::new(),
            rev: None,
            open: None, history: None,
        }),
        Err(DiskError::Missing) => Err(ProtocolError::new(
            ErrorKind::UnknownDocument,
            format!("{label} does not exist and is not open in the editor. Check the path (verbatim/documents lists open documents); create new files with verbatim/write."),
        )
        .with("uri", uri)),
        Err(DiskError::NotText(why)) => Err(ProtocolError::new(
            ErrorKind::NotText,
            format!("{label} is not a text file ({why}); verbatim edits text only: UTF-8, or UTF-16 with a byte order mark."),
        )
        .with("uri", uri)),
        Err(DiskError::Directory) => Err(ProtocolError::new(
            ErrorKind::UnknownDocument,
            format!("{label} is a directory, not a file."),
        )
        .with("uri", uri)),
        Err(DiskError::Io(error)) => Err(ProtocolError::new(ErrorKind::Io, format!("cannot read {label}: {error}")).with("uri", uri)),
    }
}

/// An edit planned against a revision the document has moved on from, still kept.
pub(crate) struct Rebase {
    /// The revision the agent read.
    from: Rev,
    /// Its text.
    text: Rope,
    /// Every change since, in order.
    edits: Vec<ByteEdit>,
}

/// Checks `baseRev` against the snapshot: `Ok(None)` when it is current (or absent),
/// `Ok(Some(..))` when it names an older revision of the open document that is still
/// kept (and the request is not a whole-document `write`), else `stale`.
pub(crate) fn check_base_rev(
    snapshot: &Snapshot,
    base_rev: Option<&str>,
    is_write: bool,
) -> Result<Option<Rebase>, ProtocolError> {
    let label = &snapshot.label;
    let Some(current) = snapshot.rev else {
        if base_rev.is_some() {
            return Err(ProtocolError::new(
                ErrorKind::Stale,
                format!("baseRev was given but {label} does not exist (any more). Read the directory again; to create the file, send verbatim/write without baseRev."),
            )
            .with("baseRev", base_rev)
            .with("currentRev", Value::Null));
        }
        return Ok(None);
    };
    let Some(base_rev) = base_rev else {
        if is_write {
            return Err(ProtocolError::invalid_params(
                Some("baseRev"),
                format!(
                    "{label} already exists: replacing a whole document needs the baseRev of your last read (verbatim/read), so that nothing the person typed is lost."
                ),
            ));
        }
        return Ok(None);
    };
    let parsed: Rev = base_rev.parse().map_err(|error: verbatim_engine::rev::InvalidRev| {
        ProtocolError::invalid_params(Some("baseRev"), error.to_string())
    })?;
    if parsed == current {
        return Ok(None);
    }
    // A disk revision still names an open document whose text has not changed since.
    if matches!(parsed, Rev::Disk(_)) && snapshot.open.is_some() && Rev::of_rope(&snapshot.text) == parsed {
        return Ok(None);
    }
    if let (Rev::Editor { session, version }, Rev::Editor { session: now, .. }, Some(history), false) =
        (parsed, current, snapshot.history.as_ref(), is_write)
        && session == now
        && let (Some(text), Some(edits)) = (history.text_at(version, &snapshot.text), history.edits_since(version))
    {
        return Ok(Some(Rebase { from: parsed, text, edits }));
    }
    Err(ProtocolError::new(
        ErrorKind::Stale,
        format!("baseRev {base_rev} is stale: {label} is now at rev {current}, and that revision is older than the kept history (or from an earlier session), so the edit cannot be moved over the changes since. Nothing was changed; read it again (verbatim/read) and redo the edit against the current text."),
    )
    .with("baseRev", base_rev)
    .with("currentRev", current.to_string()))
}

/// Just before sending, a document planned on disk (not open when it was snapshotted)
/// must still be as it was planned. The editor may have opened it meanwhile (the person
/// clicked it while the agent's edit was planned): with the text planned against, it is
/// edited in the editor instead; with other text, or changed on disk, the edit is
/// refused as `stale`. The disk is read first, and what the editor holds is looked at
/// under one lock of the store after it, so a `didOpen` that arrives during the read is
/// adopted, never taken for a change (issue 32: an edit of a file the editor was
/// opening was refused as "changed on disk" although nothing had changed).
fn recheck_unopened(state: &State, planned: &mut [PlannedDocument]) -> Result<(), ProtocolError> {
    // The disk is read before the store is locked, never under the lock.
    let on_disk: Vec<Option<Option<Rev>>> = planned
        .iter()
        .map(|document| {
            let path = document.key.path().filter(|_| document.open.is_none())?;
            Some(match read_text(path) {
                Ok(disk) => Some(disk.rev),
                Err(DiskError::Missing) => None,
                Err(_) => Some(Rev::of_bytes(b"\0unreadable")),
            })
        })
        .collect();
    let store = state.documents.lock();
    for (document, now) in planned.iter_mut().zip(on_disk) {
        let Some(now) = now else { continue };
        let stale = |now: Option<Rev>| {
            ProtocolError::new(
                ErrorKind::Stale,
                format!(
                    "{} changed on disk (or was opened in the editor with other text) while the edit was being \
                     planned. Read it again and redo the edit.",
                    document.label
                ),
            )
            .with("baseRev", document.base_rev.map(|rev| rev.to_string()))
            .with("currentRev", now.map(|rev| rev.to_string()))
        };
        match store.get(&document.key) {
            Some(current) if !document.create && current.text == document.base => {
                document.open = Some((current.session, current.version));
                document.base_rev = Some(current.rev());
                document.editor_uri = current.editor_uri.clone();
            }
            Some(current) => return Err(stale(Some(current.rev()))),
            None if now != document.base_rev => return Err(stale(now)),
            None => {}
        }
    }
    Ok(())
}

/// `stale`, naming the lines that changed under a quote since the agent's revision.
fn changed_under_quote(snapshot: &Snapshot, rebase: &Rebase, touched: &Touched) -> ProtocolError {
    let label = &snapshot.label;
    let text = &snapshot.text;
    let start = touched.range.start.min(text.len_bytes());
    // The last changed byte, not the one after it (which may begin the next line).
    let end = touched.range.end.saturating_sub(1).max(start).min(text.len_bytes());
    let first = text.byte_to_line(start) + 1;
    let last = text.byte_to_line(end) + 1;
    let lines = if last <= first { format!("line {first}") } else { format!("lines {first}-{last}") };
    let current = snapshot.rev.map(|rev| rev.to_string());
    ProtocolError::new(
        ErrorKind::Stale,
        format!(
            "{label} changed since rev {}, exactly where your edit applies: {lines} (now at rev {}). Nothing was \
             changed; read it again (verbatim/read) and redo the edit against the current text.",
            rebase.from,
            current.as_deref().unwrap_or("?")
        ),
    )
    .with("baseRev", rebase.from.to_string())
    .with("currentRev", current)
    .with("changedLines", serde_json::json!([first, last.max(first)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state, a file on disk, and a plan of one edit of it made while it was not open.
    struct Planned {
        state: Arc<State>,
        _dir: tempfile::TempDir,
        path: PathBuf,
        key: DocKey,
        uri: String,
        document: PlannedDocument,
    }

    const TEXT: &str = "one\ntwo\nthree\n";

    fn planned_on_disk() -> Planned {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("file.txt");
        std::fs::write(&path, TEXT).expect("the file written");
        let uri = format!("file://{}", path.display());
        let key = parse_key(&uri).expect("a file URI");
        let base = Rope::from_str(TEXT);
        let replacements = vec![Replacement { range: 4..7, new_text: "TWO".into() }];
        let document = PlannedDocument {
            key: key.clone(),
            editor_uri: uri.clone(),
            label: "file.txt".into(),
            predicted: plan::apply(&base, &replacements),
            base_rev: Some(Rev::of_bytes(TEXT.as_bytes())),
            base,
            open: None,
            replacements,
            create: false,
            delete: false,
            rename_to: None,
            normalizations: BTreeSet::new(),
            rebased_from: None,
            hunk_notes: Default::default(),
        };
        Planned { state: State::new(), _dir: dir, path, key, uri, document }
    }

    fn open_in_editor(planned: &Planned, text: &str) {
        planned.state.documents.update(|store| {
            store.open(planned.key.clone(), planned.uri.clone(), "plaintext".into(), 7, text);
        });
    }

    #[test]
    fn a_file_still_closed_and_unchanged_is_sent_as_planned() {
        let mut planned = planned_on_disk();
        recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect("sent");
        assert_eq!(planned.document.open, None);
    }

    /// The editor opened the file after the plan was made and after any earlier look at
    /// the store (its `didOpen` arriving while the disk is read again): the edit goes to
    /// the editor's buffer, at its version, never refused as a change.
    #[test]
    fn a_file_the_editor_opened_meanwhile_with_the_planned_text_is_edited_in_the_editor() {
        let mut planned = planned_on_disk();
        open_in_editor(&planned, TEXT);
        recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect("sent");
        let (session, version) = planned.document.open.expect("adopted");
        assert_eq!(version, 7);
        let store = planned.state.documents.lock();
        let current = store.get(&planned.key).expect("open");
        assert_eq!(session, current.session);
        assert_eq!(planned.document.base_rev, Some(current.rev()));
    }

    #[test]
    fn a_file_opened_meanwhile_with_other_text_is_stale() {
        let mut planned = planned_on_disk();
        open_in_editor(&planned, "one\ntwo, typed\nthree\n");
        let error = recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect_err("stale");
        assert_eq!(error.kind, ErrorKind::Stale);
        assert_eq!(planned.document.open, None);
    }

    #[test]
    fn a_file_changed_on_disk_meanwhile_is_stale() {
        let mut planned = planned_on_disk();
        std::fs::write(&planned.path, "one\ntwo\nthree\nfour\n").expect("the file rewritten");
        let error = recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect_err("stale");
        assert_eq!(error.kind, ErrorKind::Stale);
    }

    #[test]
    fn a_file_to_create_that_the_editor_opened_meanwhile_is_stale() {
        let mut planned = planned_on_disk();
        std::fs::remove_file(&planned.path).expect("the file removed");
        planned.document.create = true;
        planned.document.base_rev = None;
        planned.document.base = Rope::new();
        recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect("sent");
        open_in_editor(&planned, "");
        let error = recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect_err("stale");
        assert_eq!(error.kind, ErrorKind::Stale);
    }
}
