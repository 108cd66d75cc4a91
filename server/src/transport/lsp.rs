//! `verbatim lsp`: serve the editor on stdio and agents on a Unix socket, with one
//! shared state, until the editor exits or the process is told to stop.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tower_lsp_server::{LspService, Server};

use crate::service::discovery::{Endpoint, live_servers, prepare_dir, runtime_dir};
use crate::service::editor_order::EditorOrder;
use crate::service::protocol::method;
use crate::service::revert_plan::RevertOnDisk;
use crate::service::state::State;
use crate::transport::editor::{ClaudeSlot, CompanionSlot, EditorBackend};
use crate::transport::editor_input::{self, Counted};
use crate::transport::framing::{FrameLimits, Observer, guard_observed};
use crate::transport::listener::{SocketKind, accept_agents, bind};
use crate::transport::ordered_sync::OrderedSync;

/// Options of `verbatim lsp`.
#[derive(Clone, Default)]
pub struct LspOptions {
    /// Where to put the agent socket instead of the runtime directory.
    pub socket: Option<PathBuf>,
    /// Writes reverts of files the editor does not have open (`headless`); without
    /// one, such a revert is refused with a message that says so.
    pub disk_writer: Option<Arc<dyn RevertOnDisk>>,
}

/// How the editor session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `shutdown` then `exit`, as the protocol says.
    Clean,
    /// `exit` without `shutdown`, end of input, or a signal.
    Abrupt,
}

/// Runs the server on this process's stdin and stdout.
pub async fn run(options: LspOptions) -> io::Result<Ending> {
    let state = State::new();
    if let Some(writer) = options.disk_writer {
        state.set_disk_writer(writer);
    }
    if let Some(journal) = &state.journal {
        journal.texts().prune_in_background();
    }
    let endpoint = match options.socket {
        Some(socket) => Endpoint::for_socket(socket),
        None => {
            let dir = runtime_dir();
            prepare_dir(&dir)?;
            live_servers(&dir);
            Endpoint::in_dir(&dir)
        }
    };
    let listen = |path: &std::path::Path| {
        bind(path)
            .map_err(|error| io::Error::new(error.kind(), format!("cannot listen on {}: {error}", path.display())))
    };
    let listener = listen(&endpoint.socket)?;
    let read_only_listener = listen(&endpoint.read_only_socket)?;
    state.set_endpoint(endpoint.clone());
    tracing::info!(socket = %endpoint.socket.display(), read_only = %endpoint.read_only_socket.display(), "agents can connect");
    let accept = tokio::spawn(accept_agents(listener, state.clone(), SocketKind::Main));
    let accept_read_only = tokio::spawn(accept_agents(read_only_listener, state.clone(), SocketKind::ReadOnly));

    let shutdown_requested = Arc::new(AtomicBool::new(false));
    let claude: ClaudeSlot = Arc::default();
    let companion: CompanionSlot = Arc::default();
    let (service, socket) = LspService::build({
        let state = state.clone();
        let shutdown_requested = shutdown_requested.clone();
        let (claude, companion) = (claude.clone(), companion.clone());
        move |client| EditorBackend::new(client, state, shutdown_requested, claude, companion)
    })
    .custom_method(method::STATUS, EditorBackend::status)
    .custom_method(method::TIMELINE, EditorBackend::timeline)
    .custom_method(method::TIMELINE_ENTRY, EditorBackend::timeline_entry)
    .custom_method(method::MARK_REVIEWED, EditorBackend::mark_reviewed)
    .custom_method(method::REVERT, EditorBackend::revert)
    .finish();
    let service = OrderedSync::new(service, state.clone());
    let (input, account) = editor_input::stdin();
    let observer = Counted { account: account.clone(), inner: TextSyncCounter(state.clone()) };
    state.editor_order.watch_input(Box::new(move || account.unread()));
    let (input, output, _input_closed) = guard_observed(input, tokio::io::stdout(), FrameLimits::default(), observer);
    let serve = Server::new(input, output, socket).serve(service);

    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        () = serve => tracing::info!("the editor connection ended"),
        _ = terminate.recv() => tracing::info!("SIGTERM: stopping"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: stopping"),
    }
    // Claude Code's lock file goes first: no new connection should find a server that stops.
    if let Some(endpoint) = claude.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() {
        endpoint.stop();
    }
    if let Some(endpoint) = companion.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() {
        endpoint.stop();
    }
    state.close_editor();
    // Let agents whose edits were waiting receive their `editorUnavailable` answer.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
    while !state.registry().pending().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    accept.abort();
    accept_read_only.abort();
    endpoint.remove();
    // The texts kept to undo the last writes, if the writer has not had them yet.
    let flushed = tokio::task::spawn_blocking(|| {
        crate::service::journal_texts::KeptTexts::flush(std::time::Duration::from_secs(5));
    });
    let _ = flushed.await;
    Ok(if shutdown_requested.load(Ordering::SeqCst) { Ending::Clean } else { Ending::Abrupt })
}

/// Counts the editor's text-sync messages as the guard hands them on.
struct TextSyncCounter(Arc<State>);

impl Observer for TextSyncCounter {
    fn message(&self, method: &str) {
        if EditorOrder::is_text_sync(method) {
            self.0.editor_order.received();
        }
    }

    fn handled(&self, _bytes: u64) {
        self.0.editor_order.input_moved();
    }
}
