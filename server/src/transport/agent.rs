//! An agent connection: a full LSP session whose `initialize` names the agent and
//! negotiates its position encoding, followed by the `verbatim/*` methods.
//!
//! Each method parses its params itself (so bad params get a specific
//! `invalidParams` error) and runs inside `catch_unwind`, so a bug triggered by one
//! agent's input becomes an error for that agent, never a crashed server.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures::FutureExt;
use serde::Serialize;
use serde_json::{Value, json};
use tower::Service;
use tower_lsp_server::jsonrpc::{self, Request, Response};
use tower_lsp_server::ls_types::{
    InitializeParams, InitializeResult, PositionEncodingKind, ServerCapabilities, ServerInfo,
};
use tower_lsp_server::{ExitedError, LanguageServer, LspService};

use verbatim_engine::position::PositionEncoding;

use crate::service::access::Access;
use crate::service::clock::now_rfc3339;
use crate::service::edits;
use crate::service::error::{ErrorKind, ProtocolError};
use crate::service::patching;
use crate::service::protocol::{
    ApplyPatchParams, BatchEditParams, MarkReviewedParams, PROTOCOL_VERSION, ProposeParams, ReplaceRangeParams,
    RevertParams, StrReplaceParams, TimelineEntryParams, TimelineParams, WriteParams, method,
};
use crate::service::registry::AgentInfo;
use crate::service::state::State;
use crate::service::to_proto;
use crate::service::{revert, timeline_methods};

/// One agent connection.
#[derive(Debug)]
pub struct AgentSession {
    state: Arc<State>,
    id: u64,
    /// Fixed by the socket the agent came through.
    access: Access,
    info: OnceLock<AgentInfo>,
}

impl AgentSession {
    pub fn new(state: Arc<State>, access: Access) -> Self {
        let id = state.registry().next_agent_id();
        Self { state, id, access, info: OnceLock::new() }
    }

    /// Builds the service for one connection, with every custom method routed.
    pub fn service(
        state: Arc<State>,
        access: Access,
    ) -> (EmptyParamsAsNone<AgentSession>, tower_lsp_server::ClientSocket) {
        let (service, socket) = LspService::build(move |_client| AgentSession::new(state, access))
            .custom_method(method::DOCUMENTS, AgentSession::documents)
            .custom_method(method::STATUS, AgentSession::status)
            .custom_method(method::READ, AgentSession::read)
            .custom_method(method::STR_REPLACE, AgentSession::str_replace)
            .custom_method(method::REPLACE_RANGE, AgentSession::replace_range)
            .custom_method(method::BATCH_EDIT, AgentSession::batch_edit)
            .custom_method(method::WRITE, AgentSession::write)
            .custom_method(method::APPLY_PATCH, AgentSession::apply_patch)
            .custom_method(method::PROPOSE, AgentSession::propose)
            .custom_method(method::TIMELINE, AgentSession::timeline)
            .custom_method(method::TIMELINE_ENTRY, AgentSession::timeline_entry)
            .custom_method(method::MARK_REVIEWED, AgentSession::mark_reviewed)
            .custom_method(method::REVERT, AgentSession::revert)
            .finish();
        (EmptyParamsAsNone { inner: service }, socket)
    }

    /// Answers a request once the editor's text sync received before it is applied
    /// (`service::editor_order`): an agent never reads a file from disk that the
    /// editor had already said it opened.
    async fn answered<T: Serialize>(
        &self,
        handler: impl Future<Output = Result<T, ProtocolError>>,
    ) -> jsonrpc::Result<Value> {
        self.state.editor_order.caught_up().await;
        guarded(handler).await
    }

    fn agent(&self) -> AgentInfo {
        self.info.get().cloned().unwrap_or_else(|| AgentInfo {
            id: self.id,
            name: format!("agent #{}", self.id),
            version: None,
            connected_at: now_rfc3339(),
            encoding: PositionEncoding::Utf16,
            access: self.access,
            options: Default::default(),
            session: crate::service::registry::session_of(self.id),
            turn: None,
        })
    }

    /// Refuses a write on a read-only connection (dry runs write nothing and pass).
    fn may_write(&self, method: &str, dry_run: bool) -> Result<(), ProtocolError> {
        if self.access == Access::ReadWrite || dry_run {
            return Ok(());
        }
        Err(ProtocolError::new(
            ErrorKind::PermissionDenied,
            format!(
                "this connection is read-only, so {method} may only be used with dryRun: true. Propose the change \
                 to the person instead, or connect through the read-write socket if they allow it."
            ),
        )
        .with("method", method))
    }

    async fn documents(&self) -> jsonrpc::Result<Value> {
        self.answered(async { Ok(edits::documents(&self.state)) }).await
    }

    async fn status(&self) -> jsonrpc::Result<Value> {
        self.answered(async { Ok(self.state.status()) }).await
    }

    async fn read(&self, params: Value) -> jsonrpc::Result<Value> {
        self.answered(async { edits::read(&self.state, edits::parse_params(method::READ, params)?).await }).await
    }

    async fn str_replace(&self, params: Value) -> jsonrpc::Result<Value> {
        let agent = self.agent();
        self.answered(async {
            let params: StrReplaceParams = edits::parse_params(method::STR_REPLACE, params)?;
            self.may_write(method::STR_REPLACE, params.dry_run)?;
            edits::str_replace(&self.state, &agent, params).await
        })
        .await
    }

    async fn replace_range(&self, params: Value) -> jsonrpc::Result<Value> {
        let agent = self.agent();
        self.answered(async {
            let params: ReplaceRangeParams = edits::parse_params(method::REPLACE_RANGE, params)?;
            self.may_write(method::REPLACE_RANGE, params.dry_run)?;
            edits::replace_range(&self.state, &agent, params).await
        })
        .await
    }

    async fn batch_edit(&self, params: Value) -> jsonrpc::Result<Value> {
        let agent = self.agent();
        self.answered(async {
            let params: BatchEditParams = edits::parse_params(method::BATCH_EDIT, params)?;
            self.may_write(method::BATCH_EDIT, params.dry_run)?;
            edits::batch_edit(&self.state, &agent, params).await
        })
        .await
    }

    async fn write(&self, params: Value) -> jsonrpc::Result<Value> {
        let agent = self.agent();
        self.answered(async {
            let params: WriteParams = edits::parse_params(method::WRITE, params)?;
            self.may_write(method::WRITE, false)?;
            edits::write(&self.state, &agent, params).await
        })
        .await
    }

    async fn apply_patch(&self, params: Value) -> jsonrpc::Result<Value> {
        let agent = self.agent();
        self.answered(async {
            let params: ApplyPatchParams = edits::parse_params(method::APPLY_PATCH, params)?;
            self.may_write(method::APPLY_PATCH, params.dry_run)?;
            patching::apply_patch(&self.state, &agent, params).await
        })
        .await
    }
}

impl AgentSession {
    async fn timeline(&self, params: Value) -> jsonrpc::Result<Value> {
        let state = Arc::clone(&self.state);
        self.answered(async move {
            let params: TimelineParams = edits::parse_params(method::TIMELINE, params)?;
            on_blocking(move || timeline_methods::timeline(&state, &params)).await
        })
        .await
    }

    async fn timeline_entry(&self, params: Value) -> jsonrpc::Result<Value> {
        let state = Arc::clone(&self.state);
        self.answered(async move {
            let params: TimelineEntryParams = edits::parse_params(method::TIMELINE_ENTRY, params)?;
            on_blocking(move || timeline_methods::timeline_entry(&state, &params)).await
        })
        .await
    }

    async fn mark_reviewed(&self, params: Value) -> jsonrpc::Result<Value> {
        let state = Arc::clone(&self.state);
        self.answered(async move {
            let params: MarkReviewedParams = edits::parse_params(method::MARK_REVIEWED, params)?;
            self.may_write(method::MARK_REVIEWED, false)?;
            on_blocking(move || timeline_methods::mark_reviewed(&state, &params)).await
        })
        .await
    }

    async fn revert(&self, params: Value) -> jsonrpc::Result<Value> {
        let agent = self.agent();
        self.answered(async {
            let params: RevertParams = edits::parse_params(method::REVERT, params)?;
            self.may_write(method::REVERT, params.dry_run)?;
            revert::revert(&self.state, &agent, params).await
        })
        .await
    }

    async fn propose(&self, params: Value) -> jsonrpc::Result<Value> {
        let agent = self.agent();
        self.answered(async {
            let params: ProposeParams = edits::parse_params(method::PROPOSE, params)?;
            self.may_write(method::PROPOSE, false)?;
            crate::ide::propose::propose(&self.state, &agent, params).await
        })
        .await
    }
}

/// Runs blocking journal work off the async threads.
async fn on_blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ProtocolError> + Send + 'static,
) -> Result<T, ProtocolError> {
    tokio::task::spawn_blocking(work).await.map_err(|error| {
        ProtocolError::new(crate::service::error::ErrorKind::Io, format!("the journal task failed: {error}"))
    })?
}

/// Runs a handler, turning its error into a JSON-RPC error and a panic into an
/// internal error, so one bad request cannot take the server down.
async fn guarded<T: Serialize>(handler: impl Future<Output = Result<T, ProtocolError>>) -> jsonrpc::Result<Value> {
    match AssertUnwindSafe(handler).catch_unwind().await {
        Ok(Ok(value)) => serde_json::to_value(value).map_err(|error| jsonrpc::Error {
            code: jsonrpc::ErrorCode::InternalError,
            message: format!("cannot serialise the result: {error}").into(),
            data: None,
        }),
        Ok(Err(error)) => Err(error.into_jsonrpc()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
                .unwrap_or_default();
            tracing::error!("a request handler panicked: {what}");
            Err(jsonrpc::Error {
                code: jsonrpc::ErrorCode::InternalError,
                message: format!("internal error in verbatim ({what}); nothing was applied. Please report this.")
                    .into(),
                data: Some(json!({"kind": "internal"})),
            })
        }
    }
}

impl LanguageServer for AgentSession {
    async fn initialize(&self, params: InitializeParams) -> jsonrpc::Result<InitializeResult> {
        let encoding = to_proto::negotiated_encoding(&params.capabilities);
        let (name, version) = match params.client_info {
            Some(info) if !info.name.trim().is_empty() => (info.name, info.version),
            _ => (format!("agent #{}", self.id), None),
        };
        let options = match params.initialization_options {
            Some(value) => serde_json::from_value(value).map_err(|error| jsonrpc::Error {
                code: jsonrpc::ErrorCode::InvalidParams,
                message: format!("initializationOptions: {error}. Send diagnostics and diagnosticsTimeoutMs only.")
                    .into(),
                data: Some(json!({"kind": "invalidParams", "field": "initializationOptions"})),
            })?,
            None => Default::default(),
        };
        let info = AgentInfo {
            id: self.id,
            name,
            version,
            connected_at: now_rfc3339(),
            encoding,
            access: self.access,
            options,
            session: crate::service::registry::session_of(self.id),
            turn: None,
        };
        tracing::info!(agent = %info.name, id = self.id, encoding = encoding.as_str(), access = ?self.access, "agent connected");
        // A read-only agent is not offered the write methods; it may still preview
        // changes with dry runs of those that have one.
        let read_write = self.access == Access::ReadWrite;
        let methods: Vec<&str> = method::AGENT_METHODS
            .into_iter()
            .filter(|name| read_write || !method::WRITE_METHODS.contains(name))
            .collect();
        let dry_run_only: Vec<&str> = if read_write {
            Vec::new()
        } else {
            method::WRITE_METHODS.into_iter().filter(|name| *name != method::WRITE).collect()
        };
        let access = self.access;
        self.state.registry().add_agent(info.clone());
        let _ = self.info.set(info);
        self.state.notify_status();
        Ok(InitializeResult {
            server_info: Some(ServerInfo { name: "verbatim".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            capabilities: ServerCapabilities {
                position_encoding: Some(PositionEncodingKind::from(encoding.as_str().to_owned())),
                experimental: Some(json!({
                    "verbatim": {
                        "protocolVersion": PROTOCOL_VERSION,
                        "methods": methods,
                        "dryRunOnly": dry_run_only,
                        "access": access,
                    }
                })),
                ..ServerCapabilities::default()
            },
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        Ok(())
    }
}

impl Drop for AgentSession {
    fn drop(&mut self) {
        if let Some(info) = self.info.get() {
            tracing::info!(agent = %info.name, id = self.id, "agent disconnected");
        }
        self.state.registry().remove_agent(self.id);
        self.state.notify_status();
    }
}

/// Treats `"params": {}` like absent params, so that parameterless methods
/// (`verbatim/documents`, `verbatim/status`) accept what JSON-RPC libraries send.
pub struct EmptyParamsAsNone<S: LanguageServer> {
    inner: LspService<S>,
}

impl<S: LanguageServer> Service<Request> for EmptyParamsAsNone<S> {
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = Pin<Box<dyn Future<Output = Result<Option<Response>, ExitedError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let parameterless = matches!(request.method(), method::DOCUMENTS | method::STATUS);
        let request = if parameterless {
            let (name, id, params) = request.into_parts();
            let params = params.filter(|params| !matches!(params, Value::Object(map) if map.is_empty()));
            let mut builder = Request::build(name);
            if let Some(id) = id {
                builder = builder.id(id);
            }
            if let Some(params) = params {
                builder = builder.params(params);
            }
            builder.finish()
        } else {
            request
        };
        Box::pin(self.inner.call(request))
    }
}
