//! `verbatim/propose`: the agents' pre-write hooks' way in to the proposal core
//! ([`crate::ide::proposal`]). The hook (`verbatim hook AGENT`, in the agent's process)
//! works out the whole new text of every file the agent's own tool would write and
//! sends them here; the answer says, per file, what the agent is to write and what the
//! person left out, with their words, for the hook to phrase in its agent's terms.
//!
//! A proposal Verbatim cannot review (no editor, a read-only connection, a path it may
//! not write) is the error `notReviewed` (`editorUnavailable`, `data.reason`), so that
//! the hook gives no decision and the agent's own flow goes on.

use std::path::PathBuf;
use std::sync::Arc;

use verbatim_engine::diff::unified_diff_of_texts;
use verbatim_engine::doc_key::DocKey;

use crate::ide::proposal::{self, FileOutcome, Proposal, ProposalOutcome, ProposedText};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::protocol::{ProposeDecision, ProposeParams, ProposeResult, ProposeReview, ProposedOutcome};
use crate::service::registry::AgentInfo;
use crate::service::state::State;

/// Reviews the proposal and answers what each file is to hold.
pub async fn propose(
    state: &Arc<State>,
    agent: &AgentInfo,
    params: ProposeParams,
) -> Result<ProposeResult, ProtocolError> {
    let mut paths = Vec::with_capacity(params.files.len());
    for (index, file) in params.files.iter().enumerate() {
        let path = DocKey::parse(&file.uri).ok().and_then(|key| key.path().map(PathBuf::from)).ok_or_else(|| {
            ProtocolError::invalid_params(
                Some("files"),
                format!("files[{index}].uri ({}) is not a file: send file:// URIs or absolute paths", file.uri),
            )
        })?;
        paths.push(path);
    }
    let texts: Vec<ProposedText<'_>> =
        params.files.iter().zip(&paths).map(|(file, path)| ProposedText { path, text: file.text.as_deref() }).collect();
    let summary = (!params.summary.trim().is_empty()).then_some(params.summary.as_str());
    let proposal = Proposal { files: &texts, summary, always_review: params.review == ProposeReview::Always };
    tracing::debug!(agent = %agent.name, session = ?params.session, turn = ?params.turn, files = texts.len(), "verbatim/propose");
    let agent = &agent.for_write(params.session.as_deref(), params.turn.as_deref());
    let outcome = proposal::review(state, agent, proposal).await;
    let uris = params.files.iter().map(|file| file.uri.clone());
    answer(outcome, uris)
}

fn answer(outcome: ProposalOutcome, uris: impl Iterator<Item = String>) -> Result<ProposeResult, ProtocolError> {
    match outcome {
        ProposalOutcome::NotReviewed { why } => Err(ProtocolError::new(
            ErrorKind::EditorUnavailable,
            format!("Verbatim cannot review this change: {why}. Nothing was reviewed or written."),
        )
        .with("reason", "notReviewed")),
        ProposalOutcome::Rejected { why, reason, by_person } => {
            let message = match (&reason, by_person) {
                (Some(reason), true) => format!("The person rejected this change in the editor: {reason}"),
                (None, true) => "The person rejected this change in the editor (no reason given).".to_owned(),
                (_, false) => format!("The change was not made: {why}."),
            };
            Ok(ProposeResult { decision: ProposeDecision::Rejected, files: Vec::new(), reason, message })
        }
        ProposalOutcome::Decided { files, reason, kept_back } => {
            let as_proposed = files.iter().all(FileOutcome::as_proposed);
            let outcomes: Vec<ProposedOutcome> =
                files.into_iter().zip(uris).map(|(file, uri)| outcome_of(file, uri)).collect();
            let message = if as_proposed {
                "The person accepted this change in the editor.".to_owned()
            } else {
                partial_message(&outcomes, reason.as_deref(), &kept_back)
            };
            let decision = if as_proposed { ProposeDecision::Accepted } else { ProposeDecision::Partial };
            Ok(ProposeResult { decision, files: outcomes, reason, message })
        }
    }
}

fn outcome_of(file: FileOutcome, uri: String) -> ProposedOutcome {
    let as_proposed = file.as_proposed();
    let left_out = match (&file.text, &file.proposal) {
        (Some(text), Some(proposal)) if !as_proposed => {
            Some(unified_diff_of_texts(text, proposal, "what is written", "what you proposed"))
        }
        (Some(_), None) if !as_proposed => Some("(the deletion of the file was left out)\n".to_owned()),
        _ => None,
    };
    ProposedOutcome { uri, text: file.text, as_proposed, left_out }
}

/// What the model is told when only part of its change is written.
fn partial_message(files: &[ProposedOutcome], reason: Option<&str>, kept_back: &[String]) -> String {
    let mut message = String::from(
        "The person reviewed this change in the editor and kept only part of it; only that part is written. ",
    );
    if !kept_back.is_empty() {
        message.push_str(&format!(
            "Some of it was not offered because the person has unsaved changes on the same lines, which stay as \
             they have them ({}). ",
            kept_back.join("; ")
        ));
    }
    match reason {
        Some(reason) if !reason.trim().is_empty() => message.push_str(&format!("Their reason: {reason}. ")),
        _ if kept_back.is_empty() => message.push_str("They gave no reason. "),
        _ => {}
    }
    message.push_str("Left out (a diff from what is written to what you proposed):\n");
    for file in files.iter().filter(|file| !file.as_proposed) {
        let name = DocKey::parse(&file.uri).ok().and_then(|key| key.path().map(|path| path.display().to_string()));
        message.push_str(&format!("{}:\n", name.unwrap_or_else(|| file.uri.clone())));
        message.push_str(file.left_out.as_deref().unwrap_or(""));
    }
    message.push_str("Do not write the left-out part again unless the person asks for it.");
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn file(text: &str, proposal: &str) -> FileOutcome {
        FileOutcome { path: PathBuf::from("/w/a.txt"), text: Some(text.into()), proposal: Some(proposal.into()) }
    }

    #[test]
    fn a_partial_answer_names_the_left_out_lines_and_the_reason() {
        let outcome = ProposalOutcome::Decided {
            files: vec![file("A\nb\nc\n", "A\nb\nC\n")],
            reason: Some("c stays lower case".into()),
            kept_back: Vec::new(),
        };
        let result = answer(outcome, ["file:///w/a.txt".to_owned()].into_iter()).expect("decided");
        assert_eq!(result.decision, ProposeDecision::Partial);
        assert!(result.message.contains("Their reason: c stays lower case."), "{}", result.message);
        assert!(result.message.contains("-c\n+C\n"), "{}", result.message);
        assert_eq!(result.files[0].text.as_deref(), Some("A\nb\nc\n"));
    }

    #[test]
    fn a_rejection_carries_the_persons_words_and_not_reviewed_is_an_error() {
        let rejected =
            ProposalOutcome::Rejected { why: "no".into(), reason: Some("wrong file".into()), by_person: true };
        let result = answer(rejected, std::iter::empty()).expect("answered");
        assert_eq!(result.decision, ProposeDecision::Rejected);
        assert_eq!(result.message, "The person rejected this change in the editor: wrong file");
        let error = answer(ProposalOutcome::NotReviewed { why: "no editor is connected".into() }, std::iter::empty())
            .expect_err("not reviewed");
        assert_eq!(error.kind, ErrorKind::EditorUnavailable);
        assert_eq!(error.data.get("reason").and_then(|value| value.as_str()), Some("notReviewed"));
    }

    #[test]
    fn every_file_as_proposed_is_accepted() {
        let outcome = ProposalOutcome::Decided { files: vec![file("x\n", "x\n")], reason: None, kept_back: Vec::new() };
        let result = answer(outcome, ["file:///w/a.txt".to_owned()].into_iter()).expect("decided");
        assert_eq!(result.decision, ProposeDecision::Accepted);
        assert_eq!(result.files[0].left_out, None);
    }
}
