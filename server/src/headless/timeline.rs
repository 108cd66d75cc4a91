//! `verbatim/timeline` and `verbatim/timelineEntry` with no editor (the MCP server's and
//! the CLI's headless mode): the journals of the `--root` folders and of files outside
//! them, or every journal when no root is given; the revert reads the same ones.

use std::path::PathBuf;

use serde_json::Value;

use super::{Headless, to_value};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::Journal;
use crate::service::protocol::{TimelineEntryParams, TimelineParams};
use crate::service::timeline::{self, Journaled};
use crate::service::timeline_methods::{entry_of, timeline_of, workspace_journal};

impl Headless {
    pub(super) fn timeline(&self, params: TimelineParams) -> Result<Value, ProtocolError> {
        let journal = self.journal_or_error()?;
        let files = match params.workspace.as_deref() {
            Some(folder) => vec![workspace_journal(journal, folder)?],
            None => self.journal_files(journal),
        };
        to_value(timeline_of(&read(&files)?, &files, &params)?)
    }

    pub(super) fn timeline_entry(&self, params: TimelineEntryParams) -> Result<Value, ProtocolError> {
        let journal = self.journal_or_error()?;
        to_value(entry_of(&read(&self.journal_files(journal))?, journal, &params)?)
    }

    /// The journal, or the error that says why there is none.
    pub(super) fn journal_or_error(&self) -> Result<&Journal, ProtocolError> {
        self.options.journal.as_ref().ok_or_else(|| {
            ProtocolError::new(
                ErrorKind::Io,
                "No journal to read (no state directory: set VERBATIM_STATE_DIR, XDG_STATE_HOME or HOME).",
            )
        })
    }

    /// The journals this writer reads: its roots' and the one of files outside any
    /// folder, or every journal when it has no root.
    pub(super) fn journal_files(&self, journal: &Journal) -> Vec<PathBuf> {
        if self.options.roots.is_empty() {
            return journal.files();
        }
        let mut files: Vec<PathBuf> = self.options.roots.iter().map(|root| journal.file_for(Some(root))).collect();
        files.push(journal.file_for(None));
        files
    }
}

/// The entries of `files`, named and in time order, read whole (the server's cache is
/// the editor's; the timeline and the revert read the same way here).
pub(super) fn read(files: &[PathBuf]) -> Result<Vec<Journaled>, ProtocolError> {
    timeline::read_all(files)
        .map_err(|error| ProtocolError::new(ErrorKind::Io, format!("cannot read the journal: {error}")))
}
