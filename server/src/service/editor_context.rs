//! What the person is looking at, as the editor reports it: the selection (or cursor)
//! in the focused document, and the files or lines they send to an agent.
//!
//! The editor sends `verbatim/selectionChanged` and `verbatim/atMention`; both are
//! applied in arrival order by [`crate::transport::ordered_sync`]. The agents' IDE
//! protocols ([`crate::ide`]) read the latest selection and subscribe to the events,
//! each connection on its own receiver, so a slow one never holds up the editor.

use std::path::PathBuf;
use std::sync::Mutex;

use tokio::sync::broadcast;
use tower_lsp_server::ls_types::Range;

use verbatim_engine::doc_key::DocKey;

use crate::service::protocol::{AtMentionParams, SelectionChangedParams};

/// How many events a slow subscriber may fall behind before it skips some.
const EVENT_BACKLOG: usize = 64;

/// The selection in the focused document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub path: PathBuf,
    pub uri: String,
    pub text: String,
    /// In the editor's position encoding; empty at the cursor.
    pub range: Range,
}

/// A file, or lines of it (0-based, inclusive), the person sends to an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtMention {
    pub path: PathBuf,
    pub lines: Option<(u32, u32)>,
}

/// What the agents' IDE connections are told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextEvent {
    Selection(Selection),
    AtMention(AtMention),
}

#[derive(Debug)]
pub struct EditorContext {
    latest: Mutex<Option<Selection>>,
    events: broadcast::Sender<ContextEvent>,
}

impl Default for EditorContext {
    fn default() -> Self {
        Self { latest: Mutex::default(), events: broadcast::channel(EVENT_BACKLOG).0 }
    }
}

impl EditorContext {
    /// The latest selection the editor reported, if any.
    pub fn latest_selection(&self) -> Option<Selection> {
        self.latest.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<ContextEvent> {
        self.events.subscribe()
    }

    /// `verbatim/selectionChanged`. A URI that names no file is ignored (logged).
    pub fn selection_changed(&self, params: SelectionChangedParams) {
        let Some(path) = file_path(&params.uri) else {
            tracing::debug!(uri = %params.uri, "verbatim/selectionChanged for a document that is not a file: ignored");
            return;
        };
        let selection = Selection { path, uri: params.uri, text: params.text, range: params.range };
        let mut latest = self.latest.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if latest.as_ref() == Some(&selection) {
            return;
        }
        *latest = Some(selection.clone());
        // Nobody listening is fine: no agent is connected.
        let _ = self.events.send(ContextEvent::Selection(selection));
    }

    /// `verbatim/atMention`.
    pub fn at_mention(&self, params: AtMentionParams) {
        let Some(path) = file_path(&params.uri) else {
            tracing::debug!(uri = %params.uri, "verbatim/atMention for a document that is not a file: ignored");
            return;
        };
        // A selection of whole lines ends at column 0 of the line after the last one.
        let lines = params.range.map(|range| {
            let end = if range.end.character == 0 && range.end.line > range.start.line {
                range.end.line - 1
            } else {
                range.end.line
            };
            (range.start.line, end.max(range.start.line))
        });
        if self.events.send(ContextEvent::AtMention(AtMention { path, lines })).is_err() {
            tracing::info!("verbatim/atMention: no agent is connected through an IDE protocol to receive it");
        }
    }
}

fn file_path(uri: &str) -> Option<PathBuf> {
    DocKey::parse(uri).ok()?.path().map(ToOwned::to_owned)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Position;

    fn range(start: (u32, u32), end: (u32, u32)) -> Range {
        Range { start: Position::new(start.0, start.1), end: Position::new(end.0, end.1) }
    }

    #[test]
    fn a_selection_is_kept_and_sent_once() {
        let context = EditorContext::default();
        let mut events = context.subscribe();
        let params =
            SelectionChangedParams { uri: "file:///p/a.rs".into(), text: "x".into(), range: range((1, 0), (1, 1)) };
        context.selection_changed(params.clone());
        context.selection_changed(params);
        let latest = context.latest_selection().expect("a selection");
        assert_eq!(latest.path, PathBuf::from("/p/a.rs"));
        assert!(matches!(events.try_recv(), Ok(ContextEvent::Selection(_))));
        assert!(events.try_recv().is_err(), "the same selection twice is sent once");
    }

    #[test]
    fn an_at_mention_names_its_lines() {
        let context = EditorContext::default();
        let mut events = context.subscribe();
        context.at_mention(AtMentionParams { uri: "file:///p/a.rs".into(), range: Some(range((4, 0), (2, 0))) });
        let Ok(ContextEvent::AtMention(mention)) = events.try_recv() else { panic!("an at-mention") };
        assert_eq!(mention.lines, Some((4, 4)));
        context.at_mention(AtMentionParams { uri: "file:///p/a.rs".into(), range: Some(range((1, 0), (3, 0))) });
        let Ok(ContextEvent::AtMention(mention)) = events.try_recv() else { panic!("an at-mention") };
        assert_eq!(mention.lines, Some((1, 2)), "whole lines 2 and 3, ending at column 0 of line 4");
    }

    #[test]
    fn a_uri_that_is_no_file_is_ignored() {
        let context = EditorContext::default();
        context.selection_changed(SelectionChangedParams {
            uri: "untitled:Untitled-1".into(),
            text: String::new(),
            range: range((0, 0), (0, 0)),
        });
        assert_eq!(context.latest_selection(), None);
    }
}
