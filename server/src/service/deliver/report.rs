//! What a delivery reports: the result of each document for the agent (the proposal,
//! then what was applied and which hunks were kept), the texts for the journal, and
//! the write's record in the journal.

use std::path::PathBuf;

use ropey::Rope;
use verbatim_engine::diff::{unified_diff, unified_diff_of_texts};
use verbatim_engine::plan::Replacement;

use crate::service::deliver::planned::{AppliedDocument, EditorOutcome, HunkReview, PlannedDocument};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::{DocumentTexts, WriteInfo};
use crate::service::protocol::{BatchResult, DiagnosticsReport, DocumentResult, EditResult, HunkOutcome};
use crate::service::registry::AgentInfo;
use crate::service::state::State;
use crate::service::to_proto::wire_edits;

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

/// What a document held before and after a write that was applied, for the journal.
pub(crate) fn texts_of(document: &PlannedDocument, outcome: &AppliedDocument) -> DocumentTexts {
    DocumentTexts {
        before: (!document.create).then(|| document.base.clone()),
        after: (!document.delete).then(|| outcome.live.clone().unwrap_or_else(|| document.predicted.clone())),
    }
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
pub(crate) fn hunk_outcomes(base: &Rope, review: &HunkReview) -> Vec<HunkOutcome> {
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

/// A delivery's results for the agent and its record in the journal: the proposal of
/// each document, filled with what the editor applied, journaled as `write` under the
/// workspace folder of each document. Returns the results and the journal's id of the
/// write (`None` without a journal).
pub(crate) fn report_and_journal(
    state: &State,
    agent: &AgentInfo,
    planned: &[PlannedDocument],
    outcome: &Result<EditorOutcome, ProtocolError>,
    write: &WriteInfo<'_>,
) -> (Vec<DocumentResult>, Option<String>) {
    let mut results: Vec<DocumentResult> = planned.iter().map(|document| proposal(document, agent)).collect();
    let mut texts = Vec::new();
    if let Ok(applied) = outcome {
        texts = planned.iter().zip(&applied.documents).map(|(document, outcome)| texts_of(document, outcome)).collect();
        report_applied(&mut results, planned, applied.documents.clone());
    }
    let Some(journal) = &state.journal else { return (results, None) };
    let workspace = state.workspace();
    let roots: Vec<Option<PathBuf>> = planned
        .iter()
        .map(|document| document.key.path().and_then(|path| workspace.folder_of(path)).map(ToOwned::to_owned))
        .collect();
    let write_id = journal.record(write, &roots, &results, outcome.as_ref().err(), &texts);
    state.journal_changed(&results);
    (results, Some(write_id))
}
