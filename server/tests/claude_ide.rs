//! Claude Code's IDE protocol end to end: the real binary with a scripted editor on its
//! stdio, and a WebSocket client on the real endpoint playing Claude Code (the real
//! Claude Code is driven by the Neovim and VS Code suites).
#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::time::Duration;

use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use common::{EditorOptions, Review, ScriptedEditor};

const TIMEOUT: Duration = Duration::from_secs(20);

/// The lock file the server wrote, and its path.
async fn lock_file(editor: &ScriptedEditor) -> (PathBuf, Value) {
    let dir = editor.claude_dir.path().join("ide");
    for _ in 0..200 {
        if let Some(entry) = std::fs::read_dir(&dir).ok().and_then(|mut entries| entries.next()).and_then(Result::ok)
            && let Ok(value) = serde_json::from_slice::<Value>(&std::fs::read(entry.path()).unwrap_or_default())
        {
            return (entry.path(), value);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no lock file in {}", dir.display());
}

/// Claude Code's side of a connection.
struct Claude {
    socket: WebSocketStream<TcpStream>,
    next_id: u64,
    /// Notifications that arrived while a call was awaited.
    notifications: Vec<Value>,
}

async fn handshake(port: u16, headers: &[(&str, &str)]) -> Result<WebSocketStream<TcpStream>, u16> {
    let mut request = format!("ws://127.0.0.1:{port}").into_client_request().unwrap();
    for (name, value) in headers {
        let name = tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap();
        request.headers_mut().insert(name, value.parse().unwrap());
    }
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    match tokio_tungstenite::client_async(request, stream).await {
        Ok((socket, response)) => {
            assert_eq!(response.headers().get("sec-websocket-protocol").map(|v| v.to_str().unwrap()), Some("mcp"));
            Ok(socket)
        }
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => Err(response.status().as_u16()),
        Err(error) => panic!("handshake failed: {error}"),
    }
}

impl Claude {
    async fn connect(editor: &ScriptedEditor) -> Self {
        let (path, lock) = lock_file(editor).await;
        let port: u16 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let token = lock["authToken"].as_str().unwrap().to_owned();
        let socket = handshake(port, &[("X-Claude-Code-Ide-Authorization", &token), ("Sec-WebSocket-Protocol", "mcp")])
            .await
            .expect("the right token is let in");
        let mut claude = Self { socket, next_id: 0, notifications: Vec::new() };
        let answer = claude
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25",
            "clientInfo": {"name": "claude-code", "version": "2.1.332"}, "capabilities": {}}),
            )
            .await;
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
        claude.notify("notifications/initialized", json!({})).await;
        claude.notify("ide_connected", json!({"pid": 1})).await;
        claude
    }

    async fn notify(&mut self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.socket.send(Message::text(message.to_string())).await.unwrap();
    }

    async fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.socket.send(Message::text(message.to_string())).await.unwrap();
        self.next_id
    }

    async fn answer_to(&mut self, id: u64) -> Value {
        loop {
            let frame = tokio::time::timeout(TIMEOUT, self.socket.next()).await.expect("an answer in time");
            let Some(Ok(Message::Text(text))) = frame else { panic!("the connection ended: {frame:?}") };
            let message: Value = serde_json::from_str(&text).unwrap();
            if message["id"] == id {
                return message;
            }
            self.notifications.push(message);
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        self.answer_to(id).await
    }

    /// A tool call's text blocks.
    async fn call(&mut self, tool: &str, arguments: Value) -> Vec<String> {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments})).await;
        texts(&answer)
    }

    async fn next_notification(&mut self, method: &str) -> Value {
        if let Some(index) = self.notifications.iter().position(|message| message["method"] == method) {
            return self.notifications.remove(index);
        }
        loop {
            let frame = tokio::time::timeout(TIMEOUT, self.socket.next()).await.expect("a notification in time");
            let Some(Ok(Message::Text(text))) = frame else { panic!("the connection ended") };
            let message: Value = serde_json::from_str(&text).unwrap();
            if message["method"] == method {
                return message;
            }
        }
    }
}

fn texts(answer: &Value) -> Vec<String> {
    answer["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content in {answer}"))
        .iter()
        .map(|block| block["text"].as_str().unwrap().to_owned())
        .collect()
}

fn open_diff(path: &std::path::Path, contents: &str, tab: &str) -> Value {
    json!({"name": "openDiff", "arguments": {"old_file_path": path, "new_file_path": path,
           "new_file_contents": contents, "tab_name": tab}})
}

const DISK: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n";

#[tokio::test]
async fn the_lock_file_names_the_workspace_and_goes_with_the_server() {
    let editor = ScriptedEditor::start().await;
    let (path, lock) = lock_file(&editor).await;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(lock["transport"], "ws");
    assert_eq!(lock["ideName"], "scripted-editor (Verbatim)");
    assert_eq!(lock["workspaceFolders"], json!([editor.workspace.path()]));
    assert_eq!(lock["authToken"].as_str().unwrap().len(), 64);
    let port: u16 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    assert_eq!(editor.initialize_result()["capabilities"]["experimental"]["verbatim"]["claudeCode"]["port"], port);
    let status = editor.shutdown().await;
    assert!(status.success());
    assert!(!path.exists(), "the lock file is removed at exit");
}

#[tokio::test]
async fn with_claude_code_off_there_is_no_endpoint() {
    let editor = ScriptedEditor::start_with(EditorOptions {
        initialization_options: json!({"claudeCode": false}),
        ..EditorOptions::default()
    })
    .await;
    editor.sync().await;
    assert!(editor.initialize_result()["capabilities"]["experimental"]["verbatim"]["claudeCode"].is_null());
    assert!(
        std::fs::read_dir(editor.claude_dir.path().join("ide")).map_or(true, |mut entries| entries.next().is_none())
    );
}

#[tokio::test]
async fn connections_without_the_token_or_from_a_web_page_are_refused_and_the_token_is_never_logged() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let editor = ScriptedEditor::start_with(EditorOptions {
        args: vec!["--log-file".into(), log.path().display().to_string()],
        env: vec![("VERBATIM_LOG", "debug".into())],
        ..EditorOptions::default()
    })
    .await;
    let (path, lock) = lock_file(&editor).await;
    let port: u16 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let token = lock["authToken"].as_str().unwrap();
    assert_eq!(handshake(port, &[]).await.err(), Some(401), "no token");
    assert_eq!(handshake(port, &[("X-Claude-Code-Ide-Authorization", "not-it")]).await.err(), Some(401), "wrong token");
    assert_eq!(
        handshake(port, &[("X-Claude-Code-Ide-Authorization", token), ("Origin", "https://example.com")]).await.err(),
        Some(403),
        "a web page, even with the token"
    );
    assert!(
        handshake(port, &[("X-Claude-Code-Ide-Authorization", token), ("Sec-WebSocket-Protocol", "mcp")]).await.is_ok()
    );
}

#[tokio::test]
async fn an_edit_over_unsaved_changes_keeps_one_hunk_and_the_write_is_not_offered_again() {
    let editor = ScriptedEditor::start().await;
    // The person added a line at the top and has not saved.
    let buffer = format!("// typed\n{DISK}");
    let uri = editor.open("a.txt", DISK, &buffer).await;
    let path = editor.path("a.txt");
    let mut claude = Claude::connect(&editor).await;
    assert!(claude.call("closeAllDiffTabs", json!({})).await[0].starts_with("CLOSED_"));

    editor.set_review(Review::AcceptHunks { keep: vec![1], reason: Some("not the first".into()), report: true });
    let proposal = DISK.replace("two\n", "TWO\n").replace("seven\n", "SEVEN\n");
    let answer = claude.request("tools/call", open_diff(&path, &proposal, "✻ [Claude Code] a.txt ⧉")).await;
    let answer = texts(&answer);
    assert_eq!(answer[0], "FILE_SAVED");
    // The disk text plus the kept hunk; not the person's unsaved line.
    assert_eq!(answer[1], DISK.replace("seven\n", "SEVEN\n"));
    editor.wait_for_buffer(&uri, &buffer.replace("seven\n", "SEVEN\n")).await;

    // Claude Code writes the file itself: no second review, the editor hears "synced".
    std::fs::write(&path, &answer[1]).unwrap();
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "synced", "{change}");
    editor.set_review(Review::Reject(None));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(editor.buffer(&uri), buffer.replace("seven\n", "SEVEN\n"));
    let journal = std::fs::read_dir(editor.state_dir.path()).unwrap().count();
    assert!(journal > 0);
}

#[tokio::test]
async fn a_clean_buffer_accepted_whole_is_written_as_proposed() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("b.txt", DISK, DISK).await;
    let path = editor.path("b.txt");
    let mut claude = Claude::connect(&editor).await;
    let proposal = DISK.replace("three\n", "3\n");
    let answer = claude.request("tools/call", open_diff(&path, &proposal, "tab-b")).await;
    assert_eq!(texts(&answer), vec!["FILE_SAVED".to_owned(), proposal.clone()]);
    std::fs::write(&path, &proposal).unwrap();
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "synced");
    assert_eq!(editor.buffer(&uri), proposal);
}

#[tokio::test]
async fn a_rejected_edit_answers_diff_rejected_and_changes_nothing() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("c.txt", DISK, DISK).await;
    let path = editor.path("c.txt");
    let mut claude = Claude::connect(&editor).await;
    editor.set_review(Review::Reject(Some("no thanks".into())));
    let answer = claude.request("tools/call", open_diff(&path, &DISK.replace("one", "1"), "tab-c")).await;
    assert_eq!(texts(&answer), vec!["DIFF_REJECTED".to_owned(), "tab-c".to_owned()]);
    assert_eq!(editor.buffer(&uri), DISK);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), DISK);
}

#[tokio::test]
async fn close_tab_withdraws_the_review_from_the_editor() {
    let editor = ScriptedEditor::start().await;
    editor.open("d.txt", DISK, DISK).await;
    let path = editor.path("d.txt");
    let mut claude = Claude::connect(&editor).await;
    editor.set_review(Review::Manual);
    let waiting = claude.send_request("tools/call", open_diff(&path, &DISK.replace("one", "1"), "tab-d")).await;
    let review = editor.next_review().await;
    assert_eq!(review.params["verbatim"]["agent"], "Claude Code");
    assert_eq!(
        review.params["edit"]["changeAnnotations"].as_object().unwrap().values().next().unwrap()["needsConfirmation"],
        true
    );
    assert_eq!(claude.call("close_tab", json!({"tab_name": "tab-d"})).await, vec!["TAB_CLOSED"]);
    let answer = claude.answer_to(waiting).await;
    assert_eq!(texts(&answer)[0], "DIFF_REJECTED", "never TAB_CLOSED: Claude Code would apply its proposal");
    for _ in 0..100 {
        if !editor.cancelled().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(editor.cancelled(), vec![review.id], "the editor is told to withdraw the review");
}

#[tokio::test]
async fn a_new_file_is_reviewed_as_created() {
    let editor = ScriptedEditor::start().await;
    let path = editor.path("new.txt");
    let mut claude = Claude::connect(&editor).await;
    let answer = claude.request("tools/call", open_diff(&path, "brand new\n", "tab-new")).await;
    assert_eq!(texts(&answer), vec!["FILE_SAVED", "brand new\n"]);
}

#[tokio::test]
async fn files_outside_the_workspace_and_denied_files_are_refused() {
    let editor = ScriptedEditor::start().await;
    let mut claude = Claude::connect(&editor).await;
    let outside = tempfile::tempdir().unwrap();
    let answer = claude.request("tools/call", open_diff(&outside.path().join("x.txt"), "x\n", "tab-x")).await;
    assert_eq!(texts(&answer)[0], "DIFF_REJECTED");
    let answer = claude.request("tools/call", open_diff(&editor.path(".env"), "SECRET=1\n", "tab-env")).await;
    assert_eq!(texts(&answer)[0], "DIFF_REJECTED");
    assert!(!editor.path(".env").exists());
}

#[tokio::test]
async fn the_editor_context_reaches_claude_code() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("e.txt", DISK, &format!("{DISK}unsaved\n")).await;
    let mut claude = Claude::connect(&editor).await;
    editor
        .connection
        .notify(
            "verbatim/selectionChanged",
            json!({"uri": uri, "text": "two", "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 3}}}),
        )
        .await;
    let notification = claude.next_notification("selection_changed").await;
    assert_eq!(notification["params"]["text"], "two");
    assert_eq!(notification["params"]["selection"]["start"]["line"], 1);
    assert_eq!(notification["params"]["selection"]["isEmpty"], false);

    let selection: Value = serde_json::from_str(&claude.call("getCurrentSelection", json!({})).await[0]).unwrap();
    assert_eq!(selection["filePath"], editor.path("e.txt").display().to_string());
    let editors: Value = serde_json::from_str(&claude.call("getOpenEditors", json!({})).await[0]).unwrap();
    assert_eq!(editors["tabs"][0]["isActive"], true);
    assert_eq!(editors["tabs"][0]["isDirty"], true);
    let dirty: Value =
        serde_json::from_str(&claude.call("checkDocumentDirty", json!({"filePath": editor.path("e.txt")})).await[0])
            .unwrap();
    assert_eq!(dirty["isDirty"], true);
    let folders: Value = serde_json::from_str(&claude.call("getWorkspaceFolders", json!({})).await[0]).unwrap();
    assert_eq!(folders["folders"][0]["path"], editor.workspace.path().display().to_string());

    editor
        .connection
        .notify(
            "verbatim/atMention",
            json!({"uri": uri, "range": {"start": {"line": 2, "character": 0}, "end": {"line": 4, "character": 0}}}),
        )
        .await;
    let mention = claude.next_notification("at_mentioned").await;
    assert_eq!(
        (mention["params"]["lineStart"].as_u64(), mention["params"]["lineEnd"].as_u64()),
        (Some(2), Some(3)),
        "lines 3 and 4: the range ends at column 0 of line 5"
    );

    let answer = claude.request("tools/call", json!({"name": "executeCode", "arguments": {"code": "1+1"}})).await;
    assert_eq!(answer["result"]["isError"], true);
    let tools = claude.request("tools/list", json!({})).await;
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"openDiff") && names.contains(&"getDiagnostics"));
}

#[tokio::test]
async fn a_new_file_in_a_new_directory_hears_synced_once_claude_code_writes_it() {
    let editor = ScriptedEditor::start().await;
    let path = editor.path("src/new/c.txt");
    let mut claude = Claude::connect(&editor).await;
    let answer = claude.request("tools/call", open_diff(&path, "created\n", "tab-c")).await;
    assert_eq!(texts(&answer), vec!["FILE_SAVED", "created\n"]);
    // Claude Code makes the directory and writes the file; no watcher saw the directory.
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "created\n").unwrap();
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "synced", "{change}");
}

#[tokio::test]
async fn an_editor_that_quits_during_the_review_answers_diff_rejected() {
    let editor = ScriptedEditor::start().await;
    editor.open("q.txt", DISK, DISK).await;
    let path = editor.path("q.txt");
    let mut claude = Claude::connect(&editor).await;
    editor.set_review(Review::Manual);
    let waiting = claude.send_request("tools/call", open_diff(&path, &DISK.replace("one", "1"), "tab-q")).await;
    let _review = editor.next_review().await;
    let status = editor.shutdown().await;
    assert!(status.success());
    let answer = claude.answer_to(waiting).await;
    assert_eq!(texts(&answer), vec!["DIFF_REJECTED", "tab-q"], "never TAB_CLOSED, so Claude Code writes nothing");
}

/// The decision an editor tells before it applies the kept hunks (`verbatim/reviewDecided`).
async fn tell_decision(editor: &ScriptedEditor, request: &common::ApplyRequest, kept: &[bool]) {
    let about = &request.params["verbatim"];
    let hunks: Vec<Value> =
        kept.iter().enumerate().map(|(index, accepted)| json!({"index": index, "accepted": accepted})).collect();
    editor
        .connection
        .notify("verbatim/reviewDecided", json!({"id": about["id"], "offer": about["offer"], "hunks": hunks}))
        .await;
}

#[tokio::test]
async fn the_decision_answers_claude_code_before_the_editor_has_applied_it() {
    let editor = ScriptedEditor::start().await;
    let buffer = format!("// typed\n{DISK}");
    let uri = editor.open("early.txt", DISK, &buffer).await;
    let path = editor.path("early.txt");
    let mut claude = Claude::connect(&editor).await;
    editor.set_review(Review::Manual);
    let proposal = DISK.replace("two\n", "TWO\n").replace("seven\n", "SEVEN\n");
    let call = claude.send_request("tools/call", open_diff(&path, &proposal, "tab-early")).await;
    let request = editor.next_review().await;
    tell_decision(&editor, &request, &[false, true]).await;
    // Answered while the editor has neither answered the applyEdit nor changed the buffer.
    let answer = texts(&claude.answer_to(call).await);
    assert_eq!(answer, vec!["FILE_SAVED".to_owned(), DISK.replace("seven\n", "SEVEN\n")]);
    assert_eq!(editor.buffer(&uri), buffer);

    editor.decide(request, Review::AcceptHunks { keep: vec![1], reason: None, report: true }).await;
    editor.wait_for_buffer(&uri, &buffer.replace("seven\n", "SEVEN\n")).await;
    std::fs::write(&path, &answer[1]).unwrap();
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "synced", "{change}");
    assert_eq!(editor.buffer(&uri), buffer.replace("seven\n", "SEVEN\n"));
}

#[tokio::test]
async fn a_decision_the_editor_then_fails_to_apply_comes_back_as_a_change_on_disk_to_review() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("late.txt", DISK, DISK).await;
    let path = editor.path("late.txt");
    let mut claude = Claude::connect(&editor).await;
    editor.set_review(Review::Manual);
    let proposal = DISK.replace("seven\n", "SEVEN\n");
    let call = claude.send_request("tools/call", open_diff(&path, &proposal, "tab-late")).await;
    let request = editor.next_review().await;
    tell_decision(&editor, &request, &[true]).await;
    let answer = texts(&claude.answer_to(call).await);
    assert_eq!(answer, vec!["FILE_SAVED".to_owned(), proposal.clone()]);
    // The person typed in the instant between deciding and the edit: the editor refuses it.
    editor.type_text(&uri, "one\n", "one!\n").await;
    editor.decide(request, Review::Reject(Some("the document changed during review".into()))).await;
    // The edit is not offered again (Claude Code has its answer), and its write is no
    // announced one: it is merged into the buffer, over the typing, for review.
    std::fs::write(&path, &answer[1]).unwrap();
    let merge = editor.next_review().await;
    assert_eq!(merge.params["verbatim"]["origin"], "disk", "{}", merge.params);
    editor.decide(merge, Review::Accept).await;
    editor.wait_for_buffer(&uri, &DISK.replace("one\n", "one!\n").replace("seven\n", "SEVEN\n")).await;
}
