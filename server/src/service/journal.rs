//! The journal: every write, through the editor or headless, appended as one JSON
//! line per document to the journal of the workspace the document belongs to.
//!
//! Journals live in the user's state directory: `$VERBATIM_STATE_DIR`, else
//! `$XDG_STATE_HOME/verbatim`, else `~/.local/state/verbatim`; one file per workspace
//! folder, `journal/<folder name>-<hash of its path>.jsonl` (`journal/_other.jsonl`
//! for documents outside every folder). Files are created with mode 0600. Appends
//! hold an exclusive `flock` on the journal and write each batch in one call, so
//! several servers and headless writers never interleave lines. A journal that
//! cannot be written never fails an edit: the failure is logged.
//!
//! Each entry names its session and, where the agent gives one, its turn, and the
//! names of the document's whole text before and after the write, kept by
//! [`KeptTexts`] so the write can be reverted (see `timeline.rs` and `revert.rs`).

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use ropey::Rope;

use crate::service::clock::now_rfc3339;
use crate::service::error::ProtocolError;
use crate::service::journal_texts::{KeepLimits, KeptTexts, NotKept, PendingText, Side};
use crate::service::protocol::{DiagnosticsReport, DiagnosticsStatus, DocumentResult};

/// Environment variable that overrides the state directory (used by tests).
pub const STATE_DIR_ENV: &str = "VERBATIM_STATE_DIR";
/// Diffs longer than this are cut in journal entries.
const MAX_DIFF_BYTES: usize = 256 * 1024;

/// The user's state directory for verbatim, if one can be named.
pub fn state_dir() -> Option<PathBuf> {
    let from = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
    if let Some(dir) = from(STATE_DIR_ENV) {
        return Some(dir);
    }
    if let Some(dir) = from("XDG_STATE_HOME").filter(|dir| dir.is_absolute()) {
        return Some(dir.join("verbatim"));
    }
    from("HOME").map(|home| home.join(".local/state/verbatim"))
}

/// Who carried the write out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// Through the editor, for the person's review.
    Editor,
    /// Straight to disk, because no editor serves the file.
    Headless,
    /// A change made on disk outside the editor, merged into the live buffer.
    Disk,
}

/// What became of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    Applied,
    /// Applied, but the live text differs from the proposal (changed in review).
    ModifiedByEditor,
    /// The person applied some hunks of the proposal and left the others out.
    Partial,
    /// The person refused it.
    Rejected,
    /// It failed after planning (`errorKind` says how).
    Error,
    /// A change on disk to a buffer without unsaved changes: the editor reloads it.
    Reloaded,
    /// A change on disk that overlaps the person's unsaved changes everywhere:
    /// nothing was offered.
    Conflict,
    /// The person saved the buffer over a change on disk they had rejected.
    SavedOver,
    /// The file was deleted on disk while open; the buffer was left alone.
    Deleted,
    /// The file was moved on disk while open; the buffer was left alone.
    Moved,
    /// The editor never answered the request (its prompt was dismissed, or the bound
    /// passed); the agent was told so.
    NotAnswered,
    /// The editor answered after the agent was told it had not (`reason` says what
    /// it answered); the document follows what it did.
    AnsweredLate,
    /// The editor's change differs from the edit it said it applied; the server
    /// follows the editor's text (`diff`: from what it said to what it sent).
    DiffersFromAnswer,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::ModifiedByEditor => "modifiedByEditor",
            Self::Partial => "partial",
            Self::Rejected => "rejected",
            Self::Error => "error",
            Self::Reloaded => "reloaded",
            Self::Conflict => "conflict",
            Self::SavedOver => "savedOver",
            Self::Deleted => "deleted",
            Self::Moved => "moved",
            Self::NotAnswered => "notAnswered",
            Self::AnsweredLate => "answeredLate",
            Self::DiffersFromAnswer => "differsFromAnswer",
        }
    }
}

/// One line of a journal: one document of one write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub time: String,
    /// Shared by the documents of one write (a batch).
    pub write_id: String,
    pub source: Source,
    pub agent: String,
    pub summary: String,
    pub uri: String,
    /// The workspace folder whose journal holds the entry.
    pub workspace: Option<String>,
    pub base_rev: Option<String>,
    /// The rev after the write; `null` when nothing was written.
    pub rev: Option<String>,
    pub outcome: Outcome,
    /// The person's reason, for `rejected` and `partial`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For `partial`: the hunks (0-based, numbered across the write) left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunks_left_out: Option<Vec<usize>>,
    /// The error kind (`stale`, `timeout`, ...), for `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The proposed change, as a unified diff.
    pub diff: String,
    /// From the proposal to what the editor applied, for `modifiedByEditor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor_diff: Option<String>,
    /// The git commit made for a headless write with `--git-commit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// When the write asked for diagnostics: what came of it (the same for every
    /// document of the write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<JournalDiagnostics>,
    /// `<writeId>.<n>`: `n` is the document's place in the write. Absent in entries
    /// written before ids existed (readers derive it the same way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Who wrote it, as one unit (an agent connection, a hook's session, one CLI run,
    /// `disk`). Absent in entries written before sessions existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The agent's turn, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<String>,
    /// The name of the kept text before the write (absent: the file did not exist, or
    /// `notKept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// The name of the kept text after the write (absent: the file no longer exists,
    /// or `notKept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_kept: Option<NotKeptReason>,
    /// `create`, `delete` or `move`, when the write made, removed or moved the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Where a moved file went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_uri: Option<String>,
    /// For a revert: the ids of the entries it reverts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverts: Option<Vec<String>>,
}

/// Why an entry has no kept texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NotKeptReason {
    /// A text was over `VERBATIM_JOURNAL_MAX_TEXT_BYTES`.
    TooLarge,
    /// The write changed nothing (rejected, failed, not answered).
    NothingWritten,
}

/// A document's whole text before and after a write; `None` where the file does not
/// exist (before a create, after a delete).
#[derive(Debug, Clone, Default)]
pub struct DocumentTexts {
    pub before: Option<Rope>,
    pub after: Option<Rope>,
}

/// The journal's record of the diagnostics after a write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalDiagnostics {
    pub status: DiagnosticsStatus,
    pub waited_ms: u64,
    pub introduced: usize,
    pub resolved: usize,
    pub existing: usize,
    pub other_files: usize,
}

impl JournalDiagnostics {
    fn of(report: &DiagnosticsReport) -> Self {
        Self {
            status: report.status,
            waited_ms: report.waited_ms,
            introduced: report.introduced.len(),
            resolved: report.resolved.len(),
            existing: report.existing,
            other_files: report.other_files.len(),
        }
    }
}

/// What every entry of one write shares.
#[derive(Debug, Clone)]
pub struct WriteInfo<'a> {
    pub source: Source,
    pub agent: &'a str,
    pub summary: &'a str,
    pub commit: Option<&'a str>,
    /// The person's reason for the hunks they left out.
    pub reason: Option<&'a str>,
    /// What the language servers reported after the write, when asked.
    pub diagnostics: Option<&'a DiagnosticsReport>,
    /// The writer's session (see [`Entry::session`]).
    pub session: &'a str,
    pub turn: Option<&'a str>,
    /// For a revert: what each document reverts, and the write it continues.
    pub revert: RevertWrite<'a>,
}

/// How a revert's write is journaled; the default: not a revert.
#[derive(Debug, Clone, Copy, Default)]
pub struct RevertWrite<'a> {
    /// By document (as the write's results): the entry ids that document's change
    /// reverts (its own file's, so that a revert taken only in part names only what it
    /// took back).
    pub reverts: &'a [Vec<String>],
    /// The id of the write this one continues and the place of its first document in
    /// it: a revert writes the files no editor has open on disk, then offers the open
    /// ones for review, and both parts are one write (one `writeId` to revert in turn).
    pub continues: Option<(&'a str, usize)>,
}

/// What [`Journal::record_event`] writes.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    pub source: Source,
    pub agent: &'a str,
    pub summary: &'a str,
    pub uri: &'a str,
    pub outcome: Outcome,
    /// What changed, as a unified diff (may be empty).
    pub diff: &'a str,
    /// What the editor or the person said, when it matters (a late answer).
    pub reason: Option<&'a str>,
    pub session: &'a str,
    /// The text before and after, when the event changed the document (a reload).
    pub texts: Option<&'a DocumentTexts>,
}

/// The journals under one state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    dir: PathBuf,
    texts: KeptTexts,
}

impl Journal {
    /// The journals in `state_dir`.
    pub fn new(state_dir: &Path) -> Self {
        Self::with_limits(state_dir, KeepLimits::from_env())
    }

    /// The journals in `state_dir`, keeping texts within `limits`.
    pub fn with_limits(state_dir: &Path, limits: KeepLimits) -> Self {
        let dir = state_dir.join("journal");
        Self { texts: KeptTexts::new(&dir, limits), dir }
    }

    /// The texts kept to undo writes.
    pub fn texts(&self) -> &KeptTexts {
        &self.texts
    }

    /// The journals of this user, if a state directory can be named.
    pub fn from_env() -> Option<Self> {
        state_dir().map(|dir| Self::new(&dir))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The journal file of a workspace folder (`None`: documents outside every folder).
    pub fn file_for(&self, workspace: Option<&Path>) -> PathBuf {
        let Some(folder) = workspace else { return self.dir.join("_other.jsonl") };
        let name: String = folder
            .file_name()
            .map(|name| {
                name.to_string_lossy()
                    .chars()
                    .map(|c| if c.is_alphanumeric() || "-_.".contains(c) { c } else { '_' })
                    .collect()
            })
            .unwrap_or_else(|| "root".into());
        let digest = Sha256::digest(folder.as_os_str().as_encoded_bytes());
        let hash: String = digest[..8].iter().map(|byte| format!("{byte:02x}")).collect();
        self.dir.join(format!("{name}-{hash}.jsonl"))
    }

    /// The journal of the deepest folder at or above `dir` that has one.
    pub fn find_for_dir(&self, dir: &Path) -> Option<PathBuf> {
        dir.ancestors().map(|folder| self.file_for(Some(folder))).find(|file| file.is_file())
    }

    /// Every journal file, sorted by name.
    pub fn files(&self) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(&self.dir) else { return Vec::new() };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .filter(|path| !path.to_string_lossy().ends_with(".marks.jsonl"))
            .collect();
        files.sort();
        files
    }

    /// Appends entries to the journal of `workspace`, under an exclusive lock.
    pub fn append(&self, workspace: Option<&Path>, entries: &[Entry]) -> io::Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir)?;
        let mut buffer = Vec::new();
        for entry in entries {
            serde_json::to_writer(&mut buffer, entry).map_err(io::Error::other)?;
            buffer.push(b'\n');
        }
        let mut file = fs::OpenOptions::new().create(true).append(true).mode(0o600).open(self.file_for(workspace))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
        file.write_all(&buffer)?;
        file.flush()
    }

    /// Journals something that happened to one document without a write of ours
    /// (a change on disk the editor reloads, or that conflicts everywhere, a
    /// deletion, a save over a rejected change): one entry of its own.
    pub fn record_event(&self, workspace: Option<&Path>, event: &Event<'_>) {
        let write_id = next_write_id();
        let id = format!("{write_id}.0");
        let kept = match event.texts {
            Some(texts) => self.keep(&id, texts),
            None => Kept { not_kept: Some(NotKeptReason::NothingWritten), ..Kept::default() },
        };
        let entry = Entry {
            time: now_rfc3339(),
            id: Some(id),
            write_id,
            source: event.source,
            agent: event.agent.to_owned(),
            summary: event.summary.to_owned(),
            uri: event.uri.to_owned(),
            workspace: workspace.map(|root| root.display().to_string()),
            base_rev: None,
            rev: None,
            outcome: event.outcome,
            reason: event.reason.map(str::to_owned),
            hunks_left_out: None,
            error_kind: None,
            message: None,
            diff: cut(event.diff),
            editor_diff: None,
            commit: None,
            diagnostics: None,
            session: Some(event.session.to_owned()),
            turn: None,
            before: kept.before.clone(),
            after: kept.after.clone(),
            not_kept: kept.not_kept,
            operation: None,
            new_uri: None,
            reverts: None,
        };
        if let Err(error) = self.append(workspace, &[entry]) {
            tracing::warn!("cannot append to the journal {}: {error}", self.file_for(workspace).display());
        }
        KeptTexts::write_later(kept.pending);
    }

    /// Journals one write: an entry per document, each in the journal of its folder
    /// (`roots[i]` for `results[i]`). `failure` is what ended it, if it did not apply;
    /// `texts[i]` is what `results[i]` held before and after (empty: not known).
    /// Returns the write's id.
    pub fn record(
        &self,
        write: &WriteInfo<'_>,
        roots: &[Option<PathBuf>],
        results: &[DocumentResult],
        failure: Option<&ProtocolError>,
        texts: &[DocumentTexts],
    ) -> String {
        let (write_id, first) = match write.revert.continues {
            Some((write_id, first)) => (write_id.to_owned(), first),
            None => (next_write_id(), 0),
        };
        let time = now_rfc3339();
        let mut groups: Vec<(Option<&Path>, Vec<Entry>)> = Vec::new();
        let mut pending = Vec::new();
        for (index, result) in results.iter().enumerate() {
            let root = roots.get(index).and_then(Option::as_deref);
            let mut entry = entry(write, &write_id, &time, root, result, failure);
            let id = format!("{write_id}.{}", first + index);
            entry.reverts = write.revert.reverts.get(index).filter(|ids| !ids.is_empty()).cloned();
            let kept = match texts.get(index) {
                Some(texts) if entry.rev.is_some() || failure.is_none() => self.keep(&id, texts),
                _ => Kept { not_kept: Some(NotKeptReason::NothingWritten), ..Kept::default() },
            };
            (entry.before, entry.after, entry.not_kept) = (kept.before, kept.after, kept.not_kept);
            pending.extend(kept.pending);
            entry.id = Some(id);
            match groups.iter_mut().find(|(folder, _)| *folder == root) {
                Some((_, entries)) => entries.push(entry),
                None => groups.push((root, vec![entry])),
            }
        }
        for (root, entries) in groups {
            if let Err(error) = self.append(root, &entries) {
                tracing::warn!("cannot append to the journal {}: {error}", self.file_for(root).display());
            }
        }
        KeptTexts::write_later(pending);
        write_id
    }

    /// Keeps a document's texts for entry `id`; either both are kept or neither (a text
    /// named but not kept is dropped with its pending write).
    fn keep(&self, id: &str, texts: &DocumentTexts) -> Kept {
        let keep =
            |side: Side, text: &Option<Rope>| text.as_ref().map(|text| self.texts.keep(id, side, text)).transpose();
        match (keep(Side::Before, &texts.before), keep(Side::After, &texts.after)) {
            (Ok(before), Ok(after)) => {
                let (before, first) = before.unzip();
                let (after, second) = after.unzip();
                Kept {
                    before,
                    after,
                    not_kept: None,
                    pending: first.flatten().into_iter().chain(second.flatten()).collect(),
                }
            }
            (Err(NotKept::TooLarge), _) | (_, Err(NotKept::TooLarge)) => {
                Kept { not_kept: Some(NotKeptReason::TooLarge), ..Kept::default() }
            }
        }
    }
}

/// The names of the texts kept for one entry, and the texts still to write.
#[derive(Debug, Default)]
struct Kept {
    before: Option<String>,
    after: Option<String>,
    not_kept: Option<NotKeptReason>,
    pending: Vec<PendingText>,
}

fn entry(
    write: &WriteInfo<'_>,
    write_id: &str,
    time: &str,
    root: Option<&Path>,
    result: &DocumentResult,
    failure: Option<&ProtocolError>,
) -> Entry {
    let (outcome, rev) = match failure {
        None if result.modified_by_editor => (Outcome::ModifiedByEditor, result.rev.clone()),
        None if result.partial => (Outcome::Partial, result.rev.clone()),
        None => (Outcome::Applied, result.rev.clone()),
        Some(error) if error.kind == crate::service::error::ErrorKind::Rejected => (Outcome::Rejected, None),
        Some(error) if error.kind == crate::service::error::ErrorKind::NotAnswered => (Outcome::NotAnswered, None),
        Some(_) => (Outcome::Error, None),
    };
    let reason = match outcome {
        Outcome::Partial => write.reason.map(str::to_owned),
        _ => failure
            .filter(|_| outcome == Outcome::Rejected)
            .and_then(|error| error.data.get("reason"))
            .and_then(|reason| reason.as_str())
            .map(str::to_owned),
    };
    let hunks_left_out = (outcome == Outcome::Partial)
        .then(|| result.hunks.iter().flatten().filter(|hunk| !hunk.accepted).map(|hunk| hunk.index).collect());
    Entry {
        time: time.to_owned(),
        write_id: write_id.to_owned(),
        source: write.source,
        agent: write.agent.to_owned(),
        summary: write.summary.to_owned(),
        uri: result.uri.clone(),
        workspace: root.map(|root| root.display().to_string()),
        base_rev: result.base_rev.clone(),
        rev,
        outcome,
        reason,
        hunks_left_out,
        error_kind: failure.filter(|_| outcome == Outcome::Error).map(|error| error.kind.as_str().to_owned()),
        message: failure.map(|error| error.message.clone()),
        diff: cut(&result.diff),
        editor_diff: result.editor_diff.as_deref().map(cut),
        commit: write.commit.filter(|_| failure.is_none()).map(str::to_owned),
        diagnostics: write.diagnostics.map(JournalDiagnostics::of),
        id: None,
        session: Some(write.session.to_owned()),
        turn: write.turn.map(str::to_owned),
        before: None,
        after: None,
        not_kept: None,
        operation: result.operation.clone(),
        new_uri: result.new_uri.clone(),
        reverts: None,
    }
}

fn cut(diff: &str) -> String {
    if diff.len() <= MAX_DIFF_BYTES {
        return diff.to_owned();
    }
    let mut end = MAX_DIFF_BYTES;
    while !diff.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… (diff cut at {MAX_DIFF_BYTES} bytes)\n", &diff[..end])
}

/// A new id for one write, unique across processes.
pub fn next_write_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{nanos:x}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Reads a journal file; lines that are not entries (a torn last line) are skipped.
pub fn read_entries(path: &Path) -> io::Result<Vec<Entry>> {
    let text = fs::read_to_string(path)?;
    Ok(text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::error::ErrorKind;

    fn result(uri: &str) -> DocumentResult {
        DocumentResult {
            uri: uri.into(),
            base_rev: Some("e1.1".into()),
            rev: Some("e1.2".into()),
            edits: Vec::new(),
            replaced: Vec::new(),
            diff: "--- a/x\n+++ b/x\n".into(),
            modified_by_editor: false,
            editor_diff: None,
            normalizations: Vec::new(),
            operation: None,
            new_uri: None,
            rebased: false,
            rebased_from: None,
            hunks: None,
            partial: false,
            pending_sync: false,
        }
    }

    #[test]
    fn texts_are_kept_under_the_entry_s_names_unless_one_is_too_large() {
        let state = tempfile::tempdir().expect("tempdir");
        let journal = Journal::with_limits(state.path(), KeepLimits { max_text_bytes: 8, keep_days: 30 });
        let write = WriteInfo {
            source: Source::Editor,
            agent: "claude",
            summary: "Edit",
            commit: None,
            reason: None,
            diagnostics: None,
            session: "s1",
            turn: None,
            revert: RevertWrite::default(),
        };
        let texts = |before: &str, after: &str| DocumentTexts {
            before: Some(Rope::from_str(before)),
            after: Some(Rope::from_str(after)),
        };
        let roots = vec![None, None];
        let id = journal.record(
            &write,
            &roots,
            &[result("file:///p/a"), result("file:///p/b")],
            None,
            &[texts("one\n", "two\n"), texts("short", "far too long")],
        );
        KeptTexts::flush(std::time::Duration::from_secs(5));
        let entries = read_entries(&journal.file_for(None)).expect("read");
        assert_eq!(entries[0].before.as_deref(), Some(format!("{id}.0.before").as_str()));
        assert_eq!(journal.texts().load(entries[0].after.as_deref().expect("after")).as_deref(), Some("two\n"));
        assert_eq!(entries[0].not_kept, None);
        assert_eq!((entries[1].before.as_deref(), entries[1].after.as_deref()), (None, None), "neither text kept");
        assert_eq!(entries[1].not_kept, Some(NotKeptReason::TooLarge));
        assert!(journal.texts().load(&format!("{id}.1.before")).is_none());
    }

    #[test]
    fn entries_go_to_the_journal_of_their_folder() {
        let state = tempfile::tempdir().expect("tempdir");
        let journal = Journal::new(state.path());
        let write = WriteInfo {
            source: Source::Editor,
            agent: "claude",
            summary: "Rename",
            commit: None,
            reason: None,
            diagnostics: None,
            session: "s1",
            turn: None,
            revert: RevertWrite::default(),
        };
        let roots = vec![Some(PathBuf::from("/p/one")), Some(PathBuf::from("/p/two")), None];
        journal.record(
            &write,
            &roots,
            &[result("file:///p/one/a"), result("file:///p/two/b"), result("untitled:1")],
            None,
            &[],
        );
        let one = read_entries(&journal.file_for(Some(Path::new("/p/one")))).expect("read");
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].outcome, Outcome::Applied);
        assert_eq!(one[0].rev.as_deref(), Some("e1.2"));
        assert_eq!(one[0].workspace.as_deref(), Some("/p/one"));
        let two = read_entries(&journal.file_for(Some(Path::new("/p/two")))).expect("read");
        assert_eq!(two[0].write_id, one[0].write_id);
        assert_eq!(read_entries(&journal.file_for(None)).expect("read").len(), 1);
        assert_eq!(
            journal.find_for_dir(Path::new("/p/one/src/deep")),
            Some(journal.file_for(Some(Path::new("/p/one"))))
        );
        assert_eq!(journal.files().len(), 3);
    }

    #[test]
    fn refusals_keep_their_reason_and_errors_their_kind() {
        let state = tempfile::tempdir().expect("tempdir");
        let journal = Journal::new(state.path());
        let write = WriteInfo {
            source: Source::Editor,
            agent: "a",
            summary: "s",
            commit: None,
            reason: None,
            diagnostics: None,
            session: "s1",
            turn: None,
            revert: RevertWrite::default(),
        };
        let rejected = ProtocolError::new(ErrorKind::Rejected, "no").with("reason", "not now");
        journal.record(&write, &[None], &[result("file:///x")], Some(&rejected), &[]);
        let timeout = ProtocolError::new(ErrorKind::Timeout, "slow");
        journal.record(&write, &[None], &[result("file:///x")], Some(&timeout), &[]);
        let entries = read_entries(&journal.file_for(None)).expect("read");
        assert_eq!(
            (entries[0].outcome, entries[0].reason.as_deref(), entries[0].rev.as_deref()),
            (Outcome::Rejected, Some("not now"), None)
        );
        assert_eq!((entries[1].outcome, entries[1].error_kind.as_deref()), (Outcome::Error, Some("timeout")));
    }
}
