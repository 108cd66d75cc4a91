//! An agent's proposal for a whole file, reviewed in the live buffer before the agent
//! writes it: the core of Claude Code's and Gemini CLI's `openDiff`.
//!
//! The agent read the file from disk and proposes its new text. The person's buffer may
//! hold unsaved changes the agent never saw, so the proposal is merged three ways
//! ([`verbatim_engine::merge`]): base = the file on disk, theirs = the proposal, ours =
//! the buffer. What the proposal changes where the buffer still agrees with the disk is
//! offered as an ordinary Verbatim edit ([`crate::service::edits::deliver_as`]): hunks,
//! leaving some out with a reason, offered again over the person's typing, journaled.
//! Where the person changed the same lines, their lines stay and the summary says so.
//!
//! Once the person has decided, the text the file is to hold is the disk text plus what
//! the review changed in the buffer ([`verbatim_engine::transplant`]), never the
//! person's other unsaved changes. The agent writes it; the server expects that write
//! ([`crate::service::external::expect_write`]), so it is neither
//! offered again nor reloaded over the buffer.
//!
//! Nothing here knows a wire format: the IDE protocols in [`crate::ide`] call
//! [`review`] and phrase its [`DiffOutcome`] for their agent.

use std::path::Path;
use std::sync::Arc;

use ropey::Rope;
use tokio::sync::OwnedMutexGuard;
use verbatim_engine::disk::{DiskError, read_text};
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::merge;
use verbatim_engine::rev::Rev;
use verbatim_engine::transplant::transplant;

use crate::service::access::Access;
use crate::service::apply::{Origin, PlannedDocument};
use crate::service::edits::{Outcome, deliver_as};
use crate::service::error::ProtocolError;
use crate::service::external::describe;
use crate::service::registry::AgentInfo;
use crate::service::state::State;

/// What an agent asks the person to review.
#[derive(Debug, Clone, Copy)]
pub struct DiffRequest<'a> {
    /// The file, absolute.
    pub path: &'a Path,
    /// The whole new text the agent proposes.
    pub proposal: &'a str,
}

/// How the review ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffOutcome {
    /// The person kept all or some of it: the file is to hold `text`.
    Accepted {
        text: String,
        /// `text` is not the proposal (hunks left out, or changed by the person).
        modified: bool,
    },
    /// Nothing is to be written; `why`, for the log and for agents that can say it.
    Rejected { why: String },
}

/// Reviews `request` in the editor and says what the file is to hold.
pub async fn review(state: &Arc<State>, agent: &AgentInfo, request: DiffRequest<'_>) -> DiffOutcome {
    match try_review(state, agent, request).await {
        Ok(outcome) => outcome,
        Err(why) => {
            tracing::info!(agent = %agent.name, path = %request.path.display(), "the proposal is not applied: {why}");
            DiffOutcome::Rejected { why }
        }
    }
}

/// The document as the review starts: the buffer (or the file), and the disk under it.
struct Start {
    editor_uri: String,
    buffer: Rope,
    disk: String,
    rev: Option<Rev>,
    open: Option<(u64, i32)>,
}

async fn try_review(state: &Arc<State>, agent: &AgentInfo, request: DiffRequest<'_>) -> Result<DiffOutcome, String> {
    if agent.access == Access::ReadOnly {
        return Err(format!(
            "{} is connected read-only (the editor's agentAccess option), so it may not change files",
            agent.name
        ));
    }
    if !request.path.is_absolute() {
        return Err(format!("{} is not an absolute path", request.path.display()));
    }
    let key = DocKey::parse(&request.path.to_string_lossy()).map_err(|error| error.to_string())?;
    let workspace = state.workspace();
    state.path_policy().check_write(&key, &workspace).map_err(|error| error.message)?;
    if state.editor().is_none() {
        return Err("no editor is connected".into());
    }
    let label = workspace.label(&key);
    let lane = state.lock_lanes(std::slice::from_ref(&key)).await;
    let start = snapshot(state, &key, &label)?;

    let merged = merge::merge(&start.disk, &start.buffer.to_string(), request.proposal);
    if merged.replacements.is_empty() {
        if merged.conflicts.is_empty() {
            // The proposal is what the disk holds already: nothing to review or write.
            return Ok(DiffOutcome::Accepted { text: start.disk, modified: false });
        }
        return Err(format!(
            "every change of the proposal to {label} overlaps the person's unsaved changes ({}); nothing was offered. \
             Ask the person to save or undo them, then propose the change again",
            describe(&merged.conflicts)
        ));
    }
    let create = start.rev.is_none();
    let mut summary = if create { format!("create {label}") } else { format!("edit {label}") };
    if !merged.conflicts.is_empty() {
        summary.push_str(&format!(
            "; {} stay as you have {} (you changed them too)",
            describe(&merged.conflicts),
            if merged.conflicts.len() == 1 { "it" } else { "them" }
        ));
    }
    let planned = PlannedDocument {
        key: key.clone(),
        editor_uri: start.editor_uri.clone(),
        label: label.clone(),
        predicted: verbatim_engine::plan::apply(&start.buffer, &merged.replacements),
        base: start.buffer.clone(),
        base_rev: start.rev,
        open: start.open,
        replacements: merged.replacements,
        create,
        delete: false,
        rename_to: None,
        normalizations: Default::default(),
        rebased_from: None,
    };
    let predicted = planned.predicted.clone();
    // The person's decision answers the agent as soon as the editor tells it, before the
    // editor has applied it (VS Code); the delivery is confirmed after that.
    let mut decided = state.early_decisions.listen(&key);
    let mut delivery = Delivery::start(state, agent, planned, summary);
    let (before, after, unconfirmed) = tokio::select! {
        biased;
        outcome = delivery.outcome() => {
            let outcome = outcome?;
            let (before, after) = outcome.texts.into_iter().next().unwrap_or((start.buffer.clone(), None));
            (before, after.unwrap_or(predicted), None)
        }
        early = decided.decided() => (early.before, early.after.clone(), Some((early.id, early.after, early.at, delivery))),
    };
    drop(decided);
    // The disk under the buffer now: a save during the review moved it.
    let disk = state.documents.lock().get(&key).and_then(|document| document.disk_baseline());
    let disk = disk.map_or(start.disk, |disk| disk.to_string());
    let transplanted = transplant(&disk, &before.to_string(), &after.to_string());
    if transplanted.left_out > 0 {
        tracing::info!(
            document = %label,
            left_out = transplanted.left_out,
            "changes made inside lines the person had changed stay in the buffer only"
        );
    }
    crate::service::external::expect_write(state, &key, transplanted.text.clone());
    if let Some((id, after, decided_at, delivery)) = unconfirmed {
        tracing::debug!(
            document = %label,
            "answered from the person's decision {} µs after it arrived, before the editor applied it",
            decided_at.elapsed().as_micros()
        );
        let confirm = Confirm { id, key, label, after, disk, written: transplanted.text.clone() };
        tokio::spawn(confirm.run(Arc::clone(state), lane, delivery));
    }
    let modified = transplanted.text != request.proposal;
    Ok(DiffOutcome::Accepted { text: transplanted.text, modified })
}

/// The buffer and the disk under it, or the file alone when it is not open.
fn snapshot(state: &State, key: &DocKey, label: &str) -> Result<Start, String> {
    let open = state.documents.lock().get(key).map(|document| {
        (
            document.editor_uri.clone(),
            document.text.clone(),
            document.disk_baseline(),
            document.rev(),
            document.session,
            document.version,
        )
    });
    let on_disk = || match key.path().map(read_text) {
        Some(Ok(disk)) => Ok(Some((disk.text, disk.rev))),
        Some(Err(DiskError::Missing)) => Ok(None),
        Some(Err(error)) => Err(format!("{label} cannot be read: {error}")),
        None => Err(format!("{label} is not a file")),
    };
    match open {
        Some((editor_uri, buffer, baseline, rev, session, version)) => {
            let disk = match baseline {
                Some(baseline) => baseline.to_string(),
                // What the file held when opened is unknown: the disk now is the best base.
                None => on_disk()?.map(|(text, _)| text).unwrap_or_default(),
            };
            Ok(Start { editor_uri, buffer, disk, rev: Some(rev), open: Some((session, version)) })
        }
        None => match on_disk()? {
            Some((text, rev)) => Ok(Start {
                editor_uri: key.to_uri(),
                buffer: Rope::from_str(&text),
                disk: text,
                rev: Some(rev),
                open: None,
            }),
            None => {
                Ok(Start { editor_uri: key.to_uri(), buffer: Rope::new(), disk: String::new(), rev: None, open: None })
            }
        },
    }
}

/// The delivery of the review's edit, run as a task of its own so that it can outlive
/// an agent answered from the person's decision. Dropped before that, it is stopped
/// (the editor is told to withdraw the review).
struct Delivery {
    task: Option<tokio::task::JoinHandle<Result<Outcome, ProtocolError>>>,
}

impl Delivery {
    fn start(state: &Arc<State>, agent: &AgentInfo, planned: PlannedDocument, summary: String) -> Self {
        let (state, agent) = (Arc::clone(state), agent.clone());
        let task = tokio::spawn(async move {
            deliver_as(&state, &agent, Origin::Ide, std::slice::from_ref(&planned), &summary, None).await
        });
        Self { task: Some(task) }
    }

    async fn outcome(&mut self) -> Result<Outcome, String> {
        let Some(task) = self.task.as_mut() else { return std::future::pending().await };
        let outcome = task.await;
        self.task = None;
        match outcome {
            Ok(outcome) => outcome.map_err(|error| error.message),
            Err(error) => Err(format!("the review ended unexpectedly ({error})")),
        }
    }
}

impl Drop for Delivery {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// An agent answered from the person's decision: once the editor has applied it, the
/// edit is over. If the editor did not apply it (the person typed in the instant
/// between deciding and the edit), the agent's write is no longer expected: it reaches
/// the buffer as a change on disk, merged and offered for review, never lost.
struct Confirm {
    id: u64,
    key: DocKey,
    label: String,
    /// What the buffer is to hold.
    after: Rope,
    /// The disk text the agent's write replaces.
    disk: String,
    /// What the agent writes.
    written: String,
}

impl Confirm {
    async fn run(self, state: Arc<State>, lane: Vec<OwnedMutexGuard<()>>, mut delivery: Delivery) {
        let outcome = delivery.outcome().await;
        state.early_decisions.settled(self.id);
        drop(lane);
        let why = match &outcome {
            Ok(outcome) => match outcome.texts.first() {
                Some((_, Some(live))) if *live != self.after => {
                    Some("the buffer holds other text than the person kept".to_owned())
                }
                _ => None,
            },
            Err(why) => Some(why.clone()),
        };
        let Some(why) = why else { return };
        tracing::warn!(
            document = %self.label,
            "the editor did not apply the hunks the person kept ({why}); the agent's write of them is offered as a change on disk"
        );
        crate::service::external::unexpect_write(state, self.key, self.disk, &self.written).await;
    }
}
