//! The editor connection: `initialize` (position encoding, workspace folders, what
//! the editor supports), workspace folder changes, shutdown, and `verbatim/status`.
//! Text sync itself is applied in order by [`crate::transport::ordered_sync`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    DidChangeConfigurationParams, DidChangeWorkspaceFoldersParams, InitializeParams, InitializeResult,
    InitializedParams, PositionEncodingKind, ResourceOperationKind, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
    WorkspaceFoldersServerCapabilities, WorkspaceServerCapabilities,
};
use tower_lsp_server::{Client, LanguageServer};

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::workspace::Workspace;

use crate::service::error::ProtocolError;
use crate::service::protocol::{ClientInfo, ExternalChanges, InitializationOptions, StatusResult, method};
use crate::service::registry::AgentInfo;
use crate::service::state::{EditorLink, State};
use crate::service::to_proto;
use crate::service::{revert, timeline_methods};
use crate::transport::claude_ws::ClaudeEndpoint;
use crate::transport::companion_http::CompanionEndpoint;

/// Claude Code's endpoint for this editor, once started; shared with `lsp.rs`,
/// which stops it (and removes its lock file) when the server ends.
pub type ClaudeSlot = Arc<std::sync::Mutex<Option<ClaudeEndpoint>>>;

/// The IDE companion endpoint of Gemini CLI and Qwen Code, once started; shared with
/// `lsp.rs` like [`ClaudeSlot`].
pub type CompanionSlot = Arc<std::sync::Mutex<Option<CompanionEndpoint>>>;

/// The language server the editor talks to.
#[derive(Debug)]
pub struct EditorBackend {
    client: Client,
    state: Arc<State>,
    shutdown_requested: Arc<AtomicBool>,
    claude: ClaudeSlot,
    companion: CompanionSlot,
}

impl EditorBackend {
    pub fn new(
        client: Client,
        state: Arc<State>,
        shutdown_requested: Arc<AtomicBool>,
        claude: ClaudeSlot,
        companion: CompanionSlot,
    ) -> Self {
        Self { client, state, shutdown_requested, claude, companion }
    }

    fn companion(&self) -> std::sync::MutexGuard<'_, Option<CompanionEndpoint>> {
        self.companion.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts the IDE companion endpoint (once); what the `initialize` result says of it.
    async fn start_companion(&self, editor: &str, editor_pid: Option<u32>) -> Option<serde_json::Value> {
        if self.companion().is_none() {
            let editor_pid = editor_pid.unwrap_or_else(std::os::unix::process::parent_id);
            let ide_pid = crate::transport::companion_files::ide_pid(editor_pid);
            match CompanionEndpoint::start(self.state.clone(), editor, ide_pid).await {
                Ok(endpoint) => *self.companion() = Some(endpoint),
                Err(error) => {
                    tracing::error!(
                        "cannot serve the IDE companion interface: {error}; Gemini CLI and Qwen Code will not find \
                         this editor"
                    );
                    return None;
                }
            }
        }
        let info = self.companion().as_ref()?.info(&self.state);
        Some(info.capability())
    }

    fn claude(&self) -> std::sync::MutexGuard<'_, Option<ClaudeEndpoint>> {
        self.claude.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts Claude Code's endpoint (once); the port for the `initialize` result.
    async fn start_claude_code(&self, editor: &str) -> Option<u16> {
        if let Some(endpoint) = self.claude().as_ref() {
            return Some(endpoint.port());
        }
        match ClaudeEndpoint::start(self.state.clone(), editor).await {
            Ok(endpoint) => {
                let port = endpoint.port();
                *self.claude() = Some(endpoint);
                Some(port)
            }
            Err(error) => {
                tracing::error!(
                    "cannot serve Claude Code's IDE protocol: {error}; Claude Code will not find this editor"
                );
                None
            }
        }
    }

    pub async fn status(&self) -> Result<StatusResult> {
        Ok(self.state.status())
    }

    /// `verbatim/timeline` from the editor's timeline view.
    pub async fn timeline(&self, params: serde_json::Value) -> Result<serde_json::Value> {
        let state = Arc::clone(&self.state);
        answer(async move {
            let params = parse(method::TIMELINE, params)?;
            blocking(move || timeline_methods::timeline(&state, &params)).await
        })
        .await
    }

    /// `verbatim/timelineEntry`: one entry's texts, for the view's diff.
    pub async fn timeline_entry(&self, params: serde_json::Value) -> Result<serde_json::Value> {
        let state = Arc::clone(&self.state);
        answer(async move {
            let params = parse(method::TIMELINE_ENTRY, params)?;
            blocking(move || timeline_methods::timeline_entry(&state, &params)).await
        })
        .await
    }

    /// `verbatim/markReviewed` from the timeline view.
    pub async fn mark_reviewed(&self, params: serde_json::Value) -> Result<serde_json::Value> {
        let state = Arc::clone(&self.state);
        answer(async move {
            let params = parse(method::MARK_REVIEWED, params)?;
            blocking(move || timeline_methods::mark_reviewed(&state, &params)).await
        })
        .await
    }

    /// `verbatim/revert` from the timeline view: the person is the one who reverts.
    pub async fn revert(&self, params: serde_json::Value) -> Result<serde_json::Value> {
        let state = Arc::clone(&self.state);
        answer(async move {
            let params = parse(method::REVERT, params)?;
            revert::revert(&state, &person(), params).await
        })
        .await
    }
}

/// Who reverts from the editor's timeline: the person, as the journal names them.
fn person() -> AgentInfo {
    AgentInfo {
        id: 0,
        name: PERSON.into(),
        version: None,
        connected_at: crate::service::clock::now_rfc3339(),
        encoding: verbatim_engine::position::PositionEncoding::Utf16,
        access: crate::service::access::Access::ReadWrite,
        options: Default::default(),
        session: crate::service::registry::session_of(0),
        turn: None,
    }
}

/// The journal's name for the person at the editor.
pub const PERSON: &str = "you";

fn parse<T: serde::de::DeserializeOwned>(
    name: &str,
    params: serde_json::Value,
) -> std::result::Result<T, ProtocolError> {
    crate::service::edits::parse_params(name, params)
}

/// Runs blocking journal work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::result::Result<T, ProtocolError> + Send + 'static,
) -> std::result::Result<T, ProtocolError> {
    tokio::task::spawn_blocking(work).await.map_err(|error| {
        ProtocolError::new(crate::service::error::ErrorKind::Io, format!("the journal task failed: {error}"))
    })?
}

/// A handler's result as JSON-RPC.
async fn answer<T: serde::Serialize>(
    handler: impl Future<Output = std::result::Result<T, ProtocolError>>,
) -> Result<serde_json::Value> {
    match handler.await {
        Ok(value) => serde_json::to_value(value).map_err(|error| tower_lsp_server::jsonrpc::Error {
            code: tower_lsp_server::jsonrpc::ErrorCode::InternalError,
            message: format!("cannot serialise the result: {error}").into(),
            data: None,
        }),
        Err(error) => Err(error.into_jsonrpc()),
    }
}

fn folder_path(uri: &tower_lsp_server::ls_types::Uri) -> Option<std::path::PathBuf> {
    DocKey::parse(uri.as_str()).ok()?.path().map(ToOwned::to_owned)
}

impl LanguageServer for EditorBackend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding = to_proto::negotiated_encoding(&params.capabilities);
        self.state.set_editor_encoding(encoding);

        let workspace_edit =
            params.capabilities.workspace.as_ref().and_then(|workspace| workspace.workspace_edit.as_ref());
        let document_changes = workspace_edit.and_then(|edit| edit.document_changes).unwrap_or(false);
        let supports = |kind: ResourceOperationKind| {
            workspace_edit
                .and_then(|edit| edit.resource_operations.as_ref())
                .is_some_and(|operations| operations.contains(&kind))
        };
        let can_create_files = supports(ResourceOperationKind::Create);
        let can_delete_files = supports(ResourceOperationKind::Delete);
        let can_rename_files = supports(ResourceOperationKind::Rename);
        let options = match params.initialization_options {
            Some(value) if !value.is_null() => {
                serde_json::from_value::<InitializationOptions>(value).unwrap_or_else(|error| {
                    tracing::warn!("initializationOptions ignored ({error}); using the defaults");
                    InitializationOptions::default()
                })
            }
            _ => InitializationOptions::default(),
        };
        if !document_changes {
            tracing::warn!(
                "the editor does not support versioned documentChanges: edits are sent as plain changes, checked only against the server's own revisions"
            );
        }

        let mut folders: Vec<std::path::PathBuf> =
            params.workspace_folders.unwrap_or_default().iter().filter_map(|folder| folder_path(&folder.uri)).collect();
        #[allow(deprecated)]
        if folders.is_empty()
            && let Some(root) = params.root_uri.as_ref().and_then(folder_path)
        {
            folders.push(root);
        }
        let editor_name = params.client_info.as_ref().map_or_else(|| "Editor".to_owned(), |info| info.name.clone());
        self.state
            .set_editor_info(params.client_info.map(|info| ClientInfo { name: info.name, version: info.version }));
        self.state.update_workspace(|workspace| *workspace = Workspace::new(folders));
        tracing::info!(
            encoding = encoding.as_str(),
            document_changes,
            can_create_files,
            can_delete_files,
            can_rename_files,
            "editor initialized"
        );
        let external_changes = options.external_changes;
        let claude_code = options.claude_code;
        let gemini_cli = options.gemini_cli;
        // Known from now on: an agent may ask for an edit before `initialized` arrives.
        self.state.set_editor(EditorLink {
            client: self.client.clone(),
            encoding,
            document_changes,
            can_create_files,
            can_delete_files,
            can_rename_files,
            options,
        });
        if external_changes != ExternalChanges::Off {
            let state = self.state.clone();
            self.state
                .external
                .start_with(|| crate::transport::disk_watch::DiskWatch::start(&state).map_err(std::io::Error::other));
        }
        let claude_port = if claude_code { self.start_claude_code(&editor_name).await } else { None };
        let mut experimental = claude_port.map(|port| serde_json::json!({"verbatim": {"claudeCode": {"port": port}}}));
        if gemini_cli && let Some(companion) = self.start_companion(&editor_name, params.process_id).await {
            experimental.get_or_insert_with(|| serde_json::json!({"verbatim": {}}))["verbatim"]["geminiCli"] =
                companion;
        }

        Ok(InitializeResult {
            server_info: Some(ServerInfo { name: "verbatim".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
            capabilities: ServerCapabilities {
                position_encoding: Some(PositionEncodingKind::from(encoding.as_str().to_owned())),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    // The saved text is the new disk baseline (see `external.rs`).
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(true) })),
                    // Until the didSave, a change seen on disk may be the save half written.
                    will_save: Some(true),
                    ..TextDocumentSyncOptions::default()
                })),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(tower_lsp_server::ls_types::OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                experimental,
                ..ServerCapabilities::default()
            },
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.state.notify_status();
    }

    async fn shutdown(&self) -> Result<()> {
        self.shutdown_requested.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        self.state.update_workspace(|workspace| {
            for removed in &params.event.removed {
                if let Some(path) = folder_path(&removed.uri) {
                    workspace.remove(&path);
                }
            }
            for added in &params.event.added {
                if let Some(path) = folder_path(&added.uri) {
                    workspace.add(path);
                }
            }
        });
        if let Some(endpoint) = self.claude().as_ref() {
            endpoint.refresh(&self.state);
        }
        if let Some(endpoint) = self.companion().as_ref() {
            endpoint.refresh(&self.state);
        }
    }
    /// Verbatim has no workspace settings; Eglot and other clients send this at start.
    async fn did_change_configuration(&self, _: DidChangeConfigurationParams) {}
}
