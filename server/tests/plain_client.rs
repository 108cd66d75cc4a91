//! A plain LSP client (one that does not set `verbatimExtensions`, as Eglot does not):
//! it gets only what the LSP specification defines, and its answers are read honestly.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use serde_json::{Value, json};

use common::{EditorOptions, Review, ScriptedEditor};

const TEXT: &str = "alpha\nbeta\ngamma\n";

async fn plain_editor() -> ScriptedEditor {
    ScriptedEditor::start_with(EditorOptions {
        initialization_options: json!({"needsConfirmation": true, "syncTimeoutMs": 3000, "verbatimExtensions": false}),
        ..EditorOptions::default()
    })
    .await
}

fn edit(uri: &str) -> Value {
    json!({"uri": uri, "oldStr": "beta", "newStr": "BETA", "summary": "Shout beta"})
}

#[tokio::test]
async fn a_plain_client_gets_a_spec_clean_workspace_edit_with_the_agent_in_its_label() {
    let editor = plain_editor().await;
    let uri = editor.open("a.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent-a").await;
    let call = agent.spawn_call("verbatim/strReplace", edit(&uri));
    let request = editor.next_review().await;
    let mut keys: Vec<&String> = request.params.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, vec!["edit", "label"], "only what the LSP specification defines");
    assert_eq!(request.params["label"], "agent-a: Shout beta");
    editor.decide(request, Review::Accept).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["applied"], true);
}

#[tokio::test]
async fn an_error_answer_from_a_plain_client_is_a_rejection_with_its_message() {
    let editor = plain_editor().await;
    let uri = editor.open("a.txt", TEXT, TEXT).await;
    editor.set_review(Review::Error);
    let agent = editor.agent("agent-b").await;
    let error = agent.call("verbatim/strReplace", edit(&uri)).await.unwrap_err();
    assert_eq!(error.kind(), "rejected", "{}", error.message);
    assert!(error.message.contains("the editor fell over"), "{}", error.message);
    assert_eq!(agent.read(&uri).await["text"], TEXT);
}

#[tokio::test]
async fn a_clean_buffer_of_a_plain_client_follows_the_disk_by_a_plain_edit() {
    let editor = plain_editor().await;
    let uri = editor.open("c.txt", TEXT, TEXT).await;
    editor.set_reload_clean(false);
    std::fs::write(editor.path("c.txt"), "alpha\nbeta\ngamma\ndelta\n").unwrap();
    editor.wait_for_buffer(&uri, "alpha\nbeta\ngamma\ndelta\n").await;
    let notifications = editor.external_changes_within(Duration::from_millis(300)).await;
    assert!(notifications.is_empty(), "a plain client gets no verbatim/externalChange: {notifications:?}");
}
