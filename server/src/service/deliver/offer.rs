//! Applying a plan through the editor: send `workspace/applyEdit`, wait for the
//! person's answer, then wait for the `didChange` that carries the edit and compare
//! the live buffer with the prediction. Never claim what did not happen.
//!
//! A plan may also create, delete or move files (`verbatim/write`,
//! `verbatim/applyPatch`): the editor must advertise the resource operation, a
//! deleted file counts as applied once it is gone from disk, and a moved file once
//! its text shows up under the new name (in the editor, or on disk).

use std::sync::Arc;
use std::time::Duration;

use ropey::Rope;
use std::future::Future;

use tower::Service;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Id, Request};
use tower_lsp_server::ls_types::notification::Cancel;
use tower_lsp_server::ls_types::request::{ApplyWorkspaceEdit, Request as LspRequest};
use tower_lsp_server::ls_types::{ApplyWorkspaceEditParams, CancelParams, ChangeAnnotation, NumberOrString};

use verbatim_engine::proposal_hunks::{self, ProposalHunk};

use crate::service::deliver::answer::*;
use crate::service::deliver::plain_client;
use crate::service::deliver::planned::*;
use crate::service::deliver::sync::*;
use crate::service::early_decision::OfferedDocument;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::protocol::ExternalChanges;
use crate::service::registry::AgentInfo;
use crate::service::state::{EditorLink, State};
use crate::service::to_proto::{self, EditorChange, EditorEditOptions};

/// Removes a pending edit from the registry when the request ends, however it ends
/// (answered, failed, or cancelled by the agent).
pub(crate) struct PendingGuard<'a> {
    state: &'a Arc<State>,
    id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.state.registry().remove_pending(self.id);
        self.state.notify_status();
    }
}

/// Sends the plan to the editor and reports what happened to each document: the
/// editor's capabilities checked, the edit offered (as a reviewable `WorkspaceEdit`),
/// its answer read (through the plain-client or the extension strategy, chosen once
/// from the editor's options), then its change awaited and compared.
pub async fn apply_through_editor(
    state: &Arc<State>,
    agent: &AgentInfo,
    origin: Origin,
    summary: &str,
    documents: &[PlannedDocument],
    offer: &mut Offer,
) -> Result<EditorOutcome, ProtocolError> {
    let link = state.editor().ok_or_else(ProtocolError::editor_unavailable)?;
    check_capabilities(&link, documents)?;
    // Subscribe before sending, so a change that arrives before the answer is seen.
    let mut changes = state.documents.subscribe();
    let uris = documents.iter().map(|document| document.key.to_uri()).collect();
    let pending_id = state.registry().add_pending(agent, summary, uris, offer.id);
    offer.id = Some(pending_id);
    offer.count += 1;
    let _pending = PendingGuard { state, id: pending_id };
    state.notify_status();

    let hunks: Vec<Vec<ProposalHunk>> =
        documents.iter().map(|document| proposal_hunks::split(&document.base, &document.replacements)).collect();
    let request = OfferRequest { agent, origin, summary, documents, hunks: &hunks, pending_id, offer: offer.count };
    let (params, label) = request.params(&link)?;
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

    let strategy = Strategy::of(&link);
    // How many TextEdits each document is sent (a plain client's version moves by as many).
    let text_edits: Vec<usize> = hunks.iter().map(|hunks| hunks.iter().map(|hunk| hunk.edits.len()).sum()).collect();
    let answer = strategy.ask(state, &link, &request, params, &text_edits).await?;
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
    let expected = expected_texts(documents, &hunks, kept.as_ref());
    // What a plain client said it applied is what the server knows: its change may
    // come only with the person's next keystroke (Eglot), and is reconciled then.
    if strategy == Strategy::PlainClient {
        plain_client::assume(state, documents, &expected, &text_edits);
    }
    let timeout = Duration::from_millis(link.options.sync_timeout_ms);
    let defers = strategy == Strategy::PlainClient;
    let mut applied = wait_for_sync(state, documents, &expected, &mut changes, timeout, defers).await?;
    attach_reviews(&mut applied, documents, hunks, kept);
    let reason = answer.reason.filter(|reason| !reason.trim().is_empty());
    Ok(EditorOutcome { documents: applied, reason })
}

/// Refuses, before anything is sent, a plan the editor cannot apply.
fn check_capabilities(link: &EditorLink, documents: &[PlannedDocument]) -> Result<(), ProtocolError> {
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
    Ok(())
}

/// One offer of a plan: what the `workspace/applyEdit` is built from.
struct OfferRequest<'a> {
    agent: &'a AgentInfo,
    origin: Origin,
    summary: &'a str,
    documents: &'a [PlannedDocument],
    hunks: &'a [Vec<ProposalHunk>],
    pending_id: u64,
    offer: u32,
}

impl OfferRequest<'_> {
    /// The label, annotation id and `needsConfirmation` of the edit, by who proposes it.
    fn annotation(&self, link: &EditorLink) -> (String, String, bool) {
        let (agent, summary, pending_id) = (self.agent, self.summary, self.pending_id);
        match self.origin {
            Origin::Agent | Origin::IdeUnasked => (
                format!("{}: {}", agent.name, summary),
                format!("verbatim/{pending_id}"),
                link.options.needs_confirmation,
            ),
            Origin::Ide | Origin::Revert => {
                (format!("{}: {}", agent.name, summary), format!("verbatim/{pending_id}"), true)
            }
            Origin::Disk => (
                summary.to_owned(),
                format!("verbatim/disk/{pending_id}"),
                link.options.external_changes == ExternalChanges::Review,
            ),
        }
    }

    /// The `ApplyWorkspaceEditParams` (with Verbatim's `verbatim` data for an editor
    /// that reads it), and the edit's label.
    fn params(&self, link: &EditorLink) -> Result<(serde_json::Value, String), ProtocolError> {
        let (label, annotation_id, needs_confirmation) = self.annotation(link);
        let options = EditorEditOptions {
            encoding: link.encoding,
            annotation_id,
            annotation: ChangeAnnotation {
                label: label.clone(),
                needs_confirmation: Some(needs_confirmation),
                description: Some(self.summary.to_owned()),
            },
            document_changes: link.document_changes,
        };
        let notes: Vec<Vec<Option<String>>> = self
            .documents
            .iter()
            .zip(self.hunks)
            .map(|(document, hunks)| hunks.iter().map(|hunk| hunk_note(document, hunk)).collect())
            .collect();
        let changes_for_editor: Vec<EditorChange<'_>> = self
            .documents
            .iter()
            .zip(self.hunks)
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
        let mut params =
            serde_json::to_value(ApplyWorkspaceEditParams { edit, label: Some(label.clone()) }).unwrap_or_default();
        // Custom data only for an editor that reads it: a plain client may refuse unknown
        // keys (Eglot answers such a request with an error and applies nothing).
        if link.options.verbatim_extensions {
            params["verbatim"] = self.about(hunk_edits);
        }
        Ok((params, label))
    }

    /// Verbatim's data about the edit (`verbatim` in the params).
    fn about(&self, hunk_edits: impl serde::Serialize) -> serde_json::Value {
        let mut about = serde_json::json!({
            "id": self.pending_id,
            "summary": self.summary,
            "origin": self.origin.as_wire(),
            "offer": self.offer,
            "hunks": hunk_edits,
        });
        if self.origin != Origin::Disk {
            about["agent"] = serde_json::Value::String(self.agent.name.clone());
        }
        if self.origin.writes_itself() {
            // The agent writes the decided text to disk itself: the editor neither saves a
            // file the edit creates nor treats that write as a change to offer.
            about["writesItself"] = serde_json::Value::Bool(true);
        }
        about
    }
}

/// How the editor is asked: chosen once from its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Verbatim's own clients (`verbatimExtensions`): reviewed hunk by hunk, answered
    /// with what was kept, waited for as long as the review takes (or `applyTimeoutMs`).
    Extension,
    /// A plain LSP client (Eglot): one edit at a time, never waited for beyond a bound,
    /// its errors for a refusal or a moved version read as such.
    PlainClient,
}

impl Strategy {
    fn of(link: &EditorLink) -> Self {
        if link.options.verbatim_extensions { Self::Extension } else { Self::PlainClient }
    }

    /// Sends the edit and reads the answer; a refusal comes back as the error to report.
    async fn ask(
        self,
        state: &Arc<State>,
        link: &EditorLink,
        request: &OfferRequest<'_>,
        params: serde_json::Value,
        text_edits: &[usize],
    ) -> Result<EditorAnswer, ProtocolError> {
        match self {
            Self::Extension => ask_extension(state, link, params).await,
            Self::PlainClient => {
                let bound = link.options.apply_timeout_ms.map_or(plain_client::UNANSWERED_BOUND, Duration::from_millis);
                let late = plain_client::LateAnswer {
                    agent: request.agent.name.clone(),
                    session: request.agent.session.clone(),
                    summary: request.summary.to_owned(),
                    documents: request.documents.to_vec(),
                    text_edits: text_edits.to_vec(),
                };
                let answer = plain_client::ask(state, send_apply_edit(&link.client, params), bound, late).await?;
                plain_answer(state, request.documents, answer).await
            }
        }
    }
}

/// Asks an editor with Verbatim's extensions, waiting as long as `applyTimeoutMs` says.
async fn ask_extension(
    state: &Arc<State>,
    link: &EditorLink,
    params: serde_json::Value,
) -> Result<EditorAnswer, ProtocolError> {
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
    answer.unwrap_or_else(|ms| {
        Err(ProtocolError::new(
            ErrorKind::Timeout,
            format!(
                "The editor did not answer within {ms} ms (applyTimeoutMs). The edit may still be waiting for \
                 review there; read the document again before retrying."
            ),
        )
        .with("phase", "answer"))
    })
}

/// A plain client answers an edit the person declined (Eglot: "User cancelled server
/// edit") or one whose version moved with an error: that is a refusal, not a fault.
async fn plain_answer(
    state: &Arc<State>,
    documents: &[PlannedDocument],
    answer: Result<EditorAnswer, ProtocolError>,
) -> Result<EditorAnswer, ProtocolError> {
    let error = match answer {
        Err(error) if error.kind == ErrorKind::EditorError => error,
        answer => return answer,
    };
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
    Err(refusal(state, documents, message))
}

/// The text each document should hold once the editor applied what it kept.
fn expected_texts(
    documents: &[PlannedDocument],
    hunks: &[Vec<ProposalHunk>],
    kept: Option<&Vec<Vec<bool>>>,
) -> Vec<Rope> {
    match kept {
        Some(kept) => documents
            .iter()
            .zip(hunks)
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
    }
}

/// Which hunks each document holds: what the editor said, or, where the live text is
/// not what it said (or it said nothing), what the text shows.
fn attach_reviews(
    applied: &mut [AppliedDocument],
    documents: &[PlannedDocument],
    hunks: Vec<Vec<ProposalHunk>>,
    kept: Option<Vec<Vec<bool>>>,
) {
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
}

/// The notes of the replacements a hunk holds (a hunk's edits lie within the
/// replacements they come from), one per line; `None` when it holds none.
pub(crate) fn hunk_note(document: &PlannedDocument, hunk: &ProposalHunk) -> Option<String> {
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

/// Sends `workspace/applyEdit` and resolves to the editor's answer. If the returned
/// future is dropped before the answer arrives (the agent cancelled or went away),
/// the editor is sent `$/cancelRequest` so it can withdraw the review.
pub(crate) fn send_apply_edit(
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
pub(crate) struct CancelOnDrop {
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

pub(crate) fn to_number_or_string(id: Id) -> NumberOrString {
    match id {
        Id::Number(number) => NumberOrString::Number(i32::try_from(number).unwrap_or(i32::MAX)),
        Id::String(text) => NumberOrString::String(text),
        Id::Null => NumberOrString::String(String::new()),
    }
}

pub(crate) fn unsupported(doing: &str, kind: &str, instead: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorKind::EditorError,
        format!(
            "The editor does not support {doing} files through workspace edits \
             (workspace.workspaceEdit.resourceOperations lacks \"{kind}\"). Nothing was applied. {instead}."
        ),
    )
}
