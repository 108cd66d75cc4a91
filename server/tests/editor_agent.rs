//! End to end: the real binary, a scripted editor on its stdio, agents on its socket.
#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use common::{Agent, EditorOptions, Review, ScriptedEditor};
use serde_json::{Value, json};

const MAIN: &str = "fn main() {\n    let x = 1;\n    run(x);\n}\n\nfn other() {\n    let x = 1;\n}\n";

async fn editor_with_main() -> (ScriptedEditor, String) {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("main.rs", MAIN, MAIN).await;
    (editor, uri)
}

fn disk(editor: &ScriptedEditor, name: &str) -> String {
    std::fs::read_to_string(editor.path(name)).unwrap()
}

#[tokio::test]
async fn a_read_returns_the_unsaved_buffer_with_its_rev() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("a.txt", "on disk\n", "typed but unsaved\n").await;
    let agent = editor.agent("reader").await;
    let read = agent.read(&uri).await;
    assert_eq!(read["text"], "typed but unsaved\n");
    assert_eq!(read["source"], "editor");
    assert_eq!(read["lineEnding"], "lf");
    assert!(read["rev"].as_str().unwrap().starts_with('e'));
    let documents = agent.call("verbatim/documents", json!({})).await.unwrap();
    assert_eq!(documents, json!([{"uri": uri, "rev": read["rev"], "languageId": "plaintext", "lineCount": 2}]));
}

#[tokio::test]
async fn a_unique_quote_is_applied_in_the_buffer_and_never_on_disk() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("a.txt", "alpha\nbeta\n", "alpha\nbeta\ngamma (unsaved)\n").await;
    let agent = editor.agent("claude").await;
    let before = agent.read(&uri).await;
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "beta", "newStr": "BETA", "baseRev": before["rev"], "summary": "Shout beta"}),
        )
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(result["modifiedByEditor"], false);
    assert_eq!(result["replaced"], json!(["beta"]));
    assert_eq!(
        result["edits"],
        json!([{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 4}}, "oldText": "beta", "newText": "BETA"}])
    );
    assert_eq!(result["diff"], "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma (unsaved)\n");
    assert_ne!(result["rev"], before["rev"]);
    let after = agent.read(&uri).await;
    assert_eq!(after["text"], "alpha\nBETA\ngamma (unsaved)\n");
    assert_eq!(after["rev"], result["rev"]);
    assert_eq!(editor.buffer(&uri), "alpha\nBETA\ngamma (unsaved)\n");
    assert_eq!(disk(&editor, "a.txt"), "alpha\nbeta\n");
}

#[tokio::test]
async fn the_edit_reaches_the_editor_versioned_and_annotated() {
    let (editor, uri) = editor_with_main().await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("claude-code").await;
    let rev = agent.read(&uri).await["rev"].clone();
    let call = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": "run(x)", "newStr": "run(x + 1)", "summary": "Offset the run"}),
    );
    let review = editor.next_review().await;
    let edit = &review.params["edit"];
    let document_edit = &edit["documentChanges"][0];
    assert_eq!(document_edit["textDocument"], json!({"uri": uri, "version": 1}));
    assert_eq!(rev, json!("e1.1"));
    // Minimal: only " + 1" is inserted, so the cursor on `run(x)` stays put.
    assert_eq!(document_edit["edits"].as_array().unwrap().len(), 1);
    assert_eq!(document_edit["edits"][0]["newText"], " + 1");
    let annotation_id = document_edit["edits"][0]["annotationId"].as_str().unwrap();
    assert_eq!(
        edit["changeAnnotations"][annotation_id],
        json!({"label": "claude-code: Offset the run", "needsConfirmation": true, "description": "Offset the run"})
    );
    assert_eq!(review.params["label"], "claude-code: Offset the run");
    let status = agent.call("verbatim/status", Value::Null).await.unwrap();
    assert_eq!(status["pending"][0]["summary"], "Offset the run");
    assert_eq!(status["agents"][0]["pendingEdits"], 1);
    editor.decide(review, Review::Accept).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["applied"], true);
    let status = agent.call("verbatim/status", json!({})).await.unwrap();
    assert_eq!(status["pending"], json!([]));
}

#[tokio::test]
async fn an_ambiguous_quote_lists_matches_and_occurrence_resolves_it() {
    let (editor, uri) = editor_with_main().await;
    let agent = editor.agent("agent").await;
    let error = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "let x = 1;", "newStr": "let x = 2;", "summary": "Start at 2"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, -33002);
    assert_eq!(error.kind(), "ambiguous");
    assert_eq!(
        error.message,
        "oldStr matches 2 times in main.rs (lines 2, 7). Resend with occurrence: N (1-2), or narrow the window with after/before."
    );
    assert_eq!(error.data["matches"][1]["occurrence"], 2);
    assert_eq!(error.data["matches"][1]["line"], 7);
    assert_eq!(error.data["matches"][1]["context"], "    6 | fn other() {\n>   7 |     let x = 1;\n    8 | }");
    let result = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "let x = 1;", "newStr": "let x = 2;", "occurrence": 2, "summary": "Start at 2"}))
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(editor.buffer(&uri), MAIN.replace("other() {\n    let x = 1;", "other() {\n    let x = 2;"));
    // `after` narrows the window just as well.
    let result = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "let x = 1;", "newStr": "let y = 1;", "after": "fn main", "summary": "Rename"}))
        .await
        .unwrap();
    assert_eq!(result["replaced"], json!(["let x = 1;"]));
    assert!(editor.buffer(&uri).contains("fn main() {\n    let y = 1;"));
}

#[tokio::test]
async fn a_stale_base_rev_whose_text_changed_is_refused_and_nothing_changes() {
    let (editor, uri) = editor_with_main().await;
    let agent = editor.agent("agent").await;
    let read = agent.read(&uri).await;
    editor.type_text(&uri, "run(x);", "run(x, 2);").await;
    // The person changed the very line the edit quotes (a change elsewhere is rebased: tests/rebase.rs).
    let error = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "    run(x);", "newStr": "    go(x);", "baseRev": read["rev"], "summary": "Rename"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "stale");
    assert_eq!(error.data["baseRev"], read["rev"]);
    let current = agent.read(&uri).await;
    assert_eq!(error.data["currentRev"], current["rev"]);
    assert_eq!(error.data["changedLines"], json!([3, 3]));
    assert_eq!(current["text"], MAIN.replace("run(x);", "run(x, 2);"));
    let garbage = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "fn other", "newStr": "x", "baseRev": "7", "summary": "s"}),
        )
        .await
        .unwrap_err();
    assert_eq!(garbage.kind(), "invalidParams");
}

#[tokio::test]
async fn a_rejection_carries_the_persons_reason() {
    let (editor, uri) = editor_with_main().await;
    editor.set_review(Review::Reject(Some("not this way".into())));
    let agent = editor.agent("agent").await;
    let error = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "fn other", "newStr": "fn another", "summary": "Rename"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, -33008);
    assert_eq!(error.kind(), "rejected");
    assert_eq!(error.data["reason"], "not this way");
    assert_eq!(error.message, "The editor rejected the edit: not this way");
    assert_eq!(agent.read(&uri).await["text"], MAIN);
}

#[tokio::test]
async fn a_change_made_in_review_is_reported_as_modified_by_editor() {
    let (editor, uri) = editor_with_main().await;
    editor.set_review(Review::AcceptAltered("another".into(), "renamed_by_person".into()));
    let agent = editor.agent("agent").await;
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "fn other", "newStr": "fn another", "summary": "Rename"}),
        )
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(result["modifiedByEditor"], true);
    let editor_diff = result["editorDiff"].as_str().unwrap();
    assert!(editor_diff.contains("-fn another() {\n+fn renamed_by_person() {"), "{editor_diff}");
    assert_eq!(agent.read(&uri).await["rev"], result["rev"]);
}

#[tokio::test]
async fn the_change_may_arrive_after_the_answer() {
    let (editor, uri) = editor_with_main().await;
    editor.set_review(Review::AcceptAnswerFirst);
    let agent = editor.agent("agent").await;
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "fn other", "newStr": "fn another", "summary": "Rename"}),
        )
        .await
        .unwrap();
    assert_eq!(result["modifiedByEditor"], false);
    assert_eq!(agent.read(&uri).await["rev"], result["rev"]);
}

#[tokio::test]
async fn typing_over_the_edit_while_it_waits_for_review_makes_it_stale() {
    let (editor, uri) = editor_with_main().await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent").await;
    let call = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": "fn other", "newStr": "fn another", "summary": "Rename"}),
    );
    let review = editor.next_review().await;
    editor.type_text(&uri, "fn other", "fn other_one").await;
    editor.decide(review, Review::Accept).await;
    let error = call.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "stale", "{error:?}");
    assert!(error.message.contains("exactly where your edit applies: line 6"), "{}", error.message);
    assert_eq!(agent.read(&uri).await["text"], MAIN.replace("fn other", "fn other_one"));
}

#[tokio::test]
async fn replace_range_and_dry_run() {
    let (editor, uri) = editor_with_main().await;
    let agent = editor.agent("agent").await;
    let preview = agent
        .call("verbatim/replaceRange", json!({"uri": uri, "fromStr": "fn other() {", "toStr": "}\n", "newStr": "fn other() {}\n", "dryRun": true, "summary": "Empty other"}))
        .await
        .unwrap();
    assert_eq!(preview["applied"], false);
    assert_eq!(preview["dryRun"], true);
    assert_eq!(preview["replaced"], json!(["fn other() {\n    let x = 1;\n}\n"]));
    assert_eq!(agent.read(&uri).await["text"], MAIN);
    assert_eq!(preview["rev"], agent.read(&uri).await["rev"]);
    let result = agent
        .call("verbatim/replaceRange", json!({"uri": uri, "fromStr": "fn other() {", "toStr": "}\n", "newStr": "fn other() {}\n", "summary": "Empty other"}))
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(editor.buffer(&uri), "fn main() {\n    let x = 1;\n    run(x);\n}\n\nfn other() {}\n");
    let error = agent
        .call(
            "verbatim/replaceRange",
            json!({"uri": uri, "fromStr": "run(x)", "toStr": "fn main", "newStr": "", "summary": "s"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "rangeOrder");
}

#[tokio::test]
async fn a_batch_applies_everything_or_nothing() {
    let editor = ScriptedEditor::start().await;
    let a = editor.open("a.rs", "struct Foo;\n", "struct Foo;\n").await;
    let b = editor.open("b.rs", "impl Foo {}\nuse Foo;\n", "impl Foo {}\nuse Foo;\n").await;
    let agent = editor.agent("agent").await;
    let failing = agent
        .call(
            "verbatim/batchEdit",
            json!({"summary": "Rename Foo", "edits": [
                {"uri": a, "oldStr": "struct Foo", "newStr": "struct Bar"},
                {"uri": b, "oldStr": "Foo", "newStr": "Bar"},
            ]}),
        )
        .await
        .unwrap_err();
    assert_eq!(failing.kind(), "ambiguous");
    assert_eq!(failing.data["edit"], 1);
    assert!(failing.message.starts_with("edits[1]: "), "{}", failing.message);
    assert_eq!(editor.buffer(&a), "struct Foo;\n");
    let overlapping = agent
        .call(
            "verbatim/batchEdit",
            json!({"summary": "Rename Foo", "edits": [
                {"uri": b, "oldStr": "impl Foo", "newStr": "impl Bar"},
                {"uri": b, "oldStr": "Foo {}", "newStr": "Bar {}"},
            ]}),
        )
        .await
        .unwrap_err();
    assert_eq!(overlapping.kind(), "overlap");
    let result = agent
        .call(
            "verbatim/batchEdit",
            json!({"summary": "Rename Foo", "edits": [
                {"uri": a, "oldStr": "struct Foo", "newStr": "struct Bar"},
                {"uri": b, "oldStr": "Foo", "newStr": "Bar", "replaceAll": true},
            ]}),
        )
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(result["documents"].as_array().unwrap().len(), 2);
    assert_eq!(result["documents"][1]["replaced"], json!(["Foo", "Foo"]));
    assert_eq!(editor.buffer(&a), "struct Bar;\n");
    assert_eq!(editor.buffer(&b), "impl Bar {}\nuse Bar;\n");
}

#[tokio::test]
async fn two_agents_racing_on_one_document_lose_no_update() {
    let editor = ScriptedEditor::start().await;
    let text: String = (0..40).map(|i| format!("line {i}\n")).collect();
    let uri = editor.open("race.txt", &text, &text).await;
    let first = editor.agent("first").await;
    let second = editor.agent("second").await;
    let mut tasks = Vec::new();
    for (agent, parity) in [(first, 0), (second, 1)] {
        let uri = uri.clone();
        tasks.push(tokio::spawn(async move {
            let mut applied = 0;
            for i in (parity..40).step_by(2) {
                let result = agent
                    .call("verbatim/strReplace", json!({"uri": uri, "oldStr": format!("line {i}\n"), "newStr": format!("LINE {i}\n"), "summary": "upper"}))
                    .await;
                if result.is_ok() {
                    applied += 1;
                }
            }
            applied
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap();
    }
    assert_eq!(total, 40);
    let expected: String = (0..40).map(|i| format!("LINE {i}\n")).collect();
    assert_eq!(editor.buffer(&uri), expected);
    let reader = editor.agent("reader").await;
    assert_eq!(reader.read(&uri).await["text"], expected);
}

#[tokio::test]
async fn racers_on_the_same_text_are_refused_not_merged_and_on_other_text_both_land() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("r.txt", "a\nb\n", "a\nb\n").await;
    let first = editor.agent("first").await;
    let second = editor.agent("second").await;
    let rev = first.read(&uri).await["rev"].clone();
    let (one, two) = tokio::join!(
        first.call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "a\n", "newStr": "A\n", "baseRev": rev, "summary": "s"})
        ),
        second.call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "a\n", "newStr": "α\n", "baseRev": rev, "summary": "s"})
        ),
    );
    let outcomes = [one, two];
    assert_eq!(outcomes.iter().filter(|outcome| outcome.is_ok()).count(), 1, "{outcomes:?}");
    let refused = outcomes.iter().find_map(|outcome| outcome.as_ref().err()).unwrap();
    assert_eq!(refused.kind(), "stale");
    let text = editor.buffer(&uri);
    assert!(text == "A\nb\n" || text == "α\nb\n", "{text}");

    // Edits of different lines, both planned against the same revision: both land.
    let other = editor.open("s.txt", "x\ny\n", "x\ny\n").await;
    let rev = first.read(&other).await["rev"].clone();
    let (one, two) = tokio::join!(
        first.call(
            "verbatim/strReplace",
            json!({"uri": other, "oldStr": "x\n", "newStr": "X\n", "baseRev": rev, "summary": "s"})
        ),
        second.call(
            "verbatim/strReplace",
            json!({"uri": other, "oldStr": "y\n", "newStr": "Y\n", "baseRev": rev, "summary": "s"})
        ),
    );
    assert_eq!(one.unwrap()["applied"], true);
    assert_eq!(two.unwrap()["applied"], true);
    assert_eq!(editor.buffer(&other), "X\nY\n");
}

#[tokio::test]
async fn emoji_positions_are_right_in_utf16_and_utf8() {
    for (editor_encodings, agent_encodings, expected_agent_start) in [
        (vec!["utf-16"], vec!["utf-16"], 3),
        (vec!["utf-8", "utf-16"], vec!["utf-8"], 5),
        (vec!["utf-16"], vec!["utf-32"], 2),
    ] {
        let editor =
            ScriptedEditor::start_with(EditorOptions { encodings: editor_encodings, ..EditorOptions::default() }).await;
        let text = "a😀b👍🏽c\r\nnext é line\r\n";
        let uri = editor.open("emoji.txt", text, text).await;
        let agent = editor.agent_with("agent", &agent_encodings).await;
        let result = agent
            .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "b👍🏽c", "newStr": "B🎉C", "summary": "party"}))
            .await
            .unwrap();
        assert_eq!(result["edits"][0]["range"]["start"], json!({"line": 0, "character": expected_agent_start}));
        assert_eq!(editor.buffer(&uri), "a😀B🎉C\r\nnext é line\r\n");
        assert_eq!(agent.read(&uri).await["text"], "a😀B🎉C\r\nnext é line\r\n");
        assert_eq!(agent.read(&uri).await["lineEnding"], "crlf");
        // And the editor's own typing after the emoji lands where it should.
        editor.type_text(&uri, "é", "ê").await;
        assert_eq!(agent.read(&uri).await["text"], "a😀B🎉C\r\nnext ê line\r\n");
    }
}

#[tokio::test]
async fn a_file_that_is_not_open_is_edited_through_the_editor_with_version_null() {
    let editor = ScriptedEditor::start().await;
    std::fs::write(editor.path("closed.txt"), "one\ntwo\n").unwrap();
    let uri = editor.uri("closed.txt");
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent").await;
    let read = agent.read(&uri).await;
    assert_eq!(read["source"], "disk");
    assert!(read["rev"].as_str().unwrap().starts_with('d'));
    let call = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": "two", "newStr": "TWO", "baseRev": read["rev"], "summary": "s"}),
    );
    let review = editor.next_review().await;
    assert_eq!(review.params["edit"]["documentChanges"][0]["textDocument"]["version"], Value::Null);
    editor.decide(review, Review::Accept).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(editor.buffer(&uri), "one\nTWO\n");
    assert_eq!(disk(&editor, "closed.txt"), "one\ntwo\n");
    assert_eq!(agent.read(&uri).await["source"], "editor");
}

/// An agent edits a file that is not open while the person opens it. Issue 32: under
/// load, VS Code's `didOpen` reached the server while it planned such an edit, and the
/// edit was refused as "changed on disk" although nothing had changed. Opened at any
/// moment of the planning (spread over the time it takes here), the file is edited in
/// the editor, never refused.
#[tokio::test]
async fn a_file_the_editor_opens_while_its_edit_is_planned_is_edited_all_the_same() {
    const ROUNDS: u32 = 12;
    let editor = ScriptedEditor::start().await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent").await;
    // Large enough that planning takes a while: the file is read and hashed more than once.
    let text: String =
        (1..=20_000).map(|n| format!("line {n:06}: the quick brown fox jumps over the lazy dog\n")).collect();
    let edited = text.replace("line 019990:", "LINE 019990:");
    // How long the server takes from the request to the review when nobody opens the file.
    let mut planning = Duration::ZERO;
    for round in 0..=ROUNDS {
        let name = format!("opened-while-planned-{round}.txt");
        std::fs::write(editor.path(&name), &text).unwrap();
        let uri = editor.uri(&name);
        let read = agent.read(&uri).await;
        assert_eq!(read["source"], "disk");
        let started = std::time::Instant::now();
        let mut call = agent.spawn_call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "line 019990:", "newStr": "LINE 019990:", "baseRev": read["rev"], "summary": "s"}),
        );
        if round > 0 {
            tokio::time::sleep(planning * (round - 1) / (ROUNDS - 1)).await;
            editor.open_uri(&uri, &text).await;
        }
        let review = tokio::select! {
            review = editor.next_review() => review,
            answer = &mut call => panic!("round {round}: answered before any review: {:?}", answer.unwrap()),
        };
        if round == 0 {
            planning = started.elapsed();
        }
        editor.decide(review, Review::Accept).await;
        let result = call.await.unwrap().unwrap();
        assert_eq!(result["applied"], true, "round {round}: {result}");
        assert_eq!(editor.buffer(&uri), edited, "round {round}");
        assert_eq!(agent.read(&uri).await["text"], edited.as_str(), "round {round}");
    }
}

#[tokio::test]
async fn write_creates_files_and_replaces_documents_with_a_base_rev() {
    let editor = ScriptedEditor::start().await;
    let agent = editor.agent("agent").await;
    let uri = editor.uri("new.rs");
    let created = agent
        .call("verbatim/write", json!({"uri": uri, "text": "fn main() {}\n", "summary": "Add main"}))
        .await
        .unwrap();
    assert_eq!(created["applied"], true);
    assert_eq!(created["baseRev"], Value::Null);
    assert_eq!(editor.buffer(&uri), "fn main() {}\n");
    let missing_rev = agent.call("verbatim/write", json!({"uri": uri, "text": "x", "summary": "s"})).await.unwrap_err();
    assert_eq!(missing_rev.kind(), "invalidParams");
    assert_eq!(missing_rev.data["field"], "baseRev");
    let rev = agent.read(&uri).await["rev"].clone();
    agent
        .call("verbatim/write", json!({"uri": uri, "text": "fn main() { run(); }\n", "baseRev": rev, "summary": "Run"}))
        .await
        .unwrap();
    assert_eq!(editor.buffer(&uri), "fn main() { run(); }\n");
}

#[tokio::test]
async fn mistakes_get_specific_errors() {
    let (editor, uri) = editor_with_main().await;
    let agent = editor.agent("agent").await;
    let cases = [
        (json!({"uri": uri, "oldStr": "", "newStr": "x", "summary": "s"}), "emptyQuote"),
        (json!({"uri": uri, "oldStr": "nowhere", "newStr": "x", "summary": "s"}), "notFound"),
        (json!({"uri": uri, "oldStr": "fn main", "newStr": "fn main", "summary": "s"}), "noChange"),
        (json!({"uri": uri, "oldStr": "fn main", "newStr": "x", "summary": " "}), "invalidParams"),
        (json!({"uri": uri, "old_str": "fn main", "newStr": "x", "summary": "s"}), "invalidParams"),
        (json!({"uri": uri, "oldStr": "let x = 1;", "newStr": "x", "occurrence": 3, "summary": "s"}), "notFound"),
        (
            json!({"uri": uri, "oldStr": "let x = 1;", "newStr": "x", "occurrence": u64::MAX, "summary": "s"}),
            "notFound",
        ),
        (json!({"uri": uri, "oldStr": 42, "newStr": "x", "summary": "s"}), "invalidParams"),
        (json!({"uri": "relative/path.rs", "oldStr": "a", "newStr": "x", "summary": "s"}), "invalidParams"),
        (json!({"uri": editor.uri("missing.rs"), "oldStr": "a", "newStr": "x", "summary": "s"}), "unknownDocument"),
        (json!({"uri": "file:///etc/hostname", "oldStr": "a", "newStr": "x", "summary": "s"}), "outsideWorkspace"),
        (json!({"uri": "untitled:Untitled-9", "oldStr": "a", "newStr": "x", "summary": "s"}), "unknownDocument"),
    ];
    for (params, kind) in cases {
        let error = agent.call("verbatim/strReplace", params.clone()).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{params} gave {error:?}");
        assert!(error.message.len() > 30, "message too terse: {}", error.message);
    }
    std::fs::write(editor.path("blob.bin"), b"\x00\x01binary").unwrap();
    let error = agent.call("verbatim/read", json!({"uri": editor.uri("blob.bin")})).await.unwrap_err();
    assert_eq!(error.kind(), "notText");
    assert_eq!(agent.read(&uri).await["text"], MAIN);
}

#[tokio::test]
async fn without_an_editor_answer_agents_learn_it_is_unavailable() {
    let (mut editor, uri) = editor_with_main().await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent").await;
    let call = agent
        .spawn_call("verbatim/strReplace", json!({"uri": uri, "oldStr": "fn other", "newStr": "fn x", "summary": "s"}));
    let _review = editor.next_review().await;
    let socket = editor.discovery().await["socket"].as_str().unwrap().to_owned();
    // The editor goes away without answering: closing stdin ends the session.
    drop(editor.child.stdin.take());
    editor.connection.notify("exit", Value::Null).await;
    let outcome = tokio::time::timeout(Duration::from_secs(10), call).await.unwrap().unwrap();
    match outcome {
        Err(error) => assert_eq!(error.kind(), "editorUnavailable"),
        Ok(value) => panic!("applied without an editor: {value}"),
    }
    let _ = editor.child.wait().await;
    assert!(!std::path::Path::new(&socket).exists(), "the socket outlived the server");
    assert_eq!(disk(&editor, "main.rs"), MAIN);
}

#[tokio::test]
async fn the_runtime_directory_socket_and_discovery_file_are_private() {
    let editor = ScriptedEditor::start().await;
    let discovery = editor.discovery().await;
    assert_eq!(discovery["protocolVersion"], 1);
    assert_eq!(discovery["clientInfo"]["name"], "scripted-editor");
    assert_eq!(discovery["workspaceFolders"], json!([common::file_uri(editor.workspace.path())]));
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(editor.runtime_dir.path()), 0o700);
    let socket = std::path::PathBuf::from(discovery["socket"].as_str().unwrap());
    assert_eq!(mode(&socket), 0o600);
    let file = socket.with_extension("json");
    assert_eq!(mode(&file), 0o600);
    let status = editor.shutdown().await;
    assert!(status.success());
    assert!(!socket.exists() && !file.exists());
}

#[tokio::test]
async fn malformed_input_is_answered_and_the_connection_keeps_serving() {
    let (editor, uri) = editor_with_main().await;
    let agent = editor.agent("agent").await;
    agent.connection.send_raw(b"Content-Length: 9\r\n\r\n{not json").await;
    agent.connection.send_raw(b"Content-Length: 27\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":true}").await;
    let read = agent.read(&uri).await;
    assert_eq!(read["text"], MAIN);
    let unknown = agent.call("verbatim/nonsense", json!({})).await.unwrap_err();
    assert_eq!(unknown.code, -32601);
}

#[tokio::test]
async fn agents_must_initialize_first() {
    let editor = ScriptedEditor::start().await;
    let discovery = editor.discovery().await;
    let stream = tokio::net::UnixStream::connect(discovery["socket"].as_str().unwrap()).await.unwrap();
    let (read, write) = stream.into_split();
    let (connection, _incoming) = common::Connection::start(read, write);
    let error = connection.request("verbatim/documents", Value::Null).await.unwrap_err();
    assert_eq!(error.code, -32002);
    let _agent = Agent::connect(std::path::Path::new(discovery["socket"].as_str().unwrap()), "late", &["utf-8"]).await;
}

async fn wait_until(mut condition: impl FnMut() -> bool) {
    for _ in 0..400 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not met in time");
}

#[tokio::test]
async fn an_agent_that_cancels_or_disconnects_withdraws_its_pending_edit() {
    let (editor, uri) = editor_with_main().await;
    editor.set_review(Review::Manual);
    // Cancel with $/cancelRequest.
    let agent = editor.agent("canceller").await;
    let (request_id, response) = agent
        .connection
        .start_request(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "fn other", "newStr": "fn x", "summary": "s"}),
        )
        .await;
    let first_review = editor.next_review().await;
    agent.connection.notify("$/cancelRequest", json!({"id": request_id})).await;
    let answer = tokio::time::timeout(Duration::from_secs(10), response).await.unwrap().unwrap();
    assert_eq!(answer.unwrap_err().code, -32800);
    wait_until(|| editor.cancelled().contains(&first_review.id)).await;
    // Disconnect while waiting.
    let leaver = editor.agent("leaver").await;
    let _pending = leaver
        .connection
        .start_request(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "run(x)", "newStr": "go(x)", "summary": "s"}),
        )
        .await;
    let second_review = editor.next_review().await;
    drop(leaver);
    wait_until(|| editor.cancelled().contains(&second_review.id)).await;
    let observer = editor.agent("observer").await;
    let status = observer.call("verbatim/status", Value::Null).await.unwrap();
    assert_eq!(status["pending"], json!([]), "{status}");
    assert_eq!(
        status["agents"].as_array().unwrap().iter().map(|agent| agent["name"].clone()).collect::<Vec<_>>(),
        vec![json!("canceller"), json!("observer")]
    );
    // A late answer to a withdrawn edit corrupts nothing: the server mirrors the editor.
    editor.decide(second_review, Review::Accept).await;
    editor.sync().await;
    assert_eq!(observer.read(&uri).await["text"], MAIN.replace("run(x)", "go(x)"));
    editor.set_review(Review::Accept);
    let result = observer
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "fn other", "newStr": "fn another", "summary": "s"}))
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
}

#[tokio::test]
async fn workspace_folders_follow_the_editor() {
    let editor = ScriptedEditor::start().await;
    let agent = editor.agent("agent").await;
    let second = tempfile::tempdir().unwrap();
    std::fs::write(second.path().join("b.txt"), "bee\n").unwrap();
    let b_uri = common::file_uri(&second.path().join("b.txt"));
    assert_eq!(agent.call("verbatim/read", json!({"uri": b_uri})).await.unwrap_err().kind(), "outsideWorkspace");
    let folder = json!({"uri": common::file_uri(second.path()), "name": "second"});
    editor
        .connection
        .notify("workspace/didChangeWorkspaceFolders", json!({"event": {"added": [folder], "removed": []}}))
        .await;
    editor.sync().await;
    wait_until(|| {
        let discovery: Value = serde_json::from_slice(
            &std::fs::read(editor.runtime_dir.path().join(format!("{}.json", editor.child.id().unwrap()))).unwrap(),
        )
        .unwrap();
        discovery["workspaceFolders"].as_array().unwrap().len() == 2
    })
    .await;
    assert_eq!(agent.read(&b_uri).await["text"], "bee\n");
    editor
        .connection
        .notify("workspace/didChangeWorkspaceFolders", json!({"event": {"added": [], "removed": [folder]}}))
        .await;
    editor.sync().await;
    wait_until(|| {
        let discovery: Value = serde_json::from_slice(
            &std::fs::read(editor.runtime_dir.path().join(format!("{}.json", editor.child.id().unwrap()))).unwrap(),
        )
        .unwrap();
        discovery["workspaceFolders"].as_array().unwrap().len() == 1
    })
    .await;
    assert_eq!(agent.call("verbatim/read", json!({"uri": b_uri})).await.unwrap_err().kind(), "outsideWorkspace");
}
