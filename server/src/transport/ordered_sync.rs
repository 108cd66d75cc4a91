//! Text synchronisation applied in the exact order the editor sent it.
//!
//! tower-lsp-server runs handlers concurrently, so two `didChange` handlers could
//! reach the store in either order. This layer sits in front of the editor's
//! `LspService` and applies `didOpen`, `didChange`, `didClose`, `willSave` and `didSave` to the store
//! synchronously inside `Service::call`, which the server's read loop invokes once
//! per message, in order. No handler future is involved, so no reordering is possible.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::Value;
use tower::Service;
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::ls_types::{
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams,
    WillSaveTextDocumentParams,
};
use tower_lsp_server::{ExitedError, LspService};

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::text_change::TextChange;
use verbatim_engine::unsent::Reconciled;

use crate::service::editor_order::EditorOrder;
use crate::service::protocol::method;
use crate::service::state::State;
use crate::service::to_proto::from_position;

type ResponseFuture = Pin<Box<dyn Future<Output = Result<Option<Response>, ExitedError>> + Send>>;

/// The editor's service, with text sync taken out of the concurrent path.
pub struct OrderedSync<S: tower_lsp_server::LanguageServer> {
    inner: LspService<S>,
    state: Arc<State>,
}

impl<S: tower_lsp_server::LanguageServer> OrderedSync<S> {
    pub fn new(inner: LspService<S>, state: Arc<State>) -> Self {
        Self { inner, state }
    }
}

impl<S: tower_lsp_server::LanguageServer> Service<Request> for OrderedSync<S> {
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match request.method() {
            sync if EditorOrder::is_text_sync(sync) => {
                let (method, _, params) = request.into_parts();
                apply_sync(&self.state, &method, params.unwrap_or(Value::Null));
                self.state.editor_order.applied();
                Box::pin(std::future::ready(Ok(None)))
            }
            method::SELECTION_CHANGED | method::AT_MENTION | method::REVIEW_DECIDED => {
                let (method, _, params) = request.into_parts();
                apply_context(&self.state, &method, params.unwrap_or(Value::Null));
                Box::pin(std::future::ready(Ok(None)))
            }
            _ => Box::pin(self.inner.call(request)),
        }
    }
}

/// Applies one sync notification to the store. Malformed params are logged and
/// dropped (a notification has no response to carry an error).
pub fn apply_sync(state: &State, method: &str, params: Value) {
    let result = match method {
        "textDocument/didOpen" => serde_json::from_value::<DidOpenTextDocumentParams>(params).map(|params| {
            let document = params.text_document;
            match DocKey::parse(document.uri.as_str()) {
                Ok(key) => {
                    state.documents.update(|store| {
                        store.open(
                            key.clone(),
                            document.uri.to_string(),
                            document.language_id,
                            document.version,
                            &document.text,
                        );
                    });
                    crate::service::external::on_open(state, &key);
                }
                Err(error) => tracing::warn!("didOpen ignored: {error}"),
            }
        }),
        "textDocument/didChange" => serde_json::from_value::<DidChangeTextDocumentParams>(params).map(|params| {
            let encoding = state.editor_encoding();
            let changes: Vec<TextChange> = params
                .content_changes
                .into_iter()
                .map(|change| TextChange {
                    range: change.range.map(|range| from_position(range.start)..from_position(range.end)),
                    text: change.text,
                })
                .collect();
            match DocKey::parse(params.text_document.uri.as_str()) {
                Ok(key) => {
                    let version = params.text_document.version;
                    match state.documents.update(|store| store.change(&key, version, &changes, encoding)) {
                        Err(error) => tracing::warn!("{error}"),
                        // The change of an edit the server already took, and nothing more.
                        Ok(Some(Reconciled::Agreed { more: false } | Reconciled::Partway)) => {}
                        Ok(Some(Reconciled::Disagreed { assumed, client })) => {
                            crate::service::deliver::plain_client::differs_from_answer(state, &key, &assumed, &client);
                            state.saw_typing();
                        }
                        Ok(_) => state.saw_typing(),
                    }
                }
                Err(error) => tracing::warn!("didChange ignored: {error}"),
            }
        }),
        "textDocument/didClose" => serde_json::from_value::<DidCloseTextDocumentParams>(params).map(|params| {
            if let Ok(key) = DocKey::parse(params.text_document.uri.as_str()) {
                state.documents.update(|store| store.close(&key));
                crate::service::external::on_close(state, &key);
            }
        }),
        "textDocument/willSave" => serde_json::from_value::<WillSaveTextDocumentParams>(params).map(|params| {
            if let Ok(key) = DocKey::parse(params.text_document.uri.as_str()) {
                crate::service::external::on_will_save(state, &key);
            }
        }),
        "textDocument/didSave" => serde_json::from_value::<DidSaveTextDocumentParams>(params).map(|params| {
            state.saw_typing();
            if let Ok(key) = DocKey::parse(params.text_document.uri.as_str()) {
                crate::service::external::on_save(state, &key, params.text);
            }
        }),
        _ => Ok(()),
    };
    if let Err(error) = result {
        tracing::warn!("{method} with malformed params ignored: {error}");
    }
}

/// The editor's context notifications, in arrival order; malformed ones are logged.
fn apply_context(state: &State, method: &str, params: Value) {
    let result = match method {
        method::SELECTION_CHANGED => {
            serde_json::from_value(params).map(|params| state.context.selection_changed(params))
        }
        method::REVIEW_DECIDED => serde_json::from_value(params).map(|params| state.early_decisions.decided(&params)),
        _ => serde_json::from_value(params).map(|params| state.context.at_mention(params)),
    };
    if let Err(error) = result {
        tracing::warn!("{method} ignored: its params are malformed ({error})");
    }
}
