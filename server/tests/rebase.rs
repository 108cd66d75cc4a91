//! End to end: the person keeps typing, and agent edits planned against an older
//! revision are moved over the person's changes instead of going stale, unless those
//! changes touched the text the edit replaces.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::{Agent, ApplyRequest, Review, RpcError, ScriptedEditor};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

const FUNCTIONS: &str = "fn one() {\n    1\n}\n\nfn two() {\n    2\n}\n\nfn three() {\n    3\n}\n";

async fn editor_with(text: &str) -> (ScriptedEditor, String) {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("f.rs", text, text).await;
    (editor, uri)
}

/// An agent's `strReplace` of `old` by `new` in `uri`, held in review: its pending
/// call, and the `workspace/applyEdit` the editor has to decide.
async fn held_in_review(
    editor: &ScriptedEditor,
    agent: &Agent,
    uri: &str,
    (old, new): (&str, &str),
) -> (JoinHandle<Result<Value, RpcError>>, ApplyRequest) {
    editor.set_review(Review::Manual);
    let pending = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": old, "newStr": new, "summary": format!("{old} → {new}")}),
    );
    (pending, editor.next_review().await)
}

#[tokio::test]
async fn typing_elsewhere_after_the_read_moves_the_edit_over_it() {
    let (editor, uri) = editor_with(FUNCTIONS).await;
    let agent = editor.agent("claude").await;
    let read = agent.read(&uri).await;
    editor.type_text(&uri, "    3\n", "    3 + 0\n").await;
    editor.type_text(&uri, "fn two", "fn second").await;
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "    1\n", "newStr": "    100\n", "baseRev": read["rev"], "summary": "Grow one"}),
        )
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(result["rebased"], true);
    assert_eq!(result["rebasedFrom"], read["rev"]);
    assert_ne!(result["baseRev"], read["rev"], "baseRev is the revision the edit was applied to");
    assert_eq!(result["replaced"], json!(["    1\n"]));
    assert_eq!(
        editor.buffer(&uri),
        FUNCTIONS.replace("    1\n", "    100\n").replace("fn two", "fn second").replace("    3\n", "    3 + 0\n")
    );
}

#[tokio::test]
async fn typing_inside_the_quote_is_stale_and_names_the_lines() {
    let (editor, uri) = editor_with(FUNCTIONS).await;
    let agent = editor.agent("claude").await;
    let read = agent.read(&uri).await;
    editor.type_text(&uri, "    2\n", "    22\n").await;
    let error = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "fn two() {\n    2\n}", "newStr": "fn two() {}", "baseRev": read["rev"], "summary": "Shrink"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "stale");
    assert_eq!(error.data["changedLines"], json!([6, 6]));
    assert!(error.message.contains("line 6"), "{}", error.message);
    assert_eq!(editor.buffer(&uri), FUNCTIONS.replace("    2\n", "    22\n"));
}

#[tokio::test]
async fn a_whole_document_write_stays_strict() {
    let (editor, uri) = editor_with(FUNCTIONS).await;
    let agent = editor.agent("claude").await;
    let read = agent.read(&uri).await;
    editor.type_text(&uri, "    3", "    33").await;
    let error = agent
        .call("verbatim/write", json!({"uri": uri, "text": "fn main() {}\n", "baseRev": read["rev"], "summary": "All"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "stale");
}

#[tokio::test]
async fn a_revision_from_before_the_document_was_reopened_is_stale() {
    let (editor, uri) = editor_with(FUNCTIONS).await;
    let agent = editor.agent("claude").await;
    let read = agent.read(&uri).await;
    editor.close(&uri).await;
    editor.open_uri(&uri, FUNCTIONS).await;
    let error = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "    1\n", "newStr": "    100\n", "baseRev": read["rev"], "summary": "Grow one"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "stale");
}

#[tokio::test]
async fn typing_during_review_offers_the_moved_edit_again_and_the_agent_gets_one_answer() {
    let (editor, uri) = editor_with(FUNCTIONS).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("claude").await;
    let read = agent.read(&uri).await;
    let pending = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": "    1\n", "newStr": "    100\n", "baseRev": read["rev"], "summary": "Grow one"}),
    );
    let first = editor.next_review().await;
    editor.type_text(&uri, "    3\n", "    3 + 0\n").await;
    // The editor refuses the first offer: its version moved on.
    editor.decide(first, Review::Accept).await;
    let second = editor.next_review().await;
    editor.decide(second, Review::Accept).await;
    let result = pending.await.unwrap().unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(result["rebased"], true);
    assert_eq!(editor.buffer(&uri), FUNCTIONS.replace("    1\n", "    100\n").replace("    3\n", "    3 + 0\n"));
}

#[tokio::test]
async fn a_reload_that_changes_nothing_during_review_offers_the_edit_again() {
    // Neovim's plugin reloads a buffer from disk once an agent wrote an accepted edit
    // there itself (Claude Code): every line is replaced by the same line, the version
    // moves, and the next edit, already on its way, is refused for its version.
    let text: String = (1..=10_000).map(|n| format!("line {n}\n")).collect();
    let (editor, uri) = editor_with(&text).await;
    let agent = editor.agent("claude").await;
    let (pending, first) = held_in_review(&editor, &agent, &uri, ("line 5000\n", "LINE 5000\n")).await;
    editor.type_text(&uri, &text, &text).await;
    editor.set_review(Review::Accept);
    editor.decide(first, Review::Accept).await;
    let result = pending.await.unwrap().unwrap();
    assert_eq!(result["applied"], true, "{result:#}");
    assert_eq!(editor.buffer(&uri), text.replace("line 5000\n", "LINE 5000\n"));
}

#[tokio::test]
async fn a_document_closed_and_opened_again_with_the_same_text_during_review_offers_the_edit_again() {
    // Neovim's reload of a buffer from disk is a didClose and a didOpen.
    let (editor, uri) = editor_with(FUNCTIONS).await;
    editor.type_text(&uri, "fn three", "fn third").await;
    let text = FUNCTIONS.replace("fn three", "fn third");
    let agent = editor.agent("claude").await;
    let (pending, first) = held_in_review(&editor, &agent, &uri, ("    1\n", "    100\n")).await;
    editor.close(&uri).await;
    editor.open_uri(&uri, &text).await;
    editor.set_review(Review::Accept);
    editor.decide(first, Review::Accept).await;
    let result = pending.await.unwrap().unwrap();
    assert_eq!(result["applied"], true, "{result:#}");
    assert_eq!(editor.buffer(&uri), text.replace("    1\n", "    100\n"));

    // Opened again with other text: the edit is not moved blindly.
    let (pending, first) = held_in_review(&editor, &agent, &uri, ("    2\n", "    200\n")).await;
    editor.close(&uri).await;
    editor.open_uri(&uri, "something else\n").await;
    editor.decide(first, Review::Accept).await;
    let error = pending.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "stale", "{error:?}");
    assert_eq!(editor.buffer(&uri), "something else\n");
}

#[tokio::test]
async fn typing_inside_the_edit_during_review_ends_it_as_stale() {
    let (editor, uri) = editor_with(FUNCTIONS).await;
    let agent = editor.agent("claude").await;
    let (pending, first) = held_in_review(&editor, &agent, &uri, ("    1\n", "    100\n")).await;
    editor.type_text(&uri, "    1\n", "    11\n").await;
    editor.decide(first, Review::Accept).await;
    let error = pending.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "stale");
    assert_eq!(error.data["changedLines"], json!([2, 2]));
    assert_eq!(editor.buffer(&uri), FUNCTIONS.replace("    1\n", "    11\n"));
}

#[tokio::test]
async fn a_batch_over_two_documents_where_only_one_moved_applies_whole() {
    let editor = ScriptedEditor::start().await;
    let a = editor.open("a.rs", FUNCTIONS, FUNCTIONS).await;
    let b = editor.open("b.rs", FUNCTIONS, FUNCTIONS).await;
    let agent = editor.agent("claude").await;
    let (read_a, read_b) = (agent.read(&a).await, agent.read(&b).await);
    editor.type_text(&b, "fn three", "fn third").await;
    let result = agent
        .call(
            "verbatim/batchEdit",
            json!({"summary": "Both", "edits": [
                {"uri": a, "oldStr": "    1\n", "newStr": "    10\n", "baseRev": read_a["rev"]},
                {"uri": b, "oldStr": "    1\n", "newStr": "    10\n", "baseRev": read_b["rev"]},
            ]}),
        )
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
    let rebased: Vec<_> = result["documents"].as_array().unwrap().iter().map(|doc| doc["rebased"].clone()).collect();
    assert_eq!(rebased, vec![json!(null), json!(true)]);
    assert_eq!(editor.buffer(&a), FUNCTIONS.replace("    1\n", "    10\n"));
    assert_eq!(editor.buffer(&b), FUNCTIONS.replace("    1\n", "    10\n").replace("fn three", "fn third"));
}

#[tokio::test]
async fn forty_edits_while_the_person_types_at_the_end_all_apply() {
    let text: String = (0..200).map(|i| format!("fn f{i}() {{\n    {i}\n}}\n\n")).collect();
    let (editor, uri) = editor_with(&text).await;
    let editor = std::sync::Arc::new(editor);
    let typing = {
        let editor = editor.clone();
        let uri = uri.clone();
        tokio::spawn(async move {
            for i in 0..400 {
                let end = "    199\n}\n";
                editor.type_text(&uri, end, &format!("{end}{}", if i % 40 == 39 { '\n' } else { 'x' })).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let agent = editor.agent("claude").await;
    let mut rebased = 0;
    for i in 0..40 {
        let read = agent.read(&uri).await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        let result = agent
            .call(
                "verbatim/strReplace",
                json!({"uri": uri, "oldStr": format!("fn f{i}() {{\n    {i}\n"), "newStr": format!("fn f{i}() {{\n    {}\n", i + 1000), "baseRev": read["rev"], "summary": "Scale"}),
            )
            .await
            .unwrap();
        assert_eq!(result["applied"], true);
        if result["rebased"] == true {
            rebased += 1;
        }
    }
    typing.abort();
    assert!(rebased > 0, "the person typed during every think: some edits must have been rebased");
    let buffer = editor.buffer(&uri);
    for i in 0..40 {
        assert!(buffer.contains(&format!("fn f{i}() {{\n    {}\n", i + 1000)), "edit {i} missing");
    }
}
