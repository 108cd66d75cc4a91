//! Headless mode: the same quote-addressed writes when no editor serves a file,
//! with the disk as the target instead of the editor.
//!
//! The planning is [`crate::service::edits`]'s own ([`WriteRequest`], [`plan_documents`],
//! [`proposal`]); only the surroundings differ. Instead of write lanes, a lock file
//! per document ([`file_lock`]) orders writers across processes; snapshots
//! come from disk with their encoding ([`verbatim_engine::disk`], [`verbatim_engine::file_format`]); the
//! plan is written with [`atomic_write`] (every file staged first, each
//! revision re-checked just before its rename), optionally committed to git
//! ([`git`]), and journaled with the source `headless`.
//!
//! Everything here blocks (file locks wait): async callers run it on a blocking thread.

pub mod atomic_write;
pub mod file_lock;
pub mod git;
pub mod revert;
pub mod timeline;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ropey::Rope;
use serde::Serialize;
use serde_json::{Value, json};

use verbatim_engine::disk::{DiskError, line_ending_of, read_text};
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::file_format::{self, Encoding};
use verbatim_engine::rev::Rev;
use verbatim_engine::workspace::Workspace;

use crate::headless::atomic_write::{CommitError, StagedFile};
use crate::headless::file_lock::FileLock;
use crate::service::access::PathPolicy;
use crate::service::deliver::planned::{AppliedDocument, PlannedDocument};
use crate::service::deliver::report::{Outcome, proposal, report_applied, texts_of};
use crate::service::diagnostics::{self, Ask};
use crate::service::edits::{
    Mode, WriteRequest, feedback_context, parse_key, parse_params, plan_documents, resolve_keys,
};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::journal::{DocumentTexts, Journal, RevertWrite, Source, WriteInfo};
use crate::service::protocol::{ApplyPatchParams, ApplyPatchResult, DocumentResult, ReadParams, ReadResult, method};
use crate::service::registry::AgentInfo;
use crate::service::snapshot::Snapshot;
use crate::service::{feedback, patching};

/// The `source` of a read served headless.
pub const SOURCE: &str = "headless";

/// How a headless front-end writes.
#[derive(Debug, Clone)]
pub struct HeadlessOptions {
    /// Who writes: named in the journal.
    pub agent: AgentInfo,
    /// The folders headless writes may touch; empty: any file the user may write.
    pub roots: Vec<PathBuf>,
    /// The directory relative paths were given in; a workspace root of last resort.
    pub cwd: PathBuf,
    /// Commit every write to git, the summary as the message.
    pub git_commit: bool,
    pub journal: Option<Journal>,
    /// Where the lock files live ([`file_lock::default_lock_dir`]).
    pub lock_dir: PathBuf,
}

/// The headless engine.
#[derive(Debug, Clone)]
pub struct Headless {
    options: HeadlessOptions,
}

/// One document of a headless call, found on disk.
#[derive(Debug, Clone)]
struct Target {
    /// The real file, symlinks resolved: what is read, locked and replaced.
    path: PathBuf,
    /// The workspace it belongs to: for labels and the journal.
    root: PathBuf,
    label: String,
}

/// The git commit made for a write, or why it failed (the write itself stands).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommitReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_error: Option<String>,
}

impl Headless {
    pub fn new(options: HeadlessOptions) -> Self {
        Self { options }
    }

    pub fn options(&self) -> &HeadlessOptions {
        &self.options
    }

    /// Runs one protocol method with its JSON params, as an editor's server would,
    /// and returns its JSON result. Writes with `--git-commit` add `commit` (or
    /// `commitError`) to the result.
    pub fn call(&self, name: &str, params: Value) -> Result<Value, ProtocolError> {
        match name {
            method::DOCUMENTS => Ok(json!([])),
            method::READ => to_value(self.read(parse_params(name, params)?)?),
            method::STR_REPLACE => self.write_call(WriteRequest::str_replace(parse_params(name, params)?)),
            method::REPLACE_RANGE => self.write_call(WriteRequest::replace_range(parse_params(name, params)?)),
            method::WRITE => self.write_call(WriteRequest::write(parse_params(name, params)?)),
            method::BATCH_EDIT => self.write_call(WriteRequest::batch(parse_params(name, params)?)?),
            method::APPLY_PATCH => self.apply_patch(parse_params(name, params)?),
            method::REVERT => self.revert(parse_params(name, params)?),
            method::TIMELINE => self.timeline(parse_params(name, params)?),
            method::TIMELINE_ENTRY => self.timeline_entry(parse_params(name, params)?),
            other => Err(ProtocolError::invalid_params(
                None,
                format!("{other} is not available without an editor: it needs a running editor with verbatim."),
            )),
        }
    }

    pub fn read(&self, params: ReadParams) -> Result<ReadResult, ProtocolError> {
        let key = parse_key(&params.uri)?;
        let target = self.target(&key)?;
        let disk = read_text(&target.path).map_err(|error| disk_error(error, &key, &target))?;
        Ok(ReadResult {
            uri: key.to_uri(),
            rev: disk.rev.to_string(),
            line_ending: line_ending_of(&disk.text).to_owned(),
            text: disk.text,
            source: SOURCE.to_owned(),
            note: None,
        })
    }

    fn write_call(&self, request: WriteRequest) -> Result<Value, ProtocolError> {
        let (outcome, commit) = self.run(&request)?;
        let mut value = match request.mode {
            Mode::Batch => to_value(outcome.into_batch())?,
            Mode::Single | Mode::Write => to_value(outcome.into_single()?)?,
        };
        if let (Some(commit), Value::Object(map)) = (commit, &mut value)
            && let Value::Object(extra) = to_value(commit)?
        {
            map.extend(extra);
        }
        Ok(value)
    }

    fn run(&self, request: &WriteRequest) -> Result<(Outcome, Option<CommitReport>), ProtocolError> {
        let agent = &self.options.agent.for_write(None, request.turn.as_deref());
        let keys = resolve_keys(request)?;
        let mut targets: BTreeMap<DocKey, Target> = BTreeMap::new();
        for (index, key) in keys.iter().enumerate() {
            if !targets.contains_key(key) {
                let target = self.target(key).map_err(|error| request.name_entry(error, index))?;
                targets.insert(key.clone(), target);
            }
        }
        let committing = self.options.git_commit && !request.dry_run;
        if committing && let Some(target) = targets.values().find(|target| git::toplevel(&target.path).is_none()) {
            return Err(ProtocolError::invalid_params(
                None,
                format!(
                    "{} is not inside a git work tree, so the write cannot be committed (--git-commit). Nothing was written.",
                    target.label
                ),
            ));
        }
        let paths: Vec<PathBuf> = targets.values().map(|target| target.path.clone()).collect();
        let _locks = if request.dry_run { Vec::new() } else { self.lock(&paths)? };

        let mut snapshots = BTreeMap::new();
        let mut encodings = BTreeMap::new();
        for (index, key) in keys.iter().enumerate() {
            if snapshots.contains_key(key) {
                continue;
            }
            let target = &targets[key];
            let (snapshot, encoding) =
                snapshot(key, target, request.mode == Mode::Write).map_err(|error| request.name_entry(error, index))?;
            snapshots.insert(key.clone(), snapshot);
            encodings.insert(key.clone(), encoding);
        }
        // Without an editor there are no other open documents to look in.
        let planned = plan_documents(request, &keys, &snapshots, agent, |_, snapshot, error| {
            feedback::plan_error(error, feedback_context(snapshot, agent))
        })?;
        let mut results: Vec<_> = planned.iter().map(|document| proposal(document, agent)).collect();
        if request.dry_run {
            return Ok((
                Outcome {
                    applied: false,
                    dry_run: true,
                    documents: results,
                    reason: None,
                    diagnostics: None,
                    texts: Vec::new(),
                    write_id: None,
                },
                None,
            ));
        }

        let written = write_documents(&planned, &targets, &encodings);
        let written = written.map(|revs| {
            let applied = revs
                .into_iter()
                .map(|rev| AppliedDocument { rev, differs: None, live: None, review: None, pending_sync: false })
                .collect::<Vec<_>>();
            let texts = planned.iter().zip(&applied).map(|(document, outcome)| texts_of(document, outcome)).collect();
            report_applied(&mut results, &planned, applied);
            texts
        });
        let commit = match (&written, committing) {
            (Ok(_), true) => Some(self.commit(&planned, &targets, &request.summary)),
            _ => None,
        };
        let write =
            JournalWrite { agent, summary: &request.summary, commit: commit.as_ref(), revert: RevertWrite::default() };
        self.journal(&write, &planned, &targets, &results, &written);
        written?;
        tracing::info!(agent = %agent.name, "written headless: {}", request.summary);
        let diagnostics = no_editor_diagnostics(Ask::of(request.diagnostics.0, request.diagnostics.1, agent));
        Ok((
            Outcome {
                applied: true,
                dry_run: false,
                documents: results,
                reason: None,
                diagnostics,
                texts: Vec::new(),
                write_id: None,
            },
            commit,
        ))
    }

    /// `verbatim/applyPatch` on disk: both dialects, through the same planner as
    /// through an editor. Every file (sources and move targets) is locked, read and
    /// planned; then every new content is staged beside its target and every file
    /// re-checked, and only then are files renamed into place, moved and deleted.
    fn apply_patch(&self, params: ApplyPatchParams) -> Result<Value, ProtocolError> {
        let agent = &self.options.agent.for_write(None, params.turn.as_deref());
        let parsed = patching::parse(&params)?;
        let resolve = |path: &str, line: usize| self.patch_path(path, line);
        let operations = patching::resolve_all(&parsed.operations, &resolve)?;
        let mut targets: BTreeMap<DocKey, Target> = BTreeMap::new();
        for operation in &operations {
            for (key, line, path) in operation.files() {
                if !targets.contains_key(key) {
                    let target = self.target(key).map_err(|error| patching::at_line(error, line, path))?;
                    targets.insert(key.clone(), target);
                }
            }
        }
        let committing = self.options.git_commit && !params.dry_run;
        if committing && let Some(target) = targets.values().find(|target| git::toplevel(&target.path).is_none()) {
            return Err(ProtocolError::invalid_params(
                None,
                format!(
                    "{} is not inside a git work tree, so the patch cannot be committed (--git-commit). Nothing was written.",
                    target.label
                ),
            ));
        }
        let paths: Vec<PathBuf> = targets.values().map(|target| target.path.clone()).collect();
        let _locks = if params.dry_run { Vec::new() } else { self.lock(&paths)? };
        let mut snapshots = BTreeMap::new();
        let mut encodings = BTreeMap::new();
        for (key, target) in &targets {
            let (snapshot, encoding) = snapshot(key, target, true)?;
            snapshots.insert(key.clone(), snapshot);
            encodings.insert(key.clone(), encoding);
        }
        let explain =
            |_: &DocKey, snapshot: &Snapshot, error| feedback::plan_error(error, feedback_context(snapshot, agent));
        let planned = patching::plan_patch(&operations, &snapshots, params.exact, &explain)?;
        let mut results: Vec<_> = planned.iter().map(|document| proposal(document, agent)).collect();
        let result = |applied: bool, documents| ApplyPatchResult {
            applied,
            dry_run: params.dry_run,
            modified_by_editor: false,
            format: parsed.format.as_str().to_owned(),
            documents,
            partial: false,
            reason: None,
            diagnostics: if applied {
                no_editor_diagnostics(Ask::of(params.diagnostics, params.diagnostics_timeout_ms, agent))
            } else {
                None
            },
        };
        if params.dry_run {
            return to_value(result(false, results));
        }
        let written = write_documents(&planned, &targets, &encodings).map(|revs| {
            let applied = revs
                .into_iter()
                .map(|rev| AppliedDocument { rev, differs: None, live: None, review: None, pending_sync: false })
                .collect::<Vec<_>>();
            let texts = planned.iter().zip(&applied).map(|(document, outcome)| texts_of(document, outcome)).collect();
            report_applied(&mut results, &planned, applied);
            texts
        });
        let commit = match (&written, committing) {
            (Ok(_), true) => Some(self.commit(&planned, &targets, &params.summary)),
            _ => None,
        };
        let write =
            JournalWrite { agent, summary: &params.summary, commit: commit.as_ref(), revert: RevertWrite::default() };
        self.journal(&write, &planned, &targets, &results, &written);
        written?;
        tracing::info!(agent = %agent.name, "patch written headless: {}", params.summary);
        let mut value = to_value(result(true, results))?;
        if let (Some(commit), Value::Object(map)) = (commit, &mut value)
            && let Value::Object(extra) = to_value(commit)?
        {
            map.extend(extra);
        }
        Ok(value)
    }

    /// The document a path of a patch names: absolute, or relative to the directory
    /// the front-end runs in.
    fn patch_path(&self, path: &str, line: usize) -> Result<DocKey, ProtocolError> {
        let spelled = if path.starts_with("file:") || Path::new(path).is_absolute() {
            path.to_owned()
        } else {
            self.options.cwd.join(path).to_string_lossy().into_owned()
        };
        DocKey::parse(&spelled).map_err(|error| {
            ProtocolError::invalid_params(Some("patch"), format!("patch line {line}: {error}")).with("line", line)
        })
    }

    fn lock(&self, paths: &[PathBuf]) -> Result<Vec<FileLock>, ProtocolError> {
        FileLock::acquire_all(&self.options.lock_dir, paths).map_err(|error| {
            ProtocolError::new(
                ErrorKind::Io,
                format!("cannot take the lock of the files to write: {error}. Nothing was written."),
            )
        })
    }

    fn journal(
        &self,
        write: &JournalWrite<'_>,
        planned: &[PlannedDocument],
        targets: &BTreeMap<DocKey, Target>,
        results: &[DocumentResult],
        written: &Result<Vec<DocumentTexts>, ProtocolError>,
    ) -> Option<String> {
        let journal = self.options.journal.as_ref()?;
        let roots: Vec<Option<PathBuf>> =
            planned.iter().map(|document| Some(targets[&document.key].root.clone())).collect();
        let info = WriteInfo {
            source: Source::Headless,
            agent: &write.agent.name,
            summary: write.summary,
            commit: write.commit.and_then(|report| report.commit.as_deref()),
            reason: None,
            diagnostics: None,
            session: &write.agent.session,
            turn: write.agent.turn.as_deref(),
            revert: write.revert,
        };
        let (texts, failure) = match written {
            Ok(texts) => (texts.as_slice(), None),
            Err(error) => (&[][..], Some(error)),
        };
        let write_id = journal.record(&info, &roots, results, failure, texts);
        // A headless writer is a short process: its kept texts must be on disk before it ends.
        crate::service::journal_texts::KeptTexts::flush(std::time::Duration::from_secs(10));
        Some(write_id)
    }

    /// Where a document is on disk, if a headless call may touch it: inside the
    /// roots (when there are any), and not on the default deny list.
    fn target(&self, key: &DocKey) -> Result<Target, ProtocolError> {
        let uri = key.to_uri();
        let Some(path) = key.path() else {
            return Err(ProtocolError::new(
                ErrorKind::UnknownDocument,
                format!("{uri} is not a file on disk, and no editor with verbatim serves it: without an editor, only files can be read and edited."),
            )
            .with("uri", uri));
        };
        let roots = &self.options.roots;
        if !roots.is_empty() && !Workspace::new(roots.clone()).contains(path) {
            let folders = Workspace::new(roots.clone()).folder_uris();
            return Err(ProtocolError::new(
                ErrorKind::OutsideWorkspace,
                format!(
                    "{} lies outside the folders this verbatim may edit without an editor ({}). Edit a file inside them, or start verbatim with another --root.",
                    path.display(),
                    roots.iter().map(|root| root.display().to_string()).collect::<Vec<_>>().join(", ")
                ),
            )
            .with("uri", uri)
            .with("workspaceFolders", folders));
        }
        if let Some(pattern) = PathPolicy::default().denied_by(path) {
            return Err(ProtocolError::new(
                ErrorKind::PermissionDenied,
                format!(
                    "{} matches the deny pattern `{pattern}` (secrets and repository internals), so agents may neither \
                     read nor write it. Leave this file to the person.",
                    path.display()
                ),
            )
            .with("uri", uri)
            .with("pattern", pattern));
        }
        let root = self.root_of(path);
        let label = Workspace::new(vec![root.clone()]).label(key);
        Ok(Target { path: resolve(path), root, label })
    }

    /// The workspace a file belongs to: the deepest root holding it, else its git
    /// work tree, else the current directory if it holds it, else its directory.
    fn root_of(&self, path: &Path) -> PathBuf {
        if let Some(folder) = Workspace::new(self.options.roots.clone()).folder_of(path) {
            return folder.to_owned();
        }
        if let Some(toplevel) = git::toplevel(path) {
            return toplevel;
        }
        if path.starts_with(&self.options.cwd) {
            return self.options.cwd.clone();
        }
        path.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
    }

    fn commit(&self, planned: &[PlannedDocument], targets: &BTreeMap<DocKey, Target>, summary: &str) -> CommitReport {
        let mut by_repository: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for document in planned {
            let moved_to = document.rename_to.as_ref().map(|(key, _)| &targets[key].path);
            for path in std::iter::once(&targets[&document.key].path).chain(moved_to) {
                if let Some(root) = git::toplevel(path) {
                    by_repository.entry(root).or_default().push(path.clone());
                }
            }
        }
        let mut commits = Vec::new();
        for (root, paths) in by_repository {
            // Concurrent writers must not race for the repository's index.
            let lock_key = PathBuf::from(format!("git:{}", root.display()));
            let outcome = FileLock::acquire(&self.options.lock_dir, &lock_key)
                .map_err(|error| error.to_string())
                .and_then(|_lock| git::commit(&root, &paths, summary).map_err(|error| error.to_string()));
            match outcome {
                Ok(hash) => commits.push(hash),
                Err(error) => {
                    tracing::warn!("git commit in {} failed: {error}", root.display());
                    return CommitReport {
                        commit: commits.first().cloned(),
                        commit_error: Some(format!(
                            "the write was applied, but `git commit` failed in {}: {error}",
                            root.display()
                        )),
                    };
                }
            }
        }
        CommitReport { commit: Some(commits.join(" ")), commit_error: None }
    }
}

fn to_value<T: Serialize>(value: T) -> Result<Value, ProtocolError> {
    serde_json::to_value(value).map_err(|error| {
        ProtocolError::new(ErrorKind::Io, format!("internal error: cannot serialise the result: {error}"))
    })
}

/// The path with symlinks resolved as far as it exists, so that a link is followed
/// (and kept) and two spellings of one file share its lock.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(resolved) = path.canonicalize() {
        return resolved;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => resolve(parent).join(name),
        _ => path.to_path_buf(),
    }
}

/// Reads a document from disk, with how it is stored.
fn snapshot(key: &DocKey, target: &Target, allow_create: bool) -> Result<(Snapshot, Encoding), ProtocolError> {
    let uri = key.to_uri();
    match read_text(&target.path) {
        Ok(disk) => Ok((
            Snapshot {
                editor_uri: uri,
                label: target.label.clone(),
                text: Rope::from_str(&disk.text),
                rev: Some(disk.rev),
                open: None,
                history: None,
            },
            disk.encoding,
        )),
        Err(DiskError::Missing) if allow_create => Ok((
            Snapshot {
                editor_uri: uri,
                label: target.label.clone(),
                text: Rope::new(),
                rev: None,
                open: None,
                history: None,
            },
            Encoding::Utf8,
        )),
        Err(error) => Err(disk_error(error, key, target)),
    }
}

fn disk_error(error: DiskError, key: &DocKey, target: &Target) -> ProtocolError {
    let uri = key.to_uri();
    let label = &target.label;
    match error {
        DiskError::Missing => ProtocolError::new(
            ErrorKind::UnknownDocument,
            format!("{label} does not exist. Check the path; create new files with verbatim/write."),
        ),
        DiskError::Directory => {
            ProtocolError::new(ErrorKind::UnknownDocument, format!("{label} is a directory, not a file."))
        }
        DiskError::NotText(why) => ProtocolError::new(
            ErrorKind::NotText,
            format!(
                "{label} is not a text file ({why}); verbatim edits text only: UTF-8, or UTF-16 with a byte order mark."
            ),
        ),
        DiskError::Io(error) => ProtocolError::new(ErrorKind::Io, format!("cannot read {label}: {error}")),
    }
    .with("uri", uri)
}

/// Writes a plan to disk: every new content is staged beside its target (a moved
/// file's beside its new name), then every file is re-checked (a deleted or moved
/// one too), and only then are the staged files renamed into place and the deleted
/// and moved-away files removed. Returns each document's new rev (`None` deleted).
fn write_documents(
    planned: &[PlannedDocument],
    targets: &BTreeMap<DocKey, Target>,
    encodings: &BTreeMap<DocKey, Encoding>,
) -> Result<Vec<Option<Rev>>, ProtocolError> {
    let mut staged: Vec<(Option<StagedFile>, &PlannedDocument)> = Vec::with_capacity(planned.len());
    for document in planned {
        if document.delete {
            staged.push((None, document));
            continue;
        }
        let source = &targets[&document.key];
        let (target, expected) = match &document.rename_to {
            // The new name must not exist: it is created, never replaced.
            Some((key, _)) => (&targets[key], None),
            None => (source, document.base_rev),
        };
        let encoding = encodings.get(&document.key).copied().unwrap_or(Encoding::Utf8);
        let bytes = file_format::encode(&document.predicted.to_string(), encoding);
        if (document.create || document.rename_to.is_some())
            && let Some(parent) = target.path.parent()
        {
            std::fs::create_dir_all(parent).map_err(|error| write_error(target, &error))?;
        }
        let file = atomic_write::stage(&target.path, &bytes, expected).map_err(|error| write_error(target, &error))?;
        staged.push((Some(file), document));
    }
    // Every file must still be as planned before any is replaced (a single plain
    // write is checked by its own commit, just before its rename).
    let removes_files = planned.iter().any(|document| document.delete || document.rename_to.is_some());
    if staged.len() > 1 || removes_files {
        for (file, document) in &staged {
            let source = &targets[&document.key];
            if let Some(file) = file {
                let target = file.target();
                let label = targets.values().find(|candidate| candidate.path == target).unwrap_or(source);
                file.check().map_err(|error| commit_error(error, document, label))?;
            }
            if document.delete || document.rename_to.is_some() {
                check_rev(&source.path, document.base_rev).map_err(|error| commit_error(error, document, source))?;
            }
        }
    }
    let mut revs = Vec::with_capacity(staged.len());
    let mut written: Vec<String> = Vec::new();
    for (file, document) in staged {
        let source = &targets[&document.key];
        let outcome = match file {
            Some(file) => file.commit().map(Some),
            None => Ok(None),
        }
        .and_then(|rev| {
            if document.delete || document.rename_to.is_some() {
                std::fs::remove_file(&source.path).map_err(CommitError::Io)?;
            }
            Ok(rev)
        });
        match outcome {
            Ok(rev) => {
                revs.push(rev);
                written.push(source.label.clone());
            }
            Err(error) => {
                let error = commit_error(error, document, source);
                return Err(if written.is_empty() {
                    error
                } else {
                    let message = format!("{} (already written: {})", error.message, written.join(", "));
                    ProtocolError { message, ..error }
                });
            }
        }
    }
    Ok(revs)
}

/// Checks that a file still holds the revision it was planned against.
fn check_rev(path: &Path, expected: Option<Rev>) -> Result<(), CommitError> {
    let now = match std::fs::read(path) {
        Ok(bytes) => Some(Rev::of_bytes(&bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(CommitError::Io(error)),
    };
    if now == expected { Ok(()) } else { Err(CommitError::Changed { now }) }
}

fn write_error(target: &Target, error: &std::io::Error) -> ProtocolError {
    ProtocolError::new(ErrorKind::Io, format!("cannot write {}: {error}. Nothing was written.", target.label))
        .with("uri", DocKey::File(target.path.clone()).to_uri())
}

fn commit_error(error: CommitError, document: &PlannedDocument, target: &Target) -> ProtocolError {
    match error {
        CommitError::Changed { now } => ProtocolError::new(
            ErrorKind::Stale,
            format!(
                "{} changed on disk while the edit was being written (another program wrote it). Nothing was written to it; read it again and redo the edit.",
                target.label
            ),
        )
        .with("baseRev", document.base_rev.map(|rev| rev.to_string()))
        .with("currentRev", now.map(|rev| rev.to_string())),
        CommitError::Io(error) => write_error(target, &error),
    }
}

/// Diagnostics asked of a headless write: none can be had, and the report says so.
fn no_editor_diagnostics(ask: Option<Ask>) -> Option<crate::service::protocol::DiagnosticsReport> {
    ask.map(|ask| {
        diagnostics::unavailable_report(ask, "the file was written straight to disk (headless mode), with no editor whose language servers could check it")
    })
}

/// Who wrote a headless write, and what the journal says of it.
struct JournalWrite<'a> {
    agent: &'a AgentInfo,
    summary: &'a str,
    commit: Option<&'a CommitReport>,
    /// For a revert: what each document reverts, and the write it continues.
    revert: RevertWrite<'a>,
}
