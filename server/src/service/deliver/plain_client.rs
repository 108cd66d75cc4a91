//! Asking a plain LSP client (one that does not set `verbatimExtensions`: Eglot,
//! Helix, Kate) for an edit, and reading what it does as truthfully as the LSP lets.
//!
//! - **One request at a time.** Eglot, asked again while its y/n prompt is open, may
//!   never answer the first; the lane is [`State::plain_apply_lane`].
//! - **An unanswered request never holds the others back.** Eglot's prompt is modal:
//!   the person's typing or saving while a request is open means the prompt is gone
//!   (C-g makes Eglot drop the request without answering). Then, or when
//!   [`UNANSWERED_BOUND`] passes, the agent is told `notAnswered`, the journal says so,
//!   and the lane is free for the next request. The request itself is still awaited in
//!   the background: a late answer is journaled, and an applied one is taken into the
//!   server's copy.
//! - **What the client said it applied is what the server knows.** After `applied:
//!   true` the server's copy of an open document takes the edit at once ([`assume`]),
//!   at the version the client will have (Eglot counts one version per `TextEdit`);
//!   the client's later `didChange` is reconciled with it (see
//!   `verbatim_engine::unsent`).
//! - **A version error after a yes is not a refusal.** When the client names the
//!   version it has ("Edits on `a.txt' require version 3, you have 4") and the server's
//!   copy holds edits the client has not sent, the server's guess of the version was
//!   wrong: it takes the client's and the edit is offered again ([`correct_version`]).

use std::sync::Arc;
use std::time::Duration;

use ropey::Rope;
use tokio::time::Instant;

use verbatim_engine::diff::unified_diff_of_texts;
use verbatim_engine::doc_key::DocKey;

use crate::service::deliver::answer::EditorAnswer;
use crate::service::deliver::planned::PlannedDocument;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::{Event, Outcome, Source};
use crate::service::state::State;

/// How long a plain client's request may stay unanswered, when `applyTimeoutMs` is
/// not set, before the agent is told `notAnswered` and the next request goes out.
pub const UNANSWERED_BOUND: Duration = Duration::from_secs(30);
/// How long a late answer is still awaited (and journaled) after the agent was told
/// `notAnswered`.
const LATE_ANSWER_LIMIT: Duration = Duration::from_secs(600);
/// Typing that arrives this soon after the request went out may predate the prompt
/// (Eglot sends the person's typing after 0.5 s of idle, and a prompt counts as idle):
/// it does not say the prompt is gone.
const PROMPT_SETTLE: Duration = Duration::from_secs(1);

/// Why a request was given up on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GivenUp {
    /// The person typed or saved while it was open: the prompt is gone.
    Typing,
    /// The bound passed.
    Bound,
}

impl GivenUp {
    fn as_wire(self) -> &'static str {
        match self {
            Self::Typing => "typing",
            Self::Bound => "bound",
        }
    }
}

/// What is needed to journal a late answer.
pub struct LateAnswer {
    pub agent: String,
    /// The agent's session, for the journal.
    pub session: String,
    pub summary: String,
    pub documents: Vec<PlannedDocument>,
    /// How many `TextEdit`s each document was sent.
    pub text_edits: Vec<usize>,
}

/// Sends the request when the lane is free, and waits for its answer, for the
/// person's typing, or for the bound. The outer error ends the edit (`notAnswered`,
/// the editor went away); the inner result is the client's answer.
pub async fn ask(
    state: &Arc<State>,
    request: impl Future<Output = Result<EditorAnswer, ProtocolError>> + Send + 'static,
    bound: Duration,
    late: LateAnswer,
) -> Result<Result<EditorAnswer, ProtocolError>, ProtocolError> {
    let _one_at_a_time = tokio::select! {
        lane = state.plain_apply_lane.lock() => lane,
        () = state.editor_closed.cancelled() => return Err(editor_gone()),
    };
    let mut request = Box::pin(request);
    let sent = Instant::now();
    let mut typing = state.typing.subscribe();
    typing.mark_unchanged();
    let given_up = loop {
        tokio::select! {
            answer = &mut request => return Ok(answer),
            () = state.editor_closed.cancelled() => return Err(editor_gone()),
            () = tokio::time::sleep_until(sent + bound) => break GivenUp::Bound,
            changed = typing.changed() => {
                if changed.is_err() {
                    return Err(editor_gone());
                }
                if sent.elapsed() >= PROMPT_SETTLE && !carries_the_edit(state, &late.documents) {
                    break GivenUp::Typing;
                }
            }
        }
    };
    let waited = sent.elapsed();
    tracing::info!(
        "{}: the editor did not answer the edit within {} ms ({}); telling the agent, freeing the next request",
        late.summary,
        waited.as_millis(),
        match given_up {
            GivenUp::Typing => "the person typed, so its prompt is gone",
            GivenUp::Bound => "the bound passed",
        }
    );
    let state = Arc::clone(state);
    tokio::spawn(async move {
        match tokio::time::timeout(LATE_ANSWER_LIMIT, request).await {
            Ok(answer) => take_late_answer(&state, &late, answer),
            Err(_) => tracing::info!("{}: no late answer came", late.summary),
        }
    });
    let message = match given_up {
        GivenUp::Typing => format!(
            "The edit was not answered in the editor: the person went on typing while its prompt was open, so the \
             prompt is gone (dismissed, as C-g does in Emacs) after {} ms. Nothing is known to be applied. Read the \
             document again before retrying; if the editor answers after all, the journal records it.",
            waited.as_millis()
        ),
        GivenUp::Bound => format!(
            "The edit was not answered in the editor within {} ms. Nothing is known to be applied, and the next \
             edit may go out. Read the document again before retrying; if the editor answers after all, the journal \
             records it.",
            waited.as_millis()
        ),
    };
    Err(ProtocolError::new(ErrorKind::NotAnswered, message)
        .with("phase", given_up.as_wire())
        .with("waitedMs", u64::try_from(waited.as_millis()).unwrap_or(u64::MAX)))
}

/// Some document of the request already shows the edit: the change that arrived is
/// the client applying it (a client that sends its change before its answer).
fn carries_the_edit(state: &State, documents: &[PlannedDocument]) -> bool {
    let store = state.documents.lock();
    documents.iter().any(|document| store.get(&document.key).is_some_and(|current| current.text == document.predicted))
}

/// An answer that came after the agent was told `notAnswered`: journaled, and an
/// applied edit is taken into the server's copy of a document that has not moved.
fn take_late_answer(state: &State, late: &LateAnswer, answer: Result<EditorAnswer, ProtocolError>) {
    let applied = answer.as_ref().is_ok_and(|answer| answer.applied);
    let said = match &answer {
        Ok(answer) if answer.applied => "applied".to_owned(),
        Ok(answer) => format!(
            "not applied{}",
            answer.failure_reason.as_deref().map(|reason| format!(": {reason}")).unwrap_or_default()
        ),
        Err(error) => format!("not applied: {}", error.message),
    };
    tracing::info!("{}: the editor answered late: {said}", late.summary);
    if applied {
        let expected: Vec<Rope> = late.documents.iter().map(|document| document.predicted.clone()).collect();
        assume(state, &late.documents, &expected, &late.text_edits);
    }
    let Some(journal) = &state.journal else { return };
    let workspace = state.workspace();
    for document in &late.documents {
        let uri = document.key.to_uri();
        let diff = if applied {
            unified_diff_of_texts(
                &document.base.to_string(),
                &document.predicted.to_string(),
                &document.label,
                &document.label,
            )
        } else {
            String::new()
        };
        let event = Event {
            source: Source::Editor,
            agent: &late.agent,
            summary: &late.summary,
            uri: &uri,
            outcome: Outcome::AnsweredLate,
            diff: &diff,
            reason: Some(&said),
            session: &late.session,
            texts: None,
        };
        let folder = document.key.path().and_then(|path| workspace.folder_of(path)).map(ToOwned::to_owned);
        journal.record_event(folder.as_deref(), &event);
    }
}

/// The client said it applied the edit: every open document whose change has not
/// arrived takes it now (`expected[i]` for `documents[i]`), at the version the
/// client will have after it (one per `TextEdit` it was sent, `text_edits[i]`, as
/// Eglot counts). Documents that moved meanwhile (the change arrived), or that are
/// not open, are left to the change itself.
pub fn assume(state: &State, documents: &[PlannedDocument], expected: &[Rope], text_edits: &[usize]) {
    state.documents.update(|store| {
        for ((document, expected), text_edits) in documents.iter().zip(expected).zip(text_edits) {
            let Some((session, version)) = document.open else { continue };
            if document.create || document.delete || document.rename_to.is_some() {
                continue;
            }
            let Some(current) = store.get(&document.key) else { continue };
            if current.session != session || current.version != version {
                continue;
            }
            let edits = i32::try_from(*text_edits).unwrap_or(i32::MAX);
            let replacements = (*expected == document.predicted).then_some(&document.replacements[..]);
            store.assume_applied(&document.key, replacements, expected.clone(), version.saturating_add(edits));
        }
    });
}

/// The client's late change does not hold the edit it said it applied: the server
/// has followed the client's text; the journal says what differs.
pub fn differs_from_answer(state: &State, key: &DocKey, assumed: &str, client: &str) {
    let label = key.path().map_or_else(|| key.to_uri(), |path| path.display().to_string());
    tracing::warn!(
        "{label}: the editor's change differs from the edit it said it applied; following the editor's text"
    );
    let Some(journal) = &state.journal else { return };
    let diff = unified_diff_of_texts(assumed, client, &format!("answered/{label}"), &format!("editor/{label}"));
    let uri = key.to_uri();
    let event = Event {
        source: Source::Editor,
        agent: "editor",
        summary: "The editor's change differs from the edit it said it applied; the server follows the editor's text",
        uri: &uri,
        outcome: Outcome::DiffersFromAnswer,
        diff: &diff,
        reason: None,
        session: "editor",
        texts: None,
    };
    let folder = key.path().and_then(|path| state.workspace().folder_of(path).map(ToOwned::to_owned));
    journal.record_event(folder.as_deref(), &event);
}

/// After an error that names a version: when the client says which version it has
/// ("… you have 4", as Eglot does) and the server's copy of a planned document
/// holds edits the client has not sent, the server takes that version. Says whether
/// a document's version changed (the edit can then be offered again).
pub fn correct_version(state: &State, documents: &[PlannedDocument], message: &str) -> bool {
    let Some(version) = version_the_client_has(message) else { return false };
    let keys: Vec<&DocKey> = documents.iter().filter(|document| document.open.is_some()).map(|d| &d.key).collect();
    // Only one open document can be meant without a name: a batch over several is left alone.
    let [key] = keys[..] else { return false };
    state.documents.update(|store| store.correct_unsent_version(key, version))
}

/// The version in "… you have 4" (Eglot's "Edits on `a.txt' require version 3, you
/// have 4").
fn version_the_client_has(message: &str) -> Option<i32> {
    let (_, after) = message.rsplit_once("you have")?;
    after.trim().trim_end_matches(['.', ')']).parse().ok()
}

fn editor_gone() -> ProtocolError {
    ProtocolError::new(
        ErrorKind::EditorUnavailable,
        "The editor disconnected before answering; nothing was applied. Reconnect to a running editor and retry.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_eglot_names_is_read() {
        assert_eq!(version_the_client_has("Edits on `notes.txt' require version 0, you have 1"), Some(1));
        assert_eq!(version_the_client_has("Edits on `a' require version 3, you have 14."), Some(14));
        assert_eq!(version_the_client_has("User cancelled server edit"), None);
        assert_eq!(version_the_client_has("you have many"), None);
    }
}
