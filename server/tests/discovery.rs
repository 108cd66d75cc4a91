//! End to end: an agent started with a stripped environment (Codex gives its MCP
//! servers only HOME, LANG, PATH, PWD and TMPDIR) still finds the editor that serves
//! the file, and sends the edit there for review instead of writing the disk behind
//! the person's buffer.
#![allow(clippy::unwrap_used)]

mod cli_support;
mod common;

use std::time::Duration;

use common::{EditorOptions, Review, ScriptedEditor};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;

#[derive(Clone)]
struct Client;

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("codex-like", "1.0.0"))
    }
}

#[tokio::test]
async fn an_mcp_server_with_another_tmpdir_and_no_xdg_runtime_dir_finds_the_editor() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // The editor's server runs without VERBATIM_RUNTIME_DIR and XDG_RUNTIME_DIR (empty is
    // unset) and with TMPDIR=/tmp, so its runtime directory is /tmp/verbatim-<uid>; the
    // agent's TMPDIR is another directory, as a sandboxed agent's may be. (The workspace
    // is a fresh temporary folder, so no other server of this user routes there.)
    let tmpdir = tmp.path().display().to_string();
    let editor = ScriptedEditor::start_with(EditorOptions {
        env: vec![
            ("VERBATIM_RUNTIME_DIR", String::new()),
            ("XDG_RUNTIME_DIR", String::new()),
            ("TMPDIR", "/tmp".into()),
        ],
        ..EditorOptions::default()
    })
    .await;
    let text = "one\ntwo\n";
    let uri = editor.open("notes.txt", text, "one\ntwo\nunsaved\n").await;
    editor.set_review(Review::Accept);

    let mut command = tokio::process::Command::new(cli_support::binary());
    command
        .arg("mcp")
        .current_dir(editor.workspace.path())
        .env_clear()
        .env("HOME", home.path())
        .env("LANG", "C.UTF-8")
        .env("PATH", "/usr/bin:/bin")
        .env("PWD", editor.workspace.path())
        .env("TMPDIR", &tmpdir);
    let client = Client.serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let arguments = json!({"path": "notes.txt", "old_str": "two", "new_str": "TWO", "summary": "Shout"});
    let request = CallToolRequestParams::new("str_replace").with_arguments(arguments.as_object().unwrap().clone());
    let result = tokio::time::timeout(Duration::from_secs(30), client.call_tool(request)).await.unwrap().unwrap();
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["via"], "editor", "{structured:#}");
    assert_eq!(editor.buffer(&uri), "one\nTWO\nunsaved\n", "the edit went to the buffer, over its unsaved line");
    assert_eq!(std::fs::read_to_string(editor.path("notes.txt")).unwrap(), text, "the disk was not written");
    client.cancel().await.unwrap();

    // `verbatim editors` with the same stripped environment lists it.
    let listed = std::process::Command::new(cli_support::binary())
        .arg("editors")
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .env("TMPDIR", &tmpdir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(stdout.contains(&editor.workspace.path().display().to_string()), "{stdout}");
}
