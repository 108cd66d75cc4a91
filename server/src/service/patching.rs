//! `verbatim/applyPatch`: a patch in one of the dialects of [`verbatim_engine::patch`] becomes
//! one quote-addressed plan over every file it names, applied through the editor in
//! one WorkspaceEdit, or not at all.
//!
//! It takes the same path as `verbatim/batchEdit`: the write lanes of every file
//! (sources and move targets), one snapshot of them all, hunks planned by the rules
//! of every quote ([`verbatim_engine::hunk`]), overlaps refused, then a dry run or the editor.
//! Unlike a batch, every failing part of the patch is reported (with its line in
//! the patch and near-miss feedback), not only the first.
//!
//! Paths: an absolute path (or a `file:` URI) is taken as it is. A relative path is
//! resolved against the workspace folders: with one folder, against it; with
//! several, against the one in which the file exists (open in the editor or on
//! disk), refused when it exists in more than one; a file that exists in none (a
//! new file) goes to the first folder. The path rules of [`crate::service::access`] apply to
//! every file the patch writes, deletes or moves a file to, as for every method.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::hunk::{HunkRules, plan_hunks};
use verbatim_engine::normalize::Normalization;
use verbatim_engine::patch::{self, FileChange, FileOperation, Hunk};
use verbatim_engine::plan::{PlanError, Replacement, sort_disjoint};
use verbatim_engine::workspace::Workspace;

use crate::service::deliver::deliver;
use crate::service::deliver::planned::PlannedDocument;
use crate::service::diagnostics::Ask;
use crate::service::edits::{explain, planned_document};
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::protocol::{ApplyPatchParams, ApplyPatchResult};
use crate::service::registry::AgentInfo;
use crate::service::snapshot::{Snapshot, take_snapshots};
use crate::service::state::State;

/// Applies a patch (or computes what it would do).
pub async fn apply_patch(
    state: &Arc<State>,
    agent: &AgentInfo,
    params: ApplyPatchParams,
) -> Result<ApplyPatchResult, ProtocolError> {
    let agent = &agent.for_write(None, params.turn.as_deref());
    let parsed = parse(&params)?;
    let workspace = state.workspace();
    let targets = resolve_all(&parsed.operations, &|path, line| resolve(state, &workspace, path, line))?;
    if !params.dry_run {
        // Every file the patch writes, deletes or moves to obeys the path rules.
        let policy = state.path_policy();
        let workspace = state.workspace();
        for (key, line, path) in targets.iter().flat_map(Target::files) {
            policy.check_write(key, &workspace).map_err(|error| at_line(error, line, path))?;
        }
        if state.editor().is_none() {
            return Err(ProtocolError::editor_unavailable());
        }
    }
    let mut lane_keys: Vec<DocKey> = targets.iter().flat_map(Target::files).map(|(key, ..)| key.clone()).collect();
    lane_keys.sort();
    lane_keys.dedup();
    let _lanes = if params.dry_run { Vec::new() } else { state.lock_lanes(&lane_keys).await };
    let snapshots = take_snapshots(state, &lane_keys, true).map_err(|(error, index)| {
        let file = lane_keys
            .get(index)
            .and_then(|failed| targets.iter().flat_map(Target::files).find(|(key, ..)| *key == failed));
        match file {
            Some((_, line, path)) => at_line(error, line, path),
            None => error,
        }
    })?;
    let explain = |key: &DocKey, snapshot: &Snapshot, error: PlanError| explain(state, key, snapshot, agent, error);
    let planned = plan_patch(&targets, &snapshots, params.exact, &explain)?;
    let ask = Ask::of(params.diagnostics, params.diagnostics_timeout_ms, agent);
    let outcome = deliver(state, agent, &planned, &params.summary, params.dry_run, ask).await?;
    Ok(ApplyPatchResult {
        applied: outcome.applied,
        dry_run: params.dry_run,
        modified_by_editor: outcome.documents.iter().any(|document| document.modified_by_editor),
        format: parsed.format.as_str().to_owned(),
        partial: outcome.documents.iter().any(|document| document.partial),
        reason: outcome.reason,
        diagnostics: outcome.diagnostics,
        documents: outcome.documents,
    })
}

/// Parses the patch of `verbatim/applyPatch`: a malformed one is `invalidParams` with its line.
pub(crate) fn parse(params: &ApplyPatchParams) -> Result<patch::Patch, ProtocolError> {
    if params.summary.trim().is_empty() {
        return Err(ProtocolError::invalid_params(
            Some("summary"),
            "`summary` is empty: every write needs a one-line summary saying why, shown to the person who reviews it.",
        ));
    }
    patch::parse(&params.patch).map_err(|error| {
        ProtocolError::invalid_params(
            Some("patch"),
            format!("{error}. Nothing was applied; fix the patch and send it again."),
        )
        .with("line", error.line)
    })
}

/// Plans every file operation of a patch against one snapshot of its files; every
/// failing part is reported, and nothing is planned unless all of it is.
pub(crate) fn plan_patch(
    targets: &[Target<'_>],
    snapshots: &BTreeMap<DocKey, Snapshot>,
    exact: bool,
    explain: &dyn Fn(&DocKey, &Snapshot, PlanError) -> ProtocolError,
) -> Result<Vec<PlannedDocument>, ProtocolError> {
    let mut failures = Vec::new();
    let mut planned = Vec::new();
    for target in targets {
        let context = Planning { explain, snapshots, exact };
        match context.plan(target) {
            Ok(document) => planned.push(document),
            Err(mut more) => failures.append(&mut more),
        }
    }
    if !failures.is_empty() {
        return Err(combine(failures));
    }
    Ok(planned)
}

/// One file operation of the patch, with its files resolved.
pub(crate) struct Target<'a> {
    pub(crate) operation: &'a FileOperation,
    pub(crate) key: DocKey,
    pub(crate) move_to: Option<DocKey>,
}

impl Target<'_> {
    /// Every file the operation touches, with the patch line and path that name it.
    pub(crate) fn files(&self) -> Vec<(&DocKey, usize, &str)> {
        let mut files = vec![(&self.key, self.operation.line, self.operation.path.as_str())];
        if let (Some(key), FileChange::Update { move_to: Some((path, line)), .. }) =
            (&self.move_to, &self.operation.change)
        {
            files.push((key, *line, path.as_str()));
        }
        files
    }
}

/// Resolves the paths of every operation (`resolve` turns a path of the patch and its
/// line into a document); a file named by two operations is refused.
pub(crate) fn resolve_all<'a>(
    operations: &'a [FileOperation],
    resolve: &dyn Fn(&str, usize) -> Result<DocKey, ProtocolError>,
) -> Result<Vec<Target<'a>>, ProtocolError> {
    let mut targets: Vec<Target<'a>> = Vec::new();
    // Which line of the patch names each file, to refuse a file named twice.
    let mut named: BTreeMap<DocKey, usize> = BTreeMap::new();
    let mut claim = |key: &DocKey, line: usize, path: &str| -> Result<(), ProtocolError> {
        if let Some(first) = named.insert(key.clone(), line) {
            return Err(ProtocolError::invalid_params(
                Some("patch"),
                format!(
                    "patch line {line}: {path} is already changed by the part of the patch at line {first}. Nothing \
                     was applied; put every change to one file in one section."
                ),
            )
            .with("line", line));
        }
        Ok(())
    };
    for operation in operations {
        let key = resolve(&operation.path, operation.line)?;
        claim(&key, operation.line, &operation.path)?;
        let move_to = match &operation.change {
            FileChange::Update { move_to: Some((path, line)), .. } => {
                let target = resolve(path, *line)?;
                claim(&target, *line, path)?;
                Some(target)
            }
            _ => None,
        };
        targets.push(Target { operation, key, move_to });
    }
    Ok(targets)
}

/// The document a path of the patch names.
fn resolve(state: &State, workspace: &Workspace, path: &str, line: usize) -> Result<DocKey, ProtocolError> {
    let refuse = |message: String| ProtocolError::invalid_params(Some("patch"), message).with("line", line);
    if path.starts_with("file:") || Path::new(path).is_absolute() {
        return DocKey::parse(path).map_err(|error| refuse(format!("patch line {line}: {error}")));
    }
    let exists = |candidate: &Path| -> bool {
        candidate.exists()
            || DocKey::parse(&candidate.to_string_lossy()).is_ok_and(|key| state.documents.lock().get(&key).is_some())
    };
    let candidates: Vec<_> = workspace.folders().iter().map(|folder| folder.join(path)).collect();
    let chosen = match candidates.as_slice() {
        [] => {
            return Err(refuse(format!(
                "patch line {line}: {path} is a relative path, but the editor has no workspace folder to resolve it \
                 against. Write absolute paths."
            )));
        }
        [only] => only.clone(),
        several => {
            let existing: Vec<_> = several.iter().filter(|candidate| exists(candidate)).collect();
            match existing.as_slice() {
                [] => several[0].clone(),
                [one] => (*one).clone(),
                many => {
                    let listed: Vec<String> = many.iter().map(|candidate| candidate.display().to_string()).collect();
                    return Err(refuse(format!(
                        "patch line {line}: {path} exists in several workspace folders ({}). Write the absolute path of \
                         the one you mean.",
                        listed.join(", ")
                    )));
                }
            }
        }
    };
    DocKey::parse(&chosen.to_string_lossy()).map_err(|error| refuse(format!("patch line {line}: {error}")))
}

/// Why one part of the patch cannot be applied.
struct Failure {
    line: usize,
    path: String,
    error: ProtocolError,
}

/// What planning one file operation needs.
struct Planning<'a> {
    /// A refused plan as an error for the agent.
    explain: &'a dyn Fn(&DocKey, &Snapshot, PlanError) -> ProtocolError,
    snapshots: &'a BTreeMap<DocKey, Snapshot>,
    exact: bool,
}

impl Planning<'_> {
    /// Every file of the patch was snapshotted; a missing one is a bug, reported as such.
    fn snapshot(&self, key: &DocKey, operation: &FileOperation) -> Result<&Snapshot, Vec<Failure>> {
        self.snapshots.get(key).ok_or_else(|| {
            vec![Failure {
                line: operation.line,
                path: operation.path.clone(),
                error: ProtocolError::new(
                    ErrorKind::Io,
                    format!("internal error: {} was not read; nothing was applied. Please report this.", key.to_uri()),
                ),
            }]
        })
    }

    fn plan(&self, target: &Target<'_>) -> Result<PlannedDocument, Vec<Failure>> {
        let operation = target.operation;
        let snapshot = self.snapshot(&target.key, operation)?;
        let fail = |kind: ErrorKind, message: String| {
            vec![Failure {
                line: operation.line,
                path: operation.path.clone(),
                error: ProtocolError::new(kind, message).with("uri", target.key.to_uri()),
            }]
        };
        let label = &snapshot.label;
        let exists = snapshot.rev.is_some();
        match &operation.change {
            FileChange::Add { text } => {
                if exists {
                    return Err(fail(
                        ErrorKind::InvalidParams,
                        format!(
                            "*** Add File: {label} already exists. Use `*** Update File: {}` to change it (or delete it \
                             first in another patch).",
                            operation.path
                        ),
                    ));
                }
                Ok(self.document(target, snapshot, create(text), Default::default()))
            }
            FileChange::Delete => {
                if !exists {
                    return Err(fail(
                        ErrorKind::UnknownDocument,
                        format!("*** Delete File: {label} does not exist, so it cannot be deleted."),
                    ));
                }
                let replacements = vec![Replacement { range: 0..snapshot.text.len_bytes(), new_text: String::new() }];
                Ok(moved(PlannedDocument::delete(snapshot.plan_base(&target.key), replacements), target))
            }
            FileChange::Update { hunks, move_to } => {
                if !exists {
                    return Err(fail(
                        ErrorKind::UnknownDocument,
                        format!(
                            "*** Update File: {label} does not exist. Create it with `*** Add File: {}`.",
                            operation.path
                        ),
                    ));
                }
                let mut failures = Vec::new();
                if let (Some(target_key), Some((path, line))) = (&target.move_to, move_to) {
                    let destination = self.snapshot(target_key, operation)?;
                    if destination.rev.is_some() {
                        failures.push(Failure {
                            line: *line,
                            path: path.clone(),
                            error: ProtocolError::new(
                                ErrorKind::InvalidParams,
                                format!(
                                    "*** Move to: {} already exists; verbatim never overwrites a file by moving another \
                                     onto it. Choose another path, or delete that file first.",
                                    destination.label
                                ),
                            )
                            .with("uri", target_key.to_uri()),
                        });
                    }
                }
                // The hunks' failures are reported with the move's.
                match self.hunks(target, snapshot, hunks, true) {
                    Ok((replacements, normalizations)) if failures.is_empty() => {
                        Ok(self.document(target, snapshot, replacements, normalizations))
                    }
                    Ok(_) => Err(failures),
                    Err(more) => {
                        failures.extend(more);
                        Err(failures)
                    }
                }
            }
            FileChange::Replace { hunks } => {
                if !exists {
                    return match hunks.as_slice() {
                        [only] if only.old_lines.is_empty() => Ok(self.document(
                            target,
                            snapshot,
                            create(&lines_text(&only.new_lines)),
                            Default::default(),
                        )),
                        _ => Err(fail(
                            ErrorKind::UnknownDocument,
                            format!(
                                "{label} does not exist. To create it, send one block for it whose SEARCH part is empty; \
                                 otherwise check the path."
                            ),
                        )),
                    };
                }
                if let Some(empty) = hunks.iter().find(|hunk| hunk.old_lines.is_empty()) {
                    return Err(vec![Failure {
                        line: empty.line,
                        path: operation.path.clone(),
                        error: ProtocolError::new(
                            ErrorKind::EmptyQuote,
                            format!(
                                "the SEARCH part is empty, which creates a new file, but {label} exists. Put the lines \
                                 to replace in the SEARCH part."
                            ),
                        )
                        .with("quote", "oldLines"),
                    }]);
                }
                let (replacements, normalizations) = self.hunks(target, snapshot, hunks, false)?;
                Ok(self.document(target, snapshot, replacements, normalizations))
            }
        }
    }

    /// Plans the hunks of one file: every failing hunk is a failure.
    fn hunks(
        &self,
        target: &Target<'_>,
        snapshot: &Snapshot,
        hunks: &[Hunk],
        in_order: bool,
    ) -> Result<(Vec<Replacement>, BTreeSet<Normalization>), Vec<Failure>> {
        let path = &target.operation.path;
        let failure = |hunk: &Hunk, error: PlanError| Failure {
            line: hunk.line,
            path: path.clone(),
            error: (self.explain)(&target.key, snapshot, error),
        };
        let mut failures = Vec::new();
        let mut items = Vec::new();
        let mut normalizations = BTreeSet::new();
        let results = plan_hunks(&snapshot.text, hunks, HunkRules { in_order, exact: self.exact });
        for (index, (hunk, result)) in hunks.iter().zip(results).enumerate() {
            match result {
                Ok(planned) => {
                    normalizations.extend(planned.normalizations);
                    items.extend(planned.replacements.into_iter().map(|replacement| (index, replacement)));
                }
                Err(error) => failures.push(failure(hunk, error)),
            }
        }
        if !failures.is_empty() {
            return Err(failures);
        }
        match sort_disjoint(items) {
            Ok(replacements) => Ok((replacements, normalizations)),
            Err(PlanError::Overlap { first, second }) => {
                let (first, second) = (&hunks[first], &hunks[second]);
                Err(vec![Failure {
                    line: second.line,
                    path: path.clone(),
                    error: ProtocolError::new(
                        ErrorKind::Overlap,
                        format!(
                            "the hunks at patch lines {} and {} change overlapping text of {}. Merge them into one hunk.",
                            first.line, second.line, snapshot.label
                        ),
                    )
                    .with("lines", json!([first.line, second.line])),
                }])
            }
            Err(error) => Err(hunks.first().map(|hunk| vec![failure(hunk, error)]).unwrap_or_default()),
        }
    }

    fn document(
        &self,
        target: &Target<'_>,
        snapshot: &Snapshot,
        replacements: Vec<Replacement>,
        normalizations: BTreeSet<Normalization>,
    ) -> PlannedDocument {
        moved(planned_document(&target.key, snapshot, replacements, normalizations), target)
    }
}

/// The document moved where the patch says (`*** Move to:`), if it says.
fn moved(document: PlannedDocument, target: &Target<'_>) -> PlannedDocument {
    match &target.move_to {
        Some(to) => document.moving_to(to.clone()),
        None => document,
    }
}

/// The text of a new file, as one insertion.
fn create(text: &str) -> Vec<Replacement> {
    if text.is_empty() { Vec::new() } else { vec![Replacement { range: 0..0, new_text: text.to_owned() }] }
}

fn lines_text(lines: &[String]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

/// Says which part of the patch an error is about.
pub(crate) fn at_line(error: ProtocolError, line: usize, path: &str) -> ProtocolError {
    let message = format!("patch line {line} ({path}): {} Nothing was applied.", error.message);
    ProtocolError { message, ..error }.with("line", line).with("path", path)
}

/// Every failure of a patch as one error: the first failure's kind and data, and
/// all of them under `failures`.
fn combine(failures: Vec<Failure>) -> ProtocolError {
    let entries: Vec<Value> = failures
        .iter()
        .map(|failure| {
            let mut entry = Map::new();
            entry.insert("line".into(), json!(failure.line));
            entry.insert("path".into(), json!(failure.path));
            entry.insert("kind".into(), json!(failure.error.kind.as_str()));
            entry.insert("message".into(), json!(failure.error.message));
            entry.extend(failure.error.data.clone());
            Value::Object(entry)
        })
        .collect();
    let count = failures.len();
    let mut failures = failures.into_iter();
    let Some(first) = failures.next() else {
        return ProtocolError::new(ErrorKind::InvalidParams, "internal error: a patch failed without a reason");
    };
    let mut error = at_line(first.error, first.line, &first.path);
    if count > 1 {
        let rest: Vec<String> = failures
            .map(|failure| format!("- patch line {} ({}): {}", failure.line, failure.path, failure.error.message))
            .collect();
        error.message = format!(
            "{count} parts of the patch failed; nothing was applied.\n- {}\n{}",
            error.message.trim_end_matches(" Nothing was applied."),
            rest.join("\n")
        );
    }
    error.with("failures", entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_failure_names_its_line_and_several_are_all_listed() {
        let failure = |line: usize, kind: ErrorKind, message: &str| Failure {
            line,
            path: "src/a.rs".into(),
            error: ProtocolError::new(kind, message).with("quote", "oldLines"),
        };
        let one = combine(vec![failure(4, ErrorKind::NotFound, "oldLines was not found.")]);
        assert_eq!(one.kind, ErrorKind::NotFound);
        assert_eq!(one.message, "patch line 4 (src/a.rs): oldLines was not found. Nothing was applied.");
        assert_eq!(one.data["line"], 4);
        assert_eq!(one.data["quote"], "oldLines");
        let two =
            combine(vec![failure(4, ErrorKind::NotFound, "not found."), failure(9, ErrorKind::Ambiguous, "twice.")]);
        assert_eq!(two.kind, ErrorKind::NotFound);
        assert_eq!(
            two.message,
            "2 parts of the patch failed; nothing was applied.\n- patch line 4 (src/a.rs): not found.\n- patch line 9 (src/a.rs): twice."
        );
        assert_eq!(
            two.data["failures"][1],
            json!({"line": 9, "path": "src/a.rs", "kind": "ambiguous", "message": "twice.", "quote": "oldLines"})
        );
    }

    #[test]
    fn new_file_text_is_one_insertion() {
        assert_eq!(create(""), vec![]);
        assert_eq!(lines_text(&["a".into(), "".into()]), "a\n\n");
    }
}
