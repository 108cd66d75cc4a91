//! End to end: the person keeps some hunks of a proposal and leaves others out, and
//! the agent is told exactly which, with their reason. Editors that say what they
//! kept and editors that do not (VS Code's Refactor Preview) are both understood.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Review, ScriptedEditor};
use serde_json::{Value, json};

const BODY: &str = "fn one() {\n    1\n}\n\nfn two() {\n    2\n}\n\nfn three() {\n    3\n}\n";
const TEXT: &str = concat!("fn one() {\n    1\n}\n\nfn two() {\n    2\n}\n\nfn three() {\n    3\n}\n", "// end\n");

/// One strReplace over the functions that changes lines 2 and 10: two hunks.
fn two_hunk_edit(uri: &str) -> Value {
    json!({"uri": uri, "oldStr": BODY, "newStr": BODY.replace("    1\n", "    10\n").replace("    3\n", "    30\n"),
           "summary": "Scale one and three"})
}

async fn editor_with_text() -> (ScriptedEditor, String) {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("f.rs", TEXT, TEXT).await;
    (editor, uri)
}

#[tokio::test]
async fn the_offer_names_its_hunks_and_their_edits() {
    let (editor, uri) = editor_with_text().await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("claude").await;
    let call = agent.spawn_call("verbatim/strReplace", two_hunk_edit(&uri));
    let request = editor.next_review().await;
    let about = &request.params["verbatim"];
    assert_eq!(about["agent"], "claude");
    assert_eq!(about["summary"], "Scale one and three");
    assert_eq!(about["origin"], "agent");
    assert_eq!(about["offer"], 1);
    assert!(about["id"].is_u64());
    let edits = request.params["edit"]["documentChanges"][0]["edits"].as_array().unwrap().len();
    assert_eq!(about["hunks"], json!([{"uri": uri, "edits": [0]}, {"uri": uri, "edits": [1]}]), "{edits} edits");
    editor.decide(request, Review::Accept).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["partial"], Value::Null, "everything was kept");
    assert_eq!(
        result["hunks"],
        json!([{"index": 0, "accepted": true, "line": 2, "oldLines": 1, "newLines": 1},
               {"index": 1, "accepted": true, "line": 10, "oldLines": 1, "newLines": 1}])
    );
}

#[tokio::test]
async fn a_hunk_left_out_with_a_reason_is_a_partial_success() {
    let (editor, uri) = editor_with_text().await;
    editor.set_review(Review::AcceptHunks { keep: vec![0], reason: Some("three stays small".into()), report: true });
    let agent = editor.agent("claude").await;
    let result = agent.call("verbatim/strReplace", two_hunk_edit(&uri)).await.unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(result["partial"], true);
    assert_eq!(result["modifiedByEditor"], false);
    assert_eq!(result["reason"], "three stays small");
    assert_eq!(result["hunks"][0]["accepted"], true);
    assert_eq!(result["hunks"][1]["accepted"], false);
    assert_eq!(editor.buffer(&uri), TEXT.replace("    1\n", "    10\n"));
    let diff = result["diff"].as_str().unwrap();
    assert!(diff.contains("+    10") && !diff.contains("+    30"), "the diff shows what was applied:\n{diff}");
    let rev: String = agent.read(&uri).await["rev"].as_str().unwrap().into();
    assert_eq!(result["rev"], rev);
}

#[tokio::test]
async fn an_editor_that_does_not_say_what_it_kept_is_read_from_the_text() {
    let (editor, uri) = editor_with_text().await;
    editor.set_review(Review::AcceptHunks { keep: vec![1], reason: None, report: false });
    let agent = editor.agent("claude").await;
    let result = agent.call("verbatim/strReplace", two_hunk_edit(&uri)).await.unwrap();
    assert_eq!(result["partial"], true);
    assert_eq!(result["modifiedByEditor"], false);
    assert_eq!(result["hunks"][0]["accepted"], false);
    assert_eq!(result["hunks"][1]["accepted"], true);
    assert_eq!(result["reason"], Value::Null);
}

#[tokio::test]
async fn keeping_no_hunk_is_a_rejection_with_the_reason() {
    let (editor, uri) = editor_with_text().await;
    editor.set_review(Review::AcceptHunks { keep: vec![], reason: Some("not now".into()), report: true });
    let agent = editor.agent("claude").await;
    let error = agent.call("verbatim/strReplace", two_hunk_edit(&uri)).await.unwrap_err();
    assert_eq!(error.kind(), "rejected");
    assert_eq!(error.data["reason"], "not now");
    assert_eq!(editor.buffer(&uri), TEXT);
}

#[tokio::test]
async fn hunks_of_a_batch_are_numbered_across_its_documents() {
    let editor = ScriptedEditor::start().await;
    let a = editor.open("a.rs", TEXT, TEXT).await;
    let b = editor.open("b.rs", TEXT, TEXT).await;
    editor.set_review(Review::AcceptHunks { keep: vec![0, 2], reason: Some("only the ones".into()), report: true });
    let agent = editor.agent("claude").await;
    let edit = |uri: &str| json!({"uri": uri, "oldStr": TEXT, "newStr": TEXT.replace("    1\n", "    10\n").replace("    3\n", "    30\n")});
    let result = agent
        .call("verbatim/batchEdit", json!({"summary": "Scale both", "edits": [edit(&a), edit(&b)]}))
        .await
        .unwrap();
    assert_eq!(result["partial"], true);
    assert_eq!(result["reason"], "only the ones");
    let indexes: Vec<(u64, bool)> = result["documents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|document| document["hunks"].as_array().unwrap().clone())
        .map(|hunk| (hunk["index"].as_u64().unwrap(), hunk["accepted"].as_bool().unwrap()))
        .collect();
    assert_eq!(indexes, vec![(0, true), (1, false), (2, true), (3, false)]);
    assert_eq!(editor.buffer(&a), TEXT.replace("    1\n", "    10\n"));
    assert_eq!(editor.buffer(&b), TEXT.replace("    1\n", "    10\n"));
}

#[tokio::test]
async fn an_edit_offered_again_keeps_its_id_and_counts_the_offer() {
    let (editor, uri) = editor_with_text().await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("claude").await;
    let call = agent.spawn_call("verbatim/strReplace", two_hunk_edit(&uri));
    let first = editor.next_review().await;
    let first_id = first.params["verbatim"]["id"].clone();
    editor.type_text(&uri, "// end", "// the end").await;
    editor.decide(first, Review::Accept).await;
    let second = editor.next_review().await;
    assert_eq!(second.params["verbatim"]["id"], first_id);
    assert_eq!(second.params["verbatim"]["offer"], 2);
    editor.decide(second, Review::AcceptHunks { keep: vec![1], reason: None, report: true }).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["rebased"], true);
    assert_eq!(result["partial"], true);
    assert_eq!(editor.buffer(&uri), TEXT.replace("// end", "// the end").replace("    3\n", "    30\n"));
}

#[tokio::test]
async fn an_edit_with_no_hunk_to_keep_is_applied_when_the_editor_says_so() {
    let editor = ScriptedEditor::start().await;
    std::fs::write(editor.path("gone.txt"), "obsolete\n").unwrap();
    // The editor reports hunks as Verbatim's clients do: here an empty list.
    editor.set_review(Review::AcceptHunks { keep: vec![], reason: None, report: true });
    let agent = editor.agent("codex").await;
    let result = agent
        .call(
            "verbatim/applyPatch",
            json!({"patch": "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch", "summary": "s"}),
        )
        .await
        .unwrap();
    assert_eq!(result["applied"], true, "{result}");
    assert_eq!(result["partial"], Value::Null);
    assert!(!editor.path("gone.txt").exists());
}
