//! Watching the files of open documents for changes made outside the editor.
//!
//! Every directory that holds an open document is watched, not recursively, with
//! `notify` (inotify on Linux), so that atomic writes (a temporary file renamed over
//! the target, as most agents write) are seen as well as writes in place. Nothing is
//! polled: an idle server waits on the kernel. Events are kept only for the paths of
//! open documents, and only when they can change content (reads, opens and metadata
//! changes are ignored, so reading a file never wakes the watcher again). Each path
//! is debounced: it is handled once it has been quiet for [`QUIET`], or at the latest
//! [`MAX_DELAY`] after its first event, so a burst of writes gives one look at the
//! final content. Handling a path is [`crate::service::external::on_disk_change`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio::time::Instant;

use verbatim_engine::doc_key::DocKey;

use crate::service::state::State;

/// How long a path must be quiet before it is read.
pub const QUIET: Duration = Duration::from_millis(15);
/// The longest a path that keeps changing waits before it is read anyway.
pub const MAX_DELAY: Duration = Duration::from_millis(150);
/// How long a path that was moved away or removed waits: the kernel reports the two
/// halves of a rename separately, and the new name tells a move from a deletion.
pub const GONE_QUIET: Duration = Duration::from_millis(60);

/// The watcher, and which documents it watches. Watches are added synchronously
/// (in the ordered sync path, before the file's baseline is read), so a write that
/// follows a `didOpen` is never missed.
pub struct DiskWatch {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    watcher: RecommendedWatcher,
    watched: Watched,
}

impl std::fmt::Debug for DiskWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DiskWatch")
    }
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl DiskWatch {
    /// Starts the watcher and its task, which ends when the state is gone.
    pub fn start(state: &Arc<State>) -> notify::Result<Self> {
        let (events_tx, events) = mpsc::unbounded_channel::<notify::Result<Event>>();
        let watcher = notify::recommended_watcher(move |event| {
            let _ = events_tx.send(event);
        })?;
        let inner = Arc::new(Mutex::new(Inner { watcher, watched: Watched::default() }));
        tokio::spawn(run(Arc::downgrade(state), Arc::downgrade(&inner), events));
        Ok(Self { inner })
    }

    /// Starts watching an open document's file (again, after a save, if its directory
    /// could not be watched before).
    pub fn watch(&self, key: &DocKey) {
        let mut inner = lock(&self.inner);
        let Inner { watcher, watched } = &mut *inner;
        watched.add(watcher, key.clone());
    }

    /// Stops watching a closed document's file.
    pub fn unwatch(&self, key: &DocKey) {
        let mut inner = lock(&self.inner);
        let Inner { watcher, watched } = &mut *inner;
        watched.remove(watcher, key);
    }
}

impl crate::service::external_state::FileWatch for DiskWatch {
    fn watch(&self, key: &DocKey) {
        DiskWatch::watch(self, key);
    }

    fn unwatch(&self, key: &DocKey) {
        DiskWatch::unwatch(self, key);
    }
}

/// A path with events not handled yet.
struct Pending {
    key: DocKey,
    first: Instant,
    last: Instant,
    /// [`QUIET`], or [`GONE_QUIET`] once the file was moved away or removed.
    quiet: Duration,
    /// Where a rename took the file, if one did.
    moved_to: Option<PathBuf>,
}

impl Pending {
    fn due(&self) -> Instant {
        (self.last + self.quiet).min(self.first + MAX_DELAY)
    }
}

/// What the watcher task keeps.
#[derive(Default)]
struct Watched {
    /// Open documents by path, with how many times each is open.
    files: HashMap<PathBuf, (DocKey, usize)>,
    /// Directories of open files.
    dirs: HashMap<PathBuf, DirWatch>,
}

#[derive(Default)]
struct DirWatch {
    /// How many open files it holds.
    files: usize,
    /// Whether the watch is in place.
    watching: bool,
}

async fn run(
    state: Weak<State>,
    inner: Weak<Mutex<Inner>>,
    mut events: mpsc::UnboundedReceiver<notify::Result<Event>>,
) {
    let mut pending: HashMap<PathBuf, Pending> = HashMap::new();
    loop {
        let next_due = pending.values().map(Pending::due).min();
        tokio::select! {
            event = events.recv() => match event {
                None => return,
                Some(Ok(event)) => {
                    let Some(inner) = inner.upgrade() else { return };
                    note(&lock(&inner).watched, &mut pending, &event, Instant::now());
                }
                Some(Err(error)) => tracing::warn!("file watcher: {error}"),
            },
            () = sleep_until(next_due) => {
                let Some(state) = state.upgrade() else { return };
                for entry in take_due(&mut pending, Instant::now()) {
                    tokio::spawn(crate::service::external::on_disk_change(state.clone(), entry.key, entry.moved_to));
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

impl Watched {
    fn add(&mut self, watcher: &mut RecommendedWatcher, key: DocKey) {
        let Some(path) = key.path().map(Path::to_path_buf) else { return };
        let Some(dir) = path.parent().map(Path::to_path_buf) else { return };
        let file = self.files.entry(path).or_insert((key, 0));
        file.1 += 1;
        let dir_entry = self.dirs.entry(dir.clone()).or_default();
        if file.1 == 1 {
            dir_entry.files += 1;
        }
        // A directory that could not be watched (it did not exist yet) is tried again
        // whenever one of its documents opens or is saved.
        if !dir_entry.watching {
            match watcher.watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => dir_entry.watching = true,
                Err(error) => tracing::debug!("cannot watch {} yet: {error}", dir.display()),
            }
        }
    }

    fn remove(&mut self, watcher: &mut RecommendedWatcher, key: &DocKey) {
        let Some(path) = key.path() else { return };
        let Some((_, count)) = self.files.get_mut(path) else { return };
        *count -= 1;
        if *count > 0 {
            return;
        }
        self.files.remove(path);
        let Some(dir) = path.parent() else { return };
        if let Some(entry) = self.dirs.get_mut(dir) {
            entry.files -= 1;
            if entry.files == 0 {
                if entry.watching {
                    let _ = watcher.unwatch(dir);
                }
                self.dirs.remove(dir);
            }
        }
    }
}

/// Whether an event can change what a file holds.
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
    }
}

/// Removes and returns the paths whose wait is over at `now`.
fn take_due(pending: &mut HashMap<PathBuf, Pending>, now: Instant) -> Vec<Pending> {
    pending.extract_if(|_, entry| entry.due() <= now).map(|(_, entry)| entry).collect()
}

/// Records an event, seen at `now`, against the open documents it names.
fn note(watched: &Watched, pending: &mut HashMap<PathBuf, Pending>, event: &Event, now: Instant) {
    if !changes_content(&event.kind) {
        return;
    }
    let renamed = matches!(event.kind, EventKind::Modify(ModifyKind::Name(RenameMode::Both)));
    for (index, path) in event.paths.iter().enumerate() {
        let Some((key, _)) = watched.files.get(path) else { continue };
        let entry = pending.entry(path.clone()).or_insert_with(|| Pending {
            key: key.clone(),
            first: now,
            last: now,
            quiet: QUIET,
            moved_to: None,
        });
        entry.last = now;
        if matches!(event.kind, EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From))) {
            entry.quiet = GONE_QUIET;
        }
        // A rename names the old path first and the new one second.
        if renamed && index == 0 {
            entry.moved_to = event.paths.get(1).cloned();
        } else if index == 1 {
            // Something was moved onto the file (an atomic write): it is not moved away.
            entry.moved_to = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use notify::event::{CreateKind, DataChange, MetadataKind, RemoveKind};

    use super::*;

    const FILE: &str = "/work/py.py";

    fn watched() -> Watched {
        let mut watched = Watched::default();
        let path = PathBuf::from(FILE);
        watched.files.insert(path.clone(), (DocKey::File(path), 1));
        watched
    }

    fn event(kind: EventKind, paths: &[&str]) -> Event {
        paths.iter().fold(Event::new(kind), |event, path| event.add_path(PathBuf::from(path)))
    }

    /// An atomic write: the temporary file renamed over the target.
    fn atomic_write() -> Event {
        event(EventKind::Modify(ModifyKind::Name(RenameMode::Both)), &["/work/py.tmp-agent", FILE])
    }

    /// Feeds events at the given offsets (ms), handling what falls due in between as
    /// the watcher task does; returns what was handled, with when.
    fn replay(events: &[(u64, Event)]) -> Vec<(u64, Pending)> {
        let watched = watched();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut pending = HashMap::new();
        let mut handled = Vec::new();
        let mut flush = |pending: &mut HashMap<PathBuf, Pending>, until: Instant| {
            while let Some(due) = pending.values().map(Pending::due).min().filter(|due| *due <= until) {
                let ms = u64::try_from((due - start).as_millis()).unwrap_or(u64::MAX);
                handled.extend(take_due(pending, due).into_iter().map(|entry| (ms, entry)));
            }
        };
        for (ms, event) in events {
            flush(&mut pending, at(*ms));
            note(&watched, &mut pending, event, at(*ms));
        }
        flush(&mut pending, at(u64::MAX / 4_000_000));
        handled
    }

    #[test]
    fn a_burst_of_writes_is_read_once_quiet_or_at_the_latest_after_max_delay() {
        // 50 atomic writes 5 ms apart: 245 ms of writes, read at 150 ms and once quiet.
        let burst: Vec<_> = (0..50).map(|round| (round * 5, atomic_write())).collect();
        let handled = replay(&burst);
        let times: Vec<u64> = handled.iter().map(|(ms, _)| *ms).collect();
        assert_eq!(times, vec![150, 245 + 15]);
        assert!(handled.iter().all(|(_, entry)| entry.moved_to.is_none()), "an atomic write is not a move");
    }

    #[test]
    fn writes_further_apart_than_quiet_are_each_read() {
        let writes: Vec<_> = (0..4)
            .map(|round| (round * 40, event(EventKind::Modify(ModifyKind::Data(DataChange::Any)), &[FILE])))
            .collect();
        let times: Vec<u64> = replay(&writes).iter().map(|(ms, _)| *ms).collect();
        assert_eq!(times, vec![15, 55, 95, 135]);
    }

    #[test]
    fn a_move_away_waits_longer_and_names_where_the_file_went() {
        let moved = [(0, event(EventKind::Modify(ModifyKind::Name(RenameMode::Both)), &[FILE, "/work/elsewhere.py"]))];
        let handled = replay(&moved);
        assert_eq!(handled.len(), 1);
        assert_eq!(handled[0].1.moved_to, Some(PathBuf::from("/work/elsewhere.py")));

        let removed = replay(&[(0, event(EventKind::Remove(RemoveKind::File), &[FILE]))]);
        assert_eq!(removed.iter().map(|(ms, _)| *ms).collect::<Vec<_>>(), vec![GONE_QUIET.as_millis() as u64]);

        // Removed, then written again (an editor's save by delete and create): read as a change.
        let recreated = replay(&[
            (0, event(EventKind::Remove(RemoveKind::File), &[FILE])),
            (2, event(EventKind::Create(CreateKind::File), &[FILE])),
        ]);
        assert_eq!(recreated.len(), 1);
        assert!(recreated[0].1.moved_to.is_none());
    }

    #[test]
    fn reads_metadata_changes_and_other_files_are_ignored() {
        let ignored = [
            (0, event(EventKind::Access(AccessKind::Open(AccessMode::Read)), &[FILE])),
            (1, event(EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)), &[FILE])),
            (2, event(EventKind::Modify(ModifyKind::Data(DataChange::Any)), &["/work/other.py"])),
        ];
        assert!(replay(&ignored).is_empty());
    }
}
