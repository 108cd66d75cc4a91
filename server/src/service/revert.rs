//! `verbatim/revert` through the server: the entries named are read from the server's
//! journals and planned per file (`revert_plan.rs`); the files the editor has open are
//! offered as one ordinary review (`Origin::Revert`, always confirmed), each conflict a
//! hunk of its own the person may take or leave; the others are written on disk by the
//! [`RevertOnDisk`](crate::service::revert_plan::RevertOnDisk) the server was given (`headless/revert.rs`). Both parts are one
//! write, journaled with `reverts`, so it can be reverted in turn.

use std::sync::Arc;
use std::time::Duration;

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::plan::Replacement;
use verbatim_engine::revert::RevertConflict;

use crate::service::deliver::deliver_as;
use crate::service::deliver::planned::{Origin, PlannedDocument};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::{RevertWrite, next_write_id};
use crate::service::journal_texts::KeptTexts;
use crate::service::protocol::{DocumentResult, RevertParams, RevertResult, RevertedFile};
use crate::service::registry::AgentInfo;
use crate::service::revert_plan::{
    Action, FileChain, FilePlan, Selection, exists, moved_to, plan_file, result, select, short, summary_of,
};
use crate::service::snapshot::take_snapshots;
use crate::service::state::State;
use crate::service::timeline::Journaled;
use crate::service::timeline_methods;

/// Reads what `params` names from the server's journals.
pub fn read_selection(state: &State, params: &RevertParams) -> Result<(Arc<Vec<Journaled>>, Selection), ProtocolError> {
    let Some(journal) = &state.journal else {
        return Err(ProtocolError::new(
            ErrorKind::Io,
            "This server keeps no journal (no state directory: set VERBATIM_STATE_DIR, XDG_STATE_HOME or HOME), so \
             there is nothing to revert.",
        ));
    };
    KeptTexts::flush(Duration::from_secs(5));
    let all = timeline_methods::read(state, &timeline_methods::journals_of(state))?;
    let selection = select(&all, journal.texts(), params)?;
    Ok((all, selection))
}

/// `verbatim/revert` through the server: open files reviewed in the editor, the others
/// written on disk.
pub async fn revert(
    state: &Arc<State>,
    agent: &AgentInfo,
    params: RevertParams,
) -> Result<RevertResult, ProtocolError> {
    let agent = &agent.for_write(None, params.as_turn.as_deref());
    let (_, selection) = read_selection(state, &params)?;
    let summary = summary_of(&params, &selection);
    let (open, closed): (Vec<FileChain>, Vec<FileChain>) = {
        let store = state.documents.lock();
        selection.files.iter().cloned().partition(|chain| store.get(&chain.key).is_some())
    };
    // The files written on disk and those reviewed in the editor are one write: one
    // `writeId` reverts the whole revert in turn.
    let write_id = next_write_id();
    let mut files = Vec::new();
    let mut journaled = None;
    let mut documents = 0;
    let mut rejected = false;
    if !closed.is_empty() {
        let disk = state.disk_writer().ok_or_else(|| {
            ProtocolError::new(
                ErrorKind::EditorError,
                "this server cannot write reverts on disk (it was started without a disk writer); revert only files \
                 the editor has open, or run `verbatim revert` with no editor",
            )
        })?;
        let roots = state.workspace().folders().to_vec();
        let written =
            disk.revert_files(&roots, state.journal.as_ref(), agent, &closed, &summary, &write_id, params.dry_run)?;
        journaled = journaled.or(written.write_id);
        documents = written.documents;
        files.extend(written.files);
    }
    if !open.is_empty() {
        let (reported, in_editor, refused) =
            revert_in_editor(state, agent, &open, &summary, (&write_id, documents), params.dry_run).await?;
        files.extend(reported);
        journaled = journaled.or(in_editor);
        rejected = refused;
    }
    Ok(result(params.dry_run, rejected, journaled, selection, files))
}

/// Offers the reverts of open files as one review.
async fn revert_in_editor(
    state: &Arc<State>,
    agent: &AgentInfo,
    chains: &[FileChain],
    summary: &str,
    continues: (&str, usize),
    dry_run: bool,
) -> Result<(Vec<RevertedFile>, Option<String>, bool), ProtocolError> {
    let mut keys: Vec<DocKey> = chains.iter().map(|chain| chain.key.clone()).collect();
    keys.sort();
    let _lanes = if dry_run { Vec::new() } else { state.lock_lanes(&keys).await };
    let snapshots = take_snapshots(state, &keys, false).map_err(|(error, _)| error)?;
    let mut planned = Vec::new();
    // By planned document: the entries it reverts.
    let mut reverts: Vec<Vec<String>> = Vec::new();
    let mut plans = Vec::new();
    for chain in chains {
        let snapshot = &snapshots[&chain.key];
        let text = snapshot.text.to_string();
        let taken = chain.move_back_to.as_ref().is_some_and(exists);
        let plan = plan_file(chain, Some(&text), taken);
        if plan.action == Action::Unchanged && plan.conflicts.is_empty() {
            plans.push((chain, plan, None));
            continue;
        }
        // Each conflict is offered as a hunk of its own, with a note saying so: the person
        // takes or leaves it.
        let mut noted: Vec<(Replacement, Option<String>)> =
            plan.replacements.iter().map(|replacement| (replacement.clone(), None)).collect();
        noted.extend(plan.conflicts.iter().map(|conflict| {
            let replacement = Replacement { range: conflict.range.clone(), new_text: conflict.reverted.clone() };
            (replacement, Some(conflict_note(conflict)))
        }));
        noted.sort_by_key(|(replacement, _)| replacement.range.start);
        let hunk_notes =
            noted.iter().enumerate().filter_map(|(index, (_, note))| Some((index, note.clone()?))).collect();
        let replacements: Vec<Replacement> = noted.into_iter().map(|(replacement, _)| replacement).collect();
        let delete = plan.action == Action::Delete;
        let base = snapshot.plan_base(&chain.key);
        let document =
            if delete { PlannedDocument::delete(base, Vec::new()) } else { PlannedDocument::edit(base, replacements) };
        let document = match chain.move_back_to.clone().filter(|_| plan.action == Action::Move) {
            Some(to) => document.moving_to(to),
            None => document,
        };
        let index = planned.len();
        planned.push(document.with_hunk_notes(hunk_notes));
        reverts.push(chain.ids.clone());
        plans.push((chain, plan, Some(index)));
    }
    if dry_run || planned.is_empty() {
        let files = plans
            .iter()
            .map(|(chain, plan, _)| reported(chain, plan, if dry_run { "planned" } else { "unchanged" }, None))
            .collect();
        return Ok((files, None, false));
    }
    // The review's title names the conflicts: taking one drops a later change there.
    let conflicted: Vec<String> = plans
        .iter()
        .flat_map(|(chain, plan, _)| {
            plan.conflicts.iter().map(move |conflict| {
                let (start, end) = (conflict.lines.start + 1, conflict.lines.end.max(conflict.lines.start + 1));
                format!("{} lines {start}-{end}", short(&chain.key.to_uri()))
            })
        })
        .collect();
    let summary = if conflicted.is_empty() {
        summary.to_owned()
    } else {
        format!(
            "{summary} (conflict with a later change at {}: accepting that hunk drops the later change)",
            conflicted.join(", ")
        )
    };
    let revert = RevertWrite { reverts: &reverts, continues: Some(continues) };
    let delivered = deliver_as(state, agent, Origin::Revert, &planned, &summary, None, revert).await;
    let (outcome, rejected) = match delivered {
        Ok(outcome) => (Some(outcome), false),
        Err(error) if error.kind == ErrorKind::Rejected => (None, true),
        Err(error) => return Err(error),
    };
    let write_id = outcome.as_ref().and_then(|outcome| outcome.write_id.clone());
    let files = plans
        .iter()
        .map(|(chain, plan, index)| {
            let result = index.and_then(|index| outcome.as_ref().map(|outcome| &outcome.documents[index]));
            let label = match (index, result) {
                (None, _) => "unchanged",
                (Some(_), None) => "rejected",
                (Some(_), Some(result)) if result.partial => "partial",
                (Some(_), Some(_)) => "applied",
            };
            reported(chain, plan, label, result)
        })
        .collect();
    Ok((files, write_id, rejected))
}

/// What the review says at a conflict's hunk: taking it drops the later change.
fn conflict_note(conflict: &RevertConflict) -> String {
    let (start, end) = (conflict.lines.start + 1, conflict.lines.end.max(conflict.lines.start + 1));
    let lines = if start == end { format!("line {start}") } else { format!("lines {start}-{end}") };
    format!(
        "Conflict: a later change also touched {lines}. Accepting this hunk brings back the text from before the \
         reverted edit and drops the later change; rejecting it keeps the text as it is now."
    )
}

/// One file of the result.
fn reported(chain: &FileChain, plan: &FilePlan, outcome: &str, result: Option<&DocumentResult>) -> RevertedFile {
    let taken = |conflict: &RevertConflict| {
        let Some(result) = result else { return false };
        match &result.hunks {
            // Every hunk applied.
            None => true,
            Some(hunks) => hunks.iter().any(|hunk| {
                let first = conflict.lines.start + 1;
                hunk.accepted && hunk.line <= first && first < hunk.line + hunk.old_lines.max(1)
            }),
        }
    };
    RevertedFile {
        uri: chain.key.to_uri(),
        via: "editor".to_owned(),
        action: plan.action.as_wire().to_owned(),
        new_uri: moved_to(chain, plan),
        hunks: plan.replacements.len(),
        outcome: outcome.to_owned(),
        conflicts: plan.reports(taken),
        why: plan.why.map(str::to_owned),
    }
}
