//! The editor's answer to `workspace/applyEdit`, read honestly: the hunks it says it
//! kept, and a refusal told apart as the person's (`rejected`) or a version that moved
//! (`stale`, which the delivery loop moves and offers again).

/// How long a version mismatch a plain client reports waits for the change it has not
/// sent yet (Eglot sends the person's typing after 0.5 s of idle).
pub(crate) const VERSION_MOVE_GRACE: Duration = Duration::from_secs(3);
use std::time::Duration;

use verbatim_engine::proposal_hunks::{self, ProposalHunk};

use crate::service::deliver::planned::PlannedDocument;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::state::State;

/// The editor's answer to `workspace/applyEdit`: `ApplyWorkspaceEditResult` and the
/// per-hunk fields of Verbatim's protocol.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditorAnswer {
    pub applied: bool,
    #[serde(default)]
    pub failure_reason: Option<String>,
    #[serde(default)]
    pub(crate) hunks: Option<Vec<HunkAnswer>>,
    #[serde(default)]
    pub(crate) reason: Option<String>,
}

#[derive(Debug, Clone, serde::Deserialize)]
pub(crate) struct HunkAnswer {
    pub(crate) index: usize,
    pub(crate) accepted: bool,
}

/// The hunks the editor says it kept, per document; `None` when it does not say,
/// or says something that does not fit the proposal (then the text decides).
pub(crate) fn kept_hunks(answer: &EditorAnswer, hunks: &[Vec<ProposalHunk>]) -> Option<Vec<Vec<bool>>> {
    let reported = answer.hunks.as_ref()?.iter().map(|hunk| (hunk.index, hunk.accepted));
    proposal_hunks::kept_per_document(reported, &hunks.iter().map(Vec::len).collect::<Vec<_>>())
}

pub(crate) fn editor_gone() -> ProtocolError {
    ProtocolError::new(
        ErrorKind::EditorUnavailable,
        "The editor disconnected before answering; nothing was applied. Reconnect to a running editor and retry.",
    )
}

/// Waits (at most `grace`) until some planned document's version moves.
pub(crate) async fn wait_for_a_move(state: &State, documents: &[PlannedDocument], grace: Duration) {
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
pub(crate) fn refusal(state: &State, documents: &[PlannedDocument], reason: Option<String>) -> ProtocolError {
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
pub(crate) fn version_refusal(state: &State, documents: &[PlannedDocument], message: &str) -> ProtocolError {
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
