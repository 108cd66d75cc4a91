//! Snapshots of the documents an edit names (the live buffer, else the file on disk),
//! the agent's `baseRev` checked against them (moved over the changes since where the
//! history allows), and the last look before sending at a file planned on disk.

use std::collections::BTreeMap;

use ropey::Rope;
use serde_json::Value;
use verbatim_engine::disk::{DiskError, read_text};
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::history::{ByteEdit, History, Touched};
use verbatim_engine::rev::Rev;

use crate::service::deliver::planned::{PlanBase, PlannedDocument};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::state::State;

/// A document as it was when the plan was made.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) editor_uri: String,
    pub(crate) label: String,
    pub(crate) text: Rope,
    /// `None` when the file does not exist yet.
    pub(crate) rev: Option<Rev>,
    pub(crate) open: Option<(u64, i32)>,
    /// An open document's recent revisions, to rebase an edit planned against one.
    pub(crate) history: Option<History>,
}

impl Snapshot {
    /// What a plan of `key` is made on: this snapshot.
    pub(crate) fn plan_base(&self, key: &DocKey) -> PlanBase {
        PlanBase {
            key: key.clone(),
            editor_uri: self.editor_uri.clone(),
            label: self.label.clone(),
            text: self.text.clone(),
            rev: self.rev,
            open: self.open,
        }
    }
}

/// Snapshots every document at one moment: open documents under one lock, the rest from disk.
pub(crate) fn take_snapshots(
    state: &State,
    keys: &[DocKey],
    allow_create: bool,
) -> Result<BTreeMap<DocKey, Snapshot>, (ProtocolError, usize)> {
    let workspace = state.workspace();
    let mut snapshots = BTreeMap::new();
    {
        let store = state.documents.lock();
        for key in keys {
            if let Some(document) = store.get(key) {
                snapshots.insert(
                    key.clone(),
                    Snapshot {
                        editor_uri: document.editor_uri.clone(),
                        label: workspace.label(key),
                        text: document.text.clone(),
                        rev: Some(document.rev()),
                        open: Some((document.session, document.version)),
                        history: Some(document.history.clone()),
                    },
                );
            }
        }
    }
    for (index, key) in keys.iter().enumerate() {
        if snapshots.contains_key(key) {
            continue;
        }
        let snapshot = disk_snapshot(state, key, allow_create).map_err(|error| (error, index))?;
        snapshots.insert(key.clone(), snapshot);
    }
    Ok(snapshots)
}

/// Reads a document that is not open from disk, inside the workspace only.
pub(crate) fn disk_snapshot(state: &State, key: &DocKey, allow_create: bool) -> Result<Snapshot, ProtocolError> {
    let workspace = state.workspace();
    let uri = key.to_uri();
    let Some(path) = key.path() else {
        return Err(ProtocolError::new(
            ErrorKind::UnknownDocument,
            format!("{uri} is not open in the editor, and only file: URIs can be read from disk. List open documents with verbatim/documents."),
        )
        .with("uri", uri));
    };
    if !workspace.contains(path) {
        let folders = workspace.folder_uris();
        let message = if folders.is_empty() {
            format!(
                "{} is not open in the editor, and the editor has no workspace folder, so files on disk are out of reach. Open the file in the editor first.",
                path.display()
            )
        } else {
            format!(
                "{} is not open in the editor and lies outside the workspace folders ({}). Open it in the editor, or edit a file inside the workspace.",
                path.display(),
                folders.join(", ")
            )
        };
        return Err(ProtocolError::new(ErrorKind::OutsideWorkspace, message)
            .with("uri", uri)
            .with("workspaceFolders", folders));
    }
    state.path_policy().check_read(key)?;
    let label = workspace.label(key);
    match read_text(path) {
        Ok(disk) => Ok(Snapshot {
            editor_uri: uri,
            label,
            text: Rope::from_str(&disk.text),
            rev: Some(disk.rev),
            open: None, history: None,
        }),
        Err(DiskError::Missing) if allow_create => Ok(Snapshot {
            editor_uri: uri,
            label,
            text: Rope::new(),
            rev: None,
            open: None, history: None,
        }),
        Err(DiskError::Missing) => Err(ProtocolError::new(
            ErrorKind::UnknownDocument,
            format!("{label} does not exist and is not open in the editor. Check the path (verbatim/documents lists open documents); create new files with verbatim/write."),
        )
        .with("uri", uri)),
        Err(DiskError::NotText(why)) => Err(ProtocolError::new(
            ErrorKind::NotText,
            format!("{label} is not a text file ({why}); verbatim edits text only: UTF-8, or UTF-16 with a byte order mark."),
        )
        .with("uri", uri)),
        Err(DiskError::Directory) => Err(ProtocolError::new(
            ErrorKind::UnknownDocument,
            format!("{label} is a directory, not a file."),
        )
        .with("uri", uri)),
        Err(DiskError::Io(error)) => Err(ProtocolError::new(ErrorKind::Io, format!("cannot read {label}: {error}")).with("uri", uri)),
    }
}

/// An edit planned against a revision the document has moved on from, still kept.
pub(crate) struct Rebase {
    /// The revision the agent read.
    pub(crate) from: Rev,
    /// Its text.
    pub(crate) text: Rope,
    /// Every change since, in order.
    pub(crate) edits: Vec<ByteEdit>,
}

/// Checks `baseRev` against the snapshot: `Ok(None)` when it is current (or absent),
/// `Ok(Some(..))` when it names an older revision of the open document that is still
/// kept (and the request is not a whole-document `write`), else `stale`.
pub(crate) fn check_base_rev(
    snapshot: &Snapshot,
    base_rev: Option<&str>,
    is_write: bool,
) -> Result<Option<Rebase>, ProtocolError> {
    let label = &snapshot.label;
    let Some(current) = snapshot.rev else {
        if base_rev.is_some() {
            return Err(ProtocolError::new(
                ErrorKind::Stale,
                format!("baseRev was given but {label} does not exist (any more). Read the directory again; to create the file, send verbatim/write without baseRev."),
            )
            .with("baseRev", base_rev)
            .with("currentRev", Value::Null));
        }
        return Ok(None);
    };
    let Some(base_rev) = base_rev else {
        if is_write {
            return Err(ProtocolError::invalid_params(
                Some("baseRev"),
                format!(
                    "{label} already exists: replacing a whole document needs the baseRev of your last read (verbatim/read), so that nothing the person typed is lost."
                ),
            ));
        }
        return Ok(None);
    };
    let parsed: Rev = base_rev.parse().map_err(|error: verbatim_engine::rev::InvalidRev| {
        ProtocolError::invalid_params(Some("baseRev"), error.to_string())
    })?;
    if parsed == current {
        return Ok(None);
    }
    // A disk revision still names an open document whose text has not changed since.
    if matches!(parsed, Rev::Disk(_)) && snapshot.open.is_some() && Rev::of_rope(&snapshot.text) == parsed {
        return Ok(None);
    }
    if let (Rev::Editor { session, version }, Rev::Editor { session: now, .. }, Some(history), false) =
        (parsed, current, snapshot.history.as_ref(), is_write)
        && session == now
        && let (Some(text), Some(edits)) = (history.text_at(version, &snapshot.text), history.edits_since(version))
    {
        return Ok(Some(Rebase { from: parsed, text, edits }));
    }
    Err(ProtocolError::new(
        ErrorKind::Stale,
        format!("baseRev {base_rev} is stale: {label} is now at rev {current}, and that revision is older than the kept history (or from an earlier session), so the edit cannot be moved over the changes since. Nothing was changed; read it again (verbatim/read) and redo the edit against the current text."),
    )
    .with("baseRev", base_rev)
    .with("currentRev", current.to_string()))
}

/// Just before sending, a document planned on disk (not open when it was snapshotted)
/// must still be as it was planned. The editor may have opened it meanwhile (the person
/// clicked it while the agent's edit was planned): with the text planned against, it is
/// edited in the editor instead; with other text, or changed on disk, the edit is
/// refused as `stale`. The disk is read first, and what the editor holds is looked at
/// under one lock of the store after it, so a `didOpen` that arrives during the read is
/// adopted, never taken for a change (issue 32: an edit of a file the editor was
/// opening was refused as "changed on disk" although nothing had changed).
pub(crate) fn recheck_unopened(state: &State, planned: &mut [PlannedDocument]) -> Result<(), ProtocolError> {
    // The disk is read before the store is locked, never under the lock.
    let on_disk: Vec<Option<Option<Rev>>> = planned
        .iter()
        .map(|document| {
            let path = document.key.path().filter(|_| document.open.is_none())?;
            Some(match read_text(path) {
                Ok(disk) => Some(disk.rev),
                Err(DiskError::Missing) => None,
                Err(_) => Some(Rev::of_bytes(b"\0unreadable")),
            })
        })
        .collect();
    let store = state.documents.lock();
    for (document, now) in planned.iter_mut().zip(on_disk) {
        let Some(now) = now else { continue };
        let stale = |now: Option<Rev>| {
            ProtocolError::new(
                ErrorKind::Stale,
                format!(
                    "{} changed on disk (or was opened in the editor with other text) while the edit was being \
                     planned. Read it again and redo the edit.",
                    document.label
                ),
            )
            .with("baseRev", document.base_rev.map(|rev| rev.to_string()))
            .with("currentRev", now.map(|rev| rev.to_string()))
        };
        match store.get(&document.key) {
            Some(current) if !document.create && current.text == document.base => {
                document.open = Some((current.session, current.version));
                document.base_rev = Some(current.rev());
                document.editor_uri = current.editor_uri.clone();
            }
            Some(current) => return Err(stale(Some(current.rev()))),
            None if now != document.base_rev => return Err(stale(now)),
            None => {}
        }
    }
    Ok(())
}

/// `stale`, naming the lines that changed under a quote since the agent's revision.
pub(crate) fn changed_under_quote(snapshot: &Snapshot, rebase: &Rebase, touched: &Touched) -> ProtocolError {
    let label = &snapshot.label;
    let text = &snapshot.text;
    let start = touched.range.start.min(text.len_bytes());
    // The last changed byte, not the one after it (which may begin the next line).
    let end = touched.range.end.saturating_sub(1).max(start).min(text.len_bytes());
    let first = text.byte_to_line(start) + 1;
    let last = text.byte_to_line(end) + 1;
    let lines = if last <= first { format!("line {first}") } else { format!("lines {first}-{last}") };
    let current = snapshot.rev.map(|rev| rev.to_string());
    ProtocolError::new(
        ErrorKind::Stale,
        format!(
            "{label} changed since rev {}, exactly where your edit applies: {lines} (now at rev {}). Nothing was \
             changed; read it again (verbatim/read) and redo the edit against the current text.",
            rebase.from,
            current.as_deref().unwrap_or("?")
        ),
    )
    .with("baseRev", rebase.from.to_string())
    .with("currentRev", current)
    .with("changedLines", serde_json::json!([first, last.max(first)]))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::service::edits::parse_key;

    use verbatim_engine::plan::Replacement;

    /// A state, a file on disk, and a plan of one edit of it made while it was not open.
    struct Planned {
        state: Arc<State>,
        _dir: tempfile::TempDir,
        path: PathBuf,
        key: DocKey,
        uri: String,
        document: PlannedDocument,
    }

    const TEXT: &str = "one\ntwo\nthree\n";

    fn planned_on_disk() -> Planned {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("file.txt");
        std::fs::write(&path, TEXT).expect("the file written");
        let uri = format!("file://{}", path.display());
        let key = parse_key(&uri).expect("a file URI");
        let base = Rope::from_str(TEXT);
        let replacements = vec![Replacement { range: 4..7, new_text: "TWO".into() }];
        let document = PlannedDocument::edit(
            PlanBase {
                key: key.clone(),
                editor_uri: uri.clone(),
                label: "file.txt".into(),
                text: base,
                rev: Some(Rev::of_bytes(TEXT.as_bytes())),
                open: None,
            },
            replacements,
        );
        Planned { state: State::new(), _dir: dir, path, key, uri, document }
    }

    fn open_in_editor(planned: &Planned, text: &str) {
        planned.state.documents.update(|store| {
            store.open(planned.key.clone(), planned.uri.clone(), "plaintext".into(), 7, text);
        });
    }

    #[test]
    fn a_file_still_closed_and_unchanged_is_sent_as_planned() {
        let mut planned = planned_on_disk();
        recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect("sent");
        assert_eq!(planned.document.open, None);
    }

    /// The editor opened the file after the plan was made and after any earlier look at
    /// the store (its `didOpen` arriving while the disk is read again): the edit goes to
    /// the editor's buffer, at its version, never refused as a change.
    #[test]
    fn a_file_the_editor_opened_meanwhile_with_the_planned_text_is_edited_in_the_editor() {
        let mut planned = planned_on_disk();
        open_in_editor(&planned, TEXT);
        recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect("sent");
        let (session, version) = planned.document.open.expect("adopted");
        assert_eq!(version, 7);
        let store = planned.state.documents.lock();
        let current = store.get(&planned.key).expect("open");
        assert_eq!(session, current.session);
        assert_eq!(planned.document.base_rev, Some(current.rev()));
    }

    #[test]
    fn a_file_opened_meanwhile_with_other_text_is_stale() {
        let mut planned = planned_on_disk();
        open_in_editor(&planned, "one\ntwo, typed\nthree\n");
        let error = recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect_err("stale");
        assert_eq!(error.kind, ErrorKind::Stale);
        assert_eq!(planned.document.open, None);
    }

    #[test]
    fn a_file_changed_on_disk_meanwhile_is_stale() {
        let mut planned = planned_on_disk();
        std::fs::write(&planned.path, "one\ntwo\nthree\nfour\n").expect("the file rewritten");
        let error = recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect_err("stale");
        assert_eq!(error.kind, ErrorKind::Stale);
    }

    #[test]
    fn a_file_to_create_that_the_editor_opened_meanwhile_is_stale() {
        let mut planned = planned_on_disk();
        std::fs::remove_file(&planned.path).expect("the file removed");
        planned.document.create = true;
        planned.document.base_rev = None;
        planned.document.base = Rope::new();
        recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect("sent");
        open_in_editor(&planned, "");
        let error = recheck_unopened(&planned.state, std::slice::from_mut(&mut planned.document)).expect_err("stale");
        assert_eq!(error.kind, ErrorKind::Stale);
    }
}
