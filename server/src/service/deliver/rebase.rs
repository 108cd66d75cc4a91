//! An edit the editor refused because its document moved during review, moved over
//! what changed and offered again; `stale` when a change touched the edit's text.

use verbatim_engine::history;
use verbatim_engine::merge;
use verbatim_engine::rev::Rev;

use crate::service::deliver::planned::{PlanBase, PlannedDocument};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::snapshot::{Rebase, Snapshot, changed_under_quote};
use crate::service::state::State;

/// Moves a plan over the changes made since it was planned. `Ok(None)` when there is
/// nothing to move (no open document moved, or one that cannot be rebased: closed,
/// created, deleted, moved, or older than the kept history); `Err` when a change
/// touched the edit's text.
pub(crate) fn rebase_onto_current(
    state: &State,
    planned: &[PlannedDocument],
) -> Result<Option<Vec<PlannedDocument>>, ProtocolError> {
    let store = state.documents.lock();
    let mut moved_any = false;
    let mut out = Vec::with_capacity(planned.len());
    for document in planned {
        let Some((session, version)) = document.open else {
            match store.get(&document.key) {
                // The editor opened the file after the edit was sent to it as a file that
                // is not open (`version: null`), and refused it: the edit moves onto the
                // buffer it opened.
                Some(current) if !document.changes_the_file() => {
                    out.push(onto_opened_buffer(document, current)?);
                    moved_any = true;
                }
                _ => out.push(document.clone()),
            }
            continue;
        };
        let Some(current) = store.get(&document.key) else { return Ok(None) };
        if document.create || document.delete || document.rename_to.is_some() {
            return Ok(None);
        }
        if current.session == session && current.version == version {
            out.push(document.clone());
            continue;
        }
        // Only the version moved, or the editor closed and opened the document again:
        // the text is the one the plan was made on. Neovim does both when it reloads
        // a buffer from disk that holds what the disk holds (after an agent wrote an
        // edit the person accepted there itself). The edit is offered again as it is.
        let unchanged = current.text == document.base;
        if current.session != session && !unchanged {
            return Ok(None);
        }
        let edits = if unchanged {
            Vec::new()
        } else {
            let Some(edits) = current.history.edits_since(version) else { return Ok(None) };
            edits
        };
        let from = Rev::Editor { session, version };
        let replacements = match history::rebase(&document.replacements, &edits) {
            Ok(replacements) => replacements,
            Err(touched) => {
                let snapshot = Snapshot {
                    editor_uri: current.editor_uri.clone(),
                    label: document.label.clone(),
                    text: current.text.clone(),
                    rev: Some(current.rev()),
                    open: Some((current.session, current.version)),
                    history: None,
                };
                let rebase = Rebase { from, text: document.base.clone(), edits };
                return Err(changed_under_quote(&snapshot, &rebase, &touched));
            }
        };
        moved_any = true;
        let now = PlanBase { editor_uri: document.editor_uri.clone(), ..now_of(document, current) };
        out.push(document.moved_onto(now, replacements));
    }
    Ok(moved_any.then_some(out))
}

/// A plan made on the disk's text moved onto the buffer the editor opened since: as
/// it is when the buffer holds that text, else merged three ways by lines (the disk
/// text as the base, the buffer as ours, the plan's result as theirs), as a change on
/// disk is merged into a buffer. A region the buffer changed too is a conflict, and
/// the edit is `stale`: never merged blind.
pub(crate) fn onto_opened_buffer(
    document: &PlannedDocument,
    current: &verbatim_engine::document::Document,
) -> Result<PlannedDocument, ProtocolError> {
    let replacements = if current.text == document.base {
        document.replacements.clone()
    } else {
        let merged =
            merge::merge(&document.base.to_string(), &current.text.to_string(), &document.predicted.to_string());
        if let Some(conflict) = merged.conflicts.first() {
            let lines = &conflict.ours_lines;
            let lines = if lines.len() <= 1 {
                format!("line {}", lines.start + 1)
            } else {
                format!("lines {}-{}", lines.start + 1, lines.end)
            };
            return Err(ProtocolError::new(
                ErrorKind::Stale,
                format!(
                    "{} was opened in the editor while the edit was on its way, and the buffer differs from the file \
                     you read where the edit goes ({lines} of the buffer). Nothing was applied; read it again (now \
                     from the editor) and redo the edit against its text.",
                    document.label
                ),
            )
            .with("baseRev", document.base_rev.map(|rev| rev.to_string()))
            .with("currentRev", current.rev().to_string()));
        }
        merged.replacements
    };
    Ok(document.moved_onto(now_of(document, current), replacements).with_hunk_notes(Default::default()))
}

/// The open document as it is now, as a plan's base.
fn now_of(document: &PlannedDocument, current: &verbatim_engine::document::Document) -> PlanBase {
    PlanBase {
        key: document.key.clone(),
        editor_uri: current.editor_uri.clone(),
        label: document.label.clone(),
        text: current.text.clone(),
        rev: Some(current.rev()),
        open: Some((current.session, current.version)),
    }
}
