//! The document store: every document the editor has open, and a signal that
//! fires after every change so that waiters can re-check what they wait for.
//!
//! All access goes through [`SharedDocuments`], whose lock is a plain mutex held only
//! for synchronous work: no `.await` ever happens between reading and writing a
//! document, so changes are applied atomically and in the order they are handed in.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use ropey::Rope;
use tokio::sync::watch;

use crate::doc_key::DocKey;
use crate::document::{Document, TextChange};
use crate::position::PositionEncoding;

/// The open documents.
#[derive(Debug, Default)]
pub struct DocumentStore {
    documents: HashMap<DocKey, Document>,
    /// How many `didOpen`s have been seen; numbers each editing session.
    sessions: u64,
}

/// A change arrived for a document that is not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("didChange for {0}, which is not open: ignored (the editor must send didOpen first)")]
pub struct NotOpen(pub DocKey);

impl DocumentStore {
    pub fn open(&mut self, key: DocKey, editor_uri: String, language_id: String, version: i32, text: &str) {
        self.sessions += 1;
        let document =
            Document { editor_uri, language_id, version, session: self.sessions, text: Rope::from_str(text) };
        self.documents.insert(key, document);
    }

    pub fn change(
        &mut self,
        key: &DocKey,
        version: i32,
        changes: &[TextChange],
        encoding: PositionEncoding,
    ) -> Result<(), NotOpen> {
        let document = self.documents.get_mut(key).ok_or_else(|| NotOpen(key.clone()))?;
        document.apply_changes(changes, version, encoding);
        Ok(())
    }

    pub fn close(&mut self, key: &DocKey) {
        self.documents.remove(key);
    }

    pub fn get(&self, key: &DocKey) -> Option<&Document> {
        self.documents.get(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&DocKey, &Document)> {
        self.documents.iter()
    }

    pub fn len(&self) -> usize {
        self.documents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }
}

/// The store shared by every connection, with a change signal.
#[derive(Debug)]
pub struct SharedDocuments {
    store: Mutex<DocumentStore>,
    /// Counts mutations; every mutation sends the new count.
    generation: watch::Sender<u64>,
}

impl Default for SharedDocuments {
    fn default() -> Self {
        Self { store: Mutex::default(), generation: watch::Sender::new(0) }
    }
}

impl SharedDocuments {
    /// Locks the store for reading. Never hold the guard across an `.await`.
    pub fn lock(&self) -> MutexGuard<'_, DocumentStore> {
        // A panic while holding the lock cannot leave a document half-changed
        // (ropey edits are applied whole), so a poisoned lock is still usable.
        self.store.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Mutates the store and wakes every waiter.
    pub fn update<R>(&self, mutate: impl FnOnce(&mut DocumentStore) -> R) -> R {
        let result = mutate(&mut self.lock());
        self.generation.send_modify(|generation| *generation += 1);
        result
    }

    /// A receiver that sees a new value after every mutation.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}
