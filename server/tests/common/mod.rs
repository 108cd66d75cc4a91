//! Test harness: the real `verbatim` binary, a scripted editor on its stdio that
//! behaves as VS Code does, and agents on its real Unix socket. Everything speaks
//! the wire format: Content-Length framed JSON-RPC.
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A headless front-end for replays: one read-write agent named `replay`, the
/// files under `root`, no journal and no git.
pub fn replay_headless(root: &Path) -> verbatim::headless::Headless {
    verbatim::headless::Headless::new(verbatim::headless::HeadlessOptions {
        agent: verbatim::service::registry::AgentInfo {
            id: 0,
            name: "replay".into(),
            version: None,
            connected_at: "2026-12-02T00:00:00Z".into(),
            encoding: verbatim_engine::position::PositionEncoding::Utf32,
            access: verbatim::service::access::Access::ReadWrite,
            options: Default::default(),
            session: "replay".into(),
            turn: None,
        },
        roots: vec![root.to_path_buf()],
        cwd: root.to_path_buf(),
        git_commit: false,
        journal: None,
        lock_dir: root.join(".locks"),
    })
}

/// A tiny deterministic generator (xorshift), so that runs are repeatable.
pub struct Random(pub u64);

impl Random {
    /// A number in `0..bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound.max(1) as u64) as usize
    }
}

/// A JSON-RPC error as received.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Value,
}

impl RpcError {
    pub fn kind(&self) -> &str {
        self.data["kind"].as_str().unwrap_or("")
    }
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>>;

/// One LSP connection: requests with routed responses, and a stream of the
/// requests and notifications the other side sends.
pub struct Connection {
    writer: Arc<tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>>,
    pending: Pending,
    next_id: AtomicI64,
}

pub async fn read_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).await.ok()?;
    serde_json::from_slice(&body).ok()
}

pub fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend(body);
    out
}

impl Connection {
    /// Starts reading; incoming requests and notifications go to the returned channel.
    pub fn start<R, W>(read: R, write: W) -> (Arc<Self>, mpsc::UnboundedReceiver<Value>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let connection = Arc::new(Self {
            writer: Arc::new(tokio::sync::Mutex::new(Box::new(write))),
            pending: Pending::default(),
            next_id: AtomicI64::new(1),
        });
        let (incoming_tx, incoming_rx) = mpsc::unbounded_channel();
        let pending = connection.pending.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(read);
            while let Some(message) = read_frame(&mut reader).await {
                let is_response = message.get("method").is_none();
                if is_response {
                    let Some(id) = message["id"].as_i64() else { continue };
                    let Some(sender) = pending.lock().unwrap().remove(&id) else { continue };
                    let result = match message.get("error") {
                        Some(error) => Err(RpcError {
                            code: error["code"].as_i64().unwrap_or(0),
                            message: error["message"].as_str().unwrap_or("").to_owned(),
                            data: error.get("data").cloned().unwrap_or(Value::Null),
                        }),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = sender.send(result);
                } else if incoming_tx.send(message).is_err() {
                    break;
                }
            }
            // The other side is gone: fail everything still waiting.
            pending.lock().unwrap().clear();
        });
        (connection, incoming_rx)
    }

    pub async fn send(&self, message: &Value) {
        let mut writer = self.writer.lock().await;
        writer.write_all(&frame(message)).await.unwrap();
        writer.flush().await.unwrap();
    }

    pub async fn send_raw(&self, bytes: &[u8]) {
        let mut writer = self.writer.lock().await;
        writer.write_all(bytes).await.unwrap();
        writer.flush().await.unwrap();
    }

    pub async fn notify(&self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Sends a request and returns its id and a receiver for the response.
    pub async fn start_request(
        &self,
        method: &str,
        params: Value,
    ) -> (i64, oneshot::Receiver<Result<Value, RpcError>>) {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        (id, rx)
    }

    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let (_, rx) = self.start_request(method, params).await;
        tokio::time::timeout(TIMEOUT, rx).await.expect("request timed out").expect("connection closed")
    }

    pub async fn respond(&self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result})).await;
    }
}

/// What the scripted editor does with a `workspace/applyEdit`.
#[derive(Debug, Clone)]
pub enum Review {
    /// Apply it when the versions match (as VS Code does), answer after sending didChange.
    Accept,
    /// Like Accept, but answer before sending the didChange.
    AcceptAnswerFirst,
    /// Answer `applied: false` with this reason.
    Reject(Option<String>),
    /// Apply it, then also apply this (find, replace) as the person would in review.
    AcceptAltered(String, String),
    /// Hand the request to the test (see [`ScriptedEditor::next_review`]).
    Manual,
    /// Answer with a JSON-RPC error, as a broken editor might.
    Error,
    /// Answer with a JSON-RPC error with this message, as Eglot answers "n" ("User
    /// cancelled server edit") or a version that moved ("… require version 1, you have 4").
    ErrorWith(String),
    /// Apply only the hunks (of `verbatim.hunks`) numbered in `keep`; with `report`,
    /// say so in the answer (`hunks`, `reason`), as Verbatim's clients do; without,
    /// answer a bare `applied: true`, as VS Code's Refactor Preview does.
    AcceptHunks { keep: Vec<usize>, reason: Option<String>, report: bool },
    /// Like Accept, but a file that is not open is edited on disk and stays closed (as
    /// an editor may apply a workspace edit to a file it does not show).
    AcceptWritingClosedFiles,
}

/// A request waiting for the test's decision.
#[derive(Debug)]
pub struct ApplyRequest {
    pub id: Value,
    pub params: Value,
}

#[derive(Debug, Clone)]
struct EditorDocument {
    text: String,
    version: i32,
}

/// Converts an LSP position to a byte offset in `text` (an independent, naive
/// implementation used to check the server's).
pub fn offset_of(text: &str, line: u64, character: u64, encoding: &str) -> usize {
    let mut line_start = 0;
    let bytes = text.as_bytes();
    let mut current = 0;
    let mut i = 0;
    while current < line {
        if i >= bytes.len() {
            return text.len();
        }
        if bytes[i] == b'\r' {
            if bytes.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            current += 1;
            line_start = i + 1;
        } else if bytes[i] == b'\n' {
            current += 1;
            line_start = i + 1;
        }
        i += 1;
    }
    let line_end = text[line_start..].find(['\r', '\n']).map_or(text.len(), |end| line_start + end);
    let mut units = 0u64;
    for (offset, ch) in text[line_start..line_end].char_indices() {
        if units >= character {
            return line_start + offset;
        }
        units += match encoding {
            "utf-8" => ch.len_utf8() as u64,
            "utf-32" => 1,
            _ => ch.len_utf16() as u64,
        };
    }
    line_end
}

/// The position of a byte offset (naive).
pub fn position_of(text: &str, offset: usize, encoding: &str) -> Value {
    let before = &text[..offset];
    let mut line = 0;
    let mut line_start = 0;
    let bytes = before.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\r' {
            if bytes.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            line += 1;
            line_start = i + 1;
        } else if bytes[i] == b'\n' {
            line += 1;
            line_start = i + 1;
        }
        i += 1;
    }
    let column: usize = before[line_start.min(before.len())..]
        .chars()
        .map(|ch| match encoding {
            "utf-8" => ch.len_utf8(),
            "utf-32" => 1,
            _ => ch.len_utf16(),
        })
        .sum();
    json!({"line": line, "character": column})
}

struct EditorShared {
    documents: Mutex<HashMap<String, EditorDocument>>,
    /// Ids of `$/cancelRequest` notifications received from the server.
    cancelled: Mutex<Vec<Value>>,
    review: Mutex<Review>,
    encoding: Mutex<String>,
    /// Reload a document from disk when the server says `verbatim/externalChange`
    /// with kind `reload` (as VS Code reloads clean documents by itself).
    reload_clean: Mutex<bool>,
    /// Answers to `verbatim/diagnostics`, in order (`None`: never answer); an
    /// empty queue answers with no documents.
    diagnostics_answers: Mutex<std::collections::VecDeque<Option<Value>>>,
    /// The server's answer to `initialize`.
    initialize_result: Mutex<Value>,
    /// The params of every `verbatim/diagnostics` received.
    diagnostics_requests: Mutex<Vec<Value>>,
    /// While `Some`, `didChange` notifications are held here instead of sent (as Eglot
    /// holds them until an idle timer fires, often the person's next keystroke).
    deferred: Mutex<Option<Vec<Value>>>,
    /// Count one version per applied `TextEdit`, as Eglot does (else two per edit).
    versions_like_eglot: Mutex<bool>,
}

/// An editor driving the real binary over stdio pipes.
pub struct ScriptedEditor {
    pub connection: Arc<Connection>,
    shared: Arc<EditorShared>,
    reviews: tokio::sync::Mutex<mpsc::UnboundedReceiver<ApplyRequest>>,
    /// `verbatim/externalChange` notifications, in arrival order.
    external: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    pub child: Child,
    pub runtime_dir: tempfile::TempDir,
    /// The server's state directory: where its journal goes.
    pub state_dir: tempfile::TempDir,
    pub workspace: tempfile::TempDir,
    /// `CLAUDE_CONFIG_DIR` of the server: where its Claude Code lock file goes.
    pub claude_dir: tempfile::TempDir,
    pub encoding: String,
}

/// The editor's options, saying it reads Verbatim's additions (as Verbatim's own clients
/// do) unless the test says `verbatimExtensions` itself (false: a plain LSP client).
fn with_extensions(mut options: Value) -> Value {
    if let Some(options) = options.as_object_mut() {
        options.entry("verbatimExtensions").or_insert(Value::Bool(true));
    }
    options
}

pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_verbatim"))
}

/// Options for starting an editor.
pub struct EditorOptions {
    pub encodings: Vec<&'static str>,
    pub initialization_options: Value,
    pub document_changes: bool,
    /// Extra environment for the server process.
    pub env: Vec<(&'static str, String)>,
    /// `workspace.workspaceEdit.resourceOperations`.
    pub resource_operations: Vec<&'static str>,
    /// More arguments of `verbatim lsp` (`--log-file PATH`).
    pub args: Vec<String>,
}

impl Default for EditorOptions {
    fn default() -> Self {
        Self {
            encodings: vec!["utf-16"],
            initialization_options: json!({"needsConfirmation": true, "syncTimeoutMs": 3000}),
            document_changes: true,
            env: Vec::new(),
            resource_operations: vec!["create", "rename", "delete"],
            args: Vec::new(),
        }
    }
}

impl ScriptedEditor {
    pub async fn start() -> Self {
        Self::start_with(EditorOptions::default()).await
    }

    pub async fn start_with(options: EditorOptions) -> Self {
        let runtime_dir = tempfile::tempdir().unwrap();
        let state_dir = tempfile::tempdir().unwrap();
        let workspace = tempfile::tempdir().unwrap();
        let claude_dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(binary())
            .arg("lsp")
            .args(&options.args)
            .env("CLAUDE_CONFIG_DIR", claude_dir.path())
            // Gemini CLI's and Qwen Code's discovery files stay in the test's own directories.
            .env("TMPDIR", claude_dir.path())
            .env("QWEN_HOME", claude_dir.path().join("qwen"))
            .env("VERBATIM_RUNTIME_DIR", runtime_dir.path())
            .env("VERBATIM_STATE_DIR", state_dir.path())
            .env("VERBATIM_LOG", "debug")
            .envs(options.env.iter().map(|(key, value)| (*key, value.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (connection, mut incoming) = Connection::start(stdout, stdin);
        let shared = Arc::new(EditorShared {
            documents: Mutex::default(),
            cancelled: Mutex::default(),
            review: Mutex::new(Review::Accept),
            encoding: Mutex::new("utf-16".into()),
            reload_clean: Mutex::new(true),
            deferred: Mutex::new(None),
            versions_like_eglot: Mutex::new(false),
            diagnostics_answers: Mutex::default(),
            diagnostics_requests: Mutex::default(),
            initialize_result: Mutex::default(),
        });
        let (external_tx, external_rx) = mpsc::unbounded_channel();
        let (reviews_tx, reviews_rx) = mpsc::unbounded_channel();
        let result = connection
            .request(
                "initialize",
                json!({
                    "processId": null,
                    "clientInfo": {"name": "scripted-editor", "version": "1.0"},
                    "rootUri": null,
                    "workspaceFolders": [{"uri": file_uri(workspace.path()), "name": "ws"}],
                    "initializationOptions": with_extensions(options.initialization_options.clone()),
                    "capabilities": {
                        "general": {"positionEncodings": options.encodings},
                        "workspace": {"workspaceEdit": {
                            "documentChanges": options.document_changes,
                            "resourceOperations": options.resource_operations,
                            "changeAnnotationSupport": {"groupsOnLabel": true}
                        }}
                    }
                }),
            )
            .await
            .unwrap();
        *shared.initialize_result.lock().unwrap() = result.clone();
        *shared.initialize_result.lock().unwrap() = result.clone();
        let encoding = result["capabilities"]["positionEncoding"].as_str().unwrap_or("utf-16").to_owned();
        *shared.encoding.lock().unwrap() = encoding.clone();
        connection.notify("initialized", json!({})).await;

        // The editor's event loop: answer the server's requests.
        let loop_connection = connection.clone();
        let loop_shared = shared.clone();
        tokio::spawn(async move {
            while let Some(message) = incoming.recv().await {
                let Some(method) = message["method"].as_str() else { continue };
                if method == "$/cancelRequest" {
                    loop_shared.cancelled.lock().unwrap().push(message["params"]["id"].clone());
                    continue;
                }
                if method == "verbatim/externalChange" {
                    let params = message["params"].clone();
                    if params["kind"] == "reload" && *loop_shared.reload_clean.lock().unwrap() {
                        reload_from_disk(&loop_connection, &loop_shared, params["uri"].as_str().unwrap_or_default())
                            .await;
                    }
                    let _ = external_tx.send(params);
                    continue;
                }
                let Some(id) = message.get("id").cloned() else { continue };
                if method == "verbatim/diagnostics" {
                    loop_shared.diagnostics_requests.lock().unwrap().push(message["params"].clone());
                    let answer = loop_shared.diagnostics_answers.lock().unwrap().pop_front();
                    match answer {
                        Some(Some(answer)) => loop_connection.respond(&id, answer).await,
                        Some(None) => {}
                        None => loop_connection.respond(&id, json!({"documents": []})).await,
                    }
                    continue;
                }
                if method != "workspace/applyEdit" {
                    loop_connection.respond(&id, Value::Null).await;
                    continue;
                }
                let review = loop_shared.review.lock().unwrap().clone();
                let request = ApplyRequest { id, params: message["params"].clone() };
                match review {
                    Review::Manual => {
                        let _ = reviews_tx.send(request);
                    }
                    other => decide(&loop_connection, &loop_shared, request, other).await,
                }
            }
        });
        Self {
            connection,
            shared,
            reviews: tokio::sync::Mutex::new(reviews_rx),
            external: tokio::sync::Mutex::new(external_rx),
            child,
            runtime_dir,
            state_dir,
            workspace,
            claude_dir,
            encoding,
        }
    }

    /// The server's answer to `initialize`.
    pub fn initialize_result(&self) -> Value {
        self.shared.initialize_result.lock().unwrap().clone()
    }

    /// The applyEdit requests the server has cancelled so far.
    pub fn cancelled(&self) -> Vec<Value> {
        self.shared.cancelled.lock().unwrap().clone()
    }

    /// Queues the answers to the next `verbatim/diagnostics` requests.
    pub fn answer_diagnostics(&self, answers: Vec<Option<Value>>) {
        self.shared.diagnostics_answers.lock().unwrap().extend(answers);
    }

    /// The params of the `verbatim/diagnostics` requests received so far.
    pub fn diagnostics_requests(&self) -> Vec<Value> {
        self.shared.diagnostics_requests.lock().unwrap().clone()
    }

    pub fn set_review(&self, review: Review) {
        *self.shared.review.lock().unwrap() = review;
    }

    /// The next applyEdit that waits for a decision (with `Review::Manual`).
    pub async fn next_review(&self) -> ApplyRequest {
        let mut reviews = self.reviews.lock().await;
        tokio::time::timeout(TIMEOUT, reviews.recv()).await.expect("no applyEdit arrived").expect("editor loop ended")
    }

    pub async fn decide(&self, request: ApplyRequest, review: Review) {
        decide(&self.connection, &self.shared, request, review).await;
    }

    /// Path of a file in the workspace.
    pub fn path(&self, name: &str) -> PathBuf {
        self.workspace.path().join(name)
    }

    pub fn uri(&self, name: &str) -> String {
        file_uri(&self.path(name))
    }

    /// Writes a file to disk and opens it in the editor with this (possibly unsaved) text.
    pub async fn open(&self, name: &str, disk_text: &str, buffer_text: &str) -> String {
        std::fs::write(self.path(name), disk_text).unwrap();
        let uri = self.uri(name);
        self.open_uri(&uri, buffer_text).await;
        uri
    }

    /// Opens any document, inside the workspace or not, with this buffer text.
    pub async fn open_uri(&self, uri: &str, buffer_text: &str) {
        let uri = uri.to_owned();
        self.shared
            .documents
            .lock()
            .unwrap()
            .insert(uri.clone(), EditorDocument { text: buffer_text.to_owned(), version: 1 });
        self.connection
            .notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": buffer_text}}),
            )
            .await;
        self.sync().await;
    }

    /// Returns once the server has applied everything this editor sent so far (the
    /// server answers requests only after applying earlier notifications).
    pub async fn sync(&self) {
        self.connection.request("verbatim/status", Value::Null).await.unwrap();
    }

    /// The person replaces `find` with `replace` in the buffer (one incremental change).
    pub async fn type_text(&self, uri: &str, find: &str, replace: &str) {
        let encoding = self.shared.encoding.lock().unwrap().clone();
        let (version, range) = {
            let mut documents = self.shared.documents.lock().unwrap();
            let document = documents.get_mut(uri).unwrap();
            let start = document.text.find(find).expect("text to type over");
            let range = json!({
                "start": position_of(&document.text, start, &encoding),
                "end": position_of(&document.text, start + find.len(), &encoding),
            });
            document.text.replace_range(start..start + find.len(), replace);
            document.version += 3;
            (document.version, range)
        };
        notify_or_defer(
            &self.connection,
            &self.shared,
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": range, "text": replace}]}),
        )
        .await;
        self.sync().await;
    }

    /// From now on `didChange` notifications are held until [`Self::send_deferred`]
    /// (as Eglot sends them from an idle timer).
    pub fn defer_changes(&self) {
        *self.shared.deferred.lock().unwrap() = Some(Vec::new());
    }

    /// From now on an applied edit moves the version by one per `TextEdit`, as Eglot
    /// counts (its `after-change-functions` run once per edit).
    pub fn count_versions_like_eglot(&self) {
        *self.shared.versions_like_eglot.lock().unwrap() = true;
    }

    /// The person types `text` at the end of the document (one incremental change).
    pub async fn type_at_end(&self, uri: &str, text: &str) {
        let end = self.buffer(uri);
        self.type_text_at(uri, end.len(), text).await;
    }

    async fn type_text_at(&self, uri: &str, at: usize, text: &str) {
        let encoding = self.shared.encoding.lock().unwrap().clone();
        let (version, position) = {
            let mut documents = self.shared.documents.lock().unwrap();
            let document = documents.get_mut(uri).unwrap();
            let position = position_of(&document.text, at, &encoding);
            document.text.insert_str(at, text);
            document.version += 1;
            (document.version, position)
        };
        notify_or_defer(
            &self.connection,
            &self.shared,
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": position, "end": position}, "text": text}]}),
        )
        .await;
        self.sync().await;
    }

    /// Sends the held `didChange` notifications, in order, and stops holding them.
    pub async fn send_deferred(&self) {
        let held = self.shared.deferred.lock().unwrap().take().unwrap_or_default();
        for params in held {
            self.connection.notify("textDocument/didChange", params).await;
        }
        self.sync().await;
    }

    /// The next `verbatim/externalChange` notification.
    pub async fn next_external_change(&self) -> Value {
        let mut external = self.external.lock().await;
        tokio::time::timeout(TIMEOUT, external.recv())
            .await
            .expect("no verbatim/externalChange arrived")
            .expect("editor loop ended")
    }

    /// Every `verbatim/externalChange` received until none arrives within `quiet`
    /// (or [`TIMEOUT`] has passed: changes that never stop end the wait too).
    pub async fn external_changes_within(&self, quiet: Duration) -> Vec<Value> {
        let mut external = self.external.lock().await;
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        while tokio::time::Instant::now() < deadline
            && let Ok(Some(params)) = tokio::time::timeout(quiet, external.recv()).await
        {
            seen.push(params);
        }
        seen
    }

    /// Whether to reload documents the server says to reload (on by default).
    pub fn set_reload_clean(&self, reload: bool) {
        *self.shared.reload_clean.lock().unwrap() = reload;
    }

    /// The person saves: the buffer is written to disk, then `didSave` carries its text.
    pub async fn save(&self, uri: &str) {
        let text = self.buffer(uri);
        std::fs::write(uri_path(uri), &text).unwrap();
        self.connection.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}, "text": text})).await;
        self.sync().await;
    }

    pub fn buffer(&self, uri: &str) -> String {
        self.shared.documents.lock().unwrap()[uri].text.clone()
    }

    /// Waits until the buffer holds `expected` (an edit on its way lands), failing
    /// with what it holds after [`TIMEOUT`].
    pub async fn wait_for_buffer(&self, uri: &str, expected: &str) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        while self.buffer(uri) != expected && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(self.buffer(uri), expected, "the buffer of {uri}");
    }

    pub async fn close(&self, uri: &str) {
        self.shared.documents.lock().unwrap().remove(uri);
        self.connection.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}})).await;
        self.sync().await;
    }

    /// The discovery file the server wrote.
    pub async fn discovery(&self) -> Value {
        for _ in 0..200 {
            if let Ok(entries) = std::fs::read_dir(self.runtime_dir.path()) {
                for entry in entries.flatten() {
                    if entry.path().extension().is_some_and(|ext| ext == "json")
                        && let Ok(value) =
                            serde_json::from_slice::<Value>(&std::fs::read(entry.path()).unwrap_or_default())
                    {
                        return value;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no discovery file in {}", self.runtime_dir.path().display());
    }

    pub async fn agent(&self, name: &str) -> Agent {
        self.agent_with(name, &["utf-16"]).await
    }

    pub async fn agent_with(&self, name: &str, encodings: &[&str]) -> Agent {
        let discovery = self.discovery().await;
        Agent::connect(Path::new(discovery["socket"].as_str().unwrap()), name, encodings).await
    }

    /// `shutdown` then `exit`; returns the exit status.
    pub async fn shutdown(mut self) -> std::process::ExitStatus {
        let _ = self.connection.request("shutdown", Value::Null).await;
        self.connection.notify("exit", Value::Null).await;
        tokio::time::timeout(TIMEOUT, self.child.wait()).await.unwrap().unwrap()
    }
}

/// Applies (or not) a WorkspaceEdit the way VS Code does, and answers.
/// Replaces a document's text with the file's, as an editor reloads a clean buffer.
async fn reload_from_disk(connection: &Connection, shared: &EditorShared, uri: &str) {
    let Ok(text) = std::fs::read_to_string(uri_path(uri)) else { return };
    let version = {
        let mut documents = shared.documents.lock().unwrap();
        let Some(document) = documents.get_mut(uri) else { return };
        document.text = text.clone();
        document.version += 1;
        document.version
    };
    connection
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        )
        .await;
}

async fn decide(connection: &Connection, shared: &EditorShared, request: ApplyRequest, review: Review) {
    let reject = |reason: Option<String>| json!({"applied": false, "failureReason": reason});
    match review {
        Review::Reject(reason) => {
            connection.respond(&request.id, reject(reason)).await;
            return;
        }
        Review::Manual => unreachable!("a manual review must be decided"),
        // An editor that keeps none of the hunks applies nothing, whatever it answers.
        Review::AcceptHunks { ref keep, ref reason, report: true }
            if keep.is_empty()
                && request.params["verbatim"]["hunks"].as_array().is_some_and(|hunks| !hunks.is_empty()) =>
        {
            let count = request.params["verbatim"]["hunks"].as_array().map_or(0, Vec::len);
            let hunks: Vec<Value> = (0..count).map(|index| json!({"index": index, "accepted": false})).collect();
            connection.respond(&request.id, json!({"applied": true, "hunks": hunks, "reason": reason})).await;
            return;
        }
        Review::Error => {
            connection
                .send(&json!({"jsonrpc": "2.0", "id": request.id, "error": {"code": -32603, "message": "the editor fell over"}}))
                .await;
            return;
        }
        Review::ErrorWith(ref message) => {
            connection
                .send(&json!({"jsonrpc": "2.0", "id": request.id, "error": {"code": -32603, "message": message}}))
                .await;
            return;
        }
        _ => {}
    }
    let Some(notifications) = apply_in_model(shared, &request.params, &review) else {
        connection.respond(&request.id, reject(None)).await;
        return;
    };
    let answer_first = matches!(review, Review::AcceptAnswerFirst);
    let answer = match &review {
        Review::AcceptHunks { keep, reason, report: true } => {
            let count = request.params["verbatim"]["hunks"].as_array().map_or(0, Vec::len);
            let hunks: Vec<Value> =
                (0..count).map(|index| json!({"index": index, "accepted": keep.contains(&index)})).collect();
            json!({"applied": true, "hunks": hunks, "reason": reason})
        }
        _ => json!({"applied": true}),
    };
    if answer_first {
        connection.respond(&request.id, answer.clone()).await;
    }
    for (method, params) in notifications {
        notify_or_defer(connection, shared, method, params).await;
    }
    if !answer_first {
        connection.respond(&request.id, answer).await;
    }
}

/// Sends a notification, or holds a `didChange` while the editor defers its changes.
async fn notify_or_defer(connection: &Connection, shared: &EditorShared, method: &str, params: Value) {
    if method == "textDocument/didChange"
        && let Some(held) = shared.deferred.lock().unwrap().as_mut()
    {
        held.push(params);
        return;
    }
    connection.notify(method, params).await;
}

/// The text edits to apply, as (uri, index in that document's edits); `None`: all.
fn kept_edits(params: &Value, review: &Review) -> Option<std::collections::HashSet<(String, usize)>> {
    let Review::AcceptHunks { keep, .. } = review else { return None };
    let hunks = params["verbatim"]["hunks"].as_array().cloned().unwrap_or_default();
    Some(
        keep.iter()
            .filter_map(|index| hunks.get(*index))
            .flat_map(|hunk| {
                let uri = hunk["uri"].as_str().unwrap().to_owned();
                hunk["edits"].as_array().unwrap().iter().map(move |edit| (uri.clone(), edit.as_u64().unwrap() as usize))
            })
            .collect(),
    )
}

/// Applies a WorkspaceEdit to the editor's model; `None` when a version does not
/// match (VS Code then refuses the whole edit). Returns the notifications to send.
fn apply_in_model(shared: &EditorShared, params: &Value, review: &Review) -> Option<Vec<(&'static str, Value)>> {
    let encoding = shared.encoding.lock().unwrap().clone();
    let kept = kept_edits(params, review);
    let operations = params["edit"]["documentChanges"].as_array().cloned().unwrap_or_default();
    let mut documents = shared.documents.lock().unwrap();
    for operation in &operations {
        // File operations fail as VS Code's do: no overwriting, nothing to delete.
        match operation["kind"].as_str() {
            Some("rename") => {
                let new_uri = operation["newUri"].as_str().unwrap();
                if uri_path(new_uri).exists() || documents.contains_key(new_uri) {
                    return None;
                }
                continue;
            }
            Some("delete") => {
                let uri = operation["uri"].as_str().unwrap();
                if !uri_path(uri).exists() && !documents.contains_key(uri) {
                    return None;
                }
                continue;
            }
            Some(_) => continue,
            None => {}
        }
        let uri = operation["textDocument"]["uri"].as_str().unwrap();
        let version = operation["textDocument"]["version"].as_i64();
        match (documents.get(uri), version) {
            (Some(document), Some(version)) if i64::from(document.version) != version => return None,
            (None, Some(_)) => return None,
            _ => {}
        }
    }
    let mut notifications = Vec::new();
    for operation in &operations {
        if operation["kind"] == "delete" {
            let uri = operation["uri"].as_str().unwrap().to_owned();
            let _ = std::fs::remove_file(uri_path(&uri));
            if documents.remove(&uri).is_some() {
                notifications.push(("textDocument/didClose", json!({"textDocument": {"uri": uri}})));
            }
            continue;
        }
        if operation["kind"] == "rename" {
            // The file moves on disk; an open buffer moves with it, unsaved edits and all.
            let (old_uri, new_uri) =
                (operation["oldUri"].as_str().unwrap().to_owned(), operation["newUri"].as_str().unwrap().to_owned());
            let new_path = uri_path(&new_uri);
            if let Some(parent) = new_path.parent() {
                std::fs::create_dir_all(parent).unwrap();
            }
            if uri_path(&old_uri).exists() {
                std::fs::rename(uri_path(&old_uri), &new_path).unwrap();
            }
            if let Some(document) = documents.remove(&old_uri) {
                notifications.push(("textDocument/didClose", json!({"textDocument": {"uri": old_uri}})));
                notifications.push(("textDocument/didOpen", json!({"textDocument": {"uri": new_uri, "languageId": "plaintext", "version": 1, "text": document.text}})));
                documents.insert(new_uri, EditorDocument { text: document.text, version: 1 });
            }
            continue;
        }
        if operation["kind"] == "create" {
            let uri = operation["uri"].as_str().unwrap().to_owned();
            documents.insert(uri.clone(), EditorDocument { text: String::new(), version: 1 });
            notifications.push((
                "textDocument/didOpen",
                json!({"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": ""}}),
            ));
            continue;
        }
        let uri = operation["textDocument"]["uri"].as_str().unwrap().to_owned();
        let write_closed = matches!(review, Review::AcceptWritingClosedFiles) && !documents.contains_key(&uri);
        if !documents.contains_key(&uri) {
            // Not open: load it from disk, as VS Code does.
            let text = std::fs::read_to_string(uri_path(&uri)).unwrap_or_default();
            documents.insert(uri.clone(), EditorDocument { text: text.clone(), version: 1 });
            if !write_closed {
                notifications.push((
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": "plaintext", "version": 1, "text": text}}),
                ));
            }
        }
        let document = documents.get_mut(&uri).unwrap();
        let mut edits: Vec<(usize, usize, String, Value)> = operation["edits"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(index, _)| kept.as_ref().is_none_or(|kept| kept.contains(&(uri.clone(), *index))))
            .map(|(_, edit)| {
                let range = &edit["range"];
                let start = offset_of(
                    &document.text,
                    range["start"]["line"].as_u64().unwrap(),
                    range["start"]["character"].as_u64().unwrap(),
                    &encoding,
                );
                let end = offset_of(
                    &document.text,
                    range["end"]["line"].as_u64().unwrap(),
                    range["end"]["character"].as_u64().unwrap(),
                    &encoding,
                );
                (start, end, edit["newText"].as_str().unwrap().to_owned(), range.clone())
            })
            .collect();
        // Apply from the end so earlier positions stay valid; report in the same order.
        edits.sort_by_key(|edit| std::cmp::Reverse(edit.0));
        let mut changes = Vec::new();
        for (start, end, new_text, range) in edits {
            document.text.replace_range(start..end, &new_text);
            changes.push(json!({"range": range, "text": new_text}));
        }
        if let Review::AcceptAltered(find, replace) = review
            && let Some(start) = document.text.find(find.as_str())
        {
            let range = json!({
                "start": position_of(&document.text, start, &encoding),
                "end": position_of(&document.text, start + find.len(), &encoding),
            });
            document.text.replace_range(start..start + find.len(), replace);
            changes.push(json!({"range": range, "text": replace}));
        }
        if write_closed {
            let closed = documents.remove(&uri).unwrap();
            std::fs::write(uri_path(&uri), closed.text).unwrap();
            continue;
        }
        if *shared.versions_like_eglot.lock().unwrap() {
            document.version += changes.len() as i32;
        } else {
            document.version += 2;
        }
        notifications.push((
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": document.version}, "contentChanges": changes}),
        ));
    }
    Some(notifications)
}

pub fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_str().unwrap().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => uri.push(byte as char),
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

fn uri_path(uri: &str) -> PathBuf {
    let raw = uri.strip_prefix("file://").unwrap();
    let mut bytes = Vec::new();
    let raw = raw.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            bytes.push(u8::from_str_radix(std::str::from_utf8(&raw[i + 1..i + 3]).unwrap(), 16).unwrap());
            i += 3;
        } else {
            bytes.push(raw[i]);
            i += 1;
        }
    }
    PathBuf::from(String::from_utf8(bytes).unwrap())
}

/// An agent on the server's socket.
pub struct Agent {
    pub connection: Arc<Connection>,
    pub encoding: String,
}

impl Agent {
    pub async fn connect(socket: &Path, name: &str, encodings: &[&str]) -> Self {
        Self::connect_with(socket, name, encodings, Value::Null).await
    }

    /// Connects with `initializationOptions`.
    pub async fn connect_with(socket: &Path, name: &str, encodings: &[&str], options: Value) -> Self {
        let stream = tokio::net::UnixStream::connect(socket).await.unwrap();
        let (read, write) = stream.into_split();
        let (connection, _incoming) = Connection::start(read, write);
        let result = connection
            .request(
                "initialize",
                json!({"processId": null, "clientInfo": {"name": name}, "rootUri": null,
                       "capabilities": {"general": {"positionEncodings": encodings}},
                       "initializationOptions": options}),
            )
            .await
            .unwrap();
        connection.notify("initialized", json!({})).await;
        let encoding = result["capabilities"]["positionEncoding"].as_str().unwrap().to_owned();
        Self { connection, encoding }
    }

    pub async fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        self.connection.request(method, params).await
    }

    /// Sends a request in the background, for a call that waits (for a review, say)
    /// while the test plays the editor.
    pub fn spawn_call(&self, method: &str, params: Value) -> tokio::task::JoinHandle<Result<Value, RpcError>> {
        let connection = self.connection.clone();
        let method = method.to_owned();
        tokio::spawn(async move { connection.request(&method, params).await })
    }

    pub async fn read(&self, uri: &str) -> Value {
        self.call("verbatim/read", json!({"uri": uri})).await.unwrap()
    }
}
