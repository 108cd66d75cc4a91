//! An agent's proposal of whole new file texts, reviewed in the live buffers before the
//! agent writes them: the one core behind Claude Code's and Gemini CLI's `openDiff` and
//! every agent's pre-write hook (`verbatim/propose`, [`crate::service::protocol`]).
//!
//! The agent read each file from disk and proposes its new text (or its deletion). The
//! person's buffers may hold unsaved changes the agent never saw, so each proposal is
//! merged three ways ([`verbatim_engine::merge`]): base = the file on disk, theirs = the
//! proposal, ours = the buffer. What the proposals change where the buffers still agree
//! with the disk is offered as one ordinary Verbatim edit
//! ([`crate::service::edits::deliver_as`]): hunks, leaving some out with a reason,
//! offered again over the person's typing, journaled. Where the person changed the same
//! lines, their lines stay and the summary says so.
//!
//! Once the person has decided, the text each file is to hold is the disk text plus what
//! the review changed in the buffer ([`verbatim_engine::transplant`]), never the
//! person's other unsaved changes. The agent writes it; the server expects that write
//! ([`crate::ide::agent_write`]), so it is neither offered again nor reloaded over the
//! buffer.
//!
//! Three ends are told apart: the person decided ([`ProposalOutcome::Decided`]), the
//! change was not made ([`ProposalOutcome::Rejected`]: by the person, with their words,
//! or because the review ended without a decision), or Verbatim could not review it at
//! all ([`ProposalOutcome::NotReviewed`]: no editor, a read-only connection, a path it
//! may not write), which a hook answers with no decision so that the agent's own flow
//! goes on. Nothing here knows a wire format: the IDE protocols in [`crate::ide`] and
//! `verbatim/propose` phrase the outcome for their agent.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ropey::Rope;
use tokio::sync::OwnedMutexGuard;
use verbatim_engine::disk::{DiskError, read_text};
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::merge;
use verbatim_engine::rev::Rev;
use verbatim_engine::transplant::transplant;

use crate::service::access::Access;
use crate::service::deliver::deliver_as;
use crate::service::deliver::planned::{Origin, PlanBase, PlannedDocument};
use crate::service::deliver::report::Outcome;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::external::describe;
use crate::service::journal::RevertWrite;
use crate::service::registry::AgentInfo;
use crate::service::state::State;

/// One file of a proposal.
#[derive(Debug, Clone, Copy)]
pub struct ProposedText<'a> {
    /// The file, absolute.
    pub path: &'a Path,
    /// The whole new text; `None` to delete the file.
    pub text: Option<&'a str>,
}

/// What an agent asks the person to review: one review, however many files.
#[derive(Debug, Clone, Copy)]
pub struct Proposal<'a> {
    pub files: &'a [ProposedText<'a>],
    /// Shown in the review and journaled; `None` names the files.
    pub summary: Option<&'a str>,
    /// The agent would have asked the person itself: the editor reviews the change
    /// whatever its review setting (`Origin::Ide`). Otherwise the editor's setting
    /// decides (`Origin::IdeUnasked`: in `auto` mode the change lands in the buffer at once).
    pub always_review: bool,
}

/// What one file is to hold once the person decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOutcome {
    pub path: PathBuf,
    /// What the agent is to write; `None`: the file is deleted.
    pub text: Option<String>,
    /// What the agent proposed.
    pub proposal: Option<String>,
}

impl FileOutcome {
    /// The file is to hold exactly what the agent proposed.
    pub fn as_proposed(&self) -> bool {
        self.text == self.proposal
    }
}

/// How the review ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProposalOutcome {
    /// The person kept all or some of it: each file is to hold its `text`.
    Decided {
        files: Vec<FileOutcome>,
        /// The person's words for what they left out.
        reason: Option<String>,
        /// Lines the proposal changes that the person has changed too, unsaved: never
        /// offered, the person's lines stay (`a.txt: lines 8-9`).
        kept_back: Vec<String>,
    },
    /// Nothing is to be written.
    Rejected {
        /// What happened, for the log and for agents that can say it.
        why: String,
        /// The person's own words, when they gave a reason.
        reason: Option<String>,
        /// The person said no (rather than the review ending without a decision).
        by_person: bool,
    },
    /// Verbatim could not review it (no editor, a read-only agent, a path it may not
    /// write, a file it cannot read): the agent's own flow should decide.
    NotReviewed { why: String },
}

impl ProposalOutcome {
    /// Every file is to hold exactly the proposal.
    pub fn all_as_proposed(&self) -> bool {
        matches!(self, Self::Decided { files, .. } if files.iter().all(FileOutcome::as_proposed))
    }
}

/// Reviews `proposal` in the editor and says what each file is to hold.
pub async fn review(state: &Arc<State>, agent: &AgentInfo, proposal: Proposal<'_>) -> ProposalOutcome {
    let outcome = match prepare(state, agent, proposal).await {
        Ok(prepared) => prepared.run(state, agent, proposal).await,
        Err(outcome) => outcome,
    };
    match &outcome {
        ProposalOutcome::Decided { files, .. } => {
            let kept = files.iter().filter(|file| file.as_proposed()).count();
            tracing::info!(agent = %agent.name, files = files.len(), as_proposed = kept, "the proposal was decided");
        }
        ProposalOutcome::Rejected { why, .. } => {
            tracing::info!(agent = %agent.name, "the proposal is not applied: {why}");
        }
        ProposalOutcome::NotReviewed { why } => {
            tracing::info!(agent = %agent.name, "the proposal was not reviewed: {why}");
        }
    }
    outcome
}

/// How the review of one file (`openDiff`) ended, as the IDE protocols answer it.
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

/// Reviews one file's proposal, always in the editor (the agent asked, as `openDiff`
/// does): an IDE protocol's review has no "not reviewed", so that is a rejection.
pub async fn review_file(state: &Arc<State>, agent: &AgentInfo, path: &Path, text: &str) -> DiffOutcome {
    let files = [ProposedText { path, text: Some(text) }];
    let proposal = Proposal { files: &files, summary: None, always_review: true };
    match review(state, agent, proposal).await {
        ProposalOutcome::Decided { mut files, .. } => match files.pop() {
            Some(FileOutcome { text: Some(written), proposal, .. }) => {
                let modified = Some(&written) != proposal.as_ref();
                DiffOutcome::Accepted { text: written, modified }
            }
            _ => DiffOutcome::Rejected { why: "the review gave no text for the file".into() },
        },
        ProposalOutcome::Rejected { why, .. } | ProposalOutcome::NotReviewed { why } => DiffOutcome::Rejected { why },
    }
}

/// One file as the review starts: the buffer (or the file), and the disk under it.
struct Start {
    editor_uri: String,
    buffer: Rope,
    disk: String,
    rev: Option<Rev>,
    open: Option<(u64, i32)>,
}

impl Start {
    /// What the review's edit of `key` is made on: the live buffer (or the disk).
    fn plan_base(&self, key: &DocKey, label: &str) -> PlanBase {
        PlanBase {
            key: key.clone(),
            editor_uri: self.editor_uri.clone(),
            label: label.to_owned(),
            text: self.buffer.clone(),
            rev: self.rev,
            open: self.open,
        }
    }
}

/// A file whose proposal changes something, planned for the review.
struct Planned {
    index: usize,
    document: PlannedDocument,
    disk: String,
}

/// The proposal planned, the lanes of its files held.
struct Prepared {
    lane: Vec<OwnedMutexGuard<()>>,
    starts: Vec<Start>,
    planned: Vec<Planned>,
    summary: String,
    /// Lines left as the person has them (see [`ProposalOutcome::Decided`]).
    kept_back: Vec<String>,
}

fn not_reviewed(why: impl Into<String>) -> ProposalOutcome {
    ProposalOutcome::NotReviewed { why: why.into() }
}

async fn prepare(state: &Arc<State>, agent: &AgentInfo, proposal: Proposal<'_>) -> Result<Prepared, ProposalOutcome> {
    if agent.access == Access::ReadOnly {
        return Err(not_reviewed(format!(
            "{} is connected read-only (the editor's agentAccess option), so it may not change files",
            agent.name
        )));
    }
    if proposal.files.is_empty() {
        return Err(not_reviewed("the proposal names no file"));
    }
    let workspace = state.workspace();
    let mut keys = Vec::with_capacity(proposal.files.len());
    for file in proposal.files {
        if !file.path.is_absolute() {
            return Err(not_reviewed(format!("{} is not an absolute path", file.path.display())));
        }
        let key = DocKey::parse(&file.path.to_string_lossy()).map_err(|error| not_reviewed(error.to_string()))?;
        state.path_policy().check_write(&key, &workspace).map_err(|error| not_reviewed(error.message))?;
        if keys.contains(&key) {
            return Err(not_reviewed(format!("{} is named twice in one proposal", workspace.label(&key))));
        }
        keys.push(key);
    }
    if state.editor().is_none() {
        return Err(not_reviewed("no editor is connected"));
    }
    let lane = state.lock_lanes(&keys).await;
    let mut starts = Vec::with_capacity(keys.len());
    let mut planned = Vec::new();
    let mut conflicted = Vec::new();
    let mut labels = Vec::new();
    for (index, (file, key)) in proposal.files.iter().zip(&keys).enumerate() {
        let label = workspace.label(key);
        let start = snapshot(state, key, &label).map_err(not_reviewed)?;
        let document = match file.text {
            Some(text) => plan_text(&start, key, &label, text, &mut conflicted),
            None if start.rev.is_none() => {
                return Err(not_reviewed(format!("{label} does not exist, so it cannot be deleted")));
            }
            None => Some(plan_delete(&start, key, &label)),
        };
        if let Some(document) = document {
            labels.push(match (document.create, document.delete) {
                (true, _) => format!("create {label}"),
                (_, true) => format!("delete {label}"),
                _ => format!("edit {label}"),
            });
            planned.push(Planned { index, document, disk: start.disk.clone() });
        }
        starts.push(start);
    }
    if planned.is_empty() && !conflicted.is_empty() {
        return Err(ProposalOutcome::Rejected {
            why: format!(
                "every change of the proposal overlaps the person's unsaved changes ({}); nothing was offered. \
                 Ask the person to save or undo them, then propose the change again",
                conflicted.join("; ")
            ),
            reason: None,
            by_person: false,
        });
    }
    let mut summary = proposal.summary.map_or_else(|| labels.join(", "), ToOwned::to_owned);
    if !conflicted.is_empty() {
        summary.push_str(&format!("; {} stay as you have them (you changed them too)", conflicted.join("; ")));
    }
    Ok(Prepared { lane, starts, planned, summary, kept_back: conflicted })
}

/// The review's edit of one file, or `None` when the proposal changes nothing the
/// person has not changed too (those lines are added to `conflicted`).
fn plan_text(
    start: &Start,
    key: &DocKey,
    label: &str,
    text: &str,
    conflicted: &mut Vec<String>,
) -> Option<PlannedDocument> {
    let merged = merge::merge(&start.disk, &start.buffer.to_string(), text);
    if !merged.conflicts.is_empty() {
        conflicted.push(format!("{label}: {}", describe(&merged.conflicts)));
    }
    if merged.replacements.is_empty() {
        return None;
    }
    Some(PlannedDocument::edit(start.plan_base(key, label), merged.replacements))
}

fn plan_delete(start: &Start, key: &DocKey, label: &str) -> PlannedDocument {
    PlannedDocument::delete(start.plan_base(key, label), Vec::new())
}

impl Prepared {
    async fn run(self, state: &Arc<State>, agent: &AgentInfo, proposal: Proposal<'_>) -> ProposalOutcome {
        let Self { lane, starts, planned, summary, kept_back } = self;
        let proposed = |index: usize| proposal.files[index].text.map(ToOwned::to_owned);
        // Files the proposal leaves as the disk has them: nothing to review or write.
        let mut files: Vec<FileOutcome> = starts
            .iter()
            .enumerate()
            .map(|(index, start)| FileOutcome {
                path: proposal.files[index].path.to_path_buf(),
                text: Some(start.disk.clone()),
                proposal: proposed(index),
            })
            .collect();
        if planned.is_empty() {
            return ProposalOutcome::Decided { files, reason: None, kept_back };
        }
        let origin = if proposal.always_review { Origin::Ide } else { Origin::IdeUnasked };
        let documents: Vec<PlannedDocument> = planned.iter().map(|planned| planned.document.clone()).collect();
        // Answered from the decision only where the agent's write cannot race the editor's
        // apply: a file the edit creates is created by the editor (VS Code truncates an
        // existing one), so the agent must write after that, not before.
        let single =
            (documents.len() == 1 && !documents[0].delete && !documents[0].create).then(|| documents[0].key.clone());
        // The person's decision answers the agent as soon as the editor tells it, before the
        // editor has applied it (VS Code); the delivery is confirmed after that.
        let mut decided = single.as_ref().map(|key| state.early_decisions.listen(key));
        let mut delivery = Delivery::start(state, agent, origin, documents, summary);
        let early = async {
            match decided.as_mut() {
                Some(listener) => listener.decided().await,
                None => std::future::pending().await,
            }
        };
        let (texts, reason, unconfirmed) = tokio::select! {
            biased;
            outcome = delivery.outcome() => match outcome {
                Ok(outcome) => {
                    let texts: Vec<(Rope, Option<Rope>)> = outcome.texts;
                    (texts, outcome.reason, None)
                }
                Err(error) => return rejected(&error),
            },
            early = early => {
                let texts = vec![(early.before.clone(), Some(early.after.clone()))];
                let reason = early.reason.clone();
                (texts, reason, Some((early.id, early.after, early.at, delivery)))
            }
        };
        drop(decided);
        let mut written_any = false;
        let mut confirm = Vec::new();
        for (planned, (before, after)) in planned.iter().zip(texts) {
            let key = &planned.document.key;
            let file = &mut files[planned.index];
            if planned.document.delete {
                // The editor deleted the file: there is nothing left for the agent to write.
                let deleted = after.is_none() && key.path().is_some_and(|path| !path.exists());
                file.text = if deleted { None } else { Some(planned.disk.clone()) };
                written_any |= deleted;
                continue;
            }
            // The disk under the buffer now: a save during the review moved it.
            let disk = state.documents.lock().get(key).and_then(|document| document.disk_baseline());
            let disk = disk.map_or_else(|| planned.disk.clone(), |disk| disk.to_string());
            let after = after.unwrap_or_else(|| planned.document.predicted.clone());
            let transplanted = transplant(&disk, &before.to_string(), &after.to_string());
            if transplanted.left_out > 0 {
                tracing::info!(
                    document = %planned.document.label,
                    left_out = transplanted.left_out,
                    "changes made inside lines the person had changed stay in the buffer only"
                );
            }
            written_any |= transplanted.text != disk;
            if transplanted.text != disk {
                crate::ide::agent_write::expect(state, key, transplanted.text.clone());
            }
            confirm.push((key.clone(), planned.document.label.clone(), after, disk, transplanted.text.clone()));
            file.text = Some(transplanted.text);
        }
        if let Some((id, after, decided_at, delivery)) = unconfirmed
            && let Some((key, label, _, disk, written)) = confirm.pop()
        {
            tracing::debug!(
                document = %label,
                "answered from the person's decision {} µs after it arrived, before the editor applied it",
                decided_at.elapsed().as_micros()
            );
            let confirm = Confirm { id, key, label, after, disk, written };
            tokio::spawn(confirm.run(Arc::clone(state), lane, delivery));
        }
        if !written_any {
            // The person kept none of it.
            return ProposalOutcome::Rejected {
                why: match &reason {
                    Some(reason) => format!("the person left every hunk out: {reason}"),
                    None => "the person left every hunk out".into(),
                },
                reason,
                by_person: true,
            };
        }
        ProposalOutcome::Decided { files, reason, kept_back }
    }
}

/// A failed delivery as a rejection: the person's own, or the review's end.
fn rejected(error: &ProtocolError) -> ProposalOutcome {
    let reason = error.data.get("reason").and_then(serde_json::Value::as_str).map(ToOwned::to_owned);
    ProposalOutcome::Rejected { why: error.message.clone(), reason, by_person: error.kind == ErrorKind::Rejected }
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
    fn start(
        state: &Arc<State>,
        agent: &AgentInfo,
        origin: Origin,
        planned: Vec<PlannedDocument>,
        summary: String,
    ) -> Self {
        let (state, agent) = (Arc::clone(state), agent.clone());
        let task = tokio::spawn(async move {
            deliver_as(&state, &agent, origin, &planned, &summary, None, RevertWrite::default()).await
        });
        Self { task: Some(task) }
    }

    async fn outcome(&mut self) -> Result<Outcome, ProtocolError> {
        let Some(task) = self.task.as_mut() else { return std::future::pending().await };
        let outcome = task.await;
        self.task = None;
        match outcome {
            Ok(outcome) => outcome,
            Err(error) => {
                Err(ProtocolError::new(ErrorKind::EditorError, format!("the review ended unexpectedly ({error})")))
            }
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
            Err(error) => Some(error.message.clone()),
        };
        let Some(why) = why else { return };
        tracing::warn!(
            document = %self.label,
            "the editor did not apply the hunks the person kept ({why}); the agent's write of them is offered as a change on disk"
        );
        crate::ide::agent_write::withdraw(state, self.key, self.disk, &self.written).await;
    }
}
