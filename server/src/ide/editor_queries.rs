//! What an agent's IDE protocol may ask about the editor, answered from the live
//! state the server already has (open documents, their disk baselines, the workspace,
//! the person's selection), or asked of the editor (diagnostics, saving, showing a
//! file). Plain data: each IDE protocol phrases it for its agent.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::ls_types::{Position, Range, ShowDocumentParams, Uri};

use verbatim_engine::doc_key::DocKey;

use crate::service::protocol::{SaveDocumentParams, SaveDocumentResult, method};
use crate::service::state::State;

/// An open document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenDocument {
    pub path: PathBuf,
    pub uri: String,
    pub language_id: String,
    /// The buffer differs from what the file held when they last agreed.
    pub dirty: bool,
    /// The document the person's latest selection is in.
    pub active: bool,
}

/// Every open file, the active one first.
pub fn open_documents(state: &State) -> Vec<OpenDocument> {
    let active = state.context.latest_selection().map(|selection| selection.path);
    let store = state.documents.lock();
    let mut documents: Vec<OpenDocument> = store
        .iter()
        .filter_map(|(key, document)| {
            let path = key.path()?.to_path_buf();
            Some(OpenDocument {
                active: active.as_ref() == Some(&path),
                uri: key.to_uri(),
                language_id: document.language_id.clone(),
                dirty: document.disk_baseline().is_none_or(|baseline| baseline != document.text),
                path,
            })
        })
        .collect();
    documents.sort_by_key(|document| !document.active);
    documents
}

/// Whether the open document at `path` has unsaved changes; `None` when it is not open.
pub fn is_dirty(state: &State, path: &Path) -> Option<bool> {
    let key = DocKey::parse(&path.to_string_lossy()).ok()?;
    let store = state.documents.lock();
    let document = store.get(&key)?;
    Some(document.disk_baseline().is_none_or(|baseline| baseline != document.text))
}

/// The editor's diagnostics for `path` (or every open document), raw as it answers
/// `verbatim/diagnostics`: `{documents: [{uri, diagnostics}]}`.
pub async fn diagnostics(state: &State, path: Option<&Path>) -> Result<Value, String> {
    let uris: Vec<String> = match path {
        Some(path) => {
            let key = DocKey::parse(&path.to_string_lossy()).map_err(|error| error.to_string())?;
            let store = state.documents.lock();
            match store.get(&key) {
                Some(document) => vec![document.editor_uri.clone()],
                None => return Err(format!("{} is not open in the editor", path.display())),
            }
        }
        None => state.documents.lock().iter().map(|(_, document)| document.editor_uri.clone()).collect(),
    };
    if uris.is_empty() {
        return Ok(serde_json::json!({"documents": []}));
    }
    crate::service::diagnostics::current(state, &uris).await
}

/// Asks the editor to save the open document at `path`.
pub async fn save(state: &State, path: &Path) -> Result<SaveDocumentResult, String> {
    let key = DocKey::parse(&path.to_string_lossy()).map_err(|error| error.to_string())?;
    let uri = state
        .documents
        .lock()
        .get(&key)
        .map(|document| document.editor_uri.clone())
        .ok_or_else(|| format!("{} is not open in the editor", path.display()))?;
    let link = state.editor().ok_or("no editor is connected")?;
    if !link.options.verbatim_extensions {
        // A plain LSP client knows no such request: it is not sent one.
        return Err("this editor (a plain LSP client) cannot save documents for an agent: save it in the editor".into());
    }
    let params = serde_json::to_value(SaveDocumentParams { uri }).map_err(|error| error.to_string())?;
    match link.client.send_request::<SaveDocument>(params).await {
        Ok(answer) => {
            serde_json::from_value(answer).map_err(|error| format!("the editor's answer is malformed: {error}"))
        }
        Err(error) if error.code == tower_lsp_server::jsonrpc::ErrorCode::MethodNotFound => {
            Err("this editor's Verbatim client cannot save documents for an agent".into())
        }
        Err(error) => Err(format!("the editor could not save it: {}", error.message)),
    }
}

/// Where to put the cursor when showing a file: the lines from the first line holding
/// `start` to the line holding `end` (after it), if given.
#[derive(Debug, Clone, Default)]
pub struct Show<'a> {
    pub start: Option<&'a str>,
    pub end: Option<&'a str>,
    pub take_focus: bool,
}

/// Asks the editor to show the file at `path` (`window/showDocument`).
pub async fn show(state: &Arc<State>, path: &Path, show: Show<'_>) -> Result<(), String> {
    let key = DocKey::parse(&path.to_string_lossy()).map_err(|error| error.to_string())?;
    state.path_policy().check_read(&key).map_err(|error| error.message)?;
    let text = state.documents.lock().get(&key).map(|document| document.text.to_string());
    let text = match text {
        Some(text) => text,
        None => verbatim_engine::disk::read_text(path).map(|disk| disk.text).map_err(|error| error.to_string())?,
    };
    let selection = show.start.and_then(|start| lines_between(&text, start, show.end));
    let uri: Uri = key.to_uri().parse().map_err(|_| format!("{} cannot be named as a URI", path.display()))?;
    let link = state.editor().ok_or("no editor is connected")?;
    let params = ShowDocumentParams { uri, external: Some(false), take_focus: Some(show.take_focus), selection };
    match link.client.show_document(params).await {
        Ok(true) => Ok(()),
        Ok(false) => Err("the editor could not show it".into()),
        Err(error) => Err(format!("the editor could not show it: {}", error.message)),
    }
}

/// The whole lines from the first holding `start` to the first after it holding `end`.
fn lines_between(text: &str, start: &str, end: Option<&str>) -> Option<Range> {
    if start.is_empty() {
        return None;
    }
    let start_at = text.find(start)?;
    let end_at = match end.filter(|end| !end.is_empty()) {
        Some(end) => start_at + text[start_at..].find(end)? + end.len(),
        None => start_at + start.len(),
    };
    let line_of = |offset: usize| u32::try_from(text[..offset].matches('\n').count()).unwrap_or(u32::MAX);
    let last = line_of(end_at.saturating_sub(1).max(start_at));
    Some(Range { start: Position::new(line_of(start_at), 0), end: Position::new(last.saturating_add(1), 0) })
}

/// `verbatim/saveDocument`.
enum SaveDocument {}

impl tower_lsp_server::ls_types::request::Request for SaveDocument {
    type Params = Value;
    type Result = Value;
    const METHOD: &'static str = method::SAVE_DOCUMENT;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lines_between_quotes() {
        let text = "a\nfn main() {\n  x\n}\nz\n";
        let range = lines_between(text, "fn main", Some("}")).expect("found");
        assert_eq!((range.start.line, range.end.line), (1, 4));
        let range = lines_between(text, "x", None).expect("found");
        assert_eq!((range.start.line, range.end.line), (2, 3));
        assert_eq!(lines_between(text, "missing", None), None);
    }
}
