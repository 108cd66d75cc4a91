//! The one way a planned change reaches a document, whoever planned it (an agent's
//! edit, a patch, a change on disk, a self-writing agent's proposal, a revert):
//! offer ([`offer`]: capabilities, the `WorkspaceEdit`, the extension or plain-client
//! strategy) → answer ([`answer`]) → sync ([`sync`]) → report and journal ([`report`]),
//! offered again over the person's typing ([`rebase`]).

use std::sync::Arc;

use ropey::Rope;

use crate::service::deliver::offer::apply_through_editor;
use crate::service::deliver::planned::{Offer, Origin, PlannedDocument};
use crate::service::deliver::rebase::rebase_onto_current;
use crate::service::deliver::report::{Outcome, proposal, report_and_journal};
use crate::service::diagnostics;
use crate::service::diagnostics::Ask;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::{RevertWrite, Source, WriteInfo};
use crate::service::registry::AgentInfo;
use crate::service::snapshot::recheck_unopened;
use crate::service::state::State;

pub mod answer;
pub mod offer;
pub mod plain_client;
pub mod planned;
pub mod rebase;
pub mod report;
pub mod sync;

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
    let (results, write_id) = report_and_journal(state, agent, planned, &applied, &write);
    applied?;
    tracing::info!(agent = %agent.name, "applied: {summary}");
    Ok(Outcome { applied: true, dry_run: false, documents: results, reason, diagnostics: report, texts, write_id })
}

/// How many times one edit is offered again because the document moved during review.
pub(crate) const MAX_REBASES_IN_REVIEW: usize = 8;
