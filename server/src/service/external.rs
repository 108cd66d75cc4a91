//! Changes made on disk outside the editor, turned into reviewable edits of the
//! live buffer.
//!
//! Every open document keeps a *disk baseline* ([`verbatim_engine::document::Document`]): what
//! the file held when the buffer last agreed with it. It is read at `didOpen`,
//! replaced by the text of every `didSave`, and moved on once a change on disk has
//! been offered. When the watcher ([`FileWatch`]) sees the file change, this module reads
//! it (under the document's write lane, so changes on disk and agent edits take
//! turns) and compares the three texts:
//! - the disk equals the baseline (a touch, a rewrite with the same content) or the
//!   buffer (the editor's own save): the baseline moves on, nothing is offered;
//! - the buffer equals the baseline (no unsaved changes): the editor is told to
//!   reload the file, as VS Code does by itself, so nothing is applied twice;
//! - otherwise the change baseline → disk is merged into the buffer three ways
//!   ([`verbatim_engine::merge`]); what does not overlap the person's unsaved changes is sent
//!   as one `workspace/applyEdit` (annotation `verbatim/disk/<id>`), reviewed or
//!   applied as the editor's `externalChanges` setting says. Overlapping regions keep
//!   the person's lines and are named in `verbatim/externalChange`, which the editor
//!   receives before the edit.
//!
//! A deleted or moved file is reported and no buffer changes; a file that is not text
//! or is larger than [`MAX_FILE_BYTES`] is logged and nothing is offered. Everything
//! is journaled with `source: "disk"`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ropey::Rope;
use verbatim_engine::diff::unified_diff_of_texts;
use verbatim_engine::disk::DiskError;
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::merge::{self, Conflict};

use crate::service::clock::now_rfc3339;
use crate::service::deliver::offer::apply_through_editor;
use crate::service::deliver::planned::{Offer, Origin, PlanBase, PlannedDocument};
use crate::service::deliver::report::report_and_journal;
use crate::service::error::ErrorKind;
use crate::service::journal::{DocumentTexts, Event, Outcome, RevertWrite, Source, WriteInfo};
use crate::service::protocol::{ExternalChangeKind, ExternalChangeParams, ExternalChanges, ExternalConflict, method};
use crate::service::registry::AgentInfo;
use crate::service::state::{EditorLink, State};

/// Files larger than this are not read when they change: logged, nothing offered.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// A change that conflicts everywhere is read once more after this long: the
/// editor's `didSave` of a file it just wrote may still be on its way.
const CONFLICT_RECHECK: Duration = Duration::from_millis(150);
/// How many times a change is merged again because the person typed meanwhile.
const MAX_ATTEMPTS: usize = 4;
/// The journal's session of every change made on disk outside the editor.
pub const DISK_SESSION: &str = "disk";
/// The name changes on disk go by, in the registry and the journal.
const DISK_AGENT: &str = "disk";

/// How long a change on disk waits for the `didSave` of a save the editor announced.
const SAVE_HOLD: Duration = Duration::from_secs(3);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `didOpen`: reads the file's baseline and watches it. Runs in the ordered sync path.
pub fn on_open(state: &State, key: &DocKey) {
    if !state.external.is_watching() {
        return;
    }
    // Watch first: a write between the read and the watch would be missed.
    if let Some(watch) = lock(&state.external.watch).as_ref() {
        watch.watch(key);
    }
    let baseline = key.path().and_then(read_baseline);
    // When the file holds what the buffer holds (as it usually does), the baseline is
    // kept as the buffer's version: it costs nothing until a change on disk needs it.
    state.documents.update(|store| store.set_disk_baseline(key, baseline));
}

/// `willSave`: the editor is about to write the file. Runs in the ordered sync path.
pub fn on_will_save(state: &State, key: &DocKey) {
    lock(&state.external.saving).insert(key.clone(), std::time::Instant::now());
}

/// Waits (at most [`SAVE_HOLD`] after its `willSave`) while the editor saves `key`.
async fn wait_for_save(state: &State, key: &DocKey) {
    loop {
        let saved = state.external.saved.notified();
        let since = lock(&state.external.saving).get(key).copied();
        let Some(since) = since else { return };
        let Some(left) = SAVE_HOLD.checked_sub(since.elapsed()) else {
            lock(&state.external.saving).remove(key);
            return;
        };
        if tokio::time::timeout(left, saved).await.is_err() {
            lock(&state.external.saving).remove(key);
            return;
        }
    }
}

/// `didSave`: the saved text is the new baseline. A save over a rejected change on
/// disk is journaled. Runs in the ordered sync path.
pub fn on_save(state: &State, key: &DocKey, text: Option<String>) {
    if lock(&state.external.saving).remove(key).is_some() {
        state.external.saved.notify_waiters();
    }
    if !state.external.is_watching() {
        return;
    }
    state.documents.update(|store| {
        let saved = match text {
            Some(text) => Some(Rope::from_str(&text)),
            None => store.get(key).map(|document| document.text.clone()),
        };
        // A client that decodes CRLF (Emacs) saves its LF buffer as CRLF: the baseline
        // is what the disk holds, so it keeps the file's CRLF (reads report it).
        let file_had_crlf = store.get(key).and_then(|document| document.disk_baseline()).is_some_and(|b| has_crlf(&b));
        let saved = match saved {
            Some(saved) if file_had_crlf && uses_lf_only(&saved) => {
                Some(Rope::from_str(&saved.to_string().replace('\n', "\r\n")))
            }
            saved => saved,
        };
        store.set_disk_baseline(key, saved);
    });
    if let Some(watch) = lock(&state.external.watch).as_ref() {
        watch.watch(key);
    }
    let Some(rejected) = lock(&state.external.rejected).remove(key) else { return };
    let summary = format!("Saved by the person over a change on disk they had rejected ({rejected})");
    record_event(state, key, Outcome::SavedOver, &summary, "");
}

/// `didClose`: stops watching the file.
pub fn on_close(state: &State, key: &DocKey) {
    lock(&state.external.rejected).remove(key);
    if let Some(watch) = lock(&state.external.watch).as_ref() {
        watch.unwatch(key);
    }
}

/// What the file held at `didOpen`: empty if it does not exist (a new file: whatever
/// appears on disk is all new), `None` if it cannot be read as text.
fn read_baseline(path: &Path) -> Option<Rope> {
    match read_disk(path) {
        DiskRead::Text(text) => Some(Rope::from_str(&text)),
        DiskRead::Missing => Some(Rope::new()),
        DiskRead::Unreadable(_) => None,
    }
}

pub(crate) enum DiskRead {
    Text(String),
    Missing,
    /// Not text, too large, or unreadable: why.
    Unreadable(String),
}

pub(crate) fn read_disk(path: &Path) -> DiskRead {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.len() > MAX_FILE_BYTES => {
            return DiskRead::Unreadable(format!(
                "it is larger than {} MiB ({} bytes)",
                MAX_FILE_BYTES / (1024 * 1024),
                metadata.len()
            ));
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return DiskRead::Missing,
        _ => {}
    }
    match verbatim_engine::disk::read_text(path) {
        Ok(disk) => DiskRead::Text(disk.text),
        Err(DiskError::Missing) => DiskRead::Missing,
        Err(error) => DiskRead::Unreadable(error.to_string()),
    }
}

/// Whether to look at the disk again.
enum Next {
    Done,
    Again,
}

/// Handles a change the watcher saw on an open document's file.
pub async fn on_disk_change(state: Arc<State>, key: DocKey, moved_to: Option<PathBuf>) {
    let Some(path) = key.path().map(Path::to_path_buf) else { return };
    let _lane = state.lock_lanes(std::slice::from_ref(&key)).await;
    let mut rechecked = false;
    for _ in 0..MAX_ATTEMPTS {
        wait_for_save(&state, &key).await;
        let Some(link) = state.editor() else { return };
        if link.options.external_changes == ExternalChanges::Off {
            return;
        }
        let read = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || read_disk(&path)).await
        };
        let read = match read {
            Ok(read) => read,
            Err(error) => {
                tracing::error!("reading {} after a change on disk failed: {error}; nothing offered", path.display());
                return;
            }
        };
        let next = match read {
            DiskRead::Text(disk) => merge_into_buffer(&state, &link, &key, disk, &mut rechecked).await,
            DiskRead::Missing => {
                gone(&state, &link, &key, moved_to.as_deref()).await;
                Next::Done
            }
            DiskRead::Unreadable(why) => {
                tracing::info!("{} changed on disk, but {why}: nothing offered", path.display());
                Next::Done
            }
        };
        match next {
            Next::Done => return,
            Next::Again => {}
        }
    }
    tracing::info!("{} kept changing while its change on disk was merged: gave up for now", path.display());
}

/// `disk` with CRLF line endings turned into LF when the buffer has lines and holds
/// no CR at all: the editor decoded the file's line endings (Emacs does).
fn in_editor_form(disk: String, buffer: &Rope) -> String {
    if disk.contains("\r\n") && uses_lf_only(buffer) { disk.replace("\r\n", "\n") } else { disk }
}

fn uses_lf_only(buffer: &Rope) -> bool {
    let mut bytes = buffer.bytes();
    let mut has_lf = false;
    for byte in bytes.by_ref() {
        match byte {
            b'\r' => return false,
            b'\n' => has_lf = true,
            _ => {}
        }
    }
    has_lf
}

fn has_crlf(text: &Rope) -> bool {
    let mut previous = 0u8;
    text.bytes().any(|byte| {
        let found = previous == b'\r' && byte == b'\n';
        previous = byte;
        found
    })
}

/// How long a plain client's clean buffer waits for a change it has not sent before
/// a change on disk is taken for one to reload.
const PLAIN_CLIENT_SETTLE: Duration = Duration::from_millis(700);

/// Whether the document's version moves from `version` within `wait`.
async fn version_moves(state: &State, key: &DocKey, version: i32, wait: Duration) -> bool {
    state.documents.wait_until(wait, |store| store.get(key).is_none_or(|document| document.version != version)).await
}

/// The buffer as it is now.
struct Live {
    text: Rope,
    baseline: Option<Rope>,
    rev: verbatim_engine::rev::Rev,
    session: u64,
    version: i32,
    editor_uri: String,
}

fn live(state: &State, key: &DocKey) -> Option<Live> {
    let store = state.documents.lock();
    let document = store.get(key)?;
    Some(Live {
        text: document.text.clone(),
        baseline: document.disk_baseline(),
        rev: document.rev(),
        session: document.session,
        version: document.version,
        editor_uri: document.editor_uri.clone(),
    })
}

async fn merge_into_buffer(
    state: &Arc<State>,
    link: &EditorLink,
    key: &DocKey,
    disk: String,
    rechecked: &mut bool,
) -> Next {
    match compare(state, link, key, disk).await {
        Ok(change) => offer_merged(state, link, key, change, rechecked).await,
        Err(next) => next,
    }
}

/// A change on disk that only a merge into the buffer can bring in.
struct ToMerge {
    live: Live,
    baseline: Rope,
    /// The disk's text in the buffer's form (LF where the buffer holds LF).
    disk: String,
    /// The disk's text as it is.
    raw_disk: String,
    label: String,
}

/// Compares the buffer, its baseline and the disk: a change that needs no merge is
/// dealt with here (a touch, the agent's announced write, the editor's own save, a
/// reload of a clean buffer, no baseline to merge against); `Err` says what is next.
async fn compare(state: &Arc<State>, link: &EditorLink, key: &DocKey, disk: String) -> Result<ToMerge, Next> {
    let Some(mut live) = live(state, key) else { return Err(Next::Done) };
    // An editor that decodes CRLF files (Emacs) holds LF where the disk holds CRLF:
    // compare and merge in the form the buffer uses, so a save is not a change.
    let raw_disk = disk.clone();
    let disk = in_editor_form(disk, &live.text);
    live.baseline = live.baseline.map(|baseline| {
        if has_crlf(&baseline) && uses_lf_only(&live.text) {
            Rope::from_str(&baseline.to_string().replace("\r\n", "\n"))
        } else {
            baseline
        }
    });
    let label = state.workspace().label(key);
    tracing::debug!(
        document = %label,
        version = live.version,
        disk = %verbatim_engine::rev::Rev::of_bytes(disk.as_bytes()),
        baseline = ?live.baseline.as_ref().map(|text| verbatim_engine::rev::Rev::of_bytes(text.to_string().as_bytes()).to_string()),
        "a change on disk to compare"
    );
    // The baseline is what the file holds, CRLF and all (it is compared in the
    // buffer's form above), so that reads report the file's line ending.
    let set_baseline = |text: &str| {
        let text = Rope::from_str(text);
        state.documents.update(|store| store.set_disk_baseline(key, Some(text)));
    };
    if live.baseline.as_ref().is_some_and(|baseline| *baseline == disk.as_str()) {
        // A touch, or a rewrite with the same content: nothing changed.
        return Err(Next::Done);
    }
    if state.agent_writes.take_if_expected(key, &raw_disk) {
        written_as_expected(state, key, &raw_disk).await;
        return Err(Next::Done);
    }
    if live.text == disk.as_str() {
        // The editor's own save (its didSave may still be on its way), or a change the
        // buffer already holds: the buffer agrees with the disk again.
        set_baseline(&raw_disk);
        tell(
            link,
            &live.editor_uri,
            ExternalChangeKind::Synced,
            &[],
            None,
            format!("{label} on disk now matches the buffer."),
        )
        .await;
        return Err(Next::Done);
    }
    let Some(baseline) = live.baseline.clone() else {
        // The file could not be read at didOpen: there is no base to merge against.
        set_baseline(&raw_disk);
        let message = format!(
            "{label} changed on disk, but what it held when opened is unknown, so the change cannot be merged. \
             Compare the buffer with the file on disk."
        );
        record_event(state, key, Outcome::Conflict, &message, "");
        tell(link, &live.editor_uri, ExternalChangeKind::Conflict, &[], None, message).await;
        return Err(Next::Done);
    };
    if live.text == baseline && link.options.verbatim_extensions {
        // No unsaved changes: the editor reloads the file (VS Code does by itself). The
        // baseline moves on when the reload arrives (see `Document::reload_expected`).
        let expected = Rope::from_str(&disk);
        state.documents.update(|store| store.expect_reload(key, expected));
        let diff = unified_diff_of_texts(&baseline.to_string(), &disk, &format!("a/{label}"), &format!("b/{label}"));
        let message = format!("{label} changed on disk; the buffer had no unsaved changes, so it is reloaded.");
        let texts = DocumentTexts { before: Some(baseline.clone()), after: Some(Rope::from_str(&disk)) };
        let summary = format!("Changed on disk outside the editor: {label}");
        record_change(state, key, Outcome::Reloaded, &summary, &diff, Some(&texts));
        tell(link, &live.editor_uri, ExternalChangeKind::Reload, &[], None, message).await;
        return Err(Next::Done);
    }
    if live.text == baseline && !link.options.verbatim_extensions {
        // A plain client may write the file before it sends the change it saved (Eglot
        // holds changes for an idle timer and sends them with didSave): give that change
        // a moment before taking the buffer for clean and reloading it.
        if version_moves(state, key, live.version, PLAIN_CLIENT_SETTLE).await {
            return Err(Next::Again);
        }
    }

    Ok(ToMerge { live, baseline, disk, raw_disk, label })
}

/// Merges the change into the buffer three ways and offers what does not overlap the
/// person's unsaved changes; the overlaps are named and keep the person's lines.
async fn offer_merged(
    state: &Arc<State>,
    link: &EditorLink,
    key: &DocKey,
    change: ToMerge,
    rechecked: &mut bool,
) -> Next {
    let ToMerge { live, baseline, disk, raw_disk, label } = change;
    let set_baseline = |text: &str| {
        let text = Rope::from_str(text);
        state.documents.update(|store| store.set_disk_baseline(key, Some(text)));
    };
    let base_text = baseline.to_string();
    let live_text = live.text.to_string();
    let merged = {
        let disk = disk.clone();
        tokio::task::spawn_blocking(move || merge::merge(&base_text, &live_text, &disk)).await
    };
    let merged = match merged {
        Ok(merged) => merged,
        Err(error) => {
            tracing::error!("merging the change on disk to {label} failed: {error}; nothing offered");
            return Next::Done;
        }
    };
    let conflicts: Vec<ExternalConflict> = merged.conflicts.iter().map(to_wire).collect();
    let time = now_rfc3339();
    let clock = time.get(11..19).unwrap_or(&time);

    if merged.replacements.is_empty() {
        if merged.conflicts.is_empty() {
            // Both sides made the same changes.
            set_baseline(&raw_disk);
            return Next::Done;
        }
        if !*rechecked {
            // An editor's own save of a buffer still being typed in looks like this
            // until its didSave arrives: look again once it can have.
            *rechecked = true;
            tokio::time::sleep(CONFLICT_RECHECK).await;
            return Next::Again;
        }
        set_baseline(&raw_disk);
        let message = format!(
            "{label} changed on disk at {clock}, but every change overlaps your unsaved changes ({}): nothing was \
             applied. Compare the buffer with the file on disk.",
            describe(&merged.conflicts)
        );
        let diff = unified_diff_of_texts(&baseline.to_string(), &disk, &format!("a/{label}"), &format!("b/{label}"));
        record_event(state, key, Outcome::Conflict, &message, &diff);
        tell(link, &live.editor_uri, ExternalChangeKind::Conflict, &conflicts, None, message).await;
        return Next::Done;
    }

    let mut summary = format!("Changed on disk outside the editor: {label} (at {clock})");
    if !merged.conflicts.is_empty() {
        summary.push_str(&format!(
            "; {} kept as you have {} (changed on both sides)",
            describe(&merged.conflicts),
            if merged.conflicts.len() == 1 { "it" } else { "them" }
        ));
    }
    let base = PlanBase {
        key: key.clone(),
        editor_uri: live.editor_uri.clone(),
        label: label.clone(),
        text: live.text.clone(),
        rev: Some(live.rev),
        open: Some((live.session, live.version)),
    };
    let planned = PlannedDocument::edit(base, merged.replacements);
    let agent = disk_agent(link, &time);
    let message = if conflicts.is_empty() {
        format!("{label} changed on disk at {clock}: the change is merged with your unsaved changes.")
    } else {
        format!(
            "{label} changed on disk at {clock}: merged with your unsaved changes, except {}, which you changed too \
             and which stay as you have them.",
            describe(&merged.conflicts)
        )
    };
    tell(link, &live.editor_uri, ExternalChangeKind::Offered, &conflicts, None, message).await;
    let documents = [planned];
    let outcome = apply_through_editor(state, &agent, Origin::Disk, &summary, &documents, &mut Offer::default()).await;
    tracing::debug!(document = %label, outcome = ?outcome.as_ref().map(|_| ()).map_err(|error| error.kind), "the change on disk was answered");
    if outcome.as_ref().is_err_and(|error| error.kind == ErrorKind::Stale) {
        // The person typed while the offer was on its way: merge again with what they typed.
        return Next::Again;
    }
    match &outcome {
        Ok(_) => {
            set_baseline(&raw_disk);
            lock(&state.external.rejected).remove(key);
        }
        Err(error) if error.kind == ErrorKind::Rejected => {
            // The person has seen it and said no: the next change is merged from here.
            set_baseline(&raw_disk);
            lock(&state.external.rejected).insert(key.clone(), summary.clone());
        }
        Err(error) => tracing::info!("the change on disk to {label} was not applied: {}", error.message),
    }
    report_and_journal(state, &agent, &documents, &outcome, &disk_write(&summary));
    Next::Done
}

/// Who proposes a change made on disk: "disk", in its own session.
fn disk_agent(link: &EditorLink, time: &str) -> AgentInfo {
    AgentInfo {
        id: 0,
        name: DISK_AGENT.into(),
        version: None,
        connected_at: time.to_owned(),
        encoding: link.encoding,
        access: crate::service::access::Access::ReadWrite,
        options: Default::default(),
        session: DISK_SESSION.into(),
        turn: None,
    }
}

/// How a change made on disk and offered in the editor is journaled.
fn disk_write(summary: &str) -> WriteInfo<'_> {
    WriteInfo {
        source: Source::Disk,
        agent: DISK_AGENT,
        summary,
        commit: None,
        reason: None,
        diagnostics: None,
        session: DISK_SESSION,
        turn: None,
        revert: RevertWrite::default(),
    }
}

/// The announced write arrived: the disk holds the person's decision now, whatever
/// else they have unsaved.
pub(crate) async fn written_as_expected(state: &State, key: &DocKey, disk: &str) {
    let (Some(link), Some(live)) = (state.editor(), live(state, key)) else { return };
    let label = state.workspace().label(key);
    let text = Rope::from_str(disk);
    state.documents.update(|store| store.set_disk_baseline(key, Some(text)));
    let message = if live.text == disk {
        format!("{label} on disk now holds the edit you accepted, as the buffer does.")
    } else {
        format!("{label} on disk now holds the edit you accepted; your other changes are still unsaved.")
    };
    tell(&link, &live.editor_uri, ExternalChangeKind::Synced, &[], None, message).await;
}

/// The file is gone: reported, and the buffer left as it is.
async fn gone(state: &Arc<State>, link: &EditorLink, key: &DocKey, moved_to: Option<&Path>) {
    let Some(live) = live(state, key) else { return };
    let label = state.workspace().label(key);
    let moved_to = moved_to.filter(|target| target.exists());
    let (kind, outcome, message) = match moved_to {
        Some(target) => (
            ExternalChangeKind::Moved,
            Outcome::Moved,
            format!(
                "{label} was moved on disk to {}. The buffer is unchanged: save it to write it back under its old \
                 name, or close it.",
                target.display()
            ),
        ),
        None => (
            ExternalChangeKind::Deleted,
            Outcome::Deleted,
            format!("{label} was deleted on disk. The buffer is unchanged: save it to write it back, or close it."),
        ),
    };
    let target_uri = moved_to.map(|target| DocKey::File(target.to_path_buf()).to_uri());
    record_event(state, key, outcome, &message, "");
    tell(link, &live.editor_uri, kind, &[], target_uri, message).await;
}

fn to_wire(conflict: &Conflict) -> ExternalConflict {
    ExternalConflict {
        line: conflict.ours_lines.start + 1,
        end_line: conflict.ours_lines.end,
        disk_line: conflict.theirs_lines.start + 1,
        disk_end_line: conflict.theirs_lines.end,
    }
}

/// "line 4", "lines 4-6 and line 9", in the buffer's numbering.
pub(crate) fn describe(conflicts: &[Conflict]) -> String {
    let parts: Vec<String> = conflicts
        .iter()
        .map(|conflict| {
            let (start, end) = (conflict.ours_lines.start + 1, conflict.ours_lines.end);
            if end <= start { format!("line {start}") } else { format!("lines {start}-{end}") }
        })
        .collect();
    match parts.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn folder_of(state: &State, key: &DocKey) -> Option<PathBuf> {
    let workspace = state.workspace();
    key.path().and_then(|path| workspace.folder_of(path)).map(ToOwned::to_owned)
}

fn record_event(state: &State, key: &DocKey, outcome: Outcome, summary: &str, diff: &str) {
    record_change(state, key, outcome, summary, diff, None);
}

/// Journals an event that changed the document from one text to another (a reload).
fn record_change(
    state: &State,
    key: &DocKey,
    outcome: Outcome,
    summary: &str,
    diff: &str,
    texts: Option<&DocumentTexts>,
) {
    let Some(journal) = &state.journal else { return };
    let uri = key.to_uri();
    let event = Event {
        source: Source::Disk,
        agent: DISK_AGENT,
        summary,
        uri: &uri,
        outcome,
        diff,
        reason: None,
        session: DISK_SESSION,
        texts,
    };
    journal.record_event(folder_of(state, key).as_deref(), &event);
}

/// Sends `verbatim/externalChange`. What it reports is journaled first, so whoever
/// reads the journal after the notification finds it there.
async fn tell(
    link: &EditorLink,
    uri: &str,
    kind: ExternalChangeKind,
    conflicts: &[ExternalConflict],
    moved_to: Option<String>,
    message: String,
) {
    tracing::info!("{message}");
    if !link.options.verbatim_extensions {
        // A plain client knows no such notification (the merged edit, if any, reaches it
        // as a plain workspace/applyEdit; a clean buffer follows the disk the same way).
        return;
    }
    let params = ExternalChangeParams {
        uri: uri.to_owned(),
        kind,
        time: now_rfc3339(),
        conflicts: conflicts.to_vec(),
        moved_to,
        message,
    };
    link.client.send_notification::<ExternalChange>(params).await;
}

/// The `verbatim/externalChange` notification.
enum ExternalChange {}

impl tower_lsp_server::ls_types::notification::Notification for ExternalChange {
    type Params = ExternalChangeParams;
    const METHOD: &'static str = method::EXTERNAL_CHANGE;
}
