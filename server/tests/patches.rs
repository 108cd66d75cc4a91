//! End to end: `verbatim/applyPatch` with OpenAI `apply_patch` patches and
//! SEARCH/REPLACE blocks, through the real binary, a scripted editor and the socket.
#![allow(clippy::unwrap_used)]

mod common;

use common::{EditorOptions, Review, ScriptedEditor};
use serde_json::{Value, json};

fn disk(editor: &ScriptedEditor, name: &str) -> Option<String> {
    std::fs::read_to_string(editor.path(name)).ok()
}

const LIB: &str = "fn greet() {\r\n    print(\"Hi\");\r\n}\r\n\r\nfn other() {}\r\n";

/// Every operation of the format in one patch: add, update (on a CRLF file, which
/// takes the ladder), delete, and update-and-move.
const PATCH: &str = "*** Begin Patch
*** Add File: src/new.rs
+pub fn fresh() {}
*** Update File: src/lib.rs
@@ fn greet() {
-    print(\"Hi\");
+    print(\"Hello\");
*** Delete File: old.txt
*** Update File: src/name.rs
*** Move to: src/renamed/name.rs
@@
-pub const NAME: &str = \"a\";
+pub const NAME: &str = \"b\";
*** End Patch
";

async fn workspace() -> (ScriptedEditor, String) {
    let editor = ScriptedEditor::start().await;
    std::fs::create_dir_all(editor.path("src")).unwrap();
    let lib = editor.open("src/lib.rs", LIB, LIB).await;
    std::fs::write(editor.path("old.txt"), "obsolete\n").unwrap();
    std::fs::write(editor.path("src/name.rs"), "pub const NAME: &str = \"a\";\n").unwrap();
    (editor, lib)
}

#[tokio::test]
async fn a_patch_adds_updates_deletes_and_moves_files_in_one_edit() {
    let (editor, lib) = workspace().await;
    let agent = editor.agent("codex").await;

    let preview = agent
        .call("verbatim/applyPatch", json!({"patch": PATCH, "summary": "Greet warmly", "dryRun": true}))
        .await
        .unwrap();
    assert_eq!(preview["applied"], false);
    assert_eq!(preview["format"], "applyPatch");
    let documents = preview["documents"].as_array().unwrap();
    assert_eq!(documents.len(), 4);
    assert_eq!(documents[0]["operation"], "create");
    assert_eq!(documents[1]["normalizations"], json!(["lineEndings"]));
    assert_eq!(documents[1]["edits"][0]["newText"], "    print(\"Hello\");\r\n");
    assert_eq!(documents[2]["operation"], "delete");
    assert!(documents[2]["diff"].as_str().unwrap().contains("-obsolete"));
    assert_eq!(documents[3]["operation"], "move");
    assert_eq!(documents[3]["newUri"], editor.uri("src/renamed/name.rs"));
    assert_eq!(editor.buffer(&lib), LIB);
    assert!(disk(&editor, "old.txt").is_some());

    editor.set_review(Review::Manual);
    let call = agent.spawn_call("verbatim/applyPatch", json!({"patch": PATCH, "summary": "Greet warmly"}));
    let review = editor.next_review().await;
    let operations: Vec<String> = review.params["edit"]["documentChanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|operation| operation["kind"].as_str().unwrap_or("edit").to_owned())
        .collect();
    assert_eq!(operations, ["create", "edit", "edit", "delete", "edit", "rename"]);
    editor.decide(review, Review::Accept).await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["applied"], true, "{result}");
    assert_eq!(editor.buffer(&editor.uri("src/new.rs")), "pub fn fresh() {}\n");
    assert_eq!(editor.buffer(&lib), LIB.replace("Hi", "Hello"));
    assert_eq!(disk(&editor, "old.txt"), None);
    assert_eq!(result["documents"][2]["rev"], Value::Null);
    assert_eq!(disk(&editor, "src/name.rs"), None);
    assert_eq!(editor.buffer(&editor.uri("src/renamed/name.rs")), "pub const NAME: &str = \"b\";\n");
    let moved = agent.read(&editor.uri("src/renamed/name.rs")).await;
    assert_eq!(result["documents"][3]["rev"], moved["rev"]);
}

#[tokio::test]
async fn a_patch_with_failing_hunks_changes_no_file_and_reports_every_hunk() {
    let (editor, lib) = workspace().await;
    let agent = editor.agent("codex").await;
    let patch = "*** Begin Patch
*** Update File: src/name.rs
@@
-pub const NAME: &str = \"a\";
+pub const NAME: &str = \"c\";
*** Update File: src/lib.rs
@@
-    print(\"Hey\");
+    print(\"Hello\");
@@ fn nowhere()
-x
+y
*** End Patch";
    let error = agent.call("verbatim/applyPatch", json!({"patch": patch, "summary": "s"})).await.unwrap_err();
    assert_eq!(error.kind(), "notFound");
    assert!(
        error.message.starts_with(
            "2 parts of the patch failed; nothing was applied.\n- patch line 7 (src/lib.rs): oldLines was not found"
        ),
        "{}",
        error.message
    );
    let failures = error.data["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0]["line"], 7);
    assert_eq!(failures[0]["quote"], "oldLines");
    assert_eq!(failures[0]["closest"]["startLine"], 2);
    assert_eq!(failures[0]["closest"]["text"], "    print(\"Hi\");");
    assert_eq!(failures[1]["line"], 10);
    assert_eq!(failures[1]["quote"], "context");
    assert_eq!(error.data["line"], 7);
    // Nothing was applied, in either file.
    assert_eq!(editor.buffer(&lib), LIB);
    assert_eq!(disk(&editor, "src/name.rs").unwrap(), "pub const NAME: &str = \"a\";\n");

    // An ambiguous hunk is refused with its matches.
    std::fs::write(editor.path("dup.txt"), "x\ny\nx\n").unwrap();
    let ambiguous = "*** Begin Patch\n*** Update File: dup.txt\n@@\n-x\n+z\n*** End Patch\n";
    let error = agent.call("verbatim/applyPatch", json!({"patch": ambiguous, "summary": "s"})).await.unwrap_err();
    assert_eq!(error.kind(), "ambiguous");
    assert_eq!(error.data["matchCount"], 2);
    assert_eq!(error.data["matches"][1]["line"], 3);
    assert_eq!(error.data["line"], 3);
}

#[tokio::test]
async fn the_person_can_refuse_a_patch_and_then_nothing_happens() {
    let (editor, lib) = workspace().await;
    editor.set_review(Review::Reject(Some("not now".into())));
    let agent = editor.agent("codex").await;
    let error = agent.call("verbatim/applyPatch", json!({"patch": PATCH, "summary": "s"})).await.unwrap_err();
    assert_eq!(error.kind(), "rejected");
    assert_eq!(editor.buffer(&lib), LIB);
    assert!(disk(&editor, "old.txt").is_some());
    assert!(disk(&editor, "src/name.rs").is_some());
}

#[tokio::test]
async fn an_editor_that_cannot_delete_or_move_files_gets_a_clear_refusal() {
    let editor =
        ScriptedEditor::start_with(EditorOptions { resource_operations: vec!["create"], ..EditorOptions::default() })
            .await;
    std::fs::write(editor.path("gone.txt"), "x\n").unwrap();
    let agent = editor.agent("codex").await;
    let error = agent
        .call(
            "verbatim/applyPatch",
            json!({"patch": "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch", "summary": "s"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "editorError");
    assert!(error.message.contains("resourceOperations lacks \"delete\""), "{}", error.message);
    assert!(disk(&editor, "gone.txt").is_some());
    // A dry run still shows what the patch would do.
    let preview = agent
        .call("verbatim/applyPatch", json!({"patch": "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch", "summary": "s", "dryRun": true}))
        .await
        .unwrap();
    assert_eq!(preview["documents"][0]["operation"], "delete");
}

#[tokio::test]
async fn search_replace_blocks_edit_and_create_files() {
    let (editor, lib) = workspace().await;
    let agent = editor.agent("aider").await;
    let patch = "src/lib.rs
```rust
<<<<<<< SEARCH
fn other() {}
=======
fn other() {
    greet();
}
>>>>>>> REPLACE
```

src/fresh.txt
<<<<<<< SEARCH
=======
hello
>>>>>>> REPLACE
";
    let result = agent.call("verbatim/applyPatch", json!({"patch": patch, "summary": "Call greet"})).await.unwrap();
    assert_eq!(result["format"], "searchReplace");
    assert_eq!(editor.buffer(&lib), LIB.replace("fn other() {}\r\n", "fn other() {\r\n    greet();\r\n}\r\n"));
    assert_eq!(editor.buffer(&editor.uri("src/fresh.txt")), "hello\n");
    assert_eq!(result["documents"][0]["normalizations"], json!(["lineEndings"]));
}

#[tokio::test]
async fn malformed_patches_and_bad_paths_are_refused_with_their_line() {
    let (editor, _lib) = workspace().await;
    let agent = editor.agent("codex").await;
    let cases = [
        ("*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n?b\n*** End Patch", "invalidParams", 5),
        ("*** Begin Patch\n*** Add File: src/lib.rs\n+x\n*** End Patch", "invalidParams", 2),
        ("*** Begin Patch\n*** Update File: src/missing.rs\n@@\n-a\n+b\n*** End Patch", "unknownDocument", 2),
        ("*** Begin Patch\n*** Delete File: ../outside.txt\n*** End Patch", "outsideWorkspace", 2),
        ("*** Begin Patch\n*** Update File: src/lib.rs\n*** Move to: old.txt\n*** End Patch", "invalidParams", 3),
        (
            "*** Begin Patch\n*** Delete File: old.txt\n*** Update File: old.txt\n@@\n-a\n+b\n*** End Patch",
            "invalidParams",
            3,
        ),
        ("src/lib.rs\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n", "emptyQuote", 2),
    ];
    for (patch, kind, line) in cases {
        let error = agent.call("verbatim/applyPatch", json!({"patch": patch, "summary": "s"})).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{patch}: {error:?}");
        assert_eq!(error.data["line"], line, "{patch}: {error:?}");
        assert!(error.message.contains(&format!("patch line {line}")), "{patch}: {}", error.message);
    }
    let missing = agent.call("verbatim/applyPatch", json!({"patch": "x", "summary": ""})).await.unwrap_err();
    assert_eq!(missing.data["field"], "summary");
    assert_eq!(disk(&editor, "src/lib.rs").unwrap(), LIB);
}

#[tokio::test]
async fn patches_obey_access_levels_and_path_rules() {
    let editor = ScriptedEditor::start_with(EditorOptions {
        initialization_options: json!({"agentAccess": "readOnly"}),
        ..EditorOptions::default()
    })
    .await;
    std::fs::write(editor.path("a.txt"), "alpha\n").unwrap();
    let patch = "a.txt\n<<<<<<< SEARCH\nalpha\n=======\nbeta\n>>>>>>> REPLACE\n";
    let agent = editor.agent("reviewer").await;
    let refused = agent.call("verbatim/applyPatch", json!({"patch": patch, "summary": "s"})).await.unwrap_err();
    assert_eq!(refused.kind(), "permissionDenied");
    let preview =
        agent.call("verbatim/applyPatch", json!({"patch": patch, "summary": "s", "dryRun": true})).await.unwrap();
    assert_eq!(preview["documents"][0]["edits"][0]["newText"], "beta\n");

    let (editor, _lib) = workspace().await;
    let agent = editor.agent("codex").await;
    for (patch, line) in [
        ("*** Begin Patch\n*** Add File: .env\n+TOKEN=x\n*** End Patch", 2),
        ("*** Begin Patch\n*** Update File: old.txt\n*** Move to: .git/old.txt\n*** End Patch", 3),
    ] {
        let error = agent.call("verbatim/applyPatch", json!({"patch": patch, "summary": "s"})).await.unwrap_err();
        assert_eq!(error.kind(), "permissionDenied", "{patch}");
        assert_eq!(error.data["line"], line, "{patch}");
    }
    assert!(disk(&editor, "old.txt").is_some());
    assert_eq!(disk(&editor, ".env"), None);
}
