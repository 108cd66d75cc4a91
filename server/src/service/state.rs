//! The state one server process shares between its editor connection and every
//! agent connection: documents, workspace folders, the link to the editor, the write
//! lanes that order edits per document, and the registry of agents and pending edits.
//!
//! The documents are the engine's [`DocumentStore`] behind [`SharedDocuments`], whose lock
//! is a plain mutex held only for synchronous work: no `.await` ever happens between
//! reading and writing a document, so changes are applied atomically and in the order
//! they are handed in; a watch channel fires after every change so that waiters can
//! re-check what they wait for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use tokio::sync::{OwnedMutexGuard, watch};
use tokio_util::sync::CancellationToken;
use tower_lsp_server::Client;

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::position::PositionEncoding;
use verbatim_engine::store::DocumentStore;
use verbatim_engine::workspace::Workspace;

use crate::service::discovery::Endpoint;
use crate::service::journal::Journal;
use crate::service::protocol::{ClientInfo, InitializationOptions, StatusResult, method};
use crate::service::registry::Registry;

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

    /// Waits (at most `limit`) until `holds` is true of the store; says whether it is.
    pub async fn wait_until(&self, limit: std::time::Duration, holds: impl Fn(&DocumentStore) -> bool) -> bool {
        let mut changes = self.subscribe();
        let _ = tokio::time::timeout(limit, async {
            while !holds(&self.lock()) {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
        holds(&self.lock())
    }
}

/// What the server knows about the connected editor.
#[derive(Debug, Clone)]
pub struct EditorLink {
    pub client: Client,
    pub encoding: PositionEncoding,
    /// The editor accepts versioned `documentChanges`.
    pub document_changes: bool,
    /// The editor can create files through a WorkspaceEdit.
    pub can_create_files: bool,
    /// The editor can delete files through a WorkspaceEdit.
    pub can_delete_files: bool,
    /// The editor can rename files through a WorkspaceEdit.
    pub can_rename_files: bool,
    pub options: InitializationOptions,
}

/// Shared server state.
#[derive(Debug)]
pub struct State {
    pub documents: SharedDocuments,
    pub workspace: RwLock<Workspace>,
    /// The editor's position encoding; read by the synchronous didChange path.
    editor_encoding: Mutex<PositionEncoding>,
    editor: Mutex<Option<EditorLink>>,
    editor_info: Mutex<Option<ClientInfo>>,
    /// Cancelled when the editor connection ends: every waiting edit then fails
    /// with `editorUnavailable`.
    pub editor_closed: CancellationToken,
    pub registry: Mutex<Registry>,
    /// One async mutex per document: holders are the only writers of that document.
    lanes: Mutex<HashMap<DocKey, Arc<tokio::sync::Mutex<()>>>>,
    endpoint: Mutex<Option<Endpoint>>,
    started_at: String,
    /// Status notifications go through one channel, in the order they were taken.
    status_sender: Mutex<Option<tokio::sync::mpsc::UnboundedSender<StatusResult>>>,
    /// Where every write is journaled; `None` when no state directory can be named.
    pub journal: Option<Journal>,
    /// The journals as last read, for the timeline and reverts.
    pub journal_cache: crate::service::journal_cache::JournalCache,
    /// Changes made on disk outside the editor: the watcher and what it remembers.
    pub external: crate::service::external_state::ExternalChangesState,
    /// Writes agents announced after the person's review (see `ide/agent_write.rs`).
    pub agent_writes: crate::service::agent_writes::AgentWrites,
    /// The person's selection and what they send to agents.
    pub context: crate::service::editor_context::EditorContext,
    /// The offers of edits an agent writes itself, whose decision is wanted before the
    /// editor has applied it.
    pub early_decisions: crate::service::early_decision::EarlyDecisions,
    /// Held while a `workspace/applyEdit` waits for a plain client's answer: such a
    /// client gets one at a time (Eglot, asked again while its y/n prompt is open, may
    /// never answer the first).
    pub plain_apply_lane: tokio::sync::Mutex<()>,
    /// Counts the person's typing and saving seen from the editor (a `didChange` that
    /// is more than an edit the server already took, a `didSave`): a plain client's
    /// modal prompt is gone when it moves (see `service::deliver::plain_client`).
    pub typing: watch::Sender<u64>,
    /// The editor's text sync received and applied: agents' requests are answered
    /// after what the editor sent before them.
    pub editor_order: crate::service::editor_order::EditorOrder,
    /// Writes reverts of files no editor has open (passed in: the service never writes
    /// files itself).
    disk_writer: std::sync::OnceLock<Arc<dyn crate::service::revert_plan::RevertOnDisk>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Default for State {
    fn default() -> Self {
        Self {
            documents: SharedDocuments::default(),
            workspace: RwLock::default(),
            editor_encoding: Mutex::new(PositionEncoding::Utf16),
            editor: Mutex::default(),
            editor_info: Mutex::default(),
            editor_closed: CancellationToken::new(),
            registry: Mutex::default(),
            lanes: Mutex::default(),
            endpoint: Mutex::default(),
            started_at: crate::service::clock::now_rfc3339(),
            status_sender: Mutex::default(),
            journal: Journal::from_env(),
            journal_cache: crate::service::journal_cache::JournalCache::default(),
            external: crate::service::external_state::ExternalChangesState::default(),
            agent_writes: crate::service::agent_writes::AgentWrites::default(),
            context: crate::service::editor_context::EditorContext::default(),
            early_decisions: crate::service::early_decision::EarlyDecisions::default(),
            plain_apply_lane: tokio::sync::Mutex::new(()),
            typing: watch::Sender::new(0),
            editor_order: Default::default(),
            disk_writer: std::sync::OnceLock::new(),
        }
    }
}

impl State {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Sets the writer of reverts on disk (once, when the server starts).
    pub fn set_disk_writer(&self, writer: Arc<dyn crate::service::revert_plan::RevertOnDisk>) {
        let _ = self.disk_writer.set(writer);
    }

    /// The writer of reverts on disk, when the server was given one.
    pub fn disk_writer(&self) -> Option<Arc<dyn crate::service::revert_plan::RevertOnDisk>> {
        self.disk_writer.get().cloned()
    }

    pub fn editor_encoding(&self) -> PositionEncoding {
        *lock(&self.editor_encoding)
    }

    pub fn set_editor_encoding(&self, encoding: PositionEncoding) {
        *lock(&self.editor_encoding) = encoding;
    }

    pub fn editor(&self) -> Option<EditorLink> {
        lock(&self.editor).clone()
    }

    pub fn set_editor(&self, link: EditorLink) {
        *lock(&self.editor) = Some(link);
    }

    /// The path rules the editor configured (the defaults without an editor).
    pub fn path_policy(&self) -> crate::service::access::PathPolicy {
        self.editor().map_or_else(crate::service::access::PathPolicy::default, |link| {
            crate::service::access::PathPolicy::new(
                link.options.write_deny_list.clone(),
                link.options.allow_writes_outside_workspace,
            )
        })
    }

    /// The access of agents on the main socket, as the editor configured it.
    pub fn main_socket_access(&self) -> crate::service::access::Access {
        self.editor().map_or_else(Default::default, |link| link.options.agent_access)
    }

    pub fn editor_info(&self) -> Option<ClientInfo> {
        lock(&self.editor_info).clone()
    }

    pub fn set_editor_info(&self, info: Option<ClientInfo>) {
        *lock(&self.editor_info) = info;
    }

    /// The editor went away: forget it and wake every edit waiting on it.
    pub fn close_editor(&self) {
        *lock(&self.editor) = None;
        self.editor_closed.cancel();
    }

    /// The person typed or saved in the editor.
    pub fn saw_typing(&self) {
        self.typing.send_modify(|count| *count += 1);
    }

    pub fn registry(&self) -> MutexGuard<'_, Registry> {
        lock(&self.registry)
    }

    pub fn workspace(&self) -> Workspace {
        self.workspace.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    pub fn update_workspace(&self, change: impl FnOnce(&mut Workspace)) {
        change(&mut self.workspace.write().unwrap_or_else(|poisoned| poisoned.into_inner()));
        self.write_discovery();
    }

    pub fn set_endpoint(&self, endpoint: Endpoint) {
        *lock(&self.endpoint) = Some(endpoint);
        self.write_discovery();
    }

    pub fn endpoint(&self) -> Option<Endpoint> {
        lock(&self.endpoint).clone()
    }

    /// Rewrites the discovery file (after the workspace or the editor's identity changed).
    pub fn write_discovery(&self) {
        let Some(endpoint) = self.endpoint() else { return };
        let discovery = crate::service::protocol::DiscoveryFile {
            pid: std::process::id(),
            socket: endpoint.socket.display().to_string(),
            read_only_socket: Some(endpoint.read_only_socket.display().to_string()),
            workspace_folders: self.workspace().folder_uris(),
            client_info: self.editor_info(),
            protocol_version: crate::service::protocol::PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            started_at: self.started_at.clone(),
        };
        if let Err(error) = crate::service::discovery::write_discovery(&endpoint.discovery_file, &discovery) {
            tracing::error!("cannot write the discovery file {}: {error}", endpoint.discovery_file.display());
        }
    }

    /// Takes the write lanes of `keys` (sorted, without duplicates, so that two
    /// batches can never wait for each other), in order.
    pub async fn lock_lanes(&self, keys: &[DocKey]) -> Vec<OwnedMutexGuard<()>> {
        let lanes: Vec<_> = {
            let mut lanes = lock(&self.lanes);
            keys.iter().map(|key| lanes.entry(key.clone()).or_default().clone()).collect()
        };
        let mut guards = Vec::with_capacity(lanes.len());
        for lane in lanes {
            guards.push(lane.lock_owned().await);
        }
        guards
    }

    pub fn status(&self) -> StatusResult {
        let endpoint = self.endpoint();
        let registry = self.registry();
        StatusResult {
            socket: endpoint.as_ref().map(|endpoint| endpoint.socket.display().to_string()),
            read_only_socket: endpoint.as_ref().map(|endpoint| endpoint.read_only_socket.display().to_string()),
            discovery_file: endpoint.as_ref().map(|endpoint| endpoint.discovery_file.display().to_string()),
            editor_connected: self.editor().is_some(),
            agents: registry.agents(),
            pending: registry.pending(),
        }
    }

    /// Tells the editor that agents or pending edits changed, if it asked to know.
    /// Notifications leave in the order their snapshots were taken.
    pub fn notify_status(self: &Arc<Self>) {
        let Some(link) = self.editor() else { return };
        if !link.options.status_notifications {
            return;
        }
        let mut sender = lock(&self.status_sender);
        if sender.is_none() {
            let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<StatusResult>();
            let client = link.client.clone();
            handle.spawn(async move {
                while let Some(status) = rx.recv().await {
                    client.send_notification::<StatusChanged>(status).await;
                }
            });
            *sender = Some(tx);
        }
        // Taken while holding the sender's lock, so snapshots and sends stay in one order.
        let status = self.status();
        if let Some(tx) = sender.as_ref() {
            let _ = tx.send(status);
        }
    }
}

impl State {
    /// Tells an editor with Verbatim's extensions that the journal grew
    /// (`verbatim/journalChanged`), so its timeline refreshes.
    pub fn journal_changed(&self, results: &[crate::service::protocol::DocumentResult]) {
        let Some(link) = self.editor() else { return };
        if !link.options.verbatim_extensions || results.is_empty() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        let uris: Vec<String> = results.iter().map(|result| result.uri.clone()).collect();
        let client = link.client.clone();
        handle.spawn(async move {
            client.send_notification::<JournalChanged>(JournalChangedParams { uris }).await;
        });
    }
}

/// The params of `verbatim/journalChanged`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct JournalChangedParams {
    pub uris: Vec<String>,
}

/// The `verbatim/journalChanged` notification.
enum JournalChanged {}

impl tower_lsp_server::ls_types::notification::Notification for JournalChanged {
    type Params = JournalChangedParams;
    const METHOD: &'static str = method::JOURNAL_CHANGED;
}

/// The `verbatim/statusChanged` notification.
enum StatusChanged {}

impl tower_lsp_server::ls_types::notification::Notification for StatusChanged {
    type Params = StatusResult;
    const METHOD: &'static str = method::STATUS_CHANGED;
}
