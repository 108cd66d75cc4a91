//! The agent socket: accepts connections, refuses processes of other users
//! (checked with `SO_PEERCRED` on every connection, whatever the file modes say),
//! and serves each agent as its own LSP session over the shared state.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use tokio::net::{UnixListener, UnixStream};
use tower_lsp_server::Server;

use crate::service::access::Access;
use crate::service::state::State;
use crate::transport::agent::AgentSession;
use crate::transport::framing::{FrameLimits, guard};

/// Binds the socket with mode 0600, replacing a stale socket file.
pub fn bind(path: &Path) -> io::Result<UnixListener> {
    if path.exists() {
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Which socket a connection came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketKind {
    /// Access as the editor configured it (`agentAccess`, read-write by default).
    Main,
    /// Always read-only.
    ReadOnly,
}

/// Accepts agents until the process ends.
pub async fn accept_agents(listener: UnixListener, state: Arc<State>, kind: SocketKind) {
    let own_uid = rustix::process::getuid().as_raw();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!("accepting an agent connection failed: {error}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        match stream.peer_cred() {
            Ok(credentials) if credentials.uid() == own_uid => {}
            Ok(credentials) => {
                tracing::warn!(
                    "refused an agent connection from uid {} (this server belongs to uid {own_uid})",
                    credentials.uid()
                );
                continue;
            }
            Err(error) => {
                tracing::warn!("refused an agent connection whose credentials cannot be read: {error}");
                continue;
            }
        }
        let access = match kind {
            SocketKind::Main => state.main_socket_access(),
            SocketKind::ReadOnly => Access::ReadOnly,
        };
        tokio::spawn(serve_agent(stream, state.clone(), access));
    }
}

async fn serve_agent(stream: UnixStream, state: Arc<State>, access: Access) {
    let (read, write) = stream.into_split();
    let (input, output, input_closed) = guard(read, write, FrameLimits::default());
    let (service, socket) = AgentSession::service(state, access);
    let serve = Server::new(input, output, socket).concurrency_level(16).serve(service);
    // An agent that closes its connection is gone: its requests still waiting (for a
    // review, say) are dropped with it, which withdraws them from the editor.
    tokio::select! {
        () = serve => {}
        () = input_closed.cancelled() => {}
    }
}
