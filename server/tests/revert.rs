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
