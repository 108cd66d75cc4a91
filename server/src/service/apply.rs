//! Applying a plan through the editor: send `workspace/applyEdit`, wait for the
//! person's answer, then wait for the `didChange` that carries the edit and compare
//! the live buffer with the prediction. Never claim what did not happen.
//!
//! A plan may also create, delete or move files (`verbatim/write`,
//! `verbatim/applyPatch`): the editor must advertise the resource operation, a
//! deleted file counts as applied once it is gone from disk, and a moved file once
//! its text shows up under the new name (in the editor, or on disk).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use ropey::Rope;
use std::future::Future;
use tokio::time::Instant;

use tower::Service;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Id, Request};
use tower_lsp_server::ls_types::notification::Cancel;
use tower_lsp_server::ls_types::request::{ApplyWorkspaceEdit, Request as LspRequest};
use tower_lsp_server::ls_types::{ApplyWorkspaceEditParams, CancelParams, ChangeAnnotation, NumberOrString};

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::normalize::Normalization;
use verbatim_engine::plan::Replacement;
use verbatim_engine::proposal_hunks::{self, ProposalHunk};
use verbatim_engine::rev::Rev;

use crate::service::early_decision::OfferedDocument;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::plain_client;
use crate::service::protocol::ExternalChanges;
use crate::service::registry::AgentInfo;
use crate::service::state::State;
use crate::service::to_proto::{self, EditorChange, EditorEditOptions};

/// After the edit's change arrived but differs from the prediction, wait this long
/// for further changes (an editor may split one edit into several notifications).
const SETTLE: Duration = Duration::from_millis(250);
/// How often the disk is looked at while a deleted or moved file is awaited.
const POLL: Duration = Duration::from_millis(50);
/// How long a version mismatch a plain client reports waits for the change it has not
/// sent yet (Eglot sends the person's typing after 0.5 s of idle).
const VERSION_MOVE_GRACE: Duration = Duration::from_secs(3);

/// One document of a plan, ready to be sent.
#[derive(Debug, Clone)]
pub struct PlannedDocument {
    pub key: DocKey,
    /// The URI to send to the editor (the editor's own spelling for open documents).
    pub editor_uri: String,
    /// How the document is named in messages.
    pub label: String,
    pub base: Rope,
    /// `None` for a file being created.
    pub base_rev: Option<Rev>,
    /// The open document's session and version; `None` for a file that is not open.
    pub open: Option<(u64, i32)>,
    /// Sorted and disjoint.
    pub replacements: Vec<Replacement>,
    pub predicted: Rope,
    pub create: bool,
    /// Delete the file: no text edit is sent, and `predicted` is empty.
    pub delete: bool,
    /// Move the file to this document (key and URI) after its text edits.
    pub rename_to: Option<(DocKey, String)>,
    /// What it took to find the plan's quotes (reported to the agent).
    pub normalizations: BTreeSet<Normalization>,
    /// The agent's `baseRev`, when the plan was moved over changes made since it.
    pub rebased_from: Option<String>,
    /// What the person should know about some replacements, by their index in
    /// `replacements` (a revert's conflict): sent as the `note` of each hunk that
    /// holds one of them.
    pub hunk_notes: BTreeMap<usize, String>,
}

impl PlannedDocument {
    /// The file itself is created, deleted or moved.
    pub(crate) fn changes_the_file(&self) -> bool {
        self.create || self.delete || self.rename_to.is_some()
    }
}

/// Who proposes an edit to the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An agent: the label names it, and `needsConfirmation` is the editor's setting.
    Agent,
    /// A change made on disk outside the editor, merged into the buffer: the label is
    /// the summary alone, the annotation id is `verbatim/disk/<id>`, and
    /// `needsConfirmation` follows the editor's `externalChanges` setting.
    Disk,
    /// An agent that writes files itself and asks the editor first (Claude Code's
    /// `openDiff`, a hook in a mode that asks): labelled like an agent's edit, always
    /// `needsConfirmation`, since the person's review is the whole point of the request.
    Ide,
    /// An agent that writes files itself in a mode that does not ask (a pre-write hook
    /// under Codex, `acceptEdits`, `--yolo`): labelled like an agent's edit,
    /// `needsConfirmation` as the editor's setting says.
    IdeUnasked,
    /// A revert of recorded changes (`verbatim/revert`): labelled like an agent's edit,
    /// always `needsConfirmation`: it may offer conflicts, where taking the revert drops
    /// a later change.
    Revert,
}

impl Origin {
    /// The agent writes the reviewed text to disk itself (a proposal, `ide/proposal.rs`).
    pub fn writes_itself(self) -> bool {
        matches!(self, Self::Ide | Self::IdeUnasked)
    }

    /// How the editor is told who proposes the edit (`verbatim.origin`).
    fn as_wire(self) -> &'static str {
        match self {
            Self::Agent | Self::Ide | Self::IdeUnasked | Self::Revert => "agent",
            Self::Disk => "disk",
        }
    }
}

/// What the editor did with one document.
#[derive(Debug, Clone)]
pub struct AppliedDocument {
    /// `None` for a deleted file.
    pub rev: Option<Rev>,
    /// The live text, when it differs from the prediction.
    pub differs: Option<Rope>,
    /// The live text once the edit arrived (`None` for a deleted file, or a file
    /// written on disk that never reached the editor's buffers).
    pub live: Option<Rope>,
    /// The proposal's hunks and which of them the editor applied; `None` when the
    /// edit did not go through an editor.
    pub review: Option<HunkReview>,
    /// The editor said it applied the edit, but its change has not arrived (a plain
    /// client that sends changes later): `rev` is `None` and `live` unknown.
    pub pending_sync: bool,
}

/// The hunks of one document's proposal, and which of them were kept.
#[derive(Debug, Clone)]
pub struct HunkReview {
    pub hunks: Vec<ProposalHunk>,
    pub kept: Vec<bool>,
    /// The number of the document's first hunk in the whole edit.
    pub first_index: usize,
}

impl HunkReview {
    pub fn all_kept(&self) -> bool {
        self.kept.iter().all(|kept| *kept)
    }
}

/// What the editor did with an edit.
#[derive(Debug, Clone)]
pub struct EditorOutcome {
    pub documents: Vec<AppliedDocument>,
    /// The person's words for what they left out.
    pub reason: Option<String>,
}

/// Which edit an offer belongs to: an edit offered again (the document moved
/// during review) keeps its id, and its offers are counted.
#[derive(Debug, Clone, Default)]
pub struct Offer {
    pub id: Option<u64>,
    pub count: u32,
}

/// The editor's answer to `workspace/applyEdit`: `ApplyWorkspaceEditResult` and the
/// per-hunk fields of Verbatim's protocol.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditorAnswer {
    pub applied: bool,
    #[serde(default)]
    pub failure_reason: Option<String>,
    #[serde(default)]
    hunks: Option<Vec<HunkAnswer>>,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct HunkAnswer {
    index: usize,
    accepted: bool,
}

/// Removes a pending edit from the registry when the request ends, however it ends
/// (answered, failed, or cancelled by the agent).
struct PendingGuard<'a> {
    state: &'a Arc<State>,
    id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.state.registry().remove_pending(self.id);
        self.state.notify_status();
    }
}

/// Sends the plan to the editor and reports what happened to each document.
pub async fn apply_through_editor(
    state: &Arc<State>,
    agent: &AgentInfo,
    origin: Origin,
    summary: &str,
    documents: &[PlannedDocument],
    offer: &mut Offer,
) -> Result<EditorOutcome, ProtocolError> {
    let link = state.editor().ok_or_else(ProtocolError::editor_unavailable)?;
    if documents.iter().any(|document| document.create) && !link.can_create_files {
        return Err(ProtocolError::new(
            ErrorKind::EditorError,
            "The editor does not support creating files through workspace edits \
             (workspace.workspaceEdit.resourceOperations lacks \"create\"). Create the file in the editor first.",
        ));
    }
    if documents.iter().any(|document| document.delete) && !link.can_delete_files {
        return Err(unsupported(
            "deleting",
            "delete",
            "Delete the file in the editor yourself, or leave it out of the edit",
        ));
    }
    if documents.iter().any(|document| document.rename_to.is_some()) && !link.can_rename_files {
        return Err(unsupported(
            "moving",
            "rename",
            "Move the file in the editor yourself, or leave the move out of the edit",
        ));
    }
    if documents.iter().any(|document| document.delete || document.rename_to.is_some()) && !link.document_changes {
        return Err(ProtocolError::new(
            ErrorKind::EditorError,
            "The editor does not accept documentChanges in workspace edits, so it cannot delete or move files. Nothing \
             was applied; leave the deletion or move out of the edit.",
        ));
    }
    // Subscribe before sending, so a change that arrives before the answer is seen.
    let mut changes = state.documents.subscribe();
    let uris = documents.iter().map(|document| document.key.to_uri()).collect();
    let pending_id = state.registry().add_pending(agent, summary, uris, offer.id);
    offer.id = Some(pending_id);
    offer.count += 1;
    let _pending = PendingGuard { state, id: pending_id };
    state.notify_status();

    let (label, annotation_id, needs_confirmation) = match origin {
        Origin::Agent | Origin::IdeUnasked => {
            (format!("{}: {}", agent.name, summary), format!("verbatim/{pending_id}"), link.options.needs_confirmation)
        }
        Origin::Ide | Origin::Revert => {
            (format!("{}: {}", agent.name, summary), format!("verbatim/{pending_id}"), true)
        }
        Origin::Disk => (
            summary.to_owned(),
            format!("verbatim/disk/{pending_id}"),
            link.options.external_changes == ExternalChanges::Review,
        ),
    };
    let options = EditorEditOptions {
        encoding: link.encoding,
        annotation_id,
        annotation: ChangeAnnotation {
            label: label.clone(),
            needs_confirmation: Some(needs_confirmation),
            description: Some(summary.to_owned()),
        },
        document_changes: link.document_changes,
    };
    let hunks: Vec<Vec<ProposalHunk>> =
        documents.iter().map(|document| proposal_hunks::split(&document.base, &document.replacements)).collect();
    let notes: Vec<Vec<Option<String>>> = documents
        .iter()
        .zip(&hunks)
        .map(|(document, hunks)| hunks.iter().map(|hunk| hunk_note(document, hunk)).collect())
        .collect();
    let changes_for_editor: Vec<EditorChange<'_>> = documents
        .iter()
        .zip(&hunks)
        .zip(&notes)
        .map(|((document, hunks), notes)| EditorChange {
            uri: &document.editor_uri,
            version: document.open.map(|(_, version)| version),
            base: &document.base,
            hunks,
            notes,
            create: document.create,
            delete: document.delete,
            rename_to: document.rename_to.as_ref().map(|(_, uri)| uri.as_str()),
        })
        .collect();
    let (edit, hunk_edits) = to_proto::workspace_edit(&changes_for_editor, &options)
        .map_err(|message| ProtocolError::new(ErrorKind::EditorError, message))?;
    // An agent that writes the file itself is answered once the person has decided.
    let _decided_early = (origin.writes_itself() && link.options.verbatim_extensions).then(|| {
        let offered = documents
            .iter()
            .zip(&hunks)
            .map(|(document, hunks)| OfferedDocument {
                key: document.key.clone(),
                base: document.base.clone(),
                hunks: hunks.clone(),
            })
            .collect();
        state.early_decisions.offered(pending_id, offer.count, offered)
    });
    tracing::info!(agent = %agent.name, pending_id, offer = offer.count, "sending workspace/applyEdit: {label}");

    let mut params = serde_json::to_value(ApplyWorkspaceEditParams { edit, label: Some(label) }).unwrap_or_default();
    let mut about = serde_json::json!({
        "id": pending_id,
        "summary": summary,
        "origin": origin.as_wire(),
        "offer": offer.count,
        "hunks": hunk_edits,
    });
    if origin != Origin::Disk {
        about["agent"] = serde_json::Value::String(agent.name.clone());
    }
    if origin.writes_itself() {
        // The agent writes the decided text to disk itself: the editor neither saves a
        // file the edit creates nor treats that write as a change to offer.
        about["writesItself"] = serde_json::Value::Bool(true);
    }
    // Custom data only for an editor that reads it: a plain client may refuse unknown
    // keys (Eglot answers such a request with an error and applies nothing).
    if link.options.verbatim_extensions {
        params["verbatim"] = about;
    }
    let plain = !link.options.verbatim_extensions;
    // How many TextEdits each document is sent (a plain client's version moves by as many).
    let text_edits: Vec<usize> = hunks.iter().map(|hunks| hunks.iter().map(|hunk| hunk.edits.len()).sum()).collect();
    let answer = if plain {
        // A plain client is asked one edit at a time, and never waited for beyond a bound.
        let bound = link.options.apply_timeout_ms.map_or(plain_client::UNANSWERED_BOUND, Duration::from_millis);
        let late = plain_client::LateAnswer {
            agent: agent.name.clone(),
            session: agent.session.clone(),
            summary: summary.to_owned(),
            documents: documents.to_vec(),
            text_edits: text_edits.clone(),
        };
        plain_client::ask(state, send_apply_edit(&link.client, params), bound, late).await?
    } else {
        let request = send_apply_edit(&link.client, params);
        let answer = tokio::select! {
            answer = async {
                match link.options.apply_timeout_ms {
                    Some(ms) => tokio::time::timeout(Duration::from_millis(ms), request).await.map_err(|_| ms),
                    None => Ok(request.await),
                }
            } => answer,
            () = state.editor_closed.cancelled() => return Err(editor_gone()),
        };
        match answer {
            Ok(answer) => answer,
            Err(ms) => {
                return Err(ProtocolError::new(
                    ErrorKind::Timeout,
                    format!(
                        "The editor did not answer within {ms} ms (applyTimeoutMs). The edit may still be waiting \
                         for review there; read the document again before retrying."
                    ),
                )
                .with("phase", "answer"));
            }
        }
    };
    let answer = match answer {
        // A plain client answers an edit the person declined (Eglot: "User cancelled server
        // edit") or one whose version moved with an error: that is a refusal, not a fault.
        Err(error) if error.kind == ErrorKind::EditorError && plain => {
            let message = error
                .data
                .get("editorError")
                .and_then(|about| about.get("message"))
                .and_then(|m| m.as_str())
                .map(ToOwned::to_owned);
            // "Edits on x require version 0, you have 14" (Eglot): the person typed and the
            // client has not sent that change yet, or the server's copy holds an edit the
            // client applied and has not sent, at a version the server guessed wrong.
            // Either way the person said yes: the edit is moved onto the client's text and
            // offered again, never reported as a refusal.
            if let Some(message) = message.as_deref().filter(|message| message.to_lowercase().contains("version")) {
                if plain_client::correct_version(state, documents, message) {
                    return Err(refusal(state, documents, Some(message.to_owned())));
                }
                wait_for_a_move(state, documents, VERSION_MOVE_GRACE).await;
                return Err(version_refusal(state, documents, message));
            }
            return Err(refusal(state, documents, message));
        }
        answer => answer?,
    };
    let kept = kept_hunks(&answer, &hunks);
    // Hunks there were, and the editor kept none of them (an edit that only deletes
    // or moves a file has no hunk to keep).
    let kept_none = kept.as_ref().is_some_and(|kept| {
        let mut all = kept.iter().flatten().peekable();
        all.peek().is_some() && all.all(|kept| !kept)
    });
    if !answer.applied || kept_none {
        return Err(refusal(state, documents, answer.failure_reason.or(answer.reason)));
    }
    let expected: Vec<Rope> = match &kept {
        Some(kept) => documents
            .iter()
            .zip(&hunks)
            .zip(kept)
            .map(|((document, hunks), kept)| {
                if kept.iter().all(|kept| *kept) {
                    document.predicted.clone()
                } else {
                    proposal_hunks::apply_subset(&document.base, hunks, kept)
                }
            })
            .collect(),
        None => documents.iter().map(|document| document.predicted.clone()).collect(),
    };
    // What a plain client said it applied is what the server knows: its change may
    // come only with the person's next keystroke (Eglot), and is reconciled then.
    if plain {
        plain_client::assume(state, documents, &expected, &text_edits);
    }
    let timeout = Duration::from_millis(link.options.sync_timeout_ms);
    let defers = plain;
    let mut applied = wait_for_sync(state, documents, &expected, &mut changes, timeout, defers).await?;
    let mut first_index = 0;
    for (index, (document, hunks)) in applied.iter_mut().zip(hunks).enumerate() {
        let source = &documents[index];
        let reported = kept.as_ref().map(|kept| kept[index].clone());
        let kept = match (&document.differs, reported) {
            (None, Some(reported)) => Some(reported),
            (None, None) => Some(vec![true; hunks.len()]),
            // Not what the editor said, or it said nothing: which hunks does the text hold?
            (Some(live), _) => proposal_hunks::find_applied(&source.base, &hunks, live),
        };
        if kept.is_some() {
            document.differs = None;
        }
        let count = hunks.len();
        if let Some(kept) = kept {
            document.review = Some(HunkReview { hunks, kept, first_index });
        }
        first_index += count;
    }
    let reason = answer.reason.filter(|reason| !reason.trim().is_empty());
    Ok(EditorOutcome { documents: applied, reason })
}

/// The notes of the replacements a hunk holds (a hunk's edits lie within the
/// replacements they come from), one per line; `None` when it holds none.
fn hunk_note(document: &PlannedDocument, hunk: &ProposalHunk) -> Option<String> {
    if document.hunk_notes.is_empty() {
        return None;
    }
    let mut notes: Vec<&str> = Vec::new();
    for (index, note) in &document.hunk_notes {
        let Some(replacement) = document.replacements.get(*index) else { continue };
        let holds = hunk
            .edits
            .iter()
            .any(|edit| replacement.range.start <= edit.range.start && edit.range.end <= replacement.range.end);
        if holds && !notes.contains(&note.as_str()) {
            notes.push(note);
        }
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// The hunks the editor says it kept, per document; `None` when it does not say,
/// or says something that does not fit the proposal (then the text decides).
fn kept_hunks(answer: &EditorAnswer, hunks: &[Vec<ProposalHunk>]) -> Option<Vec<Vec<bool>>> {
    let reported = answer.hunks.as_ref()?.iter().map(|hunk| (hunk.index, hunk.accepted));
    proposal_hunks::kept_per_document(reported, &hunks.iter().map(Vec::len).collect::<Vec<_>>())
}

/// Sends `workspace/applyEdit` and resolves to the editor's answer. If the returned
/// future is dropped before the answer arrives (the agent cancelled or went away),
/// the editor is sent `$/cancelRequest` so it can withdraw the review.
fn send_apply_edit(
    client: &Client,
    params: serde_json::Value,
) -> impl Future<Output = Result<EditorAnswer, ProtocolError>> + use<> {
    let id = client.next_request_id();
    let request = Request::build(<ApplyWorkspaceEdit as LspRequest>::METHOD).id(id.clone()).params(params).finish();
    let mut cancel = CancelOnDrop { client: client.clone(), id: Some(id) };
    let call = client.clone().call(request);
    async move {
        let response = call.await;
        cancel.disarm();
        // No response at all: the editor connection ended while the edit waited.
        let Ok(Some(response)) = response else { return Err(editor_gone()) };
        match response.into_parts().1 {
            Ok(value) => serde_json::from_value(value).map_err(|error| {
                ProtocolError::new(
                    ErrorKind::EditorError,
                    format!(
                        "The editor's answer to workspace/applyEdit is not an ApplyWorkspaceEditResult ({error}), so \
                         whether it applied the edit is unknown. Read the document again before retrying."
                    ),
                )
            }),
            Err(error) => Err(ProtocolError::new(
                ErrorKind::EditorError,
                format!(
                    "The editor answered workspace/applyEdit with an error: {}. Nothing was applied.",
                    error.message
                ),
            )
            .with("editorError", serde_json::json!({"code": error.code.code(), "message": error.message}))),
        }
    }
}

/// Tells the editor to forget a request that nobody waits for any more.
struct CancelOnDrop {
    client: Client,
    id: Option<Id>,
}

impl CancelOnDrop {
    /// The answer arrived: nothing to cancel.
    fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let client = self.client.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                client.send_notification::<Cancel>(CancelParams { id: to_number_or_string(id) }).await;
            });
        }
    }
}

fn to_number_or_string(id: Id) -> NumberOrString {
    match id {
        Id::Number(number) => NumberOrString::Number(i32::try_from(number).unwrap_or(i32::MAX)),
        Id::String(text) => NumberOrString::String(text),
        Id::Null => NumberOrString::String(String::new()),
    }
}

fn unsupported(doing: &str, kind: &str, instead: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorKind::EditorError,
        format!(
            "The editor does not support {doing} files through workspace edits \
             (workspace.workspaceEdit.resourceOperations lacks \"{kind}\"). Nothing was applied. {instead}."
        ),
    )
}

fn editor_gone() -> ProtocolError {
    ProtocolError::new(
        ErrorKind::EditorUnavailable,
        "The editor disconnected before answering; nothing was applied. Reconnect to a running editor and retry.",
    )
}

/// Waits (at most `grace`) until some planned document's version moves.
async fn wait_for_a_move(state: &State, documents: &[PlannedDocument], grace: Duration) {
    let moved = |store: &verbatim_engine::store::DocumentStore| {
        documents.iter().any(|document| {
            document.open.is_some_and(|(session, version)| {
                store.get(&document.key).is_none_or(|current| current.session != session || current.version != version)
            })
        })
    };
    state.documents.wait_until(grace, moved).await;
}

/// The editor said no: because a document moved on (stale), or because the person refused.
fn refusal(state: &State, documents: &[PlannedDocument], reason: Option<String>) -> ProtocolError {
    let store = state.documents.lock();
    for document in documents {
        let current = store.get(&document.key);
        // Sent as a file that is not open (`version: null`), and the editor has opened it
        // since: its refusal may be of the missing version, never the person's.
        let moved = match document.open {
            Some((session, version)) => {
                current.is_none_or(|current| current.session != session || current.version != version)
            }
            None => current.is_some() && !document.create,
        };
        if moved {
            let current_rev = current.map(|current| current.rev().to_string());
            let base = document.base_rev.map(|rev| rev.to_string());
            let now = current_rev.as_deref().map_or("closed".to_owned(), |rev| format!("at rev {rev}"));
            return ProtocolError::new(
                ErrorKind::Stale,
                match document.open {
                    Some(_) => format!(
                        "{} changed in the editor while the edit was on its way (now {now}), so the editor refused \
                         it. Read it again and redo the edit against the new text.",
                        document.label
                    ),
                    None => format!(
                        "{} was opened in the editor while the edit was on its way to it as a file that is not open \
                         (now {now}), so the editor refused it. Read it again and redo the edit.",
                        document.label
                    ),
                },
            )
            .with("baseRev", base)
            .with("currentRev", current_rev);
        }
    }
    let message = match &reason {
        Some(reason) if !reason.is_empty() => format!("The editor rejected the edit: {reason}"),
        _ => "The edit was rejected in the editor (no reason given). Ask the person, or try a different change.".into(),
    };
    ProtocolError::new(ErrorKind::Rejected, message).with("reason", reason)
}

/// The client refused the edit's version after the person said yes, and no change
/// that explains it arrived: `stale` when a document moved (the edit is then moved
/// and offered again), else `stale` all the same: the client's copy is ahead of the
/// server's, never a refusal of the person's.
fn version_refusal(state: &State, documents: &[PlannedDocument], message: &str) -> ProtocolError {
    let refused = refusal(state, documents, Some(message.to_owned()));
    if refused.kind == ErrorKind::Stale {
        return refused;
    }
    let label = documents.iter().find(|document| document.open.is_some()).map_or("the document", |d| &d.label);
    ProtocolError::new(
        ErrorKind::Stale,
        format!(
            "The person accepted the edit, but the editor refused it because its copy of {label} is at another \
             version than the server's ({message}), and it has not sent the change. Nothing was applied. Read the \
             document again (after the person's next keystroke, the server has it) and redo the edit."
        ),
    )
    .with("reason", message.to_owned())
}

/// Waits until every document shows the edit, then compares with the prediction.
async fn wait_for_sync(
    state: &Arc<State>,
    documents: &[PlannedDocument],
    expected: &[Rope],
    changes: &mut tokio::sync::watch::Receiver<u64>,
    timeout: Duration,
    defers: bool,
) -> Result<Vec<AppliedDocument>, ProtocolError> {
    let deadline = Instant::now() + timeout;
    let mut settle_deadline: Option<Instant> = None;
    // The disk does not tick the store's watch channel: look at it now and then.
    let poll = documents.iter().any(|document| document.delete || document.rename_to.is_some());
    loop {
        let observed = observe(state, documents);
        let now = Instant::now();
        if observed.iter().all(Option::is_some) {
            let all_equal = observed
                .iter()
                .zip(expected)
                .all(|(seen, expected)| seen.as_ref().is_some_and(|(text, _)| text == expected));
            let settled = settle_deadline.is_some_and(|settle| now >= settle) || now >= deadline;
            if all_equal || settled {
                return Ok(finish(observed, expected));
            }
            settle_deadline.get_or_insert(now + SETTLE);
        } else if now >= deadline {
            return finish_without_sync(state, documents, expected, observed, timeout, defers);
        }
        let mut wake = settle_deadline.map_or(deadline, |settle| settle.min(deadline));
        if poll {
            wake = wake.min(Instant::now() + POLL);
        }
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return Err(editor_gone());
                }
            }
            () = tokio::time::sleep_until(wake) => {}
            () = state.editor_closed.cancelled() => return Err(editor_gone()),
        }
    }
}

/// The live text and rev of each document once the edit's change has arrived: for
/// a deleted file, once it is gone from disk; for a moved one, its text under the
/// new name.
fn observe(state: &State, documents: &[PlannedDocument]) -> Vec<Option<(Rope, Option<Rev>)>> {
    // The disk is looked at before the store is locked, never under the lock.
    let on_disk: Vec<Option<(Rope, Option<Rev>)>> = documents
        .iter()
        .map(|document| {
            if document.delete {
                let gone = document.key.path().is_none_or(|path| !path.exists());
                return gone.then(|| (Rope::new(), None));
            }
            let (target, _) = document.rename_to.as_ref()?;
            let source_gone = document.key.path().is_none_or(|path| !path.exists());
            let disk = verbatim_engine::disk::read_text(target.path()?).ok().filter(|_| source_gone)?;
            Some((Rope::from_str(&disk.text), Some(disk.rev)))
        })
        .collect();
    let store = state.documents.lock();
    documents
        .iter()
        .zip(on_disk)
        .map(|(document, on_disk)| {
            if document.delete {
                return on_disk;
            }
            if let Some((target, _)) = &document.rename_to {
                // An editor moves an open buffer, unsaved edits and all: prefer it to the disk.
                return match store.get(target) {
                    Some(current) => Some((current.text.clone(), Some(current.rev()))),
                    None => on_disk,
                };
            }
            let current = store.get(&document.key)?;
            let arrived = match document.open {
                Some((session, version)) => current.session != session || current.version != version,
                // Opened for the edit: its didOpen holds the text from before the edit;
                // what counts is the edit's own change.
                None => current.text != document.base || current.text == document.predicted,
            };
            arrived.then(|| (current.text.clone(), Some(current.rev())))
        })
        .collect()
}

fn finish(observed: Vec<Option<(Rope, Option<Rev>)>>, expected: &[Rope]) -> Vec<AppliedDocument> {
    observed
        .into_iter()
        .zip(expected)
        .filter_map(|(seen, expected)| {
            let (text, rev) = seen?;
            let differs = (text != *expected).then(|| text.clone());
            Some(AppliedDocument { rev, differs, live: Some(text), review: None, pending_sync: false })
        })
        .collect()
}

/// The editor said applied but some document never showed the change. A file the
/// editor wrote straight to disk counts if the disk now holds the prediction. A
/// client that `defers` its changes (a plain LSP client: Eglot sends them from an idle
/// timer that may wait for the person's next keystroke) has applied an edit to a
/// buffer it has open: that is reported as applied, its text still to come.
fn finish_without_sync(
    state: &State,
    documents: &[PlannedDocument],
    expected: &[Rope],
    observed: Vec<Option<(Rope, Option<Rev>)>>,
    timeout: Duration,
    defers: bool,
) -> Result<Vec<AppliedDocument>, ProtocolError> {
    let workspace = state.workspace();
    let mut applied = Vec::new();
    for ((seen, document), expected) in observed.into_iter().zip(documents).zip(expected) {
        if let Some((text, rev)) = seen {
            let differs = (text != *expected).then(|| text.clone());
            applied.push(AppliedDocument { rev, differs, live: Some(text), review: None, pending_sync: false });
            continue;
        }
        if document.changes_the_file() && !document.create {
            return Err(ProtocolError::new(
                ErrorKind::Timeout,
                format!(
                    "The editor said it {} {}, but the server could not see that happen within {} ms \
                     (syncTimeoutMs). Look at the workspace before retrying.",
                    if document.delete { "deleted" } else { "moved" },
                    document.label,
                    timeout.as_millis()
                ),
            )
            .with("phase", "sync"));
        }
        let on_disk = document
            .key
            .path()
            .filter(|path| workspace.contains(path))
            .and_then(|path| verbatim_engine::disk::read_text(path).ok())
            .filter(|disk| document.open.is_none() && disk.text == *expected);
        let in_buffer = defers && !document.create && state.documents.lock().get(&document.key).is_some();
        match on_disk {
            Some(disk) => applied.push(AppliedDocument {
                rev: Some(disk.rev),
                differs: None,
                live: None,
                review: None,
                pending_sync: false,
            }),
            None if in_buffer => {
                tracing::info!(
                    "{}: the editor said it applied the edit and has not sent the change within {} ms; reported as \
                     applied, its text still to come",
                    document.label,
                    timeout.as_millis()
                );
                state.documents.update(|store| store.expect_applied_change(&document.key));
                applied.push(AppliedDocument {
                    rev: None,
                    differs: None,
                    live: None,
                    review: None,
                    pending_sync: true,
                });
            }
            None => {
                return Err(ProtocolError::new(
                    ErrorKind::Timeout,
                    format!(
                        "The editor said it applied the edit to {}, but its change did not reach the server within \
                         {} ms (syncTimeoutMs). Read the document again to see its state before retrying.",
                        document.label,
                        timeout.as_millis()
                    ),
                )
                .with("phase", "sync"));
            }
        }
    }
    Ok(applied)
}
