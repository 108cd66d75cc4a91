//! End to end: `verbatim mcp` driven by a real MCP client (rmcp's), over the stdio
//! of the real binary: the tools, reads and edits on disk, errors as tool errors
//! that say what to do next, and a write that waits for the person's review in an
//! editor (the scripted editor of `common`) while reporting progress.
#![allow(clippy::unwrap_used)]

mod cli_support;
mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Review, ScriptedEditor};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest, Implementation, JsonObject,
    ProgressNotificationParam, Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

const MAIN: &str = "fn main() {\n    let x = 1;\n    run(x);\n}\n\nfn other() {\n    let x = 1;\n}\n";

/// An MCP client that remembers the progress notifications it receives.
#[derive(Clone)]
struct TestClient {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("test-mcp-client", "1.2.3"))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params);
    }
}

struct Mcp {
    client: RunningService<RoleClient, TestClient>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

async fn start(cwd: &Path, runtime_dir: &Path, state_dir: &Path, args: &[&str]) -> Mcp {
    let mut command = tokio::process::Command::new(cli_support::binary());
    command
        .arg("mcp")
        .args(args)
        .current_dir(cwd)
        .env("VERBATIM_RUNTIME_DIR", runtime_dir)
        .env("VERBATIM_STATE_DIR", state_dir);
    let transport = TokioChildProcess::new(command).unwrap();
    let progress = Arc::new(Mutex::new(Vec::new()));
    let client = TestClient { progress: progress.clone() }.serve(transport).await.unwrap();
    Mcp { client, progress }
}

fn arguments(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

impl Mcp {
    async fn call(&self, tool: &'static str, args: Value) -> CallToolResult {
        let request = CallToolRequestParams::new(tool).with_arguments(arguments(args));
        tokio::time::timeout(Duration::from_secs(30), self.client.call_tool(request)).await.unwrap().unwrap()
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

#[tokio::test]
async fn the_tools_are_listed_with_the_ladder_in_their_descriptions() {
    let project = cli_support::Project::new();
    let mcp = start(project.dir.path(), project.runtime.path(), project.state.path(), &[]).await;
    let tools = mcp.client.list_all_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "apply_patch",
            "batch_edit",
            "list_documents",
            "read_file",
            "replace_range",
            "revert",
            "str_replace",
            "timeline",
            "write_file"
        ]
    );
    let tool = |name: &str| tools.iter().find(|tool| tool.name == name).unwrap();
    let str_replace = tool("str_replace");
    let description = str_replace.description.as_deref().unwrap();
    for teaching in ["occurrence", "after", "replace_range", "summary"] {
        assert!(description.contains(teaching), "str_replace does not mention {teaching}: {description}");
    }
    let schema = serde_json::to_value(&*str_replace.input_schema).unwrap();
    for property in [
        "path",
        "old_str",
        "new_str",
        "after",
        "before",
        "occurrence",
        "replace_all",
        "base_rev",
        "dry_run",
        "exact",
        "summary",
    ] {
        assert!(schema["properties"][property].is_object(), "no {property} in {schema}");
    }
    let required: Vec<&str> = schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(required.contains(&"old_str") && required.contains(&"summary"), "{schema}");
    assert!(tool("write_file").description.as_deref().unwrap().contains("small"));
    assert!(tool("read_file").annotations.as_ref().and_then(|annotations| annotations.read_only_hint) == Some(true));
    let info = mcp.client.peer_info().unwrap();
    assert!(info.instructions.as_deref().unwrap().contains("str_replace"));
    mcp.client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_an_editor_the_tools_read_and_edit_the_disk() {
    let project = cli_support::Project::new();
    project.write("src/main.rs", MAIN);
    let mcp = start(project.dir.path(), project.runtime.path(), project.state.path(), &[]).await;

    let read = mcp.call("read_file", json!({"path": "src/main.rs"})).await;
    assert!(!is_error(&read), "{read:?}");
    let read_text = text(&read);
    let (header, body) = read_text.split_once("\n\n").unwrap();
    assert!(header.starts_with("src/main.rs · rev d"), "{header}");
    assert!(header.ends_with("no editor serves it, edits are written straight to the file"), "{header}");
    assert_eq!(body, MAIN);
    let rev = header.split(" · ").nth(1).unwrap().strip_prefix("rev ").unwrap().to_owned();

    let ambiguous = mcp
        .call(
            "str_replace",
            json!({"path": "src/main.rs", "old_str": "let x = 1;", "new_str": "let x = 2;", "summary": "Start at 2"}),
        )
        .await;
    assert!(is_error(&ambiguous));
    let message = text(&ambiguous);
    assert!(
        message.starts_with(
            "ambiguous: old_str matches 2 times in src/main.rs (lines 2, 7). Resend with occurrence: N (1-2), or narrow the window with after/before."
        ),
        "{message}"
    );
    assert!(
        message.contains("occurrence 2 (line 7, column 5):\n    6 | fn other() {\n>   7 |     let x = 1;"),
        "{message}"
    );

    let edit = mcp
        .call("str_replace", json!({"path": "src/main.rs", "old_str": "let x = 1;", "new_str": "let x = 2;", "occurrence": 2, "base_rev": rev, "summary": "Start at 2"}))
        .await;
    assert!(!is_error(&edit), "{edit:?}");
    let edit_text = text(&edit);
    assert!(edit_text.starts_with(&format!("src/main.rs: applied on disk (rev {rev} → d")), "{edit_text}");
    assert!(edit_text.contains("pass it as base_rev"), "{edit_text}");
    assert_eq!(project.text("src/main.rs"), MAIN.replace("other() {\n    let x = 1;", "other() {\n    let x = 2;"));

    let stale = mcp
        .call(
            "str_replace",
            json!({"path": "src/main.rs", "old_str": "run(x)", "new_str": "go(x)", "base_rev": rev, "summary": "Go"}),
        )
        .await;
    assert!(is_error(&stale));
    assert!(text(&stale).starts_with("stale: base_rev "), "{}", text(&stale));
    assert!(text(&stale).contains("(read_file)"), "{}", text(&stale));

    let range = mcp
        .call("replace_range", json!({"path": "src/main.rs", "from_str": "fn other() {", "to_str": "}\n", "new_str": "fn other() {}\n", "summary": "Empty other"}))
        .await;
    assert!(!is_error(&range), "{range:?}");
    let batch = mcp
        .call(
            "batch_edit",
            json!({"summary": "Rename", "edits": [
                {"path": "src/main.rs", "old_str": "fn other", "new_str": "fn another"},
                {"path": "src/main.rs", "from_str": "run(", "to_str": ");", "new_str": "go(x);"},
            ]}),
        )
        .await;
    assert!(!is_error(&batch), "{batch:?}");
    assert_eq!(project.text("src/main.rs"), "fn main() {\n    let x = 1;\n    go(x);\n}\n\nfn another() {}\n");
    let created =
        mcp.call("write_file", json!({"path": "notes.md", "text": "# Notes\n", "summary": "Add notes"})).await;
    assert!(!is_error(&created), "{created:?}");
    assert_eq!(project.text("notes.md"), "# Notes\n");
    let documents = mcp.call("list_documents", json!({})).await;
    assert!(text(&documents).starts_with("No documents are open"), "{documents:?}");
    let patch = mcp
        .call(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: notes.md\n@@\n-# Notes\n+# Notes, patched\n*** End Patch\n", "summary": "Patch notes"}),
        )
        .await;
    assert!(!is_error(&patch), "{patch:?}");
    assert_eq!(project.text("notes.md"), "# Notes, patched\n");

    // The journal reads back with no editor, and a change of it reverts on disk.
    let timeline = mcp.call("timeline", json!({"path": "notes.md"})).await;
    assert!(!is_error(&timeline), "{timeline:?}");
    assert!(text(&timeline).contains("Patch notes"), "{}", text(&timeline));
    assert!(!text(&timeline).contains("Rename"), "{}", text(&timeline));
    let result = &timeline.structured_content.as_ref().expect("a structured timeline")["result"];
    assert_eq!(result["edits"], 2, "{result}");
    assert!(
        result.get("agents").is_none() && result.get("files").is_none(),
        "the filters' lists are left out: {result}"
    );
    let patched = &result["sessions"][0]["turns"][0]["edits"][0];
    assert_eq!(patched["summary"], "Patch notes", "{result}");
    let id = patched["files"][0]["id"].as_str().expect("the patch's entry id").to_owned();
    let reverted = mcp.call("revert", json!({"ids": [id], "summary": "Undo the patch"})).await;
    assert!(!is_error(&reverted), "{reverted:?}");
    assert_eq!(project.text("notes.md"), "# Notes\n");

    // Mistakes are tool errors that say what to send.
    let outside = mcp.call("read_file", json!({"path": "/etc/hostname"})).await;
    assert!(text(&outside).starts_with("outsideWorkspace: "), "{outside:?}");
    let misspelt =
        mcp.call("str_replace", json!({"path": "src/main.rs", "oldStr": "x", "new_str": "y", "summary": "s"})).await;
    assert!(is_error(&misspelt));
    assert!(
        text(&misspelt).starts_with("invalidParams: invalid arguments for str_replace: unknown field `oldStr`"),
        "{}",
        text(&misspelt)
    );

    // Journaled under the MCP client's name.
    let journal = project.cli.journal();
    assert_eq!(journal.len(), 6);
    assert!(
        journal.iter().all(|entry| entry["agent"] == "test-mcp-client" && entry["source"] == "headless"),
        "{journal:?}"
    );
    mcp.client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_write_waits_for_review_in_the_editor_and_reports_progress() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("main.rs", MAIN, MAIN).await;
    editor.set_review(Review::Manual);
    let mcp = start(editor.workspace.path(), editor.runtime_dir.path(), editor.state_dir.path(), &[]).await;

    let read = mcp.call("read_file", json!({"path": "main.rs"})).await;
    assert!(
        text(&read).starts_with("main.rs · rev e1.1 · 8 lines · lf line endings · from the editor's buffer"),
        "{read:?}"
    );

    let request = CallToolRequestParams::new("str_replace").with_arguments(arguments(
        json!({"path": "main.rs", "old_str": "fn other", "new_str": "fn another", "summary": "Rename other"}),
    ));
    let handle = mcp
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(request)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let response = tokio::spawn(handle.await_response());
    let review = editor.next_review().await;
    assert_eq!(review.params["label"], "test-mcp-client: Rename other");
    for _ in 0..200 {
        if !mcp.progress.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let progress = mcp.progress.lock().unwrap().clone();
    assert!(!progress.is_empty(), "no progress while waiting for review");
    assert!(
        progress[0].message.as_deref().unwrap().starts_with("waiting for the person to review the edit"),
        "{progress:?}"
    );
    assert!(!response.is_finished(), "the call must wait for the person");

    editor.decide(review, Review::Accept).await;
    let result = match response.await.unwrap().unwrap() {
        ServerResult::CallToolResult(result) => result,
        other => panic!("not a tool result: {other:?}"),
    };
    assert!(!is_error(&result), "{result:?}");
    assert!(text(&result).starts_with("main.rs: applied in the editor (rev e1.1 → e1.3):"), "{}", text(&result));
    assert_eq!(editor.buffer(&uri), MAIN.replace("fn other", "fn another"));

    // A refusal is a tool error carrying the person's reason.
    editor.set_review(Review::Reject(Some("keep the old name".into())));
    let rejected = mcp
        .call(
            "str_replace",
            json!({"path": "main.rs", "old_str": "fn another", "new_str": "fn other2", "summary": "Rename again"}),
        )
        .await;
    assert!(is_error(&rejected));
    assert_eq!(text(&rejected), "rejected: The editor rejected the edit: keep the old name");
    let documents = mcp.call("list_documents", json!({})).await;
    assert!(text(&documents).contains(&uri), "{documents:?}");

    // A patch is one change, reviewed as one.
    editor.set_review(Review::Accept);
    let patch = "*** Begin Patch\n*** Update File: main.rs\n@@ fn main() {\n-    let x = 1;\n+    let x = 3;\n     run(x);\n*** End Patch\n";
    let patched = mcp.call("apply_patch", json!({"patch": patch, "summary": "Start main at 3"})).await;
    assert!(!is_error(&patched), "{patched:?}");
    assert!(text(&patched).starts_with("main.rs: applied in the editor"), "{}", text(&patched));
    assert!(editor.buffer(&uri).starts_with("fn main() {\n    let x = 3;"));
    mcp.client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_quote_with_a_typo_returns_the_real_lines_in_the_tool_s_text() {
    let project = cli_support::Project::new();
    project.write("t.py", "def f():\n    return compute(alpha, beta)\n");
    let mcp = start(project.dir.path(), project.runtime.path(), project.state.path(), &[]).await;
    let typo = mcp
        .call(
            "str_replace",
            json!({"path": "t.py", "old_str": "return compute(alpha, betta)", "new_str": "return 0", "summary": "s"}),
        )
        .await;
    assert!(is_error(&typo));
    let message = text(&typo);
    assert!(message.contains("\n     2 |     return compute(alpha, beta)"), "{message}");
    assert!(message.contains("+    return compute(alpha, beta)"), "{message}");
}

#[tokio::test]
async fn diagnostics_and_left_out_hunks_are_told_in_the_tool_s_text() {
    let editor = ScriptedEditor::start_with(common::EditorOptions {
        initialization_options: json!({"needsConfirmation": true, "syncTimeoutMs": 3000, "diagnostics": true}),
        ..common::EditorOptions::default()
    })
    .await;
    let text_before = "import os\n\nx = 1\n\ny = 2\n";
    let uri = editor.open("app.py", text_before, text_before).await;
    let problem = |line: u64, code: &str, message: &str| {
        json!({"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 5}},
               "severity": 1, "source": "ruff", "code": code, "message": message})
    };
    let answer = |diagnostics: Vec<Value>| json!({"documents": [{"uri": uri, "status": "settled", "sources": ["ruff"], "diagnostics": diagnostics}]});
    editor.answer_diagnostics(vec![Some(answer(vec![])), Some(answer(vec![problem(2, "F821", "Undefined name `z`")]))]);
    // `--diagnostics` makes every write ask.
    let mcp =
        start(editor.workspace.path(), editor.runtime_dir.path(), editor.state_dir.path(), &["--diagnostics"]).await;
    let result = mcp
        .call("str_replace", json!({"path": "app.py", "old_str": "x = 1", "new_str": "x = z", "summary": "Use z"}))
        .await;
    assert!(!is_error(&result), "{result:?}");
    let said = text(&result);
    assert!(said.contains("Diagnostics after the edit (errors, settled after"), "{said}");
    assert!(said.contains("Introduced:\n  app.py:3:5 error [ruff F821]: Undefined name `z`\n      x = z"), "{said}");
    assert!(editor.diagnostics_requests()[1]["wait"].is_object());
    let structured = result.structured_content.clone().expect("the result as JSON too");
    assert_eq!(structured["diagnostics"]["introduced"][0]["code"], "F821");

    // Two hunks, the person keeps one and says why.
    editor.set_review(Review::AcceptHunks { keep: vec![1], reason: Some("x stays".into()), report: true });
    let result = mcp
        .call(
            "str_replace",
            json!({"path": "app.py", "old_str": "x = z\n\ny = 2", "new_str": "x = 3\n\ny = 4", "summary": "Both", "diagnostics": "warnings"}),
        )
        .await;
    let said = text(&result);
    assert!(said.contains("1 of 2 hunks applied in the editor"), "{said}");
    assert!(said.contains("the person left out line 3"), "{said}");
    assert!(said.contains("Their reason: x stays"), "{said}");
    assert!(said.contains("Diagnostics after the edit (warnings,"), "{said}");
    assert_eq!(editor.buffer(&uri), "import os\n\nx = z\n\ny = 4\n");
    mcp.client.cancel().await.unwrap();
}
