//! After the editor said yes: wait for the `didChange` that carries the edit (or the
//! file deleted or moved on disk), then compare the live text with the prediction.
//! Never claim what did not happen.

use std::sync::Arc;
use std::time::Duration;

use ropey::Rope;
use tokio::time::Instant;
use verbatim_engine::rev::Rev;

use crate::service::deliver::answer::editor_gone;
use crate::service::deliver::planned::{AppliedDocument, PlannedDocument};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::state::State;

/// After the edit's change arrived but differs from the prediction, wait this long
/// for further changes (an editor may split one edit into several notifications).
pub(crate) const SETTLE: Duration = Duration::from_millis(250);

/// How often the disk is looked at while a deleted or moved file is awaited.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// Waits until every document shows the edit, then compares with the prediction.
pub(crate) async fn wait_for_sync(
    state: &Arc<State>,
    documents: &[PlannedDocument],
    expected: &[Rope],
    changes: &mut tokio::sync::watch::Receiver<u64>,
    timeout: Duration,
    defers: bool,
) -> Result<Vec<AppliedDocument>, ProtocolError> {
    let deadline = Instant::now() + timeout;
    let mut settle_deadline: Option<Instant> = None;
    // The disk does not tick the store's watch channel: look at it now and then.
    let poll = documents.iter().any(|document| document.delete || document.rename_to.is_some());
    loop {
        let observed = observe(state, documents);
        let now = Instant::now();
        if observed.iter().all(Option::is_some) {
            let all_equal = observed
                .iter()
                .zip(expected)
                .all(|(seen, expected)| seen.as_ref().is_some_and(|(text, _)| text == expected));
            let settled = settle_deadline.is_some_and(|settle| now >= settle) || now >= deadline;
            if all_equal || settled {
                return Ok(finish(observed, expected));
            }
            settle_deadline.get_or_insert(now + SETTLE);
        } else if now >= deadline {
            return finish_without_sync(state, documents, expected, observed, timeout, defers);
        }
        let mut wake = settle_deadline.map_or(deadline, |settle| settle.min(deadline));
        if poll {
            wake = wake.min(Instant::now() + POLL);
        }
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return Err(editor_gone());
                }
            }
            () = tokio::time::sleep_until(wake) => {}
            () = state.editor_closed.cancelled() => return Err(editor_gone()),
        }
    }
}

/// The live text and rev of each document once the edit's change has arrived: for
/// a deleted file, once it is gone from disk; for a moved one, its text under the
/// new name.
pub(crate) fn observe(state: &State, documents: &[PlannedDocument]) -> Vec<Option<(Rope, Option<Rev>)>> {
    // The disk is looked at before the store is locked, never under the lock.
    let on_disk: Vec<Option<(Rope, Option<Rev>)>> = documents
        .iter()
        .map(|document| {
            if document.delete {
                let gone = document.key.path().is_none_or(|path| !path.exists());
                return gone.then(|| (Rope::new(), None));
            }
            let (target, _) = document.rename_to.as_ref()?;
            let source_gone = document.key.path().is_none_or(|path| !path.exists());
            let disk = verbatim_engine::disk::read_text(target.path()?).ok().filter(|_| source_gone)?;
            Some((Rope::from_str(&disk.text), Some(disk.rev)))
        })
        .collect();
    let store = state.documents.lock();
    documents
        .iter()
        .zip(on_disk)
        .map(|(document, on_disk)| {
            if document.delete {
                return on_disk;
            }
            if let Some((target, _)) = &document.rename_to {
                // An editor moves an open buffer, unsaved edits and all: prefer it to the disk.
                return match store.get(target) {
                    Some(current) => Some((current.text.clone(), Some(current.rev()))),
                    None => on_disk,
                };
            }
            let current = store.get(&document.key)?;
            let arrived = match document.open {
                Some((session, version)) => current.session != session || current.version != version,
                // Opened for the edit: its didOpen holds the text from before the edit;
                // what counts is the edit's own change.
                None => current.text != document.base || current.text == document.predicted,
            };
            arrived.then(|| (current.text.clone(), Some(current.rev())))
        })
        .collect()
}

pub(crate) fn finish(observed: Vec<Option<(Rope, Option<Rev>)>>, expected: &[Rope]) -> Vec<AppliedDocument> {
    observed
        .into_iter()
        .zip(expected)
        .filter_map(|(seen, expected)| {
            let (text, rev) = seen?;
            let differs = (text != *expected).then(|| text.clone());
            Some(AppliedDocument { rev, differs, live: Some(text), review: None, pending_sync: false })
        })
        .collect()
}

/// The editor said applied but some document never showed the change. A file the
/// editor wrote straight to disk counts if the disk now holds the prediction. A
/// client that `defers` its changes (a plain LSP client: Eglot sends them from an idle
/// timer that may wait for the person's next keystroke) has applied an edit to a
/// buffer it has open: that is reported as applied, its text still to come.
pub(crate) fn finish_without_sync(
    state: &State,
    documents: &[PlannedDocument],
    expected: &[Rope],
    observed: Vec<Option<(Rope, Option<Rev>)>>,
    timeout: Duration,
    defers: bool,
) -> Result<Vec<AppliedDocument>, ProtocolError> {
    let workspace = state.workspace();
    let mut applied = Vec::new();
    for ((seen, document), expected) in observed.into_iter().zip(documents).zip(expected) {
        if let Some((text, rev)) = seen {
            let differs = (text != *expected).then(|| text.clone());
            applied.push(AppliedDocument { rev, differs, live: Some(text), review: None, pending_sync: false });
            continue;
        }
        if document.changes_the_file() && !document.create {
            return Err(ProtocolError::new(
                ErrorKind::Timeout,
                format!(
                    "The editor said it {} {}, but the server could not see that happen within {} ms \
                     (syncTimeoutMs). Look at the workspace before retrying.",
                    if document.delete { "deleted" } else { "moved" },
                    document.label,
                    timeout.as_millis()
                ),
            )
            .with("phase", "sync"));
        }
        let on_disk = document
            .key
            .path()
            .filter(|path| workspace.contains(path))
            .and_then(|path| verbatim_engine::disk::read_text(path).ok())
            .filter(|disk| document.open.is_none() && disk.text == *expected);
        let in_buffer = defers && !document.create && state.documents.lock().get(&document.key).is_some();
        match on_disk {
            Some(disk) => applied.push(AppliedDocument {
                rev: Some(disk.rev),
                differs: None,
                live: None,
                review: None,
                pending_sync: false,
            }),
            None if in_buffer => {
                tracing::info!(
                    "{}: the editor said it applied the edit and has not sent the change within {} ms; reported as \
                     applied, its text still to come",
                    document.label,
                    timeout.as_millis()
                );
                state.documents.update(|store| store.expect_applied_change(&document.key));
                applied.push(AppliedDocument {
                    rev: None,
                    differs: None,
                    live: None,
                    review: None,
                    pending_sync: true,
                });
            }
            None => {
                return Err(ProtocolError::new(
                    ErrorKind::Timeout,
                    format!(
                        "The editor said it applied the edit to {}, but its change did not reach the server within \
                         {} ms (syncTimeoutMs). Read the document again to see its state before retrying.",
                        document.label,
                        timeout.as_millis()
                    ),
                )
                .with("phase", "sync"));
            }
        }
    }
    Ok(applied)
}
