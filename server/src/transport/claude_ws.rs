//! The endpoint Claude Code connects to as its IDE: MCP over WebSocket on 127.0.0.1,
//! announced by a lock file ([`crate::transport::ide_lock`]).
//!
//! Every connection is checked before the WebSocket upgrade: the peer must be a
//! loopback address, the request must carry no `Origin` header (a web page, not a CLI:
//! CVE-2025-52882 was an IDE endpoint any page could reach) and its
//! `X-Claude-Code-Ide-Authorization` header must be the lock file's token (compared in
//! constant time). Refusals are logged with their reason, never with a token. An
//! accepted connection is one MCP session ([`crate::ide::mcp`]) of Claude Code's tools
//! ([`crate::ide::claude_code`]); this module only moves its messages.

use std::io::{self, Read as _};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};

use crate::ide::claude_code::ClaudeCodeIde;
use crate::service::state::State;
use crate::transport::ide_lock::{IDE_NAME_SUFFIX, LockContent, LockFile, lock_dir, remove_stale};

/// The header that carries the lock file's token.
const AUTH_HEADER: &str = "x-claude-code-ide-authorization";
/// How many incoming messages may wait for the session.
const INCOMING_BACKLOG: usize = 64;

/// A running endpoint. Dropping it (or [`ClaudeEndpoint::stop`]) stops listening
/// and removes the lock file.
#[derive(Debug)]
pub struct ClaudeEndpoint {
    port: u16,
    token: Arc<str>,
    ide_name: String,
    lock: Mutex<Option<LockFile>>,
    accept: JoinHandle<()>,
}

impl ClaudeEndpoint {
    /// Listens on a random loopback port and writes the lock file naming the
    /// workspace folders. `editor` names the editor ("Neovim").
    pub async fn start(state: Arc<State>, editor: &str) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let port = listener.local_addr()?.port();
        let token: Arc<str> = random_token()?.into();
        let accept = tokio::spawn(accept(listener, state.clone(), token.clone()));
        let endpoint =
            Self { port, token, ide_name: format!("{editor}{IDE_NAME_SUFFIX}"), lock: Mutex::new(None), accept };
        match lock_dir() {
            Some(dir) => {
                remove_stale(&dir);
                let lock = LockFile::write(&dir, port, &endpoint.lock_content(&state))?;
                tracing::info!(port, lock = %lock.path().display(), "Claude Code can connect (its IDE protocol)");
                *endpoint.lock() = Some(lock);
            }
            None => tracing::warn!(
                port,
                "no HOME nor CLAUDE_CONFIG_DIR: no lock file written; Claude Code finds this editor only through \
                 CLAUDE_CODE_SSE_PORT"
            ),
        }
        Ok(endpoint)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<LockFile>> {
        self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lock_content(&self, state: &State) -> LockContent {
        LockContent {
            pid: std::process::id(),
            workspace_folders: state.workspace().folders().iter().map(|folder| folder.display().to_string()).collect(),
            ide_name: self.ide_name.clone(),
            transport: "ws".into(),
            auth_token: self.token.to_string(),
        }
    }

    /// Rewrites the lock file after the workspace folders changed.
    pub fn refresh(&self, state: &State) {
        if let Some(lock) = self.lock().as_ref()
            && let Err(error) = lock.rewrite(&self.lock_content(state))
        {
            tracing::error!(lock = %lock.path().display(), "cannot rewrite the Claude Code lock file: {error}");
        }
    }

    /// Stops listening and removes the lock file.
    pub fn stop(&self) {
        self.accept.abort();
        if let Some(lock) = self.lock().take() {
            lock.remove();
        }
    }
}

impl Drop for ClaudeEndpoint {
    fn drop(&mut self) {
        self.stop();
    }
}

/// 32 random bytes from the kernel, as hex.
fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

async fn accept(listener: TcpListener, state: Arc<State>, token: Arc<str>) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!("the Claude Code endpoint could not accept a connection: {error}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        tokio::spawn(connection(stream, peer, state.clone(), token.clone()));
    }
}

/// Why a connection was refused before the upgrade.
fn refusal(request: &Request, token: &str) -> Option<(StatusCode, &'static str)> {
    if request.headers().contains_key("origin") {
        return Some((StatusCode::FORBIDDEN, "it carries an Origin header (a web page, not Claude Code)"));
    }
    match request.headers().get(AUTH_HEADER).map(HeaderValue::as_bytes) {
        None => Some((StatusCode::UNAUTHORIZED, "it carries no X-Claude-Code-Ide-Authorization token")),
        Some(given) if !constant_time_eq(given, token.as_bytes()) => {
            Some((StatusCode::UNAUTHORIZED, "its X-Claude-Code-Ide-Authorization token is wrong"))
        }
        Some(_) => None,
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn connection(stream: TcpStream, peer: SocketAddr, state: Arc<State>, token: Arc<str>) {
    if !peer.ip().is_loopback() {
        tracing::warn!(%peer, "refused a Claude Code connection: not from this machine");
        return;
    }
    // The error type is tungstenite's: the closure cannot box it.
    #[allow(clippy::result_large_err)]
    let check = |request: &Request, mut response: Response| -> Result<Response, ErrorResponse> {
        if let Some((status, why)) = refusal(request, &token) {
            tracing::warn!(%peer, "refused a Claude Code connection: {why}");
            let mut refused = ErrorResponse::new(Some(format!("verbatim refused the connection: {why}\n")));
            *refused.status_mut() = status;
            return Err(refused);
        }
        let wants_mcp = request
            .headers()
            .get_all("sec-websocket-protocol")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .any(|value| value.split(',').any(|protocol| protocol.trim() == "mcp"));
        if wants_mcp {
            response.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static("mcp"));
        }
        Ok(response)
    };
    let socket = match tokio_tungstenite::accept_hdr_async(stream, check).await {
        Ok(socket) => socket,
        Err(error) => {
            tracing::debug!(%peer, "the Claude Code handshake did not complete: {error}");
            return;
        }
    };
    tracing::info!(%peer, "Claude Code connected");
    let (mut sink, mut source) = socket.split();
    let (to_session, incoming) = mpsc::channel::<Value>(INCOMING_BACKLOG);
    let (outgoing, mut to_agent) = mpsc::unbounded_channel::<Value>();
    let ide = ClaudeCodeIde::connect(state, outgoing.clone());
    let session = tokio::spawn(crate::ide::mcp::serve(ide, incoming, outgoing.clone()));
    let writer = tokio::spawn(async move {
        while let Some(message) = to_agent.recv().await {
            if sink.send(Message::text(message.to_string())).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    while let Some(frame) = source.next().await {
        let text = match frame {
            Ok(Message::Text(text)) => text,
            Ok(Message::Binary(bytes)) => match String::from_utf8(bytes.to_vec()) {
                Ok(text) => text.into(),
                Err(_) => continue,
            },
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(message) => {
                if to_session.send(message).await.is_err() {
                    break;
                }
            }
            Err(error) => {
                let _ = outgoing.send(json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": format!("parse error: {error}")}}));
            }
        }
    }
    tracing::info!(%peer, "Claude Code disconnected");
    drop(to_session);
    drop(outgoing);
    let _ = session.await;
    let _ = writer.await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut builder = Request::builder().uri("/");
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn refusals() {
        let token = "abc";
        assert_eq!(refusal(&request(&[]), token).map(|(status, _)| status), Some(StatusCode::UNAUTHORIZED));
        assert_eq!(
            refusal(&request(&[(AUTH_HEADER, "abd")]), token).map(|(status, _)| status),
            Some(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            refusal(&request(&[(AUTH_HEADER, "abc"), ("Origin", "https://evil.example")]), token)
                .map(|(status, _)| status),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(refusal(&request(&[(AUTH_HEADER, "abc")]), token), None);
    }

    #[test]
    fn tokens_are_fresh_and_long() {
        let (a, b) = (random_token().unwrap(), random_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
