//! End to end: a file written on disk while it is open becomes a merged, reviewable
//! edit of the live buffer (the real binary, a scripted editor, real files).
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::{EditorOptions, Review, ScriptedEditor};
use serde_json::{Value, json};

/// Long enough for the watcher's debounce and a read, with margin for a loaded machine.
const QUIET: Duration = Duration::from_millis(600);

const ORIGINAL: &str = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n";

/// A temporary file beside the target renamed over it, as most agents write.
fn atomic_write(path: &Path, bytes: &[u8]) {
    let temp = path.with_extension("tmp-agent");
    std::fs::write(&temp, bytes).unwrap();
    std::fs::rename(&temp, path).unwrap();
}

fn journal(editor: &ScriptedEditor) -> Vec<verbatim::service::journal::Entry> {
    let journal = verbatim::service::journal::Journal::new(editor.state_dir.path());
    journal.files().iter().flat_map(|file| verbatim::service::journal::read_entries(file).unwrap()).collect()
}

/// Waits until the journal holds an entry of a change on disk (the server journals
/// it once the editor has answered), failing after [`common::TIMEOUT`].
async fn journaled_disk_entry(editor: &ScriptedEditor) -> verbatim::service::journal::Entry {
    let deadline = tokio::time::Instant::now() + common::TIMEOUT;
    loop {
        let found = journal(editor).into_iter().find(|entry| entry.source == verbatim::service::journal::Source::Disk);
        match found {
            Some(entry) => return entry,
            None if tokio::time::Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(10)).await,
            None => panic!("no entry of the change on disk in the journal: {:?}", journal(editor)),
        }
    }
}

fn label(review: &common::ApplyRequest) -> String {
    review.params["label"].as_str().unwrap().to_owned()
}

/// An editor with `py.py` open: on disk ORIGINAL, in the buffer the person's
/// unsaved change to `a`.
async fn modified_buffer() -> (ScriptedEditor, String) {
    let editor = ScriptedEditor::start().await;
    let buffer = ORIGINAL.replace("return 1", "return 10  # typed");
    let uri = editor.open("py.py", ORIGINAL, &buffer).await;
    (editor, uri)
}

#[tokio::test]
async fn an_atomic_write_reaches_a_modified_buffer_as_a_merged_offer() {
    let (editor, uri) = modified_buffer().await;
    editor.set_review(Review::Manual);
    atomic_write(&editor.path("py.py"), ORIGINAL.replace("return 3", "return 30").as_bytes());
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "offered");
    assert_eq!(change["uri"], uri);
    assert_eq!(change["conflicts"], json!([]));
    let review = editor.next_review().await;
    assert!(label(&review).starts_with("Changed on disk outside the editor: py.py"), "{}", label(&review));
    let annotations = &review.params["edit"]["changeAnnotations"];
    let (id, annotation) = annotations.as_object().unwrap().iter().next().unwrap();
    assert!(id.starts_with("verbatim/disk/"), "{id}");
    assert_eq!(annotation["needsConfirmation"], true);
    editor.decide(review, Review::Accept).await;
    // The person's line and the agent's line, both.
    assert_eq!(
        editor.buffer(&uri),
        ORIGINAL.replace("return 1", "return 10  # typed").replace("return 3", "return 30")
    );
    let entry = journaled_disk_entry(&editor).await;
    assert_eq!(entry.outcome, verbatim::service::journal::Outcome::Applied);
    assert!(entry.diff.contains("+    return 30"), "{}", entry.diff);
}

#[tokio::test]
async fn an_in_place_write_is_merged_too_and_the_edit_is_minimal() {
    let (editor, uri) = modified_buffer().await;
    editor.set_review(Review::Manual);
    std::fs::write(editor.path("py.py"), ORIGINAL.replace("def b():", "def b(x):")).unwrap();
    let review = editor.next_review().await;
    let edits = review.params["edit"]["documentChanges"][0]["edits"].clone();
    assert_eq!(edits.as_array().unwrap().len(), 1, "{edits}");
    assert_eq!(edits[0]["newText"], "x");
    editor.decide(review, Review::Accept).await;
    assert_eq!(
        editor.buffer(&uri),
        ORIGINAL.replace("return 1", "return 10  # typed").replace("def b():", "def b(x):")
    );
}

#[tokio::test]
async fn the_editor_s_own_save_and_a_write_equal_to_the_buffer_bring_no_offer() {
    let (editor, uri) = modified_buffer().await;
    editor.set_review(Review::Reject(Some("no offer was expected".into())));
    editor.save(&uri).await;
    let seen = editor.external_changes_within(QUIET).await;
    assert!(seen.iter().all(|change| change["kind"] == "synced"), "{seen:?}");
    // Another process writes exactly what the buffer holds.
    editor.type_text(&uri, "return 2", "return 20").await;
    atomic_write(&editor.path("py.py"), editor.buffer(&uri).as_bytes());
    assert_eq!(editor.next_external_change().await["kind"], "synced");
    let seen = editor.external_changes_within(QUIET).await;
    assert!(seen.is_empty(), "{seen:?}");
    assert!(journal(&editor).is_empty(), "{:?}", journal(&editor));
}

#[tokio::test]
async fn a_conflicting_write_never_overwrites_the_person_s_text() {
    let (editor, uri) = modified_buffer().await;
    editor.set_review(Review::Manual);
    let before = editor.buffer(&uri);
    atomic_write(&editor.path("py.py"), ORIGINAL.replace("return 1", "return 'agent'").as_bytes());
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "conflict", "{change}");
    assert_eq!(change["conflicts"], json!([{"line": 2, "endLine": 2, "diskLine": 2, "diskEndLine": 2}]));
    assert!(change["message"].as_str().unwrap().contains("line 2"), "{change}");
    tokio::time::sleep(QUIET).await;
    assert_eq!(editor.buffer(&uri), before);
    let entries = journal(&editor);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].outcome, verbatim::service::journal::Outcome::Conflict);
}

#[tokio::test]
async fn a_partly_conflicting_write_offers_the_rest_and_names_the_conflict() {
    let (editor, uri) = modified_buffer().await;
    editor.set_review(Review::Manual);
    let disk = ORIGINAL.replace("return 1", "return 'agent'").replace("return 3", "return 30");
    atomic_write(&editor.path("py.py"), disk.as_bytes());
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "offered");
    assert_eq!(change["conflicts"][0]["line"], 2);
    let review = editor.next_review().await;
    assert!(label(&review).contains("line 2 kept as you have it"), "{}", label(&review));
    editor.decide(review, Review::Accept).await;
    assert_eq!(
        editor.buffer(&uri),
        ORIGINAL.replace("return 1", "return 10  # typed").replace("return 3", "return 30")
    );
}

#[tokio::test]
async fn a_clean_buffer_is_reloaded_by_the_editor_not_offered() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("clean.txt", "one\ntwo\n", "one\ntwo\n").await;
    editor.set_review(Review::Reject(Some("no offer was expected".into())));
    atomic_write(&editor.path("clean.txt"), b"one\n2\n");
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "reload");
    editor.wait_for_buffer(&uri, "one\n2\n").await;
    let agent = editor.agent("reader").await;
    assert_eq!(agent.read(&uri).await["text"], "one\n2\n");
    assert_eq!(journal(&editor)[0].outcome, verbatim::service::journal::Outcome::Reloaded);
}

#[tokio::test]
async fn an_agent_reading_while_the_editor_reloads_reads_the_file_s_new_text() {
    let editor = ScriptedEditor::start().await;
    editor.set_reload_clean(false);
    let uri = editor.open("slow.txt", "one\ntwo\n", "one\ntwo\n").await;
    atomic_write(&editor.path("slow.txt"), b"one\n2\n");
    assert_eq!(editor.next_external_change().await["kind"], "reload");
    let agent = editor.agent("reader").await;
    let read = tokio::spawn({
        let uri = uri.clone();
        async move { agent.read(&uri).await }
    });
    // The editor reloads only later (a busy editor); the read waits for it, so it reads
    // the reloaded text, not the text the reload replaced.
    tokio::time::sleep(Duration::from_millis(300)).await;
    editor.type_text(&uri, "two", "2").await;
    assert_eq!(read.await.unwrap()["text"], "one\n2\n");
}

#[tokio::test]
async fn a_person_who_typed_before_the_reload_is_read_as_they_typed() {
    let editor = ScriptedEditor::start().await;
    editor.set_reload_clean(false);
    let uri = editor.open("typed.txt", "one\ntwo\n", "one\ntwo\n").await;
    atomic_write(&editor.path("typed.txt"), b"one\n2\n");
    assert_eq!(editor.next_external_change().await["kind"], "reload");
    editor.type_text(&uri, "one", "ONE").await;
    let agent = editor.agent("reader").await;
    // No reload is coming any more: the buffer is what the person has.
    assert_eq!(agent.read(&uri).await["text"], "ONE\ntwo\n");
}

#[tokio::test]
async fn a_buffer_that_decodes_crlf_gets_outside_writes_merged_and_its_saves_are_no_change() {
    let editor = ScriptedEditor::start().await;
    let crlf = |text: &str| text.replace('\n', "\r\n");
    // Emacs decodes a CRLF file: the buffer holds LF while the disk holds CRLF.
    let buffer = ORIGINAL.replace("return 1", "return 10  # typed");
    let uri = editor.open("dos.py", &crlf(ORIGINAL), &buffer).await;
    editor.set_review(Review::Accept);
    atomic_write(&editor.path("dos.py"), crlf(&ORIGINAL.replace("return 3", "return 30")).as_bytes());
    assert_eq!(editor.next_external_change().await["kind"], "offered");
    let merged = buffer.replace("return 3", "return 30");
    editor.wait_for_buffer(&uri, &merged).await;
    // The offer is journaled once the editor's change has arrived.
    journaled_disk_entry(&editor).await;
    let entries = journal(&editor).len();
    // Saved twice, as Emacs saves: CRLF on disk, a didSave without text.
    for _ in 0..2 {
        std::fs::write(editor.path("dos.py"), crlf(&merged)).unwrap();
        editor.connection.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await;
        editor.sync().await;
        let changes = editor.external_changes_within(QUIET).await;
        assert!(changes.iter().all(|change| change["kind"] == "synced"), "a save is not a change: {changes:?}");
    }
    assert_eq!(journal(&editor).len(), entries, "the saves journaled something: {:?}", journal(&editor));
}

#[tokio::test]
async fn a_rejected_offer_leaves_the_buffer_and_a_later_save_is_journaled_as_the_person_s_decision() {
    let (editor, uri) = modified_buffer().await;
    let before = editor.buffer(&uri);
    editor.set_review(Review::Reject(Some("not now".into())));
    atomic_write(&editor.path("py.py"), ORIGINAL.replace("return 3", "return 30").as_bytes());
    assert_eq!(editor.next_external_change().await["kind"], "offered");
    tokio::time::sleep(QUIET).await;
    assert_eq!(editor.buffer(&uri), before);
    editor.save(&uri).await;
    let _ = editor.external_changes_within(QUIET).await;
    let outcomes: Vec<_> = journal(&editor).iter().map(|entry| entry.outcome).collect();
    use verbatim::service::journal::Outcome;
    assert_eq!(outcomes, vec![Outcome::Rejected, Outcome::SavedOver]);
    // The file holds what the person saved, and nothing is offered again.
    assert_eq!(std::fs::read_to_string(editor.path("py.py")).unwrap(), before);
}

#[tokio::test]
async fn the_person_typing_during_review_gets_a_new_offer_merged_with_what_they_typed() {
    let (editor, uri) = modified_buffer().await;
    editor.set_review(Review::Manual);
    atomic_write(&editor.path("py.py"), ORIGINAL.replace("return 3", "return 30").as_bytes());
    let first = editor.next_review().await;
    editor.type_text(&uri, "return 2", "return 22").await;
    // The editor refuses the first offer: its version moved.
    editor.decide(first, Review::Accept).await;
    let second = editor.next_review().await;
    editor.decide(second, Review::Accept).await;
    assert_eq!(
        editor.buffer(&uri),
        ORIGINAL
            .replace("return 1", "return 10  # typed")
            .replace("return 2", "return 22")
            .replace("return 3", "return 30")
    );
}

#[tokio::test]
async fn deletion_and_rename_are_reported_and_the_buffer_is_left_alone() {
    let (editor, uri) = modified_buffer().await;
    let before = editor.buffer(&uri);
    std::fs::remove_file(editor.path("py.py")).unwrap();
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "deleted");
    assert!(change["message"].as_str().unwrap().contains("deleted on disk"), "{change}");
    assert_eq!(editor.buffer(&uri), before);

    let other = editor.open("moved.txt", "x\n", "x\ny (unsaved)\n").await;
    std::fs::rename(editor.path("moved.txt"), editor.path("elsewhere.txt")).unwrap();
    let change = editor.next_external_change().await;
    assert_eq!(change["kind"], "moved", "{change}");
    assert_eq!(change["movedTo"], editor.uri("elsewhere.txt"));
    assert_eq!(editor.buffer(&other), "x\ny (unsaved)\n");
    let outcomes: Vec<_> = journal(&editor).iter().map(|entry| entry.outcome).collect();
    assert_eq!(
        outcomes,
        vec![verbatim::service::journal::Outcome::Deleted, verbatim::service::journal::Outcome::Moved]
    );
}

#[tokio::test]
async fn a_burst_of_fifty_writes_ends_with_the_final_content_merged_without_a_loop_of_offers() {
    let (editor, uri) = modified_buffer().await;
    let path = editor.path("py.py");
    for round in 1..=50 {
        atomic_write(&path, ORIGINAL.replace("return 3", &format!("return {round}")).as_bytes());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // How many reads the burst gets depends on the machine's pace (the watcher's
    // debounce is unit-tested with exact times in `disk_watch`); what must hold
    // everywhere: every read is merged and offered, no write is offered twice, and
    // applying an offer does not set off another one.
    let changes = editor.external_changes_within(Duration::from_millis(1500)).await;
    let kinds: Vec<&str> = changes.iter().map(|change| change["kind"].as_str().unwrap_or("?")).collect();
    assert!(kinds.iter().all(|kind| *kind == "offered"), "{changes:#?}");
    assert!((1..=50).contains(&changes.len()), "{} offers for 50 writes: {kinds:?}", changes.len());
    editor
        .wait_for_buffer(&uri, &ORIGINAL.replace("return 1", "return 10  # typed").replace("return 3", "return 50"))
        .await;
}

#[tokio::test]
async fn a_file_in_a_directory_created_after_the_watch_started_is_watched() {
    let editor = ScriptedEditor::start().await;
    let _watching = editor.open("first.txt", "a\n", "a\n").await;
    std::fs::create_dir_all(editor.path("new/dir")).unwrap();
    let uri = editor.open("new/dir/late.txt", "one\ntwo\nthree\n", "ONE\ntwo\nthree\n").await;
    std::fs::write(editor.path("new/dir/late.txt"), "one\ntwo\nthree\nfour\n").unwrap();
    assert_eq!(editor.next_external_change().await["kind"], "offered");
    editor.wait_for_buffer(&uri, "ONE\ntwo\nthree\nfour\n").await;
}

#[tokio::test]
async fn crlf_and_utf16_files_stay_exact_outside_the_merged_lines() {
    let editor = ScriptedEditor::start().await;
    let crlf = editor.open("win.txt", "a\r\nb\r\nc\r\n", "A\r\nb\r\nc\r\n").await;
    std::fs::write(editor.path("win.txt"), "a\r\nb\r\nc\r\nd\r\n").unwrap();
    assert_eq!(editor.next_external_change().await["kind"], "offered");
    editor.wait_for_buffer(&crlf, "A\r\nb\r\nc\r\nd\r\n").await;

    let utf16 = |text: &str| -> Vec<u8> {
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    };
    std::fs::write(editor.path("wide.txt"), utf16("héllo\nwörld 😀\n")).unwrap();
    let wide = editor.uri("wide.txt");
    editor.open_uri(&wide, "HÉLLO\nwörld 😀\n").await;
    atomic_write(&editor.path("wide.txt"), &utf16("héllo\nwörld 😀\nneu\n"));
    assert_eq!(editor.next_external_change().await["kind"], "offered");
    editor.wait_for_buffer(&wide, "HÉLLO\nwörld 😀\nneu\n").await;
}

#[tokio::test]
async fn auto_applies_without_confirmation_and_off_does_not_watch() {
    let options = EditorOptions {
        initialization_options: json!({"needsConfirmation": true, "syncTimeoutMs": 3000, "externalChanges": "auto"}),
        ..EditorOptions::default()
    };
    let editor = ScriptedEditor::start_with(options).await;
    let uri = editor.open("a.txt", "1\n2\n3\n", "one\n2\n3\n").await;
    editor.set_review(Review::Manual);
    std::fs::write(editor.path("a.txt"), "1\n2\n3\n4\n").unwrap();
    let review = editor.next_review().await;
    let annotation: Value =
        review.params["edit"]["changeAnnotations"].as_object().unwrap().values().next().unwrap().clone();
    assert_eq!(annotation["needsConfirmation"], false);
    editor.decide(review, Review::Accept).await;
    editor.wait_for_buffer(&uri, "one\n2\n3\n4\n").await;

    let options = EditorOptions {
        initialization_options: json!({"syncTimeoutMs": 3000, "externalChanges": "off"}),
        ..EditorOptions::default()
    };
    let editor = ScriptedEditor::start_with(options).await;
    let uri = editor.open("a.txt", "1\n", "one\n").await;
    std::fs::write(editor.path("a.txt"), "1\n2\n").unwrap();
    assert!(editor.external_changes_within(QUIET).await.is_empty());
    assert_eq!(editor.buffer(&uri), "one\n");
}

#[tokio::test]
async fn a_reload_the_editor_did_not_make_is_merged_with_the_next_change() {
    let editor = ScriptedEditor::start().await;
    // This editor does not reload: the person typed before the reload could happen.
    editor.set_reload_clean(false);
    let uri = editor.open("late.txt", "one\ntwo\nthree\nfour\nfive\n", "one\ntwo\nthree\nfour\nfive\n").await;
    std::fs::write(editor.path("late.txt"), "one\ntwo\nthree\nfour\nFIVE\n").unwrap();
    assert_eq!(editor.next_external_change().await["kind"], "reload");
    editor.type_text(&uri, "one", "ONE").await;
    // The next change on disk brings the first one along, merged with what was typed.
    std::fs::write(editor.path("late.txt"), "one\ntwo\nTHREE\nfour\nFIVE\n").unwrap();
    assert_eq!(editor.next_external_change().await["kind"], "offered");
    editor.wait_for_buffer(&uri, "ONE\ntwo\nTHREE\nfour\nFIVE\n").await;
}

#[tokio::test]
async fn after_a_reload_the_next_change_is_merged_from_the_reloaded_text() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("twice.txt", "a\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\n").await;
    std::fs::write(editor.path("twice.txt"), "a\nb\nc\nd\nE\n").unwrap();
    assert_eq!(editor.next_external_change().await["kind"], "reload");
    editor.wait_for_buffer(&uri, "a\nb\nc\nd\nE\n").await;
    editor.type_text(&uri, "E", "E!").await;
    std::fs::write(editor.path("twice.txt"), "A\nb\nc\nd\nE\n").unwrap();
    assert_eq!(editor.next_external_change().await["kind"], "offered");
    editor.wait_for_buffer(&uri, "A\nb\nc\nd\nE!\n").await;
}

#[tokio::test]
async fn a_save_seen_half_written_is_looked_at_once_the_editor_says_it_saved() {
    let (editor, uri) = modified_buffer().await;
    editor.set_review(Review::Reject(Some("no offer was expected".into())));
    let buffer = editor.buffer(&uri);
    // VS Code writes a large file in place: the watcher may see it half written.
    editor.connection.notify("textDocument/willSave", json!({"textDocument": {"uri": uri}, "reason": 1})).await;
    editor.sync().await;
    std::fs::write(editor.path("py.py"), &buffer[..buffer.len() / 2]).unwrap();
    tokio::time::sleep(QUIET).await;
    std::fs::write(editor.path("py.py"), &buffer).unwrap();
    editor.connection.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}, "text": buffer})).await;
    let changes = editor.external_changes_within(QUIET).await;
    assert!(changes.iter().all(|change| change["kind"] == "synced"), "a save was taken for a change: {changes:?}");
    assert!(journal(&editor).is_empty(), "{:?}", journal(&editor));
    assert_eq!(editor.buffer(&uri), buffer);
}
