//! The endpoint Gemini CLI and Qwen Code connect to as their IDE companion: MCP over
//! streamable HTTP on 127.0.0.1, one endpoint `/mcp`, announced by discovery files
//! ([`crate::transport::companion_files`]).
//!
//! Every request is checked before anything else: the peer must be a loopback address,
//! the request must carry no `Origin` header (a web page, not a CLI) and its
//! `Authorization` header must be `Bearer <the discovery file's token>` (compared in
//! constant time). Refusals are logged with their reason, never with a token.
//!
//! `POST /mcp` carries JSON-RPC messages: an `initialize` without `Mcp-Session-Id`
//! opens a session (the answer names its id); a request is answered in the response
//! body as JSON; notifications and responses get 202. `GET /mcp` is the session's
//! standing event stream: every notification of the IDE (`ide/diffAccepted`,
//! `ide/contextUpdate`, ...) goes there as an SSE `message` event, kept until a
//! stream is open. `DELETE /mcp` ends the session. A session is one MCP session
//! ([`crate::ide::mcp`]) of the companion's tools ([`crate::ide::gemini_cli`]); this
//! module only moves its messages. It also ends when its event stream has been gone
//! for a while (the CLI exited).

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{self, Read as _};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, Limited, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::ide::gemini_cli::GeminiCliIde;
use crate::service::state::State;
use crate::transport::companion_files::{
    CompanionContent, CompanionFiles, gemini_dir, ide_info, qwen_dir, remove_stale, workspace_path,
};

/// The one endpoint.
pub const PATH: &str = "/mcp";
/// The header that names a session.
const SESSION_HEADER: &str = "mcp-session-id";
/// The largest request body: a whole file's proposal.
const MAX_BODY: usize = 256 * 1024 * 1024;
/// How many incoming messages may wait for a session.
const INCOMING_BACKLOG: usize = 64;
/// How many notifications are kept while no event stream is open.
const NOTIFICATION_BACKLOG: usize = 256;
/// A comment on the event stream this often, so no client times it out.
const KEEPALIVE: Duration = Duration::from_secs(20);
/// A session whose event stream is gone (or never came) ends after this long.
const ORPHAN_TIMEOUT: Duration = Duration::from_secs(30);

type Body = BoxBody<Bytes, Infallible>;

/// What the editor's terminals need to find this endpoint, and the file's content.
#[derive(Debug, Clone)]
pub struct CompanionInfo {
    pub port: u16,
    pub auth_token: String,
    pub workspace_path: String,
    pub ide_pid: u32,
}

impl CompanionInfo {
    /// The environment of a terminal the editor starts, so that a CLI started there
    /// connects to this editor: Gemini CLI's variables and Qwen Code's.
    pub fn terminal_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("GEMINI_CLI_IDE_SERVER_PORT", self.port.to_string()),
            ("GEMINI_CLI_IDE_WORKSPACE_PATH", self.workspace_path.clone()),
            ("GEMINI_CLI_IDE_AUTH_TOKEN", self.auth_token.clone()),
            ("GEMINI_CLI_IDE_PID", self.ide_pid.to_string()),
            ("QWEN_CODE_IDE_SERVER_PORT", self.port.to_string()),
            ("QWEN_CODE_IDE_WORKSPACE_PATH", self.workspace_path.clone()),
        ]
    }

    /// `capabilities.experimental.verbatim.geminiCli` in the `initialize` result.
    pub fn capability(&self) -> Value {
        let env: serde_json::Map<String, Value> =
            self.terminal_env().into_iter().map(|(name, value)| (name.to_owned(), Value::String(value))).collect();
        json!({"port": self.port, "authToken": self.auth_token, "workspacePath": self.workspace_path,
               "idePid": self.ide_pid, "env": env})
    }
}

/// A running endpoint. Dropping it (or [`CompanionEndpoint::stop`]) stops listening
/// and removes the discovery files.
#[derive(Debug)]
pub struct CompanionEndpoint {
    port: u16,
    token: Arc<str>,
    editor: String,
    ide_pid: u32,
    files: Mutex<Option<CompanionFiles>>,
    accept: JoinHandle<()>,
}

impl CompanionEndpoint {
    /// Listens on a random loopback port and writes the discovery files. `editor`
    /// names the editor ("Neovim"); `ide_pid` is the PID the files name.
    pub async fn start(state: Arc<State>, editor: &str, ide_pid: u32) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let port = listener.local_addr()?.port();
        let token: Arc<str> = random_token()?.into();
        let sessions: Arc<Sessions> = Arc::default();
        let accept = tokio::spawn(accept(listener, state.clone(), token.clone(), sessions));
        let endpoint = Self { port, token, editor: editor.to_owned(), ide_pid, files: Mutex::new(None), accept };
        let (gemini, qwen) = (gemini_dir(), qwen_dir());
        remove_stale(&gemini);
        if let Some(qwen) = &qwen {
            remove_stale(qwen);
        }
        let files = CompanionFiles::write(&gemini, qwen.as_deref(), ide_pid, &endpoint.content(&state))?;
        tracing::info!(port, file = %files.paths()[0].display(), "Gemini CLI and Qwen Code can connect (IDE companion)");
        *endpoint.files() = Some(files);
        Ok(endpoint)
    }

    pub fn info(&self, state: &State) -> CompanionInfo {
        CompanionInfo {
            port: self.port,
            auth_token: self.token.to_string(),
            workspace_path: workspace_path(state.workspace().folders()),
            ide_pid: self.ide_pid,
        }
    }

    fn files(&self) -> std::sync::MutexGuard<'_, Option<CompanionFiles>> {
        self.files.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn content(&self, state: &State) -> CompanionContent {
        CompanionContent {
            port: self.port,
            workspace_path: workspace_path(state.workspace().folders()),
            auth_token: self.token.to_string(),
            ide_info: ide_info(&self.editor),
            ppid: None,
        }
    }

    /// Rewrites the discovery files after the workspace folders changed.
    pub fn refresh(&self, state: &State) {
        if let Some(files) = self.files().as_ref()
            && let Err(error) = files.rewrite(&self.content(state))
        {
            tracing::error!("cannot rewrite the IDE companion discovery files: {error}");
        }
    }

    /// Stops listening and removes the discovery files.
    pub fn stop(&self) {
        self.accept.abort();
        if let Some(files) = self.files().take() {
            files.remove();
        }
    }
}

impl Drop for CompanionEndpoint {
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

/// One CLI session.
struct Session {
    incoming: mpsc::Sender<Value>,
    /// Requests waiting for their response, by the JSON of their id.
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// The open event stream, or the notifications kept until one opens.
    stream: Mutex<Stream>,
    /// Ends the session's tasks.
    ended: tokio_util::sync::CancellationToken,
}

#[derive(Default)]
struct Stream {
    sender: Option<mpsc::UnboundedSender<Bytes>>,
    backlog: Vec<Value>,
    /// When the stream was last seen gone (or the session opened without one).
    orphaned_at: Option<tokio::time::Instant>,
}

type Sessions = Mutex<HashMap<String, Arc<Session>>>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Session {
    fn open(state: Arc<State>) -> Arc<Self> {
        let (incoming, from_cli) = mpsc::channel::<Value>(INCOMING_BACKLOG);
        let (outgoing, mut to_cli) = mpsc::unbounded_channel::<Value>();
        let session = Arc::new(Self {
            incoming,
            waiting: Mutex::default(),
            stream: Mutex::new(Stream { orphaned_at: Some(tokio::time::Instant::now()), ..Stream::default() }),
            ended: tokio_util::sync::CancellationToken::new(),
        });
        let ide = GeminiCliIde::connect(state, outgoing.clone());
        tokio::spawn(crate::ide::mcp::serve(ide, from_cli, outgoing));
        let dispatch = session.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    message = to_cli.recv() => message,
                    () = dispatch.ended.cancelled() => None,
                };
                let Some(message) = message else { break };
                dispatch.deliver(message);
            }
        });
        session
    }

    /// A response goes to the request that waits for it; anything else to the stream.
    fn deliver(&self, message: Value) {
        if message.get("method").is_none()
            && let Some(id) = message.get("id")
        {
            if let Some(waiter) = lock(&self.waiting).remove(&id.to_string()) {
                let _ = waiter.send(message);
            }
            return;
        }
        let mut stream = lock(&self.stream);
        if let Some(sender) = &stream.sender
            && sender.send(sse(&message)).is_ok()
        {
            return;
        }
        stream.sender = None;
        stream.orphaned_at.get_or_insert_with(tokio::time::Instant::now);
        if stream.backlog.len() < NOTIFICATION_BACKLOG {
            stream.backlog.push(message);
        }
    }

    fn end(&self) {
        self.ended.cancel();
        lock(&self.stream).sender = None;
    }
}

fn sse(message: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {message}\n\n"))
}

async fn accept(listener: TcpListener, state: Arc<State>, token: Arc<str>, sessions: Arc<Sessions>) {
    tokio::spawn(reap(Arc::downgrade(&sessions)));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!("the IDE companion endpoint could not accept a connection: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if !peer.ip().is_loopback() {
            tracing::warn!(%peer, "refused an IDE companion connection: not from this machine");
            continue;
        }
        let (state, token, sessions) = (state.clone(), token.clone(), sessions.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let (state, token, sessions) = (state.clone(), token.clone(), sessions.clone());
                async move { Ok::<_, Infallible>(handle(request, peer, &state, &token, &sessions).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            if let Err(error) = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await {
                tracing::debug!(%peer, "an IDE companion connection ended: {error}");
            }
        });
    }
}

/// Ends the sessions whose event stream has been gone for [`ORPHAN_TIMEOUT`].
async fn reap(sessions: std::sync::Weak<Sessions>) {
    loop {
        tokio::time::sleep(ORPHAN_TIMEOUT / 3).await;
        let Some(sessions) = sessions.upgrade() else { return };
        let now = tokio::time::Instant::now();
        lock(&sessions).retain(|id, session| {
            let mut stream = lock(&session.stream);
            if stream.sender.as_ref().is_some_and(mpsc::UnboundedSender::is_closed) {
                stream.sender = None;
                stream.orphaned_at = Some(now);
            }
            let gone = stream.sender.is_none() && stream.orphaned_at.is_some_and(|at| now - at >= ORPHAN_TIMEOUT);
            if gone {
                tracing::info!(session = %id, "an IDE companion session ended: its event stream is gone");
                drop(stream);
                session.end();
            }
            !gone
        });
    }
}

/// Why a request is refused, before anything else is read.
fn refusal(headers: &hyper::HeaderMap, token: &str) -> Option<(StatusCode, &'static str)> {
    if headers.contains_key(header::ORIGIN) {
        return Some((StatusCode::FORBIDDEN, "it carries an Origin header (a web page, not a CLI)"));
    }
    let given = headers.get(header::AUTHORIZATION).map(HeaderValue::as_bytes);
    match given.and_then(|value| value.strip_prefix(b"Bearer ")) {
        None => Some((StatusCode::UNAUTHORIZED, "it carries no Authorization: Bearer token")),
        Some(given) if !constant_time_eq(given, token.as_bytes()) => {
            Some((StatusCode::UNAUTHORIZED, "its Authorization token is wrong"))
        }
        Some(_) => None,
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn text(status: StatusCode, message: impl Into<String>) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(message.into())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    json_response(status, &json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}))
}

async fn handle(
    request: Request<Incoming>,
    peer: SocketAddr,
    state: &Arc<State>,
    token: &str,
    sessions: &Sessions,
) -> Response<Body> {
    if let Some((status, why)) = refusal(request.headers(), token) {
        tracing::warn!(%peer, method = %request.method(), "refused an IDE companion request: {why}");
        return text(status, format!("verbatim refused the request: {why}\n"));
    }
    if request.uri().path() != PATH {
        return text(StatusCode::NOT_FOUND, format!("the IDE companion endpoint is {PATH}\n"));
    }
    let session_id = request.headers().get(SESSION_HEADER).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let session = session_id.as_ref().and_then(|id| lock(sessions).get(id).cloned());
    match *request.method() {
        Method::POST => post(request, state, sessions, session_id, session).await,
        Method::GET => match session {
            Some(session) => event_stream(&session),
            None => rpc_error(StatusCode::BAD_REQUEST, -32000, "GET needs the Mcp-Session-Id of an open session"),
        },
        Method::DELETE => match session_id.and_then(|id| lock(sessions).remove(&id)) {
            Some(session) => {
                session.end();
                tracing::info!("an IDE companion session ended (DELETE)");
                text(StatusCode::OK, "")
            }
            None => rpc_error(StatusCode::NOT_FOUND, -32001, "no such session"),
        },
        _ => text(StatusCode::METHOD_NOT_ALLOWED, "POST, GET or DELETE\n"),
    }
}

async fn post(
    request: Request<Incoming>,
    state: &Arc<State>,
    sessions: &Sessions,
    session_id: Option<String>,
    session: Option<Arc<Session>>,
) -> Response<Body> {
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(error) => {
            return rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, &format!("cannot read the body: {error}"));
        }
    };
    let messages = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Array(messages)) => messages,
        Ok(message) => vec![message],
        Err(error) => return rpc_error(StatusCode::BAD_REQUEST, -32700, &format!("parse error: {error}")),
    };
    let initialize = messages.iter().any(|message| message.get("method").and_then(Value::as_str) == Some("initialize"));
    let (session, new_id) = match (session, session_id) {
        (Some(session), _) => (session, None),
        (None, None) if initialize => {
            let id = random_token().map(|token| token[..32].to_owned()).unwrap_or_else(|_| "session".into());
            let session = Session::open(state.clone());
            lock(sessions).insert(id.clone(), session.clone());
            tracing::info!("an IDE companion session opened (Gemini CLI or Qwen Code)");
            (session, Some(id))
        }
        (None, None) => {
            return rpc_error(StatusCode::BAD_REQUEST, -32000, "Mcp-Session-Id missing: initialize first");
        }
        (None, Some(_)) => return rpc_error(StatusCode::NOT_FOUND, -32001, "no such session: initialize again"),
    };
    let mut answers = Vec::new();
    for message in messages {
        let is_request = message.get("method").is_some() && message.get("id").is_some_and(|id| !id.is_null());
        let answer = if is_request {
            let (sender, receiver) = oneshot::channel();
            let id = message.get("id").map(Value::to_string).unwrap_or_default();
            lock(&session.waiting).insert(id, sender);
            Some(receiver)
        } else {
            None
        };
        if session.incoming.send(message).await.is_err() {
            return rpc_error(StatusCode::NOT_FOUND, -32001, "the session has ended");
        }
        if let Some(answer) = answer {
            answers.push(answer);
        }
    }
    let mut responses = Vec::new();
    for answer in answers {
        match answer.await {
            Ok(response) => responses.push(response),
            Err(_) => return rpc_error(StatusCode::NOT_FOUND, -32001, "the session has ended"),
        }
    }
    let mut response = match responses.len() {
        0 => text(StatusCode::ACCEPTED, ""),
        1 => json_response(StatusCode::OK, &responses[0]),
        _ => json_response(StatusCode::OK, &Value::Array(responses)),
    };
    if let Some(id) = new_id
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// The session's standing event stream; a newer one replaces it.
fn event_stream(session: &Arc<Session>) -> Response<Body> {
    let (sender, receiver) = mpsc::unbounded_channel::<Bytes>();
    {
        let mut stream = lock(&session.stream);
        for message in stream.backlog.drain(..) {
            let _ = sender.send(sse(&message));
        }
        stream.sender = Some(sender.clone());
        stream.orphaned_at = None;
    }
    let keepalive = sender.downgrade();
    let ended = session.ended.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(KEEPALIVE) => {}
                () = ended.cancelled() => return,
            }
            let Some(sender) = keepalive.upgrade() else { return };
            if sender.send(Bytes::from_static(b": keepalive\n\n")).is_err() {
                return;
            }
        }
    });
    drop(sender);
    let ended = session.ended.clone();
    let frames = futures::stream::unfold((receiver, ended), |(mut receiver, ended)| async move {
        let bytes = tokio::select! {
            bytes = receiver.recv() => bytes,
            () = ended.cancelled() => None,
        }?;
        Some((Ok::<_, Infallible>(Frame::data(bytes)), (receiver, ended)))
    });
    let mut response = Response::new(StreamBody::new(frames).boxed());
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> hyper::HeaderMap {
        let mut map = hyper::HeaderMap::new();
        for (name, value) in pairs {
            map.insert(hyper::header::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        map
    }

    #[test]
    fn refusals() {
        let status = |pairs: &[(&str, &str)]| refusal(&headers(pairs), "abc").map(|(status, _)| status);
        assert_eq!(status(&[]), Some(StatusCode::UNAUTHORIZED));
        assert_eq!(status(&[("authorization", "abc")]), Some(StatusCode::UNAUTHORIZED));
        assert_eq!(status(&[("authorization", "Bearer abd")]), Some(StatusCode::UNAUTHORIZED));
        assert_eq!(
            status(&[("authorization", "Bearer abc"), ("origin", "https://evil.example")]),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(status(&[("authorization", "Bearer abc")]), None);
    }
}
