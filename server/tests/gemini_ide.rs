//! Gemini CLI's (and Qwen Code's) IDE companion interface end to end: the real binary
//! with a scripted editor on its stdio, and an HTTP client on the real endpoint playing
//! the CLI (the real Gemini CLI is driven by `tests/agents/e2e_gemini_ide.py`).
#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use common::{EditorOptions, Review, ScriptedEditor};

const TIMEOUT: Duration = Duration::from_secs(20);
const DISK: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n";
/// The spec's text, as the pinned Gemini CLI ships it (checked when present).
const SPEC: &str =
    "../.agents/gemini-cli/node_modules/@google/gemini-cli/bundle/docs/ide-integration/ide-companion-spec.md";

/// Gemini CLI's discovery file, and its path.
async fn discovery_file(editor: &ScriptedEditor) -> (PathBuf, Value) {
    let dir = editor.claude_dir.path().join("gemini/ide");
    for _ in 0..200 {
        if let Some(entry) = std::fs::read_dir(&dir).ok().and_then(|mut entries| entries.next()).and_then(Result::ok)
            && let Ok(value) = serde_json::from_slice::<Value>(&std::fs::read(entry.path()).unwrap_or_default())
        {
            return (entry.path(), value);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no discovery file in {}", dir.display());
}

/// One HTTP request on a fresh connection: the status, the headers and the body stream.
async fn send(port: u16, method: &str, headers: &[(&str, &str)], body: Option<&Value>) -> hyper::Response<Incoming> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.unwrap();
    tokio::spawn(connection);
    let mut request = hyper::Request::builder().method(method).uri("/mcp").header("host", format!("127.0.0.1:{port}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = body.map_or_else(Bytes::new, |body| Bytes::from(body.to_string()));
    let request = request.header("content-type", "application/json").body(Full::new(body)).unwrap();
    tokio::time::timeout(TIMEOUT, sender.send_request(request)).await.unwrap().unwrap()
}

async fn body_json(response: hyper::Response<Incoming>) -> Value {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)))
}

/// The CLI's side of a session: POSTs, and the standing event stream read into a channel.
struct Cli {
    port: u16,
    token: String,
    session: String,
    next_id: u64,
    events: mpsc::UnboundedReceiver<Value>,
}

impl Cli {
    async fn connect(editor: &ScriptedEditor) -> Self {
        let (path, file) = discovery_file(editor).await;
        let port = file["port"].as_u64().unwrap() as u16;
        assert!(path.file_name().unwrap().to_str().unwrap().ends_with(&format!("-{port}.json")));
        let token = file["authToken"].as_str().unwrap().to_owned();
        let bearer = format!("Bearer {token}");
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "streamable-http-client", "version": "0.61.0"}}});
        let response = send(port, "POST", &[("authorization", &bearer)], Some(&initialize)).await;
        assert_eq!(response.status(), 200);
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let answer = body_json(response).await;
        assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
        let mut cli = Self { port, token, session, next_id: 0, events: mpsc::unbounded_channel().1 };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = cli.post(&initialized).await;
        assert_eq!(response.status(), 202);
        cli.events = cli.open_stream().await;
        cli
    }

    async fn post(&self, message: &Value) -> hyper::Response<Incoming> {
        let bearer = format!("Bearer {}", self.token);
        send(self.port, "POST", &[("authorization", &bearer), ("mcp-session-id", &self.session)], Some(message)).await
    }

    async fn open_stream(&self) -> mpsc::UnboundedReceiver<Value> {
        let bearer = format!("Bearer {}", self.token);
        let headers =
            [("authorization", bearer.as_str()), ("mcp-session-id", &self.session), ("accept", "text/event-stream")];
        let response = send(self.port, "GET", &headers, None).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut body = response.into_body();
        tokio::spawn(async move {
            let mut buffer = String::new();
            while let Some(Ok(frame)) = body.frame().await {
                let Ok(data) = frame.into_data() else { continue };
                buffer.push_str(&String::from_utf8_lossy(&data));
                while let Some(end) = buffer.find("\n\n") {
                    let event: String = buffer.drain(..end + 2).collect();
                    if let Some(line) = event.lines().find_map(|line| line.strip_prefix("data: ")) {
                        let _ = sender.send(serde_json::from_str::<Value>(line).unwrap());
                    }
                }
            }
        });
        receiver
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let answer = body_json(self.post(&message).await).await;
        assert_eq!(answer["id"], self.next_id);
        answer
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments})).await["result"].clone()
    }

    async fn notification(&mut self, method: &str) -> Value {
        loop {
            let event = tokio::time::timeout(TIMEOUT, self.events.recv()).await.expect("a notification in time");
            let event = event.expect("the event stream is open");
            if event["method"] == method {
                return event["params"].clone();
            }
        }
    }

    async fn open_diff(&mut self, path: &Path, content: &str) {
        let result = self.call("openDiff", json!({"filePath": path, "newContent": content})).await;
        assert_eq!(result["content"], json!([]), "openDiff answers at once with empty content: {result}");
        assert_eq!(result["isError"], false);
    }
}

#[tokio::test]
async fn the_discovery_files_name_the_workspace_and_go_with_the_server() {
    let editor = ScriptedEditor::start().await;
    let (path, file) = discovery_file(&editor).await;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    let port = file["port"].as_u64().unwrap();
    let name = path.file_name().unwrap().to_str().unwrap().to_owned();
    let capability = &editor.initialize_result()["capabilities"]["experimental"]["verbatim"]["geminiCli"];
    assert_eq!(name, format!("gemini-ide-server-{}-{port}.json", capability["idePid"]));
    let keys: Vec<&String> = file.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["port", "workspacePath", "authToken", "ideInfo"], "exactly the spec's fields");
    assert_eq!(file["workspacePath"], editor.workspace.path().display().to_string());
    assert_eq!(file["ideInfo"], json!({"name": "scriptededitor", "displayName": "scripted-editor (Verbatim)"}));
    assert_eq!(file["authToken"].as_str().unwrap().len(), 64);
    assert_eq!(capability["port"], port);
    assert_eq!(capability["authToken"], file["authToken"]);
    assert_eq!(capability["env"]["GEMINI_CLI_IDE_SERVER_PORT"], port.to_string());
    assert_eq!(capability["env"]["GEMINI_CLI_IDE_AUTH_TOKEN"], file["authToken"]);
    assert_eq!(capability["env"]["GEMINI_CLI_IDE_WORKSPACE_PATH"], file["workspacePath"]);
    assert_eq!(capability["env"]["QWEN_CODE_IDE_SERVER_PORT"], port.to_string());

    // Qwen Code's lock file: the same, plus the IDE's pid.
    let qwen = editor.claude_dir.path().join(format!("qwen/ide/{port}.lock"));
    let qwen_file: Value = serde_json::from_slice(&std::fs::read(&qwen).unwrap()).unwrap();
    assert_eq!(std::fs::metadata(&qwen).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(qwen_file["authToken"], file["authToken"]);
    assert_eq!(qwen_file["ppid"], capability["idePid"]);

    let status = editor.shutdown().await;
    assert!(status.success());
    assert!(!path.exists() && !qwen.exists(), "the discovery files are removed at exit");
}

#[tokio::test]
async fn with_gemini_cli_off_there_is_no_endpoint() {
    let editor = ScriptedEditor::start_with(EditorOptions {
        initialization_options: json!({"geminiCli": false}),
        ..EditorOptions::default()
    })
    .await;
    editor.sync().await;
    assert!(editor.initialize_result()["capabilities"]["experimental"]["verbatim"]["geminiCli"].is_null());
    assert!(std::fs::read_dir(editor.claude_dir.path().join("gemini/ide")).map_or(true, |mut e| e.next().is_none()));
}

#[tokio::test]
async fn requests_without_the_token_or_from_a_web_page_are_refused_and_the_token_is_never_logged() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let editor = ScriptedEditor::start_with(EditorOptions {
        args: vec!["--log-file".into(), log.path().display().to_string()],
        env: vec![("VERBATIM_LOG", "debug".into())],
        ..EditorOptions::default()
    })
    .await;
    let (_, file) = discovery_file(&editor).await;
    let port = file["port"].as_u64().unwrap() as u16;
    let token = file["authToken"].as_str().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}});
    let status = |response: hyper::Response<Incoming>| response.status().as_u16();
    assert_eq!(status(send(port, "POST", &[], Some(&initialize)).await), 401, "no token");
    assert_eq!(status(send(port, "POST", &[("authorization", token)], Some(&initialize)).await), 401, "not Bearer");
    assert_eq!(
        status(send(port, "POST", &[("authorization", "Bearer not-it")], Some(&initialize)).await),
        401,
        "wrong token"
    );
    let bearer = format!("Bearer {token}");
    assert_eq!(
        status(
            send(port, "POST", &[("authorization", &bearer), ("origin", "http://localhost:3000")], Some(&initialize))
                .await
        ),
        403,
        "a web page, even with the token"
    );
    assert_eq!(status(send(port, "GET", &[("origin", "https://example.com")], None).await), 403);
    assert_eq!(status(send(port, "GET", &[("authorization", &bearer)], None).await), 400, "no session");
    let cli = Cli::connect(&editor).await;
    let wrong_session =
        send(port, "POST", &[("authorization", &bearer), ("mcp-session-id", "nope")], Some(&initialize)).await;
    assert_eq!(wrong_session.status(), 404);
    drop(cli);
    let status = editor.shutdown().await;
    assert!(status.success());
    let logged = std::fs::read_to_string(log.path()).unwrap();
    assert!(logged.contains("refused an IDE companion request"), "{logged}");
    assert!(!logged.contains(token), "the token is never logged");
}

#[tokio::test]
async fn an_edit_over_unsaved_changes_keeps_one_hunk_and_the_write_is_not_offered_again() {
    let editor = ScriptedEditor::start().await;
    let buffer = format!("// typed\n{DISK}");
    let uri = editor.open("a.txt", DISK, &buffer).await;
    let path = editor.path("a.txt");
    let mut cli = Cli::connect(&editor).await;
    let tools = cli.request("tools/list", json!({})).await;
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["openDiff", "closeDiff"]);

    editor.set_review(Review::AcceptHunks { keep: vec![1], reason: Some("not the first".into()), report: true });
    let proposal = DISK.replace("two\n", "TWO\n").replace("seven\n", "SEVEN\n");
    cli.open_diff(&path, &proposal).await;
    let accepted = cli.notification("ide/diffAccepted").await;
    assert_eq!(accepted["filePath"], path.display().to_string());
    assert_eq!(accepted["content"], DISK.replace("seven\n", "SEVEN\n"), "the disk text plus the kept hunk");
    editor.wait_for_buffer(&uri, &buffer.replace("seven\n", "SEVEN\n")).await;

    // The CLI writes the file itself: no second review, the editor hears "synced".
    std::fs::write(&path, accepted["content"].as_str().unwrap()).unwrap();
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "synced", "{change}");
    assert_eq!(editor.buffer(&uri), buffer.replace("seven\n", "SEVEN\n"));
}

#[tokio::test]
async fn a_rejection_is_notified_and_changes_nothing() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("c.txt", DISK, DISK).await;
    let path = editor.path("c.txt");
    let mut cli = Cli::connect(&editor).await;
    editor.set_review(Review::Reject(Some("no thanks".into())));
    cli.open_diff(&path, &DISK.replace("one", "1")).await;
    let rejected = cli.notification("ide/diffRejected").await;
    assert_eq!(rejected, json!({"filePath": path.display().to_string()}));
    assert_eq!(editor.buffer(&uri), DISK);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), DISK);
}

#[tokio::test]
async fn close_diff_withdraws_the_review_and_answers_the_proposal_unchanged() {
    let editor = ScriptedEditor::start().await;
    editor.open("d.txt", DISK, DISK).await;
    let path = editor.path("d.txt");
    let mut cli = Cli::connect(&editor).await;
    editor.set_review(Review::Manual);
    let proposal = DISK.replace("one", "1");
    cli.open_diff(&path, &proposal).await;
    let review = editor.next_review().await;
    assert_eq!(review.params["verbatim"]["agent"], "Gemini CLI");
    let closed = cli.call("closeDiff", json!({"filePath": path, "suppressNotification": true})).await;
    let text = closed["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), json!({"content": proposal}));
    for _ in 0..100 {
        if !editor.cancelled().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(editor.cancelled(), vec![review.id], "the editor is told to withdraw the review");
    // Suppressed: neither diffAccepted nor diffRejected follows.
    let late = tokio::time::timeout(Duration::from_millis(300), cli.events.recv()).await;
    assert!(
        late.as_ref().map_or(true, |event| event.as_ref().is_none_or(|event| event["method"] == "ide/contextUpdate")),
        "{late:?}"
    );
}

#[tokio::test]
async fn a_new_file_is_reviewed_as_created() {
    let editor = ScriptedEditor::start().await;
    let path = editor.path("new.txt");
    let mut cli = Cli::connect(&editor).await;
    editor.set_review(Review::Manual);
    cli.open_diff(&path, "brand new\n").await;
    let review = editor.next_review().await;
    let operations = review.params["edit"]["documentChanges"].as_array().unwrap();
    assert_eq!(operations[0]["kind"], "create", "{operations:?}");
    editor.decide(review, Review::Accept).await;
    let accepted = cli.notification("ide/diffAccepted").await;
    assert_eq!(accepted["content"], "brand new\n");
}

#[tokio::test]
async fn the_editor_context_reaches_the_cli() {
    let editor = ScriptedEditor::start().await;
    let other = editor.open("f.txt", DISK, DISK).await;
    let uri = editor.open("e.txt", DISK, &format!("{DISK}unsaved\n")).await;
    let mut cli = Cli::connect(&editor).await;
    let select = |uri: &str, text: &str, line: u32| json!({"uri": uri, "text": text, "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 3}}});
    editor.connection.notify("verbatim/selectionChanged", select(&other, "one", 0)).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    editor.connection.notify("verbatim/selectionChanged", select(&uri, "two", 1)).await;
    let context = loop {
        let context = cli.notification("ide/contextUpdate").await;
        if context["workspaceState"]["openFiles"][0]["selectedText"] == "two" {
            break context;
        }
    };
    let files = context["workspaceState"]["openFiles"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["path"], editor.path("e.txt").display().to_string(), "the most recent first");
    assert_eq!(files[0]["isActive"], true);
    assert_eq!(files[0]["cursor"], json!({"line": 2, "character": 4}), "1-based");
    assert!(files[0]["timestamp"].as_u64().unwrap() >= files[1]["timestamp"].as_u64().unwrap());
    assert!(files[1].get("cursor").is_none() && files[1].get("selectedText").is_none());
    assert_eq!(context["workspaceState"]["isTrusted"], true);
}

#[test]
fn the_tool_schemas_and_the_discovery_file_follow_the_spec_text() {
    let Ok(spec) = std::fs::read_to_string(SPEC) else {
        // The pinned CLI is not installed (tests/agents/install.sh --all installs it).
        return;
    };
    for needle in [
        "`gemini-ide-server-${PID}-${PORT}.json`",
        "`os.tmpdir()/gemini/ide/`",
        "\"workspacePath\": \"/path/to/project1:/path/to/project2\"",
        "`Authorization: Bearer <token>`",
        "filePath: string;",
        "newContent: string;",
        "(to 10 files) and the `selectedText` (to 16KB)",
        "contain empty content (that is, `content: []`)",
        "`ide/diffAccepted`",
        "`ide/diffRejected`",
        "`ide/contextUpdate`",
    ] {
        assert!(spec.contains(needle), "the spec no longer says {needle}");
    }
    for field in ["port", "workspacePath", "authToken", "ideInfo", "displayName"] {
        assert!(spec.contains(&format!("\"{field}\"")), "{field}");
    }
}

#[tokio::test]
async fn close_diff_without_suppression_notifies_and_after_the_review_answers_its_outcome() {
    let editor = ScriptedEditor::start().await;
    editor.open("g.txt", DISK, DISK).await;
    let path = editor.path("g.txt");
    let mut cli = Cli::connect(&editor).await;
    editor.set_review(Review::Manual);
    let proposal = DISK.replace("two", "2");
    cli.open_diff(&path, &proposal).await;
    let _review = editor.next_review().await;
    let closed = cli.call("closeDiff", json!({"filePath": path})).await;
    assert_eq!(closed["isError"], false);
    let notified = cli.notification("ide/diffClosed").await;
    assert_eq!(notified, json!({"filePath": path.display().to_string(), "content": proposal}));

    // A review the person already rejected: closeDiff answers that nothing is to be written.
    editor.set_review(Review::Reject(None));
    cli.open_diff(&path, &DISK.replace("three", "3")).await;
    cli.notification("ide/diffRejected").await;
    let late = cli.call("closeDiff", json!({"filePath": path, "suppressNotification": true})).await;
    let text = late["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), json!({"content": null}));
    let unknown = cli.call("closeDiff", json!({"filePath": editor.path("none.txt")})).await;
    assert_eq!(unknown["isError"], true);
}
