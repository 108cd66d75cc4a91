//! End to end: an agent's edit that races the editor opening the file (issue 42).
//! The edit goes to the open document at its version whenever the server knows the
//! document is open when it sends; an edit sent as a file that is not open
//! (`version: null`) and refused by an editor that opened the file meanwhile is moved
//! onto the open buffer and offered again, or answered `stale` when the buffer
//! differs where the edit goes. `rejected` means that someone said no.
//!
//! The orders are played deterministically with a manual review: the test holds the
//! editor's `didOpen` until the server's `workspace/applyEdit` is in its hands, then
//! sends it and answers as a version-checking editor does (the demo's, VS Code's for
//! a version that moved): `applied: false`.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Review, RpcError, ScriptedEditor};
use serde_json::{Value, json};

const TEXT: &str = "fn one() {\n    1\n}\n\nfn two() {\n    2\n}\n";

/// The version the edit's one document change carries (`null` for a file not open).
fn sent_version(params: &Value) -> Value {
    params["edit"]["documentChanges"][0]["textDocument"]["version"].clone()
}

/// The agent's edit of `f.rs`, planned while the file is not open, its first offer
/// held: the editor opens the file with `buffer` in hand and refuses the offer, as an
/// editor does that has it open and checks versions. Returns the agent's pending call.
async fn opened_after_the_send(
    editor: &ScriptedEditor,
    buffer: &str,
) -> tokio::task::JoinHandle<Result<Value, RpcError>> {
    std::fs::write(editor.path("f.rs"), TEXT).unwrap();
    let uri = editor.uri("f.rs");
    let agent = editor.agent("racer").await;
    let read = agent.read(&uri).await;
    assert_eq!(read["source"], "disk");
    editor.set_review(Review::Manual);
    let pending = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": "    2\n", "newStr": "    20\n", "baseRev": read["rev"], "summary": "Twenty"}),
    );
    let first = editor.next_review().await;
    assert_eq!(sent_version(&first.params), Value::Null, "the file was not open when the edit was sent");
    editor.open_uri(&uri, buffer).await;
    editor.connection.respond(&first.id, json!({"applied": false})).await;
    pending
}

#[tokio::test]
async fn an_edit_refused_because_the_editor_opened_the_file_meanwhile_is_offered_again_at_its_version() {
    let editor = ScriptedEditor::start().await;
    let pending = opened_after_the_send(&editor, TEXT).await;
    let again = editor.next_review().await;
    assert_eq!(sent_version(&again.params), json!(1), "offered again at the open document's version");
    editor.decide(again, Review::Accept).await;
    let result = pending.await.unwrap().expect("applied, never reported rejected");
    assert_eq!(result["applied"], true);
    let uri = editor.uri("f.rs");
    assert_eq!(editor.buffer(&uri), TEXT.replace("    2\n", "    20\n"));
    assert_eq!(std::fs::read_to_string(editor.path("f.rs")).unwrap(), TEXT, "the disk is left to the person's save");
}

#[tokio::test]
async fn a_buffer_opened_with_other_lines_elsewhere_takes_the_edit_beside_them() {
    let editor = ScriptedEditor::start().await;
    let buffer = TEXT.replace("    1\n", "    1 // typed\n");
    let pending = opened_after_the_send(&editor, &buffer).await;
    let again = editor.next_review().await;
    assert_eq!(sent_version(&again.params), json!(1));
    editor.decide(again, Review::Accept).await;
    let result = pending.await.unwrap().expect("applied");
    assert_eq!(result["applied"], true);
    assert_eq!(editor.buffer(&editor.uri("f.rs")), buffer.replace("    2\n", "    20\n"));
}

#[tokio::test]
async fn a_buffer_opened_with_other_text_where_the_edit_goes_is_stale_not_rejected() {
    let editor = ScriptedEditor::start().await;
    let buffer = TEXT.replace("    2\n", "    2 + 2\n");
    let pending = opened_after_the_send(&editor, &buffer).await;
    let error = pending.await.unwrap().expect_err("stale");
    assert_eq!(error.kind(), "stale", "{error:?}");
    assert!(error.message.contains("opened in the editor"), "{}", error.message);
    assert!(error.message.contains("line 6"), "{}", error.message);
    assert_eq!(editor.buffer(&editor.uri("f.rs")), buffer, "the person's buffer is untouched");
}

#[tokio::test]
async fn a_file_opened_before_the_edit_is_planned_is_sent_at_its_version() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("f.rs", TEXT, TEXT).await;
    let agent = editor.agent("racer").await;
    editor.set_review(Review::Manual);
    let pending = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": "    2\n", "newStr": "    20\n", "summary": "Twenty"}),
    );
    let review = editor.next_review().await;
    assert_eq!(sent_version(&review.params), json!(1));
    editor.decide(review, Review::Accept).await;
    assert_eq!(pending.await.unwrap().unwrap()["applied"], true);
}

/// A disk revision read before the editor's `didOpen` was applied still names the
/// open buffer when it holds the same text: the edit goes to the buffer at its version.
#[tokio::test]
async fn a_disk_read_from_before_the_open_edits_the_buffer_at_its_version() {
    let editor = ScriptedEditor::start().await;
    std::fs::write(editor.path("f.rs"), TEXT).unwrap();
    let uri = editor.uri("f.rs");
    let agent = editor.agent("racer").await;
    let read = agent.read(&uri).await;
    assert_eq!(read["source"], "disk");
    editor.open_uri(&uri, TEXT).await;
    editor.set_review(Review::Manual);
    let pending = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": "    2\n", "newStr": "    20\n", "baseRev": read["rev"], "summary": "Twenty"}),
    );
    let review = editor.next_review().await;
    assert_eq!(sent_version(&review.params), json!(1));
    editor.decide(review, Review::Accept).await;
    assert_eq!(pending.await.unwrap().unwrap()["applied"], true);
}

/// No race: the person refuses an edit of a file the editor does not have open. That
/// is a rejection, and is reported as one.
#[tokio::test]
async fn a_refusal_of_a_file_still_not_open_is_a_rejection() {
    let editor = ScriptedEditor::start().await;
    std::fs::write(editor.path("f.rs"), TEXT).unwrap();
    let uri = editor.uri("f.rs");
    let agent = editor.agent("racer").await;
    editor.set_review(Review::Reject(Some("not now".into())));
    let error = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "    2\n", "newStr": "    20\n", "summary": "Twenty"}),
        )
        .await
        .expect_err("rejected");
    assert_eq!(error.kind(), "rejected");
    assert!(error.message.contains("not now"), "{}", error.message);
}
