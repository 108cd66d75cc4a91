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

#[tokio::test]
async fn a_declined_edit_is_a_rejection_with_the_client_s_words() {
    let editor = plain_editor().await;
    let uri = editor.open("n.txt", TEXT, TEXT).await;
    editor.set_review(Review::ErrorWith("User cancelled server edit".into()));
    let agent = editor.agent("agent-n").await;
    let error = agent.call("verbatim/strReplace", edit(&uri)).await.unwrap_err();
    assert_eq!(error.kind(), "rejected", "{}", error.message);
    assert!(error.message.contains("User cancelled server edit"), "{}", error.message);
}

#[tokio::test]
async fn an_edit_applied_by_a_client_that_sends_its_change_later_is_known_at_once() {
    let editor = plain_editor().await;
    let uri = editor.open("later.txt", TEXT, TEXT).await;
    editor.defer_changes();
    editor.set_review(Review::Accept);
    let agent = editor.agent("agent-later").await;
    let started = std::time::Instant::now();
    let result = agent.call("verbatim/strReplace", edit(&uri)).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "waited for a change: {:?}", started.elapsed());
    assert_eq!(result["applied"], true, "{result}");
    assert!(result.get("pendingSync").is_none(), "{result}");
    // The read is of what the client said it applied: no wait, no note.
    let read = agent.read(&uri).await;
    assert_eq!(read["text"], "alpha\nBETA\ngamma\n");
    assert_eq!(read["rev"], result["rev"], "{read}");
    assert!(read.get("note").is_none(), "{read}");
    // The person types (the client then sends what it held, and the typing).
    editor.send_deferred().await;
    editor.type_at_end(&uri, "delta\n").await;
    let read = agent.read(&uri).await;
    assert_eq!(read["text"], "alpha\nBETA\ngamma\ndelta\n");
    assert!(read.get("note").is_none(), "{read}");
}

#[tokio::test]
async fn three_edits_in_a_row_after_applied_true_without_the_change_are_all_applied() {
    let editor = plain_editor().await;
    let uri = editor.open("notes.txt", TEXT, TEXT).await;
    editor.count_versions_like_eglot();
    editor.defer_changes();
    editor.set_review(Review::Accept);
    let agent = editor.agent("agent-three").await;
    let mut rev = agent.read(&uri).await["rev"].clone();
    // The fourth edit is sent as five TextEdits: Eglot's version moves by five.
    let steps = [("alpha", "ALPHA", false), ("beta", "BETA", false), ("gamma", "GAMMA", false), ("A", "a", true)];
    for (old, new, all) in steps {
        let params =
            json!({"uri": uri, "oldStr": old, "newStr": new, "summary": "Shout", "baseRev": rev, "replaceAll": all});
        let result = agent.call("verbatim/strReplace", params).await.unwrap();
        assert_eq!(result["applied"], true, "{result}");
        // The read between edits is what the person sees.
        let read = agent.read(&uri).await;
        assert_eq!(read["text"], editor.buffer(&uri));
        assert_eq!(read["rev"], result["rev"]);
        rev = result["rev"].clone();
    }
    assert_eq!(editor.buffer(&uri), "aLPHa\nBETa\nGaMMa\n");
    let params = json!({"uri": uri, "oldStr": "BETa", "newStr": "BETA", "summary": "Once more", "baseRev": rev});
    assert_eq!(agent.call("verbatim/strReplace", params).await.unwrap()["applied"], true);
    // The person's next keystroke sends everything the client held.
    editor.send_deferred().await;
    editor.type_at_end(&uri, "!").await;
    assert_eq!(agent.read(&uri).await["text"], "aLPHa\nBETA\nGaMMa\n!");
    let journal = journal_entries(&editor);
    assert!(journal.iter().all(|entry| entry.outcome.as_str() == "applied"), "{journal:?}");
}

#[tokio::test]
async fn a_version_error_after_the_person_said_yes_is_offered_again_not_rejected() {
    let editor = plain_editor().await;
    let uri = editor.open("yes.txt", TEXT, TEXT).await;
    // Versions that move two per edit: the server's guess (one per TextEdit) is wrong.
    editor.defer_changes();
    editor.set_review(Review::Accept);
    let agent = editor.agent("agent-yes").await;
    assert_eq!(agent.call("verbatim/strReplace", edit(&uri)).await.unwrap()["applied"], true);
    editor.set_review(Review::Manual);
    let params = json!({"uri": uri, "oldStr": "gamma", "newStr": "GAMMA", "summary": "Shout gamma"});
    let call = agent.spawn_call("verbatim/strReplace", params);
    let request = editor.next_review().await;
    let version = request.params["edit"]["documentChanges"][0]["textDocument"]["version"].as_i64().unwrap();
    // The person says y; the client then checks the version, as Eglot does.
    let message = format!("Edits on `yes.txt' require version {version}, you have 3");
    editor.decide(request, Review::ErrorWith(message)).await;
    let again = editor.next_review().await;
    assert_eq!(again.params["edit"]["documentChanges"][0]["textDocument"]["version"], 3);
    editor.decide(again, Review::Accept).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["applied"], true, "{result}");
    assert_eq!(editor.buffer(&uri), "alpha\nBETA\nGAMMA\n");
}

#[tokio::test]
async fn a_request_never_answered_while_the_person_types_frees_the_next_one() {
    let editor = plain_editor().await;
    let first_uri = editor.open("first.txt", TEXT, TEXT).await;
    let second_uri = editor.open("second.txt", TEXT, TEXT).await;
    let elsewhere = editor.open("elsewhere.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent-dismissed").await;
    let first = agent.spawn_call("verbatim/strReplace", edit(&first_uri));
    let dismissed = editor.next_review().await;
    let second = agent.spawn_call("verbatim/strReplace", edit(&second_uri));
    // C-g: the client drops the request and never answers. The person goes on typing.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let started = std::time::Instant::now();
    editor.type_at_end(&elsewhere, "typed\n").await;
    let error = first.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "notAnswered", "{}", error.message);
    assert_eq!(error.data["phase"], "typing");
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    // The next request goes out, and is answered.
    let next = editor.next_review().await;
    editor.decide(next, Review::Accept).await;
    assert_eq!(second.await.unwrap().unwrap()["applied"], true);
    let journal = journal_entries(&editor);
    assert!(journal.iter().any(|entry| entry.outcome.as_str() == "notAnswered"), "{journal:?}");
    drop(dismissed);
}

#[tokio::test]
async fn a_late_answer_to_a_request_given_up_on_is_journaled_and_followed() {
    let editor = plain_editor().await;
    let uri = editor.open("late.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent-late").await;
    let call = agent.spawn_call("verbatim/strReplace", edit(&uri));
    let request = editor.next_review().await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    editor.connection.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await;
    let error = call.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), "notAnswered", "{}", error.message);
    // The client answers after all, and sends its change later.
    editor.defer_changes();
    editor.decide(request, Review::Accept).await;
    let mut read = agent.read(&uri).await;
    for _ in 0..50 {
        if read["text"] != TEXT {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        read = agent.read(&uri).await;
    }
    assert_eq!(read["text"], "alpha\nBETA\ngamma\n");
    let journal = journal_entries(&editor);
    let late = journal.iter().find(|entry| entry.outcome.as_str() == "answeredLate").expect("a late answer entry");
    assert_eq!(late.reason.as_deref(), Some("applied"), "{late:?}");
}

#[tokio::test]
async fn a_later_change_that_disagrees_with_the_answer_is_followed_and_journaled() {
    let editor = plain_editor().await;
    let uri = editor.open("liar.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent-liar").await;
    let call = agent.spawn_call("verbatim/strReplace", edit(&uri));
    let request = editor.next_review().await;
    // The client says applied, but its change holds something else.
    editor.connection.respond(&request.id, json!({"applied": true})).await;
    assert_eq!(call.await.unwrap().unwrap()["applied"], true);
    editor.type_at_end(&uri, "omega\n").await;
    let read = agent.read(&uri).await;
    assert_eq!(read["text"], "alpha\nbeta\ngamma\nomega\n");
    let journal = journal_entries(&editor);
    let differs = journal.iter().find(|entry| entry.outcome.as_str() == "differsFromAnswer").expect("an entry");
    assert!(differs.diff.contains("-BETA") && differs.diff.contains("+beta"), "{}", differs.diff);
}

#[tokio::test]
async fn a_crlf_file_shown_with_lf_reads_as_crlf() {
    let editor = plain_editor().await;
    let uri = editor.open("crlf.txt", "one\r\ntwo\r\n", "one\ntwo\n").await;
    let agent = editor.agent("agent-crlf").await;
    let read = agent.read(&uri).await;
    assert_eq!(read["text"], "one\ntwo\n");
    assert_eq!(read["lineEnding"], "crlf", "{read}");
    // Saved (Emacs writes CRLF again): still the file's line ending.
    editor.type_at_end(&uri, "three\n").await;
    std::fs::write(editor.path("crlf.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    editor.connection.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await;
    let read = agent.read(&uri).await;
    assert_eq!(read["text"], "one\ntwo\nthree\n");
    assert_eq!(read["lineEnding"], "crlf", "{read}");
}

fn journal_entries(editor: &ScriptedEditor) -> Vec<verbatim::service::journal::Entry> {
    let journal = verbatim::service::journal::Journal::new(editor.state_dir.path());
    journal.files().iter().flat_map(|file| verbatim::service::journal::read_entries(file).unwrap()).collect()
}

#[tokio::test]
async fn a_version_mismatch_reported_before_the_person_s_typing_arrives_is_offered_again() {
    let editor = plain_editor().await;
    let uri = editor.open("race.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent-race").await;
    let call = agent.spawn_call("verbatim/strReplace", edit(&uri));
    let first = editor.next_review().await;
    // The person types; the client holds the change, then refuses the edit's version.
    editor.defer_changes();
    editor.type_text(&uri, "gamma", "gamma!").await;
    editor.decide(first, Review::ErrorWith("Edits on `race.txt' require version 1, you have 4".into())).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    editor.send_deferred().await;
    // Moved over the typing, which did not touch it, and offered again.
    let second = editor.next_review().await;
    editor.decide(second, Review::Accept).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["applied"], true, "{result}");
    assert_eq!(editor.buffer(&uri), "alpha\nBETA\ngamma!\n");
}

#[tokio::test]
async fn an_edit_of_a_file_the_client_opens_for_it_is_judged_by_its_own_change() {
    let editor = plain_editor().await;
    std::fs::write(editor.path("closed.txt"), TEXT).unwrap();
    let uri = editor.uri("closed.txt");
    // The client opens the file (didOpen at once) and sends the edit's change later.
    editor.defer_changes();
    editor.set_review(Review::Accept);
    let agent = editor.agent("agent-closed").await;
    let call = agent.spawn_call("verbatim/strReplace", edit(&uri));
    tokio::time::sleep(Duration::from_millis(500)).await;
    editor.send_deferred().await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["applied"], true, "{result}");
    assert!(result.get("partial").is_none(), "{result}");
    assert!(result.get("pendingSync").is_none(), "{result}");
    assert!(result["diff"].as_str().unwrap().contains("+BETA"), "{result}");
    assert_eq!(result["hunks"][0]["accepted"], true, "{result}");
}

#[tokio::test]
async fn two_edits_at_once_reach_a_plain_client_one_after_the_other() {
    let editor = plain_editor().await;
    let first_uri = editor.open("one.txt", TEXT, TEXT).await;
    let second_uri = editor.open("two.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    let agent = editor.agent("agent-two").await;
    let first = agent.spawn_call("verbatim/strReplace", edit(&first_uri));
    let second = agent.spawn_call("verbatim/strReplace", edit(&second_uri));
    let asked = editor.next_review().await;
    // While the first waits for the person, the second is not sent.
    let early = tokio::time::timeout(Duration::from_millis(400), editor.next_review()).await;
    assert!(early.is_err(), "a second applyEdit was sent while the first was open");
    editor.decide(asked, Review::Accept).await;
    let next = editor.next_review().await;
    editor.decide(next, Review::Accept).await;
    assert_eq!(first.await.unwrap().unwrap()["applied"], true);
    assert_eq!(second.await.unwrap().unwrap()["applied"], true);
}

#[tokio::test]
async fn a_save_written_before_the_client_sends_its_change_is_not_taken_for_a_change_on_disk() {
    let editor = plain_editor().await;
    let uri = editor.open("saved.txt", TEXT, TEXT).await;
    editor.set_review(Review::Manual);
    // Eglot holds the typing, writes the file, then sends the typing with didSave.
    editor.defer_changes();
    editor.type_text(&uri, "beta", "beta!").await;
    std::fs::write(editor.path("saved.txt"), "alpha\nbeta!\ngamma\n").unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    editor.send_deferred().await;
    editor.connection.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await;
    let offered = tokio::time::timeout(Duration::from_millis(1500), editor.next_review()).await;
    assert!(offered.is_err(), "the save was offered back as a reload: {:?}", offered.map(|request| request.params));
    assert_eq!(editor.buffer(&uri), "alpha\nbeta!\ngamma\n");
}
