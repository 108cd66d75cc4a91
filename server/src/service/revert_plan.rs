//! What a revert undoes and what that makes of each file, with no server state: the
//! journal entries named (one entry, a write, a turn, a session) and their kept texts
//! as one chain per file ([`select`]); each chain undone in the file's current text
//! with `verbatim_engine::revert` (a three-way merge per change, as `git revert` does)
//! and the file operation decided ([`plan_file`]: a file the chain created is deleted,
//! one it deleted comes back); the result told to the agent ([`result`]). Files no
//! editor has open are written by a [`RevertOnDisk`] passed in to the server.

use std::collections::BTreeMap;
use std::path::PathBuf;

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::plan::Replacement;
use verbatim_engine::revert::{Recorded, RevertConflict, plan_revert};

use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::Journal;
use crate::service::journal_texts::KeptTexts;
use crate::service::protocol::{RevertConflictReport, RevertParams, RevertResult, RevertedFile, SkippedEntry};
use crate::service::registry::AgentInfo;
use crate::service::timeline::Journaled;

/// The recorded changes of one file that a revert undoes.
#[derive(Debug, Clone)]
pub struct FileChain {
    /// Where the file is now.
    pub key: DocKey,
    /// The entries, oldest first.
    pub ids: Vec<String>,
    /// Their texts, oldest first; `None` where the file did not exist.
    pub changes: Vec<KeptChange>,
    /// The summaries of the writes, for the revert's own.
    pub summaries: Vec<String>,
    /// Where the file was before the oldest move among the entries: it moves back there.
    pub move_back_to: Option<DocKey>,
}

#[derive(Debug, Clone)]
pub struct KeptChange {
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What a revert undoes.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub files: Vec<FileChain>,
    /// Every entry id undone.
    pub reverts: Vec<String>,
    pub skipped: Vec<SkippedEntry>,
}

/// Picks the entries `params` names in `all`, with their kept texts.
pub fn select(all: &[Journaled], texts: &KeptTexts, params: &RevertParams) -> Result<Selection, ProtocolError> {
    let named: Vec<&Journaled> = match (&params.ids, &params.turn, &params.session) {
        (Some(ids), None, None) if !ids.is_empty() => {
            let mut named = Vec::new();
            for id in ids {
                let found: Vec<&Journaled> =
                    all.iter().filter(|journaled| &journaled.id == id || &journaled.entry.write_id == id).collect();
                if found.is_empty() {
                    return Err(unknown("id", id, "an entry id (`<writeId>.<n>`) or a writeId"));
                }
                named.extend(found);
            }
            named
        }
        (None, Some(turn), None) => {
            let found: Vec<&Journaled> = all.iter().filter(|journaled| &journaled.turn == turn).collect();
            if found.is_empty() {
                return Err(unknown("turn", turn, "a turn"));
            }
            found
        }
        (None, None, Some(session)) => {
            let found: Vec<&Journaled> = all.iter().filter(|journaled| &journaled.session == session).collect();
            if found.is_empty() {
                return Err(unknown("session", session, "a session"));
            }
            found
        }
        _ => {
            return Err(ProtocolError::invalid_params(
                None,
                "Name what to revert with exactly one of `ids` (a non-empty list), `turn` or `session`.",
            ));
        }
    };
    let mut selection = Selection::default();
    let mut chains: BTreeMap<DocKey, FileChain> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for journaled in named {
        if !seen.insert(journaled.id.clone()) {
            continue;
        }
        if let Err(why) = journaled.revertible() {
            selection.skipped.push(SkippedEntry { id: journaled.id.clone(), why: why.to_owned() });
            continue;
        }
        let load = |name: &Option<String>| match name {
            None => Ok(None),
            Some(name) => texts.load(name).map(Some).ok_or(()),
        };
        let (Ok(before), Ok(after)) = (load(&journaled.entry.before), load(&journaled.entry.after)) else {
            selection.skipped.push(SkippedEntry { id: journaled.id.clone(), why: "pruned".to_owned() });
            continue;
        };
        let uri = journaled.entry.new_uri.as_deref().unwrap_or(&journaled.entry.uri);
        let key = DocKey::parse(&current_uri(all, journaled, uri)).map_err(|_| {
            ProtocolError::invalid_params(None, format!("the journal names {uri}, which is not a document URI"))
        })?;
        let chain = chains.entry(key.clone()).or_insert_with(|| FileChain {
            key,
            ids: Vec::new(),
            changes: Vec::new(),
            summaries: Vec::new(),
            move_back_to: None,
        });
        if journaled.entry.operation.as_deref() == Some("move")
            && chain.move_back_to.is_none()
            && let Ok(from) = DocKey::parse(&journaled.entry.uri)
        {
            chain.move_back_to = Some(from);
        }
        chain.ids.push(journaled.id.clone());
        chain.changes.push(KeptChange { before, after });
        if !chain.summaries.contains(&journaled.entry.summary) {
            chain.summaries.push(journaled.entry.summary.clone());
        }
        selection.reverts.push(journaled.id.clone());
    }
    if selection.reverts.is_empty() {
        let why = selection.skipped.first().map_or("nothingWritten", |skipped| skipped.why.as_str()).to_owned();
        let ids: Vec<&str> = selection.skipped.iter().map(|skipped| skipped.id.as_str()).collect();
        return Err(ProtocolError::new(
            ErrorKind::NotRevertible,
            format!(
                "Nothing named can be reverted: {}. Only changes that wrote a file, whose texts are still kept, can be \
                 reverted (see `verbatim log`).",
                describe_why(&why)
            ),
        )
        .with("why", why)
        .with("ids", ids));
    }
    selection.files = chains.into_values().collect();
    Ok(selection)
}

/// Where the file an entry wrote is now: followed through the moves journaled after it.
fn current_uri(all: &[Journaled], journaled: &Journaled, uri: &str) -> String {
    let mut uri = uri.to_owned();
    let after = all.iter().skip_while(|other| other.id != journaled.id).skip(1);
    for later in after {
        if later.entry.uri == uri
            && let Some(moved) = &later.entry.new_uri
        {
            uri.clone_from(moved);
        }
    }
    uri
}

fn describe_why(why: &str) -> &'static str {
    match why {
        "tooLarge" => {
            "its texts were larger than VERBATIM_JOURNAL_MAX_TEXT_BYTES when it was written, so they were not kept"
        }
        "pruned" => "its texts were deleted after VERBATIM_JOURNAL_KEEP_DAYS days unused",
        "legacy" => "it was journaled before Verbatim kept the texts needed to revert",
        _ => "it wrote nothing (rejected, failed or not answered)",
    }
}

fn unknown(field: &str, value: &str, what: &str) -> ProtocolError {
    ProtocolError::new(
        ErrorKind::UnknownEntry,
        format!(
            "No journal entry has {what} `{value}` in the journals read. List them with `verbatim log` (or \
             verbatim/timeline) and copy the id, turn or session from there."
        ),
    )
    .with(field, value)
}

/// What reverting a chain does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Edit,
    /// The chain created the file: it goes.
    Delete,
    /// The chain deleted the file: it comes back.
    Create,
    /// The chain moved the file: it moves back (its text reverted too).
    Move,
    /// Nothing to do (the file is already as the revert would leave it, or every
    /// region conflicts).
    Unchanged,
}

impl Action {
    pub fn as_wire(self) -> &'static str {
        match self {
            Self::Edit | Self::Unchanged => "edit",
            Self::Delete => "delete",
            Self::Create => "create",
            Self::Move => "move",
        }
    }
}

/// A chain's revert, planned against the file's current text.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub action: Action,
    /// Replacements of the current text where nothing later touched the changes.
    pub replacements: Vec<Replacement>,
    pub conflicts: Vec<RevertConflict>,
    /// For [`Action::Create`]: the text the file comes back with.
    pub created: Option<String>,
    /// Why there is nothing to do, when there is not and no conflict either:
    /// `fileGone` or `alreadyUndone`.
    pub why: Option<&'static str>,
}

impl FilePlan {
    fn unchanged(conflicts: Vec<RevertConflict>) -> Self {
        Self { action: Action::Unchanged, replacements: Vec::new(), conflicts, created: None, why: None }
    }

    /// The conflicts as the result reports them, with what was chosen.
    pub fn reports(&self, chosen: impl Fn(&RevertConflict) -> bool) -> Vec<RevertConflictReport> {
        self.conflicts
            .iter()
            .map(|conflict| RevertConflictReport {
                start_line: conflict.lines.start + 1,
                end_line: conflict.lines.end.max(conflict.lines.start + 1),
                current: conflict.current.clone(),
                reverted: conflict.reverted.clone(),
                chosen: if chosen(conflict) { "reverted" } else { "current" }.to_owned(),
            })
            .collect()
    }
}

/// Plans undoing `chain` in `current` (`None`: the file does not exist now). A chain
/// that moved the file moves it back, unless something is at its old place now
/// (`old_place_taken`): then only its text is reverted, in place.
pub fn plan_file(chain: &FileChain, current: Option<&str>, old_place_taken: bool) -> FilePlan {
    let mut plan = plan_text(chain, current);
    if chain.move_back_to.is_some()
        && !old_place_taken
        && current.is_some()
        && matches!(plan.action, Action::Edit | Action::Unchanged)
    {
        plan.action = Action::Move;
    }
    if plan.action == Action::Unchanged && plan.conflicts.is_empty() {
        plan.why = Some(if current.is_none() { "fileGone" } else { "alreadyUndone" });
    }
    plan
}

fn plan_text(chain: &FileChain, current: Option<&str>) -> FilePlan {
    let (Some(first), Some(last)) = (chain.changes.first(), chain.changes.last()) else {
        return FilePlan::unchanged(Vec::new());
    };
    let whole = |current: &str, reverted: &str| RevertConflict {
        range: 0..current.len(),
        lines: 0..current.lines().count(),
        current: current.to_owned(),
        reverted: reverted.to_owned(),
    };
    match (first.before.as_deref(), last.after.as_deref(), current) {
        // Created by the chain: it goes, if nothing changed it since.
        (None, _, None) => FilePlan::unchanged(Vec::new()),
        (None, after, Some(current)) => {
            if after == Some(current) {
                FilePlan {
                    action: Action::Delete,
                    replacements: Vec::new(),
                    conflicts: Vec::new(),
                    created: None,
                    why: None,
                }
            } else {
                FilePlan::unchanged(vec![whole(current, "")])
            }
        }
        // Deleted by the chain: it comes back, unless a file is there again.
        (Some(before), None, None) => FilePlan {
            action: Action::Create,
            replacements: Vec::new(),
            conflicts: Vec::new(),
            created: Some(before.to_owned()),
            why: None,
        },
        (Some(before), None, Some(current)) => FilePlan::unchanged(vec![whole(current, before)]),
        // Edited, and deleted since: nothing to move the revert onto.
        (Some(_), Some(_), None) => FilePlan::unchanged(Vec::new()),
        (Some(_), Some(_), Some(current)) => {
            let recorded: Vec<Recorded<'_>> = chain
                .changes
                .iter()
                .map(|change| Recorded {
                    before: change.before.as_deref().unwrap_or(""),
                    after: change.after.as_deref().unwrap_or(""),
                })
                .collect();
            let planned = plan_revert(&recorded, current);
            let action = if planned.replacements.is_empty() { Action::Unchanged } else { Action::Edit };
            FilePlan {
                action,
                replacements: planned.replacements,
                conflicts: planned.conflicts,
                created: None,
                why: None,
            }
        }
    }
}

/// What a revert wrote on disk.
#[derive(Debug, Default)]
pub struct WrittenRevert {
    /// The journal's id of the revert, when it wrote something.
    pub write_id: Option<String>,
    /// How many documents it journaled (the places the rest of the write continues at).
    pub documents: usize,
    pub files: Vec<RevertedFile>,
}

/// Writes the revert of files no editor has open, on disk. The service never writes
/// files itself: whoever starts the server passes this in (`headless` implements it).
pub trait RevertOnDisk: Send + Sync + std::fmt::Debug {
    /// Reverts `chains` on disk as one write named `write_id`, with the editor's
    /// workspace folders as roots, journaled by the writer in `journal`.
    #[allow(clippy::too_many_arguments)]
    fn revert_files(
        &self,
        roots: &[PathBuf],
        journal: Option<&Journal>,
        agent: &AgentInfo,
        chains: &[FileChain],
        summary: &str,
        write_id: &str,
        dry_run: bool,
    ) -> Result<WrittenRevert, ProtocolError>;
}

/// The revert's summary: the caller's, else "Revert" and what it reverts.
pub fn summary_of(params: &RevertParams, selection: &Selection) -> String {
    if let Some(summary) = params.summary.as_ref().filter(|summary| !summary.trim().is_empty()) {
        return summary.clone();
    }
    let mut summaries: Vec<&str> = Vec::new();
    for chain in &selection.files {
        for summary in &chain.summaries {
            if !summaries.contains(&summary.as_str()) {
                summaries.push(summary);
            }
        }
    }
    match summaries.as_slice() {
        [one] => format!("Revert: {one}"),
        [first, rest @ ..] => format!("Revert: {first} (and {} more)", rest.len()),
        [] => "Revert".to_owned(),
    }
}

/// Builds the result and its message.
pub fn result(
    dry_run: bool,
    rejected: bool,
    write_id: Option<String>,
    selection: Selection,
    files: Vec<RevertedFile>,
) -> RevertResult {
    let conflicts: usize = files.iter().map(|file| file.conflicts.len()).sum();
    let kept_current: usize =
        files.iter().flat_map(|file| &file.conflicts).filter(|conflict| conflict.chosen == "current").count();
    // The files that changed (or would).
    let changes = |file: &RevertedFile| {
        if dry_run { file.why.is_none() } else { file.outcome == "applied" || file.outcome == "partial" }
    };
    let changed: Vec<&RevertedFile> = files.iter().filter(|file| changes(file)).collect();
    let outcome = if dry_run {
        "planned"
    } else if rejected && changed.is_empty() {
        "rejected"
    } else if changed.is_empty() {
        // Nothing was written: every file was gone, already as before, or in conflict.
        "unchanged"
    } else if kept_current > 0 || files.iter().any(|file| file.outcome == "partial" || file.outcome == "rejected") {
        "partial"
    } else {
        "applied"
    };
    // Entries of the files that changed (or would).
    let entries: usize = selection
        .files
        .iter()
        .filter(|chain| changed.iter().any(|file| file.uri == chain.key.to_uri()))
        .map(|chain| chain.ids.len())
        .sum();
    let names = |files: &[&RevertedFile]| files.iter().map(|file| short(&file.uri)).collect::<Vec<_>>().join(", ");
    let mut message = match outcome {
        "rejected" => "The person rejected the revert in the editor; nothing changed.".to_owned(),
        "planned" if changed.is_empty() => "Nothing would be reverted.".to_owned(),
        "planned" => format!("Would revert {entries} entr{} in {}.", plural_y(entries), names(&changed)),
        "unchanged" => String::new(),
        _ => format!("Reverted {entries} entr{} in {}.", plural_y(entries), names(&changed)),
    };
    // Files with nothing to revert, and why.
    for (why, one, many) in [
        ("fileGone", "it no longer exists", "they no longer exist"),
        (
            "alreadyUndone",
            "it already reads as the revert would leave it",
            "they already read as the revert would leave them",
        ),
    ] {
        let these: Vec<&RevertedFile> = files.iter().filter(|file| file.why.as_deref() == Some(why)).collect();
        if !these.is_empty() {
            let why = if these.len() == 1 { one } else { many };
            say(&mut message, &format!("Nothing to revert in {}: {why}.", names(&these)));
        }
    }
    if outcome == "unchanged" && message.is_empty() {
        say(&mut message, "Nothing was reverted.");
    }
    if conflicts > 0 {
        let places: Vec<String> = files
            .iter()
            .flat_map(|file| {
                file.conflicts.iter().filter(|conflict| conflict.chosen == "current").map(move |conflict| {
                    format!("{} lines {}-{}", short(&file.uri), conflict.start_line, conflict.end_line)
                })
            })
            .collect();
        if !places.is_empty() {
            say(
                &mut message,
                &format!(
                    "{} conflict{} kept as {} now, because a later change touched the same lines: {}.",
                    places.len(),
                    if places.len() == 1 { "" } else { "s" },
                    if places.len() == 1 { "it is" } else { "they are" },
                    places.join(", ")
                ),
            );
        }
    }
    if !selection.skipped.is_empty() {
        let skipped = selection.skipped.len();
        say(&mut message, &format!("{skipped} entr{} could not be reverted (see skipped).", plural_y(skipped)));
    }
    RevertResult {
        write_id: if dry_run { None } else { write_id },
        outcome: outcome.to_owned(),
        reverts: selection.reverts,
        files,
        skipped: selection.skipped,
        message,
    }
}

/// Where a file moves back to, when it does.
pub fn moved_to(chain: &FileChain, plan: &FilePlan) -> Option<String> {
    (plan.action == Action::Move).then(|| chain.move_back_to.as_ref().map(DocKey::to_uri)).flatten()
}

/// Whether a document exists on disk (a file that is not a file URI never does).
pub fn exists(key: &DocKey) -> bool {
    key.path().is_some_and(|path| path.exists())
}

/// Adds a sentence to a message.
fn say(message: &mut String, sentence: &str) {
    if !message.is_empty() {
        message.push(' ');
    }
    message.push_str(sentence);
}

fn plural_y(count: usize) -> &'static str {
    if count == 1 { "y" } else { "ies" }
}

pub(crate) fn short(uri: &str) -> String {
    uri.rsplit('/').next().unwrap_or(uri).to_owned()
}

#[cfg(test)]
mod tests {
    use ropey::Rope;
    use verbatim_engine::plan;

    use super::*;

    fn chain(changes: &[(Option<&str>, Option<&str>)]) -> FileChain {
        FileChain {
            key: DocKey::parse("file:///p/a.txt").expect("key"),
            ids: (0..changes.len()).map(|index| format!("w{index}.0")).collect(),
            changes: changes
                .iter()
                .map(|(before, after)| KeptChange {
                    before: before.map(str::to_owned),
                    after: after.map(str::to_owned),
                })
                .collect(),
            summaries: vec!["edit".into()],
            move_back_to: None,
        }
    }

    #[test]
    fn a_created_file_goes_unless_it_changed_since() {
        let created = chain(&[(None, Some("new\n"))]);
        assert_eq!(plan_file(&created, Some("new\n"), false).action, Action::Delete);
        let changed = plan_file(&created, Some("new\nmore\n"), false);
        assert_eq!((changed.action, changed.conflicts.len()), (Action::Unchanged, 1));
        assert_eq!(plan_file(&created, None, false).action, Action::Unchanged);
    }

    #[test]
    fn a_deleted_file_comes_back_unless_one_is_there_again() {
        let deleted = chain(&[(Some("old\n"), None)]);
        let plan = plan_file(&deleted, None, false);
        assert_eq!((plan.action, plan.created.as_deref()), (Action::Create, Some("old\n")));
        assert_eq!(plan_file(&deleted, Some("other\n"), false).conflicts.len(), 1);
    }

    #[test]
    fn an_edit_goes_back_around_later_typing() {
        let edited = chain(&[(Some("a\nb\nc\nd\ne\n"), Some("a\nB\nc\nd\ne\n"))]);
        let plan = plan_file(&edited, Some("a\nB\nc\nd\nE!\n"), false);
        assert_eq!(plan.action, Action::Edit);
        assert!(plan.conflicts.is_empty());
        let text = plan::apply(&Rope::from_str("a\nB\nc\nd\nE!\n"), &plan.replacements).to_string();
        assert_eq!(text, "a\nb\nc\nd\nE!\n");
    }
}
