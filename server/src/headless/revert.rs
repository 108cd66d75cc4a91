//! Reverts written on disk: for files no editor has open (the server's revert hands
//! them here) and for `verbatim revert` with no editor at all.
//!
//! Like every headless write: each file is locked, read with its encoding, planned
//! against what it holds now ([`crate::service::revert_plan::plan_file`]), staged beside
//! itself and renamed into place only once every file is checked again; encodings, byte
//! order marks and line endings are kept byte for byte. Conflicts are left as the file
//! has them and reported. The revert is journaled with `reverts`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ropey::Rope;
use serde_json::Value;
use verbatim_engine::doc_key::DocKey;

use super::{Headless, HeadlessOptions, JournalWrite, Target, file_lock, snapshot, to_value, write_documents};
use crate::service::deliver::planned::{AppliedDocument, PlanBase, PlannedDocument};
use crate::service::deliver::report::{proposal, report_applied, texts_of};
use crate::service::error::ProtocolError;
use crate::service::journal::Journal;
use crate::service::journal::{RevertWrite, next_write_id};
use crate::service::journal_texts::KeptTexts;
use crate::service::protocol::{RevertParams, RevertedFile};
use crate::service::registry::AgentInfo;
use crate::service::revert_plan::{self as revert, Action, FileChain, FilePlan, RevertOnDisk, WrittenRevert};

/// The server's writer of reverts on disk (for files the editor does not have open):
/// passed in to the server by whoever starts it (`verbatim lsp`).
#[derive(Debug, Default, Clone, Copy)]
pub struct ServerDisk;

impl RevertOnDisk for ServerDisk {
    fn revert_files(
        &self,
        roots: &[PathBuf],
        journal: Option<&Journal>,
        agent: &AgentInfo,
        chains: &[FileChain],
        summary: &str,
        write_id: &str,
        dry_run: bool,
    ) -> Result<WrittenRevert, ProtocolError> {
        Headless::for_server(roots, journal, agent).revert_files(chains, summary, write_id, dry_run)
    }
}

impl Headless {
    /// The headless writer a server uses for files the editor does not have open: the
    /// editor's workspace folders as roots, the server's journal.
    pub fn for_server(roots: &[PathBuf], journal: Option<&Journal>, agent: &AgentInfo) -> Self {
        Self::new(HeadlessOptions {
            agent: agent.clone(),
            cwd: roots.first().cloned().unwrap_or_else(|| PathBuf::from("/")),
            roots: roots.to_vec(),
            git_commit: false,
            journal: journal.cloned(),
            lock_dir: file_lock::default_lock_dir(),
        })
    }

    /// `verbatim/revert` with no editor: every file on disk.
    pub(super) fn revert(&self, params: RevertParams) -> Result<Value, ProtocolError> {
        let journal = self.journal_or_error()?;
        let all = super::timeline::read(&self.journal_files(journal))?;
        let selection = revert::select(&all, journal.texts(), &params)?;
        let summary = revert::summary_of(&params, &selection);
        let agent = self.options.agent.for_write(None, params.as_turn.as_deref());
        let writer = Self::new(HeadlessOptions { agent, ..self.options.clone() });
        let written = writer.revert_files(&selection.files, &summary, &next_write_id(), params.dry_run)?;
        to_value(revert::result(params.dry_run, false, written.write_id, selection, written.files))
    }

    /// Reverts `chains` on disk, all or nothing, journaled as the write `write_id` (its
    /// first documents: the server continues it with the files the editor reviews).
    pub fn revert_files(
        &self,
        chains: &[FileChain],
        summary: &str,
        write_id: &str,
        dry_run: bool,
    ) -> Result<WrittenRevert, ProtocolError> {
        let mut targets: BTreeMap<DocKey, Target> = BTreeMap::new();
        for chain in chains {
            targets.insert(chain.key.clone(), self.target(&chain.key)?);
            if let Some(back) = &chain.move_back_to {
                targets.insert(back.clone(), self.target(back)?);
            }
        }
        let paths: Vec<PathBuf> = targets.values().map(|target| target.path.clone()).collect();
        let _locks = if dry_run { Vec::new() } else { self.lock(&paths)? };
        let mut planned = Vec::new();
        // By planned document: the entries it reverts.
        let mut reverts: Vec<Vec<String>> = Vec::new();
        let mut encodings = BTreeMap::new();
        let mut plans: Vec<(&FileChain, FilePlan, Option<usize>)> = Vec::new();
        for chain in chains {
            let target = &targets[&chain.key];
            let (disk, encoding) = snapshot(&chain.key, target, true)?;
            let exists = disk.rev.is_some();
            let current = exists.then(|| disk.text.to_string());
            let taken = chain.move_back_to.as_ref().is_some_and(revert::exists);
            let plan = revert::plan_file(chain, current.as_deref(), taken);
            let base = PlanBase { open: None, ..disk.plan_base(&chain.key) };
            let document = match plan.action {
                Action::Unchanged => None,
                Action::Edit => Some(PlannedDocument::edit(base, plan.replacements.clone())),
                Action::Move => Some(match chain.move_back_to.clone() {
                    Some(to) => PlannedDocument::edit(base, plan.replacements.clone()).moving_to(to),
                    None => PlannedDocument::edit(base, plan.replacements.clone()),
                }),
                Action::Delete => Some(PlannedDocument::delete(base, Vec::new())),
                Action::Create => {
                    Some(PlannedDocument::create_whole(base, Rope::from_str(plan.created.as_deref().unwrap_or(""))))
                }
            };
            let index = document.map(|document| {
                encodings.insert(chain.key.clone(), encoding);
                planned.push(document);
                reverts.push(chain.ids.clone());
                planned.len() - 1
            });
            plans.push((chain, plan, index));
        }
        let report = |outcome: &str, plans: &[(&FileChain, FilePlan, Option<usize>)]| -> Vec<RevertedFile> {
            plans
                .iter()
                .map(|(chain, plan, index)| RevertedFile {
                    uri: chain.key.to_uri(),
                    via: "disk".to_owned(),
                    action: plan.action.as_wire().to_owned(),
                    new_uri: revert::moved_to(chain, plan),
                    hunks: plan.replacements.len(),
                    outcome: if index.is_some() { outcome } else { "unchanged" }.to_owned(),
                    conflicts: plan.reports(|_| false),
                    why: plan.why.map(str::to_owned),
                })
                .collect()
        };
        if dry_run || planned.is_empty() {
            let files = report(if dry_run { "planned" } else { "unchanged" }, &plans);
            return Ok(WrittenRevert { write_id: None, documents: 0, files });
        }
        let agent = &self.options.agent;
        let mut results: Vec<_> = planned.iter().map(|document| proposal(document, agent)).collect();
        let written = write_documents(&planned, &targets, &encodings).map(|revs| {
            let applied: Vec<AppliedDocument> = revs
                .into_iter()
                .map(|rev| AppliedDocument { rev, differs: None, live: None, review: None, pending_sync: false })
                .collect();
            let texts = planned.iter().zip(&applied).map(|(document, outcome)| texts_of(document, outcome)).collect();
            report_applied(&mut results, &planned, applied);
            texts
        });
        let revert = RevertWrite { reverts: &reverts, continues: Some((write_id, 0)) };
        let write = JournalWrite { agent, summary, commit: None, revert };
        let write_id = self.journal(&write, &planned, &targets, &results, &written);
        written?;
        KeptTexts::flush(std::time::Duration::from_secs(5));
        tracing::info!(agent = %agent.name, "revert written on disk: {summary}");
        let files = plans
            .iter()
            .map(|(chain, plan, index)| {
                let outcome = match index {
                    None => "unchanged",
                    Some(_) if plan.conflicts.is_empty() => "applied",
                    Some(_) => "partial",
                };
                RevertedFile {
                    uri: chain.key.to_uri(),
                    via: "disk".to_owned(),
                    action: plan.action.as_wire().to_owned(),
                    new_uri: revert::moved_to(chain, plan),
                    hunks: plan.replacements.len(),
                    outcome: outcome.to_owned(),
                    conflicts: plan.reports(|_| false),
                    why: plan.why.map(str::to_owned),
                }
            })
            .collect();
        Ok(WrittenRevert { write_id, documents: planned.len(), files })
    }
}
