//! The document store: every document the editor has open, keyed by [`DocKey`].
//!
//! The service shares it between connections behind a plain mutex with a change
//! signal (`SharedDocuments` in the verbatim crate's `service::state`); the store itself
//! is plain data and knows nothing of locks or async.

use std::collections::HashMap;

use ropey::Rope;

use crate::doc_key::DocKey;
use crate::document::Document;
use crate::plan::Replacement;
use crate::position::PositionEncoding;
use crate::text_change::TextChange;
use crate::unsent::Reconciled;

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
        let document = Document::new(editor_uri, language_id, version, self.sessions, Rope::from_str(text));
        self.documents.insert(key, document);
    }

    pub fn change(
        &mut self,
        key: &DocKey,
        version: i32,
        changes: &[TextChange],
        encoding: PositionEncoding,
    ) -> Result<Option<Reconciled>, NotOpen> {
        let document = self.documents.get_mut(key).ok_or_else(|| NotOpen(key.clone()))?;
        Ok(document.apply_changes(changes, version, encoding))
    }

    /// Takes an edit the editor said it applied to `key` and has not sent (see
    /// [`Document::assume_applied`]). Ignored for a document that is not open.
    pub fn assume_applied(&mut self, key: &DocKey, replacements: Option<&[Replacement]>, text: Rope, version: i32) {
        if let Some(document) = self.documents.get_mut(key) {
            document.assume_applied(replacements, text, version);
        }
    }

    /// Takes the editor's version of a document whose copy holds edits it has not
    /// sent (see [`Document::correct_unsent_version`]); says whether it changed.
    pub fn correct_unsent_version(&mut self, key: &DocKey, version: i32) -> bool {
        self.documents.get_mut(key).is_some_and(|document| document.correct_unsent_version(version))
    }

    /// Records what the file on disk holds while the buffer agrees with it (see
    /// [`Document::disk_baseline`]). Ignored for a document that is not open.
    pub fn set_disk_baseline(&mut self, key: &DocKey, baseline: Option<Rope>) {
        if let Some(document) = self.documents.get_mut(key) {
            document.set_disk_baseline(baseline);
        }
    }

    /// Records the text the editor was asked to reload a buffer from (see
    /// [`Document::reload_expected`]).
    pub fn expect_reload(&mut self, key: &DocKey, text: Rope) {
        if let Some(document) = self.documents.get_mut(key) {
            document.expect_reload(text);
        }
    }

    /// Records that the editor applied an edit to `key` it has not sent yet (see
    /// [`Document::awaits_editor_text`]).
    pub fn expect_applied_change(&mut self, key: &DocKey) {
        if let Some(document) = self.documents.get_mut(key) {
            document.expect_applied_change();
        }
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
