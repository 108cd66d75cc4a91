//! What the server keeps about changes made on disk outside the editor, besides each
//! document's disk baseline: the watcher, the changes the person rejected, and the
//! saves in progress. Plain data the shared state holds; `external.rs` acts on it.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use verbatim_engine::doc_key::DocKey;

/// Watches the files of open documents and hands each change to [`crate::service::external::on_disk_change`]
/// ([`crate::transport::disk_watch`] is the one in use). The service only asks it to
/// watch and unwatch, so it never depends on how the watching is done.
pub trait FileWatch: Send + Sync + std::fmt::Debug {
    fn watch(&self, key: &DocKey);
    fn unwatch(&self, key: &DocKey);
}

/// What the server keeps about changes on disk, besides each document's baseline.
#[derive(Debug, Default)]
pub struct ExternalChangesState {
    /// The watcher; `None` until the editor initializes, and when it said `off`.
    pub(crate) watch: Mutex<Option<Box<dyn FileWatch>>>,
    /// Documents whose last offered change on disk the person rejected, with its
    /// summary: a later save writes over it, and is journaled as such.
    pub(crate) rejected: Mutex<HashMap<DocKey, String>>,
    /// Documents the editor said it is saving (`willSave`), and since when: until their
    /// `didSave` the file may be half written (VS Code writes in place), so a change
    /// seen on disk meanwhile is looked at only once the save is done.
    pub(crate) saving: Mutex<HashMap<DocKey, std::time::Instant>>,
    /// Woken at every `didSave`.
    pub(crate) saved: tokio::sync::Notify,
}

impl ExternalChangesState {
    /// Starts watching with `start` (called once the editor's options are known, by
    /// the transport that owns the watcher); a second call keeps the first watcher.
    pub fn start_with<W: FileWatch + 'static>(&self, start: impl FnOnce() -> std::io::Result<W>) {
        let mut watch = lock(&self.watch);
        if watch.is_none() {
            match start() {
                Ok(started) => *watch = Some(Box::new(started)),
                Err(error) => tracing::error!("cannot watch files for changes made outside the editor: {error}"),
            }
        }
    }

    pub(crate) fn is_watching(&self) -> bool {
        lock(&self.watch).is_some()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
