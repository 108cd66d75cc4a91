//! Faults with a defined outcome: an editor that never answers, answers with an
//! error, closes the document or shuts down while an edit waits; frames that lie
//! about their length or are too large; paths that escape the workspace.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{EditorOptions, Review, ScriptedEditor};
use serde_json::{Value, json};

const TEXT: &str = "alpha\nbeta\ngamma\n";

fn pending_edit(agent: &common::Agent, uri: &str) -> tokio::task::JoinHandle<Result<Value, common::RpcError>> {
    agent.spawn_call("verbatim/strReplace", json!({"uri": uri, "oldStr": "beta", "newStr": "BETA", "summary": "Shout"}))
}

#[tokio::test]
async fn an_editor_that_never_answers_times_out_and_its_late_answer_is_harmless() {
    let editor = ScriptedEditor::start_with(EditorOptions {
        initialization_options: json!({"applyTimeoutMs": 300, "syncTimeoutMs": 2000}),
        ..EditorOptions::default()
    })
    .await;
    let uri = editor.open("a.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent").await;
    let error = pending_edit(&agent, &uri).await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "timeout");
    assert_eq!(error.data["phase"], "answer");
    assert!(error.message.contains("did not answer within 300 ms"), "{}", error.message);
    // The person applies it after all: the server mirrors the editor, nothing breaks.
    let late = editor.next_review().await;
    editor.decide(late, Review::Accept).await;
    editor.sync().await;
    assert_eq!(agent.read(&uri).await["text"], "alpha\nBETA\ngamma\n");
    editor.set_review(Review::Accept);
    let next = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "gamma", "newStr": "GAMMA", "summary": "s"}))
        .await
        .unwrap();
    assert_eq!(next["applied"], true);
}

#[tokio::test]
async fn an_editor_error_is_reported_as_such() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("a.txt", TEXT, TEXT).await;
    editor.set_review(Review::Error);
    let agent = editor.agent("agent").await;
    let error = pending_edit(&agent, &uri).await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "editorError");
    assert!(error.message.contains("the editor fell over"), "{}", error.message);
    assert_eq!(agent.read(&uri).await["text"], TEXT);
}

#[tokio::test]
async fn closing_the_document_while_the_edit_waits_makes_it_stale() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("a.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent").await;
    let call = pending_edit(&agent, &uri);
    let review = editor.next_review().await;
    editor.close(&uri).await;
    editor.decide(review, Review::Accept).await;
    let error = call.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "stale");
    assert_eq!(error.data["currentRev"], Value::Null);
    assert!(error.message.contains("now closed"), "{}", error.message);
    assert_eq!(std::fs::read_to_string(editor.path("a.txt")).unwrap(), TEXT);
}

#[tokio::test]
async fn shutdown_with_edits_pending_leaves_agents_an_answer_and_the_disk_alone() {
    let mut editor = ScriptedEditor::start().await;
    let uri = editor.open("a.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent").await;
    let call = pending_edit(&agent, &uri);
    let _review = editor.next_review().await;
    editor.connection.request("shutdown", Value::Null).await.unwrap();
    editor.connection.notify("exit", Value::Null).await;
    let error = tokio::time::timeout(Duration::from_secs(10), call).await.unwrap().unwrap().unwrap_err();
    assert_eq!(error.kind(), "editorUnavailable");
    let status = tokio::time::timeout(Duration::from_secs(10), editor.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "shutdown then exit must exit 0");
    assert_eq!(std::fs::read_to_string(editor.path("a.txt")).unwrap(), TEXT);
    assert_eq!(
        std::fs::read_dir(editor.runtime_dir.path()).unwrap().count(),
        0,
        "socket or discovery file left behind"
    );
}

#[tokio::test]
async fn frames_that_lie_or_are_too_large_are_refused_and_serving_goes_on() {
    let editor = ScriptedEditor::start_with(EditorOptions {
        env: vec![("VERBATIM_MAX_MESSAGE_BYTES", "4096".into())],
        ..EditorOptions::default()
    })
    .await;
    let uri = editor.open("a.txt", TEXT, TEXT).await;
    let agent = editor.agent("agent").await;
    // Too large: refused, skipped, and the next message is served.
    let huge = json!({"jsonrpc": "2.0", "id": 900, "method": "verbatim/read", "params": {"uri": "x".repeat(10_000)}});
    agent.connection.send(&huge).await;
    // A Content-Length that is too short: the rest of the body becomes garbage before the next header.
    agent
        .connection
        .send_raw(b"Content-Length: 10\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"verbatim/documents\"}")
        .await;
    // A Content-Length that is not a number.
    agent.connection.send_raw(b"Content-Length: many\r\n\r\n").await;
    assert_eq!(agent.read(&uri).await["text"], TEXT);
    let edit = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "beta", "newStr": "BETA", "summary": "still works"}))
        .await
        .unwrap();
    assert_eq!(edit["applied"], true);
}

#[tokio::test]
async fn paths_that_escape_the_workspace_are_refused() {
    let editor = ScriptedEditor::start().await;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), editor.path("escape")).unwrap();
    let agent = editor.agent("agent").await;
    let dotdot = format!(
        "{}/../{}/secret.txt",
        editor.workspace.path().display(),
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    for uri in [
        common::file_uri(&editor.path("escape/secret.txt")),
        dotdot,
        common::file_uri(&outside.path().join("secret.txt")),
    ] {
        let read = agent.call("verbatim/read", json!({"uri": uri})).await.unwrap_err();
        assert_eq!(read.kind(), "outsideWorkspace", "{uri}: {read:?}");
        let write =
            agent.call("verbatim/write", json!({"uri": uri, "text": "pwned", "summary": "s"})).await.unwrap_err();
        assert_eq!(write.kind(), "outsideWorkspace", "{uri}: {write:?}");
    }
    assert_eq!(std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(), "secret\n");
}
