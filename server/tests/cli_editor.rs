//! End to end: the `verbatim` command line as an agent, with an editor present
//! (the scripted editor of `common` on the real server's stdio). Every error kind
//! the editor path can produce comes back with its exit code.
#![allow(clippy::unwrap_used)]

mod cli_support;
mod common;

use cli_support::{Cli, Run};
use common::{EditorOptions, Review, ScriptedEditor};
use serde_json::{Value, json};

const MAIN: &str = "fn main() {\n    let x = 1;\n    run(x);\n}\n\nfn other() {\n    let x = 1;\n}\n";

fn cli_of(editor: &ScriptedEditor) -> Cli {
    Cli::new(editor.workspace.path(), editor.runtime_dir.path(), editor.state_dir.path())
}

fn disk(editor: &ScriptedEditor, name: &str) -> String {
    std::fs::read_to_string(editor.path(name)).unwrap()
}

/// Runs the CLI in the background (the scripted editor must keep answering meanwhile).
fn spawn(cli: &Cli, args: &[&str]) -> tokio::task::JoinHandle<Run> {
    let cli = cli.clone();
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    tokio::spawn(async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cli.run(&args).await
    })
}

#[tokio::test]
async fn editors_lists_the_running_server() {
    let editor = ScriptedEditor::start().await;
    let discovery = editor.discovery().await;
    let cli = cli_of(&editor);
    let run = cli.run(&["editors"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains(&format!("pid {}  scripted-editor 1.0", discovery["pid"])), "{run:?}");
    assert!(run.stdout.contains(&format!("folder  {}", common::file_uri(editor.workspace.path()))), "{run:?}");
    let listed = cli.run(&["editors", "--json"]).await.json();
    assert_eq!(listed[0]["pid"], discovery["pid"]);
    assert_eq!(listed[0]["socket"], discovery["socket"]);
}

#[tokio::test]
async fn read_and_edit_go_through_the_editor_and_are_journaled() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("a.txt", "alpha\nbeta\n", "alpha\nbeta\ngamma (unsaved)\n").await;
    let cli = cli_of(&editor);

    let read = cli.run(&["read", "a.txt"]).await;
    read.expect_code(0);
    assert_eq!(read.stdout, "alpha\nbeta\ngamma (unsaved)\n");
    assert!(
        read.stderr.contains("a.txt · rev e1.1 · 3 lines · lf line endings · from the editor's buffer"),
        "{read:?}"
    );
    let read = cli.run(&["read", "a.txt", "--json"]).await.json();
    assert_eq!(
        (read["source"].as_str(), read["via"].as_str(), read["uri"].as_str()),
        (Some("editor"), Some("editor"), Some(uri.as_str()))
    );

    let edit = cli
        .run(&["edit", "a.txt", "--old", "beta", "--new", "BETA", "-m", "Shout beta", "--agent", "test-agent"])
        .await;
    edit.expect_code(0);
    assert!(edit.stdout.starts_with("a.txt: applied in the editor (rev e1.1 → e1.3):\n--- a/a.txt\n"), "{edit:?}");
    assert!(edit.stdout.contains("-beta\n+BETA\n"), "{edit:?}");
    assert_eq!(editor.buffer(&uri), "alpha\nBETA\ngamma (unsaved)\n");
    assert_eq!(disk(&editor, "a.txt"), "alpha\nbeta\n", "the editor path never writes the disk");

    let journal = cli.journal();
    assert_eq!(journal.len(), 1, "{journal:?}");
    let entry = &journal[0];
    assert_eq!(entry["source"], "editor");
    assert_eq!(entry["agent"], "test-agent");
    assert_eq!(entry["summary"], "Shout beta");
    assert_eq!(entry["outcome"], "applied");
    assert_eq!(entry["uri"], uri);
    assert_eq!((entry["baseRev"].as_str(), entry["rev"].as_str()), (Some("e1.1"), Some("e1.3")));
    assert!(entry["diff"].as_str().unwrap().contains("+BETA"));
    assert_eq!(entry["workspace"], editor.workspace.path().display().to_string());

    let log = cli.run(&["log"]).await;
    log.expect_code(0);
    assert!(log.stdout.contains(&format!("applied  test-agent  via editor  {uri}  \"Shout beta\"")), "{log:?}");
    let documents = cli.run(&["documents"]).await;
    assert!(documents.stdout.contains(&format!("{uri}  rev e1.3")), "{documents:?}");
    assert_eq!(cli.run(&["documents", "--json"]).await.json()[0]["uri"], uri);
}

#[tokio::test]
async fn every_error_kind_of_the_editor_path_has_its_exit_code() {
    let editor = ScriptedEditor::start().await;
    editor.open("main.rs", MAIN, MAIN).await;
    std::fs::write(editor.path("blob.bin"), b"\x00\x01binary").unwrap();
    std::fs::write(editor.path(".env"), "SECRET=1\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("elsewhere.txt");
    std::fs::write(&outside_file, "elsewhere\n").unwrap();
    let outside_file = outside_file.display().to_string();
    let socket = editor.discovery().await["socket"].as_str().unwrap().to_owned();
    let cli = cli_of(&editor);
    let overlapping = json!({"summary": "s", "edits": [
        {"uri": "main.rs", "oldStr": "fn main() {", "newStr": "fn main() -> () {"},
        {"uri": "main.rs", "oldStr": "main()", "newStr": "start()"},
    ]})
    .to_string();

    let cases: Vec<(Vec<&str>, &str, i32, &str)> = vec![
        (vec!["edit", "main.rs", "--old", "nowhere", "--new", "x", "-m", "s"], "", 3, "notFound"),
        (vec!["edit", "main.rs", "--old", "let x = 1;", "--new", "let x = 2;", "-m", "s"], "", 4, "ambiguous"),
        (
            vec!["edit", "main.rs", "--old", "fn other", "--new", "fn x", "--base-rev", "e1.0", "-m", "s"],
            "",
            5,
            "stale",
        ),
        (vec!["edit", "main.rs", "--old", "", "--new", "x", "-m", "s"], "", 6, "emptyQuote"),
        (vec!["edit", "main.rs", "--old", "fn main", "--new", "fn main", "-m", "s"], "", 7, "noChange"),
        (
            vec!["replace-range", "main.rs", "--from", "run(x)", "--to", "fn main", "--new", "", "-m", "s"],
            "",
            8,
            "rangeOrder",
        ),
        (vec!["batch"], &overlapping, 9, "overlap"),
        (
            vec!["edit", "main.rs", "--old", "a", "--new", "b", "-m", "s", "--socket", "/nonexistent/verbatim.sock"],
            "",
            11,
            "editorUnavailable",
        ),
        (vec!["edit", "missing.rs", "--old", "a", "--new", "b", "-m", "s"], "", 12, "unknownDocument"),
        (vec!["read", &outside_file, "--socket", &socket], "", 13, "outsideWorkspace"),
        (vec!["write", "main.rs", "-m", "s"], "fn main() {}\n", 14, "invalidParams"),
        (vec!["read", "blob.bin"], "", 16, "notText"),
        (vec!["read", "main.rs/inside-a-file"], "", 17, "io"),
        (vec!["read", ".env"], "", 19, "permissionDenied"),
    ];
    cli.assert_errors(&cases).await;
    // Nothing of it reached the buffer.
    assert_eq!(editor.buffer(&editor.uri("main.rs")), MAIN);
}

#[tokio::test]
async fn an_ambiguous_quote_is_explained_in_the_cli_s_own_words() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("main.rs", MAIN, MAIN).await;
    let cli = cli_of(&editor);
    let run = cli.run(&["edit", "main.rs", "--old", "let x = 1;", "--new", "let x = 2;", "-m", "Start at 2"]).await;
    run.expect_code(4);
    assert!(
        run.stderr.starts_with(
            "verbatim: ambiguous: --old matches 2 times in main.rs (lines 2, 7). Resend with --occurrence N (1-2), or narrow the window with --after/--before."
        ),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("occurrence 2 (line 7, column 5):\n    6 | fn other() {\n>   7 |     let x = 1;"),
        "{run:?}"
    );
    cli.run(&[
        "edit",
        "main.rs",
        "--old",
        "let x = 1;",
        "--new",
        "let x = 2;",
        "--occurrence",
        "2",
        "-m",
        "Start at 2",
    ])
    .await
    .expect_code(0);
    cli.run(&["edit", "main.rs", "--old", "let x = 1;", "--new", "let y = 1;", "--after", "fn main", "-m", "Rename"])
        .await
        .expect_code(0);
    assert_eq!(
        editor.buffer(&uri),
        MAIN.replacen("let x = 1;", "let y = 1;", 1).replace("other() {\n    let x = 1;", "other() {\n    let x = 2;")
    );
}

#[tokio::test]
async fn a_rejected_edit_exits_10_and_is_journaled_with_the_reason() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("main.rs", MAIN, MAIN).await;
    editor.set_review(Review::Reject(Some("not this way".into())));
    let cli = cli_of(&editor);
    let run = cli.run(&["edit", "main.rs", "--old", "fn other", "--new", "fn another", "-m", "Rename other"]).await;
    run.expect_code(10);
    assert_eq!(run.stderr, "verbatim: rejected: The editor rejected the edit: not this way\n");
    let journal = cli.journal();
    assert_eq!(
        (journal[0]["outcome"].as_str(), journal[0]["reason"].as_str()),
        (Some("rejected"), Some("not this way"))
    );
    assert_eq!(journal[0]["rev"], Value::Null);
    assert_eq!(editor.buffer(&uri), MAIN);
    let log = cli.run(&["log", "--diff"]).await;
    assert!(log.stdout.contains("rejected (not this way)  verbatim-cli  via editor"), "{log:?}");
    assert!(log.stdout.contains("-fn other() {\n+fn another() {"), "{log:?}");
}

#[tokio::test]
async fn an_edit_waits_for_review_and_reports_what_the_person_changed() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("main.rs", MAIN, MAIN).await;
    editor.set_review(Review::Manual);
    let cli = cli_of(&editor);
    let call = spawn(&cli, &["edit", "main.rs", "--old", "fn other", "--new", "fn another", "-m", "Rename other"]);
    let review = editor.next_review().await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!call.is_finished(), "the command must wait for the person");
    editor.decide(review, Review::AcceptAltered("another".into(), "renamed_by_person".into())).await;
    let run = call.await.unwrap();
    run.expect_code(0);
    assert!(run.stdout.contains("main.rs: applied in the editor, but changed during review"), "{run:?}");
    assert!(run.stdout.contains("-fn another() {\n+fn renamed_by_person() {"), "{run:?}");
    assert!(editor.buffer(&uri).contains("fn renamed_by_person()"));
    let journal = cli.journal();
    assert_eq!(journal[0]["outcome"], "modifiedByEditor");
    assert!(journal[0]["editorDiff"].as_str().unwrap().contains("+fn renamed_by_person() {"));
}

#[tokio::test]
async fn an_editor_that_never_answers_times_out_and_one_that_fails_is_an_editor_error() {
    let options = EditorOptions {
        initialization_options: json!({"needsConfirmation": true, "syncTimeoutMs": 3000, "applyTimeoutMs": 300}),
        ..EditorOptions::default()
    };
    let editor = ScriptedEditor::start_with(options).await;
    editor.open("main.rs", MAIN, MAIN).await;
    editor.set_review(Review::Manual);
    let cli = cli_of(&editor);
    let call = spawn(&cli, &["edit", "main.rs", "--old", "fn other", "--new", "fn another", "-m", "Rename"]);
    let _never_answered = editor.next_review().await;
    let run = call.await.unwrap();
    run.expect_code(15);
    assert!(run.stderr.starts_with("verbatim: timeout: The editor did not answer within 300 ms"), "{run:?}");
    assert_eq!(cli.journal()[0]["errorKind"], "timeout");

    let editor = ScriptedEditor::start().await;
    editor.open("main.rs", MAIN, MAIN).await;
    editor.set_review(Review::Manual);
    let cli = cli_of(&editor);
    let call = spawn(&cli, &["edit", "main.rs", "--old", "fn other", "--new", "fn another", "-m", "Rename", "--json"]);
    let review = editor.next_review().await;
    editor
        .connection
        .send(&json!({"jsonrpc": "2.0", "id": review.id, "error": {"code": -32603, "message": "the workspace is read-only"}}))
        .await;
    let run = call.await.unwrap();
    run.expect_code(18);
    assert_eq!(run.json()["error"]["kind"], "editorError");
    assert_eq!(run.json()["error"]["data"]["editorError"]["message"], "the workspace is read-only");
}

#[tokio::test]
async fn quotes_come_from_files_and_batches_from_stdin() {
    let editor = ScriptedEditor::start().await;
    let main = editor.open("main.rs", MAIN, MAIN).await;
    let lib = editor.open("lib.rs", "struct Foo;\nimpl Foo {}\n", "struct Foo;\nimpl Foo {}\n").await;
    let cli = cli_of(&editor);
    // A quote with newlines and a leading dash, which shells and parsers love to mangle.
    std::fs::write(editor.path("old.txt"), "fn other() {\n    let x = 1;\n}\n").unwrap();
    let run = cli
        .run_with_stdin(
            &["edit", "main.rs", "--old-file", "old.txt", "--new-file", "-", "-m", "Rewrite other"],
            b"-- rewritten --\n",
        )
        .await;
    run.expect_code(0);
    assert_eq!(editor.buffer(&main), MAIN.replace("fn other() {\n    let x = 1;\n}\n", "-- rewritten --\n"));

    let batch = json!({"summary": "Rename Foo", "edits": [
        {"uri": "lib.rs", "oldStr": "Foo", "newStr": "Bar", "replaceAll": true},
        {"uri": "main.rs", "fromStr": "fn main", "toStr": "}\n", "newStr": "fn main() { run(Bar) }\n"},
    ]});
    let preview = cli.run_with_stdin(&["batch", "--dry-run"], batch.to_string().as_bytes()).await;
    preview.expect_code(0);
    assert!(preview.stdout.starts_with("Dry run: nothing was written.\nlib.rs: would change"), "{preview:?}");
    assert_eq!(editor.buffer(&lib), "struct Foo;\nimpl Foo {}\n");
    let run = cli.run_with_stdin(&["batch", "--json"], batch.to_string().as_bytes()).await;
    run.expect_code(0);
    let result = run.json();
    assert_eq!((result["applied"].as_bool(), result["via"].as_str()), (Some(true), Some("editor")));
    assert_eq!(result["documents"].as_array().unwrap().len(), 2);
    assert_eq!(editor.buffer(&lib), "struct Bar;\nimpl Bar {}\n");
    assert!(editor.buffer(&main).starts_with("fn main() { run(Bar) }\n\n-- rewritten --\n"));
    // One write, two documents: two journal entries sharing the write's id.
    let journal = cli.journal();
    let batch_entries: Vec<&Value> = journal.iter().filter(|entry| entry["summary"] == "Rename Foo").collect();
    assert_eq!(batch_entries.len(), 2);
    assert_eq!(batch_entries[0]["writeId"], batch_entries[1]["writeId"]);
}

#[tokio::test]
async fn a_file_outside_every_editor_folder_is_edited_on_disk() {
    let editor = ScriptedEditor::start().await;
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("notes.txt"), "one\ntwo\n").unwrap();
    let cli = Cli::new(elsewhere.path(), editor.runtime_dir.path(), editor.state_dir.path());
    let run = cli.run(&["edit", "notes.txt", "--old", "two", "--new", "TWO", "-m", "Shout", "--json"]).await;
    run.expect_code(0);
    assert_eq!(run.json()["via"], "headless");
    assert_eq!(std::fs::read_to_string(elsewhere.path().join("notes.txt")).unwrap(), "one\nTWO\n");
    // And --headless forces the disk even for a file the editor serves.
    editor.open("main.rs", MAIN, MAIN).await;
    let cli = cli_of(&editor);
    let run =
        cli.run(&["edit", "main.rs", "--old", "fn other", "--new", "fn another", "-m", "Rename", "--headless"]).await;
    run.expect_code(0);
    assert!(run.stdout.starts_with("main.rs: applied on disk"), "{run:?}");
    assert_eq!(disk(&editor, "main.rs"), MAIN.replace("fn other", "fn another"));
}

#[tokio::test]
async fn a_file_the_editor_has_open_outside_its_folders_is_still_the_editor_s() {
    for allow_writes in [false, true] {
        let options = EditorOptions {
            initialization_options: json!({"syncTimeoutMs": 3000, "allowWritesOutsideWorkspace": allow_writes}),
            ..EditorOptions::default()
        };
        let editor = ScriptedEditor::start_with(options).await;
        let loose = tempfile::tempdir().unwrap();
        let path = loose.path().join("loose.txt");
        std::fs::write(&path, "on disk\n").unwrap();
        let uri = common::file_uri(&path);
        editor.open_uri(&uri, "typed, unsaved\n").await;
        let cli = Cli::new(loose.path(), editor.runtime_dir.path(), editor.state_dir.path());
        let read = cli.run(&["read", "loose.txt", "--json"]).await.json();
        assert_eq!((read["via"].as_str(), read["text"].as_str()), (Some("editor"), Some("typed, unsaved\n")));
        let run = cli.run(&["edit", "loose.txt", "--old", "typed", "--new", "written", "-m", "Reword"]).await;
        if allow_writes {
            run.expect_code(0);
            assert_eq!(editor.buffer(&uri), "written, unsaved\n");
        } else {
            // The editor's rules decide, never a write to disk behind its back.
            run.expect_code(13);
            assert_eq!(editor.buffer(&uri), "typed, unsaved\n");
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "on disk\n",
            "the disk was written behind the editor's back"
        );
    }
}

#[tokio::test]
async fn a_patch_goes_to_the_editor_as_one_change() {
    let editor = ScriptedEditor::start().await;
    let uri = editor.open("main.rs", MAIN, MAIN).await;
    let cli = cli_of(&editor);
    let patch =
        "*** Begin Patch\n*** Update File: main.rs\n@@ fn other() {\n-    let x = 1;\n+    let x = 2;\n*** End Patch\n";
    let preview = cli.run_with_stdin(&["patch", "-m", "Start other at 2", "--dry-run"], patch.as_bytes()).await;
    preview.expect_code(0);
    assert!(
        preview.stdout.starts_with("Dry run: nothing was written.\nmain.rs: would change (rev e1.1):\n"),
        "{preview:?}"
    );
    assert_eq!(editor.buffer(&uri), MAIN);
    let run = cli.run_with_stdin(&["patch", "-m", "Start other at 2", "--json"], patch.as_bytes()).await;
    run.expect_code(0);
    let result = run.json();
    assert_eq!(
        (result["applied"].as_bool(), result["via"].as_str(), result["format"].as_str()),
        (Some(true), Some("editor"), Some("applyPatch"))
    );
    assert_eq!(editor.buffer(&uri), MAIN.replace("other() {\n    let x = 1;", "other() {\n    let x = 2;"));
    assert_eq!(cli.journal().last().unwrap()["summary"], "Start other at 2");
    // A hunk that does not match is refused, with the patch line it came from.
    let wrong = "*** Begin Patch\n*** Update File: main.rs\n@@\n-    nothing like this\n+    x\n*** End Patch\n";
    let refused = cli.run_with_stdin(&["patch", "-m", "s", "--json"], wrong.as_bytes()).await;
    refused.expect_code(3);
    assert!(
        refused.json()["error"]["message"].as_str().unwrap().starts_with("patch line 3 (main.rs): "),
        "{refused:?}"
    );
}

#[tokio::test]
async fn diagnostics_and_a_partial_review_are_printed_and_journaled() {
    let editor = ScriptedEditor::start_with(EditorOptions {
        initialization_options: json!({"needsConfirmation": true, "syncTimeoutMs": 3000, "diagnostics": true}),
        ..EditorOptions::default()
    })
    .await;
    let uri = editor.open("main.rs", MAIN, MAIN).await;
    let problem = json!({"range": {"start": {"line": 1, "character": 12}, "end": {"line": 1, "character": 13}},
                         "severity": 1, "source": "rustc", "code": "E0425", "message": "cannot find value `y`"});
    editor.answer_diagnostics(vec![
        Some(json!({"documents": [{"uri": uri, "status": "settled", "diagnostics": []}]})),
        Some(json!({"documents": [{"uri": uri, "status": "timedOut", "diagnostics": [problem]}]})),
    ]);
    let cli = cli_of(&editor);
    let run = cli
        .run(&[
            "edit",
            "main.rs",
            "--old",
            "let x = 1;\n    run",
            "--new",
            "let x = y;\n    run",
            "-m",
            "Use y",
            "--diagnostics",
        ])
        .await;
    run.expect_code(0);
    assert!(run.stdout.contains("Diagnostics after the edit (errors, incomplete: not settled after"), "{run:?}");
    assert!(run.stdout.contains("main.rs:2:13 error [rustc E0425]: cannot find value `y`"), "{run:?}");
    assert!(run.stdout.contains("This is not a clean bill."), "{run:?}");
    let journal = cli.run(&["log", "--json"]).await;
    let last: Value = serde_json::from_str(journal.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(last["diagnostics"]["status"], "timedOut", "{last}");
    assert_eq!(last["diagnostics"]["introduced"], 1);

    // The person keeps one hunk of two.
    editor.set_review(Review::AcceptHunks { keep: vec![0], reason: Some("other stays".into()), report: true });
    let old = "    run(x);\n}\n\nfn other() {\n    let x = 1;";
    let new = "    run(x + 1);\n}\n\nfn other() {\n    let x = 2;";
    let run = cli.run(&["edit", "main.rs", "--old", old, "--new", new, "-m", "Both"]).await;
    run.expect_code(0);
    assert!(run.stdout.contains("main.rs: 1 of 2 hunks applied in the editor"), "{run:?}");
    assert!(run.stdout.contains("the person left out line 7"), "{run:?}");
    assert!(run.stdout.contains("Their reason: other stays"), "{run:?}");
    assert!(editor.buffer(&uri).contains("run(x + 1);") && editor.buffer(&uri).contains("let x = 1;\n}"));
    let journal = cli.run(&["log", "--json"]).await;
    let last: Value = serde_json::from_str(journal.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(last["outcome"], "partial", "{last}");
    assert_eq!(last["reason"], "other stays");
    assert_eq!(last["hunksLeftOut"], json!([1]));
}
