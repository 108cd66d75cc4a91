//! `verbatim/timeline`, `verbatim/timelineEntry` and `verbatim/markReviewed` against the
//! server's journals (those of the editor's workspace folders and of documents outside
//! them; `workspace` narrows to one folder).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use verbatim_engine::doc_key::DocKey;

use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::Journal;
use crate::service::journal_texts::KeptTexts;
use crate::service::protocol::{
    MarkReviewedParams, MarkReviewedResult, TimelineEntryParams, TimelineEntryResult, TimelineParams, TimelineResult,
};
use crate::service::state::State;
use crate::service::timeline::{self, Filter, Journaled, Marks};

fn journal_of(state: &State) -> Result<&Journal, ProtocolError> {
    state.journal.as_ref().ok_or_else(|| {
        ProtocolError::new(
            ErrorKind::Io,
            "This server keeps no journal (no state directory: set VERBATIM_STATE_DIR, XDG_STATE_HOME or HOME).",
        )
    })
}

/// The journals a server reads: those of the editor's workspace folders, and the one
/// of documents outside them.
pub fn journals_of(state: &State) -> Vec<PathBuf> {
    let Some(journal) = &state.journal else { return Vec::new() };
    let workspace = state.workspace();
    let mut files: Vec<PathBuf> = workspace.folders().iter().map(|folder| journal.file_for(Some(folder))).collect();
    files.push(journal.file_for(None));
    files
}

/// The journals' entries, through the server's cache (only what was appended since the
/// last read is read).
pub fn read(state: &State, files: &[PathBuf]) -> Result<Arc<Vec<Journaled>>, ProtocolError> {
    state
        .journal_cache
        .read(files)
        .map_err(|error| ProtocolError::new(ErrorKind::Io, format!("cannot read the journal: {error}")))
}

/// The journals a request reads: one folder's, or the server's.
fn files_for(state: &State, workspace: Option<&str>) -> Result<Vec<PathBuf>, ProtocolError> {
    let journal = journal_of(state)?;
    match workspace {
        None => Ok(journals_of(state)),
        Some(folder) => Ok(vec![workspace_journal(journal, folder)?]),
    }
}

/// The journal of one workspace folder (a `file:` URI or an absolute path).
pub fn workspace_journal(journal: &Journal, folder: &str) -> Result<PathBuf, ProtocolError> {
    let path = DocKey::parse(folder).ok().and_then(|key| key.path().map(PathBuf::from)).ok_or_else(|| {
        ProtocolError::invalid_params(
            Some("workspace"),
            format!("workspace `{folder}` is not a folder: send a file:// URI or an absolute path"),
        )
    })?;
    Ok(journal.file_for(Some(&path)))
}

/// A URI as the journal spells it (the server's own spelling of the document).
fn journal_uri(uri: &str) -> Result<String, ProtocolError> {
    DocKey::parse(uri)
        .map(|key| key.to_uri())
        .map_err(|_| ProtocolError::invalid_params(Some("uri"), format!("`{uri}` is not a document URI or path")))
}

pub fn timeline(state: &State, params: &TimelineParams) -> Result<TimelineResult, ProtocolError> {
    let files = files_for(state, params.workspace.as_deref())?;
    let all = read(state, &files)?;
    timeline_of(&all, &files, params)
}

/// The timeline of entries already read from `files` (their reviewed marks are read
/// beside them); the server and headless mode both answer with it.
pub fn timeline_of(
    all: &[Journaled],
    files: &[PathBuf],
    params: &TimelineParams,
) -> Result<TimelineResult, ProtocolError> {
    let uri = params.uri.as_deref().map(journal_uri).transpose()?;
    let filter = Filter {
        agent: params.agent.as_deref(),
        uri: uri.as_deref(),
        limit: params.limit,
        max_edits: params.max_edits,
    };
    Ok(timeline::timeline(all, &Marks::read(files), &filter))
}

pub fn timeline_entry(state: &State, params: &TimelineEntryParams) -> Result<TimelineEntryResult, ProtocolError> {
    let journal = journal_of(state)?;
    let all = read(state, &journals_of(state))?;
    entry_of(&all, journal, params)
}

/// One entry of `all` with the texts `journal` kept of it (texts still being written
/// are waited for, up to a few seconds).
pub fn entry_of(
    all: &[Journaled],
    journal: &Journal,
    params: &TimelineEntryParams,
) -> Result<TimelineEntryResult, ProtocolError> {
    KeptTexts::flush(Duration::from_secs(5));
    let Some(found) = all.iter().find(|journaled| journaled.id == params.id) else {
        return Err(ProtocolError::new(
            ErrorKind::UnknownEntry,
            format!(
                "No journal entry has the id `{}`. Take ids from verbatim/timeline or `verbatim log --json`.",
                params.id
            ),
        )
        .with("id", params.id.clone()));
    };
    let load = |name: &Option<String>| name.as_ref().and_then(|name| journal.texts().load(name));
    Ok(TimelineEntryResult {
        id: found.id.clone(),
        uri: found.entry.uri.clone(),
        new_uri: found.entry.new_uri.clone(),
        before: load(&found.entry.before),
        after: load(&found.entry.after),
        diff: found.entry.diff.clone(),
    })
}

pub fn mark_reviewed(state: &State, params: &MarkReviewedParams) -> Result<MarkReviewedResult, ProtocolError> {
    let all = read(state, &journals_of(state))?;
    let uri = journal_uri(&params.uri)?;
    match timeline::mark(&all, &params.turn, &uri, params.reviewed) {
        Ok(Some(mark)) => Ok(MarkReviewedResult { reviewed: mark.reviewed }),
        Ok(None) => Err(ProtocolError::new(
            ErrorKind::UnknownEntry,
            format!(
                "The turn `{}` did not change {uri} (or there is no such turn): only a file a turn changed can be \
                 marked reviewed for it.",
                params.turn
            ),
        )
        .with("turn", params.turn.clone())),
        Err(error) => Err(ProtocolError::new(ErrorKind::Io, format!("cannot keep the reviewed mark: {error}"))),
    }
}
