//! The timeline and revert, for real: `verbatim revert` with no editor (byte-exact on
//! CRLF, BOM and UTF-16 files, a conflict left as it is, a revert of the revert), and
//! `verbatim/revert` through a server whose editor reviews it, around the person's
//! typing and another agent's edit.
#![allow(clippy::unwrap_used)]

mod cli_support;
mod common;

use serde_json::{Value, json};

use cli_support::Project;
use common::{Review, ScriptedEditor};

fn utf16le(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    out
}

fn bom(text: &str) -> Vec<u8> {
    [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat()
}

/// The session of the journal's newest entry about `name`.
async fn session_of(project: &Project, name: &str) -> String {
    let run = project.cli.run(&["log", "--json", "--path", name, "-n", "1"]).await;
    let entry: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    entry["session"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_session_reverted_on_disk_keeps_every_byte_and_what_came_after_and_comes_back_when_its_revert_is_reverted() {
    let project = Project::new();
    project.write("crlf.txt", "one\r\ntwo\r\nthree\r\n3.5\r\nfour\r\n");
    project.write("bom.txt", bom("alpha\nbeta\n"));
    project.write("wide.txt", utf16le("uno\ndos 😀\ntres\n"));
    let cli = &project.cli;
    cli.run(&["edit", "crlf.txt", "--old", "one", "--new", "ONE", "-m", "first"]).await.expect_code(0);
    let batch = json!({"summary": "the session to undo", "edits": [
        {"uri": project.path("crlf.txt").to_string_lossy(), "oldStr": "three", "newStr": "THREE"},
        {"uri": project.path("bom.txt").to_string_lossy(), "oldStr": "beta", "newStr": "BETA"},
        {"uri": project.path("wide.txt").to_string_lossy(), "oldStr": "dos 😀", "newStr": "DOS 😀😀"},
    ]});
    cli.run_with_stdin(&["batch"], batch.to_string().as_bytes()).await.expect_code(0);
    let session = session_of(&project, "bom.txt").await;
    cli.run(&["edit", "crlf.txt", "--old", "four", "--new", "FOUR", "-m", "after"]).await.expect_code(0);

    let dry = cli.run(&["revert", "--session", &session, "--dry-run", "--json"]).await;
    dry.expect_code(0);
    assert_eq!(dry.json()["outcome"], "planned");
    assert_eq!(project.read("bom.txt"), bom("alpha\nBETA\n"), "a dry run changes nothing");

    let run = cli.run(&["revert", "--session", &session, "--json"]).await;
    run.expect_code(0);
    let result = run.json();
    assert_eq!(result["outcome"], "applied", "{result:#}");
    assert_eq!(result["via"], "headless");
    assert_eq!(result["reverts"].as_array().unwrap().len(), 3);
    assert_eq!(project.read("crlf.txt"), b"ONE\r\ntwo\r\nthree\r\n3.5\r\nFOUR\r\n");
    assert_eq!(project.read("bom.txt"), bom("alpha\nbeta\n"));
    assert_eq!(project.read("wide.txt"), utf16le("uno\ndos 😀\ntres\n"));

    // The revert is journaled as a change of its own: reverting it brings the session back.
    let revert_id = result["writeId"].as_str().unwrap().to_owned();
    cli.run(&["revert", &revert_id]).await.expect_code(0);
    assert_eq!(project.read("crlf.txt"), b"ONE\r\ntwo\r\nTHREE\r\n3.5\r\nFOUR\r\n");
    assert_eq!(project.read("bom.txt"), bom("alpha\nBETA\n"));
    assert_eq!(project.read("wide.txt"), utf16le("uno\nDOS 😀😀\ntres\n"));

    let log = cli.run(&["log"]).await;
    assert!(log.stdout.contains(&format!("session {session}")), "{}", log.stdout);
}

#[tokio::test]
async fn a_later_change_to_the_same_lines_is_a_conflict_left_as_it_is_on_disk() {
    let project = Project::new();
    project.write("a.txt", "one\nbetween\ntwo\nthree\n");
    let cli = &project.cli;
    cli.run(&["edit", "a.txt", "--old", "two", "--new", "TWO", "-m", "shout", "--turn", "t-1"]).await.expect_code(0);
    cli.run(&["edit", "a.txt", "--old", "TWO", "--new", "TWO!", "-m", "louder"]).await.expect_code(0);
    cli.run(&["edit", "a.txt", "--old", "one", "--new", "one.", "-m", "elsewhere"]).await.expect_code(0);
    let run = cli.run(&["revert", "--turn", "t-1", "--json"]).await;
    run.expect_code(23);
    let result = run.json();
    let conflict = &result["files"][0]["conflicts"][0];
    assert_eq!((conflict["current"].as_str(), conflict["reverted"].as_str()), (Some("TWO!\n"), Some("two\n")));
    assert_eq!(conflict["chosen"], "current");
    assert_eq!(project.text("a.txt"), "one.\nbetween\nTWO!\nthree\n", "nothing of the later change is lost");

    cli.assert_errors(&[
        (vec!["revert", "nope"], "", 22, "unknownEntry"),
        (vec!["revert", "--turn", "no-such-turn"], "", 22, "unknownEntry"),
    ])
    .await;
}

#[tokio::test]
async fn a_file_the_change_created_is_deleted_and_comes_back_when_the_revert_is_reverted() {
    let project = Project::new();
    let cli = &project.cli;
    cli.run_with_stdin(&["write", "new.txt", "-m", "create", "--turn", "t-new"], b"fresh\r\n").await.expect_code(0);
    let run = cli.run(&["revert", "--turn", "t-new", "--json"]).await;
    run.expect_code(0);
    assert_eq!(run.json()["files"][0]["action"], "delete");
    assert!(!project.path("new.txt").exists());
    let revert_id = run.json()["writeId"].as_str().unwrap().to_owned();
    let again = cli.run(&["revert", &revert_id, "--json"]).await;
    again.expect_code(0);
    assert_eq!(again.json()["files"][0]["action"], "create");
    assert_eq!(project.read("new.txt"), b"fresh\r\n");
}

#[tokio::test]
async fn a_turn_reverted_through_the_editor_keeps_the_persons_typing_and_another_agents_edit() {
    let editor = ScriptedEditor::start().await;
    // Lines one apart: diff3 takes changes to touching lines for one region.
    let text = "fn main() {\n    let a = 1;\n\n    let b = 2;\n\n    let c = 3;\n}\n";
    let uri = editor.open("main.rs", text, text).await;
    editor.set_review(Review::Accept);
    let first = editor.agent("agent-one").await;
    let second = editor.agent("agent-two").await;
    first
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "let a = 1;", "newStr": "let a = 10;", "summary": "ten", "turn": "turn-1"}),
        )
        .await
        .unwrap();
    editor.type_text(&uri, "let c = 3;", "let c = 3; // typed").await;
    second
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "let b = 2;", "newStr": "let b = 20;", "summary": "twenty"}),
        )
        .await
        .unwrap();
    first
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "fn main() {", "newStr": "fn main() { // one", "summary": "note", "turn": "turn-1"}))
        .await
        .unwrap();

    let timeline = first.call("verbatim/timeline", json!({})).await.unwrap();
    let turns: Vec<&str> = timeline["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|session| session["turns"].as_array().unwrap())
        .map(|turn| turn["turn"].as_str().unwrap())
        .collect();
    assert!(turns.contains(&"turn-1"), "{timeline:#}");

    let result = second.call("verbatim/revert", json!({"turn": "turn-1"})).await.unwrap();
    assert_eq!(result["outcome"], "applied", "{result:#}");
    assert_eq!(result["files"][0]["via"], "editor");
    let expected = "fn main() {\n    let a = 1;\n\n    let b = 20;\n\n    let c = 3; // typed\n}\n";
    editor.wait_for_buffer(&uri, expected).await;

    // The revert is reverted in turn: turn-1's changes are back, everything else stays.
    let write_id = result["writeId"].as_str().unwrap();
    second.call("verbatim/revert", json!({"ids": [write_id]})).await.unwrap();
    let back = "fn main() { // one\n    let a = 10;\n\n    let b = 20;\n\n    let c = 3; // typed\n}\n";
    editor.wait_for_buffer(&uri, back).await;

    // Marked reviewed, a file of a turn stays so until it changes again.
    let marked = first.call("verbatim/markReviewed", json!({"turn": "turn-1", "uri": uri})).await;
    assert_eq!(marked.unwrap()["reviewed"], true);
    let entry_id = timeline["sessions"][0]["turns"][0]["edits"][0]["files"][0]["id"].as_str().unwrap().to_owned();
    let entry = first.call("verbatim/timelineEntry", json!({"id": entry_id})).await.unwrap();
    assert!(entry["before"].is_string() && entry["after"].is_string(), "{entry:#}");
    let error = first.call("verbatim/timelineEntry", json!({"id": "nope"})).await.unwrap_err();
    assert_eq!(error.kind(), "unknownEntry");
}

#[tokio::test]
async fn a_conflict_in_the_editors_review_is_a_hunk_of_its_own_with_a_note_and_rejecting_it_keeps_the_later_change() {
    let editor = ScriptedEditor::start().await;
    let text = "one\ntwo\nthree\nfour\nfive\n";
    let uri = editor.open("notes.txt", text, text).await;
    editor.set_review(Review::Accept);
    let agent = editor.agent("agent").await;
    for (old, new) in [("two", "TWO"), ("five", "FIVE")] {
        let params = json!({"uri": uri, "oldStr": old, "newStr": new, "summary": "shout", "turn": "t-1"});
        agent.call("verbatim/strReplace", params).await.unwrap();
    }
    editor.type_text(&uri, "TWO", "TWO, typed").await;

    editor.set_review(Review::Manual);
    let reverting = agent.spawn_call("verbatim/revert", json!({"turn": "t-1"}));
    let request = editor.next_review().await;
    let hunks = request.params["verbatim"]["hunks"].as_array().unwrap().clone();
    assert_eq!(hunks.len(), 2, "{:#}", request.params);
    let note = hunks[0]["note"].as_str().expect("the conflict's hunk has a note");
    assert!(note.starts_with("Conflict: a later change also touched line 2."), "{note}");
    assert!(hunks[1].get("note").is_none(), "the plain revert's hunk has none: {:#}", hunks[1]);
    let label = request.params["label"].as_str().unwrap();
    assert!(label.contains("conflict with a later change at notes.txt lines 2-2"), "{label}");

    editor.decide(request, Review::AcceptHunks { keep: vec![1], reason: None, report: true }).await;
    let result = reverting.await.unwrap().unwrap();
    assert_eq!(result["files"][0]["conflicts"][0]["chosen"], "current", "{result:#}");
    editor.wait_for_buffer(&uri, "one\nTWO, typed\nthree\nfour\nfive\n").await;
}

#[tokio::test]
async fn a_moved_file_moves_back_with_its_text_and_forward_again_when_the_revert_is_reverted() {
    let project = Project::new();
    project.write("old.txt", "keep\nchange me\n");
    let cli = &project.cli;
    let patch =
        "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new.txt\n@@\n-change me\n+changed\n*** End Patch\n";
    cli.run_with_stdin(&["patch", "-m", "move it", "--turn", "t-move"], patch.as_bytes()).await.expect_code(0);
    assert!(!project.path("old.txt").exists());
    let run = cli.run(&["revert", "--turn", "t-move", "--json"]).await;
    run.expect_code(0);
    let file = &run.json()["files"][0];
    assert_eq!(
        (file["action"].as_str(), file["newUri"].as_str().map(|uri| uri.ends_with("/old.txt"))),
        (Some("move"), Some(true)),
        "{file:#}"
    );
    assert!(!project.path("new.txt").exists());
    assert_eq!(project.text("old.txt"), "keep\nchange me\n");
    let revert_id = run.json()["writeId"].as_str().unwrap().to_owned();
    cli.run(&["revert", &revert_id]).await.expect_code(0);
    assert!(!project.path("old.txt").exists());
    assert_eq!(project.text("new.txt"), "keep\nchanged\n");
}

#[tokio::test]
async fn a_revert_over_open_and_closed_files_is_one_write_that_reverts_in_turn_and_names_what_each_file_took_back() {
    let editor = ScriptedEditor::start().await;
    let open = editor.open("open.txt", "one\ntwo\n", "one\ntwo\n").await;
    std::fs::write(editor.path("closed.txt"), "alpha\nbeta\n").unwrap();
    let closed = editor.uri("closed.txt");
    editor.set_review(Review::AcceptWritingClosedFiles);
    let agent = editor.agent("agent").await;
    let edits =
        json!([{"uri": open, "oldStr": "two", "newStr": "TWO"}, {"uri": closed, "oldStr": "beta", "newStr": "BETA"}]);
    agent.call("verbatim/batchEdit", json!({"summary": "both", "turn": "t-1", "edits": edits})).await.unwrap();
    assert_eq!(std::fs::read_to_string(editor.path("closed.txt")).unwrap(), "alpha\nBETA\n");
    let cli = cli_support::Cli::new(editor.workspace.path(), editor.runtime_dir.path(), editor.state_dir.path());
    let batch_id = cli.journal().last().unwrap()["writeId"].as_str().unwrap().to_owned();

    // The closed file is written on disk, the open one reviewed: one write all the same.
    editor.set_review(Review::Accept);
    let result = agent.call("verbatim/revert", json!({"turn": "t-1"})).await.unwrap();
    assert_eq!(result["outcome"], "applied", "{result:#}");
    let vias: Vec<&str> =
        result["files"].as_array().unwrap().iter().map(|file| file["via"].as_str().unwrap()).collect();
    assert_eq!(vias, ["disk", "editor"]);
    editor.wait_for_buffer(&open, "one\ntwo\n").await;
    assert_eq!(std::fs::read_to_string(editor.path("closed.txt")).unwrap(), "alpha\nbeta\n");
    let write_id = result["writeId"].as_str().unwrap().to_owned();
    let journal = cli.journal();
    let revert: Vec<&Value> = journal.iter().filter(|entry| entry["writeId"] == write_id.as_str()).collect();
    assert_eq!(revert.len(), 2, "{journal:#?}");
    let ids: Vec<&str> = revert.iter().map(|entry| entry["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [format!("{write_id}.0"), format!("{write_id}.1")]);
    for entry in &revert {
        // Each file's entry names only the entry of that file it took back.
        let original = journal
            .iter()
            .find(|original| original["writeId"] == batch_id.as_str() && original["uri"] == entry["uri"])
            .unwrap();
        assert_eq!(entry["reverts"], json!([original["id"]]), "{entry:#}");
    }
    let timeline = agent.call("verbatim/timeline", json!({})).await.unwrap();
    let edits = edits_of(&timeline);
    let edit_of = |id: &str| *edits.iter().find(|edit| edit["writeId"] == id).unwrap();
    assert_eq!(edit_of(&write_id)["files"].as_array().unwrap().len(), 2, "{timeline:#}");
    assert_eq!(edit_of(&batch_id)["revertedBy"], write_id.as_str(), "{timeline:#}");

    // Its one writeId brings both files back.
    let again = agent.call("verbatim/revert", json!({"ids": [write_id]})).await.unwrap();
    assert_eq!(again["outcome"], "applied", "{again:#}");
    editor.wait_for_buffer(&open, "one\nTWO\n").await;
    assert_eq!(std::fs::read_to_string(editor.path("closed.txt")).unwrap(), "alpha\nBETA\n");

    // Reverted again, the review refused: only the closed file went back, and the batch
    // is not shown as reverted.
    editor.set_review(Review::Reject(None));
    let refused = agent.call("verbatim/revert", json!({"turn": "t-1"})).await.unwrap();
    assert_eq!(refused["outcome"], "partial", "{refused:#}");
    assert_eq!(std::fs::read_to_string(editor.path("closed.txt")).unwrap(), "alpha\nbeta\n");
    assert_eq!(editor.buffer(&open), "one\nTWO\n");
    let timeline = agent.call("verbatim/timeline", json!({})).await.unwrap();
    let batch = edits_of(&timeline).into_iter().find(|edit| edit["writeId"] == batch_id.as_str()).unwrap();
    assert_eq!(batch["revertedBy"], Value::Null, "{batch:#}");

    // The newest edit alone, and how many there are.
    let newest = agent.call("verbatim/timeline", json!({"maxEdits": 1})).await.unwrap();
    let shown = edits_of(&newest);
    assert_eq!(shown.len(), 1, "{newest:#}");
    assert_eq!((newest["truncated"].clone(), newest["edits"].clone()), (json!(true), timeline["edits"].clone()));
    assert!(timeline["edits"].as_u64().unwrap() > 1, "{timeline:#}");
}

#[tokio::test]
async fn a_revert_with_nothing_left_to_do_says_why_and_writes_nothing() {
    let project = Project::new();
    let cli = &project.cli;
    cli.run_with_stdin(&["write", "gone.txt", "-m", "create", "--turn", "t-gone"], b"soon gone\n").await.expect_code(0);
    std::fs::remove_file(project.path("gone.txt")).unwrap();
    let entries = cli.journal().len();
    let run = cli.run(&["revert", "--turn", "t-gone", "--json"]).await;
    run.expect_code(0);
    let result = run.json();
    assert_eq!(result["outcome"], "unchanged", "{result:#}");
    assert_eq!(result["writeId"], Value::Null);
    assert_eq!(result["files"][0]["why"], "fileGone");
    assert_eq!(result["message"], "Nothing to revert in gone.txt: it no longer exists.");
    assert!(!project.path("gone.txt").exists());
    assert_eq!(cli.journal().len(), entries, "nothing journaled");

    project.write("a.txt", "one\ntwo\n");
    cli.run(&["edit", "a.txt", "--old", "two", "--new", "TWO", "-m", "shout", "--turn", "t-same"]).await.expect_code(0);
    cli.run(&["edit", "a.txt", "--old", "TWO", "--new", "two", "-m", "by hand"]).await.expect_code(0);
    let run = cli.run(&["revert", "--turn", "t-same", "--json"]).await;
    run.expect_code(0);
    let result = run.json();
    assert_eq!(
        (result["outcome"].as_str(), result["files"][0]["why"].as_str()),
        (Some("unchanged"), Some("alreadyUndone"))
    );
    assert_eq!(result["message"], "Nothing to revert in a.txt: it already reads as the revert would leave it.");
    let dry = cli.run(&["revert", "--turn", "t-same", "--dry-run", "--json"]).await;
    assert_eq!(
        dry.json()["message"],
        "Nothing would be reverted. Nothing to revert in a.txt: it already reads as the revert would leave it."
    );
    assert_eq!(project.text("a.txt"), "one\ntwo\n");
}

/// Every edit of a `verbatim/timeline` answer, session by session and turn by turn.
fn edits_of(timeline: &Value) -> Vec<&Value> {
    timeline["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|session| session["turns"].as_array().unwrap())
        .flat_map(|turn| turn["edits"].as_array().unwrap())
        .collect()
}
