//! End to end: a write that asks for diagnostics gets what the editor's language
//! servers report after it, compared with what they reported when it was offered,
//! the baseline moved through the edit's own line changes; and an honest status
//! when the answer is incomplete or missing. The scripted editor plays the part of
//! the Verbatim clients, which collect the diagnostics (see the Neovim and VS Code
//! suites for real language servers).
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{Agent, EditorOptions, ScriptedEditor};
use serde_json::{Value, json};

/// 30 numbered lines: `line 1` … `line 30`.
fn numbered() -> String {
    (1..=30).map(|line| format!("line {line}\n")).collect()
}

fn diagnostic(line: u64, code: &str, message: &str) -> Value {
    json!({"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 4}},
           "severity": 1, "source": "ruff", "code": code, "message": message})
}

fn answer(uri: &str, status: &str, diagnostics: Vec<Value>) -> Value {
    json!({"documents": [{"uri": uri, "status": status, "sources": ["ruff"], "diagnostics": diagnostics}]})
}

async fn editor(diagnostics: bool) -> ScriptedEditor {
    ScriptedEditor::start_with(EditorOptions {
        initialization_options: json!({"needsConfirmation": true, "syncTimeoutMs": 3000, "diagnostics": diagnostics}),
        ..EditorOptions::default()
    })
    .await
}

/// A one-line `strReplace` (summary "s"), with `diagnostics` unless it is null.
async fn replace(agent: &Agent, uri: &str, old: &str, new: &str, diagnostics: Value) -> Value {
    let mut params = json!({"uri": uri, "oldStr": old, "newStr": new, "summary": "s"});
    if !diagnostics.is_null() {
        params["diagnostics"] = diagnostics;
    }
    agent.call("verbatim/strReplace", params).await.unwrap()
}

#[tokio::test]
async fn a_problem_that_only_moved_is_existing_and_a_new_one_is_introduced() {
    let editor = editor(true).await;
    let text = numbered();
    let uri = editor.open("app.py", &text, &text).await;
    // Before: an error on line 21 (0-based 20). The edit deletes lines 3-16 (14 lines)
    // and rewrites line 2, which now uses an undefined name.
    editor.answer_diagnostics(vec![
        Some(answer(&uri, "settled", vec![diagnostic(20, "F401", "`os` imported but unused")])),
        Some(answer(
            &uri,
            "settled",
            vec![diagnostic(1, "F821", "Undefined name `y`"), diagnostic(6, "F401", "`os` imported but unused")],
        )),
    ]);
    let agent = editor.agent("claude").await;
    let old: String = (2..=16).map(|line| format!("line {line}\n")).collect();
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": old, "newStr": "print(y)\n", "summary": "Shrink", "diagnostics": true}),
        )
        .await
        .unwrap();
    let report = &result["diagnostics"];
    assert_eq!(report["status"], "settled", "{report}");
    assert_eq!(report["severity"], "errors");
    assert_eq!(report["existing"], 1, "{report}");
    assert_eq!(report["resolved"], json!([]));
    let introduced = report["introduced"].as_array().unwrap();
    assert_eq!(introduced.len(), 1, "{report}");
    assert_eq!(introduced[0]["code"], "F821");
    assert_eq!(introduced[0]["location"], "app.py:2:1");
    assert_eq!(introduced[0]["text"], "print(y)");
    assert_eq!(report["sources"], json!(["ruff"]));
    assert_eq!(report["unsaved"], true);
    assert!(report["note"].as_str().unwrap().contains("not saved"), "{report}");

    let requests = editor.diagnostics_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["wait"], Value::Null, "the baseline does not wait");
    assert_eq!(requests[0]["minSeverity"], "error");
    let version = result["rev"].as_str().unwrap().rsplit('.').next().unwrap().parse::<i64>().unwrap();
    assert_eq!(requests[1]["wait"]["versions"][&uri], version, "the wait names the version that holds the edit");
    assert_eq!(requests[1]["wait"]["quietMs"], 300);
    assert_eq!(requests[1]["wait"]["timeoutMs"], 2500);
}

#[tokio::test]
async fn a_fix_is_resolved_and_the_text_is_the_line_as_it_was() {
    let editor = editor(true).await;
    let text = "import os\nprint(y)\n";
    let uri = editor.open("app.py", text, text).await;
    editor.answer_diagnostics(vec![
        Some(answer(&uri, "settled", vec![diagnostic(1, "F821", "Undefined name `y`")])),
        Some(answer(&uri, "settled", vec![])),
    ]);
    let agent = editor.agent("claude").await;
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "print(y)", "newStr": "print(os.sep)", "summary": "Fix", "diagnostics": "warnings"}),
        )
        .await
        .unwrap();
    let report = &result["diagnostics"];
    assert_eq!(report["status"], "settled");
    assert_eq!(report["severity"], "warnings");
    assert_eq!(report["introduced"], json!([]));
    assert_eq!(report["resolved"][0]["code"], "F821");
    assert_eq!(report["resolved"][0]["text"], "print(y)");
    assert_eq!(editor.diagnostics_requests()[0]["minSeverity"], "warning");
}

#[tokio::test]
async fn an_editor_that_does_not_settle_gives_timed_out_never_a_clean_bill() {
    let editor = editor(true).await;
    let uri = editor.open("app.py", "x = 1\n", "x = 1\n").await;
    editor.answer_diagnostics(vec![Some(answer(&uri, "settled", vec![])), Some(answer(&uri, "timedOut", vec![]))]);
    let agent = editor.agent("claude").await;
    let result = replace(&agent, &uri, "1", "2", json!(true)).await;
    let report = &result["diagnostics"];
    assert_eq!(report["status"], "timedOut");
    assert!(report["note"].as_str().unwrap().contains("not a clean bill"), "{report}");
}

#[tokio::test]
async fn an_editor_that_never_answers_gives_timed_out_within_the_limit() {
    let editor = editor(true).await;
    let uri = editor.open("app.py", "x = 1\n", "x = 1\n").await;
    editor.answer_diagnostics(vec![Some(answer(&uri, "settled", vec![])), None]);
    let agent = editor.agent("claude").await;
    let started = std::time::Instant::now();
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "1", "newStr": "2", "summary": "s", "diagnostics": true, "diagnosticsTimeoutMs": 100}),
        )
        .await
        .unwrap();
    assert_eq!(result["applied"], true, "the edit itself stands");
    assert_eq!(result["diagnostics"]["status"], "timedOut");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[tokio::test]
async fn a_batch_names_the_file_nothing_checked_instead_of_calling_it_settled() {
    let editor = editor(true).await;
    let app = editor.open("app.py", "x = 1\n", "x = 1\n").await;
    let notes = editor.open("notes.txt", "todo\n", "todo\n").await;
    let both = |app_diagnostics: Vec<Value>| {
        json!({"documents": [
            {"uri": app, "status": "settled", "sources": ["ruff"], "diagnostics": app_diagnostics},
            {"uri": notes, "status": "unavailable", "sources": [], "diagnostics": []},
        ]})
    };
    editor.answer_diagnostics(vec![Some(both(vec![])), Some(both(vec![]))]);
    let agent = editor.agent("claude").await;
    let result = agent
        .call(
            "verbatim/batchEdit",
            json!({"summary": "s", "diagnostics": true, "edits": [
                {"uri": app, "oldStr": "1", "newStr": "2"},
                {"uri": notes, "oldStr": "todo", "newStr": "done"},
            ]}),
        )
        .await
        .unwrap();
    let report = &result["diagnostics"];
    assert_eq!(report["status"], "settled", "{report}");
    assert_eq!(report["unchecked"], json!(["notes.txt"]), "{report}");
    let note = report["note"].as_str().unwrap();
    assert!(note.contains("Not checked: notes.txt."), "{note}");
    assert!(note.contains("nothing is known about its problems"), "{note}");

    // A file the editor edits on disk without opening it is not checked either.
    let closed = editor.path("closed.py");
    std::fs::write(&closed, "z = 1\n").unwrap();
    let closed = common::file_uri(&closed);
    editor.set_review(common::Review::AcceptWritingClosedFiles);
    editor.answer_diagnostics(vec![Some(answer(&app, "settled", vec![])), Some(answer(&app, "settled", vec![]))]);
    let result = agent
        .call(
            "verbatim/batchEdit",
            json!({"summary": "s", "diagnostics": true, "edits": [
                {"uri": app, "oldStr": "x = 2", "newStr": "x = 3"},
                {"uri": closed, "oldStr": "z = 1", "newStr": "z = 2"},
            ]}),
        )
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(editor.path("closed.py")).unwrap(), "z = 2\n");
    assert_eq!(result["diagnostics"]["status"], "settled", "{}", result["diagnostics"]);
    assert_eq!(result["diagnostics"]["unchecked"], json!(["closed.py"]), "{}", result["diagnostics"]);
    editor.set_review(common::Review::Accept);

    // A write whose every document is checked names none.
    editor.answer_diagnostics(vec![
        Some(answer(&app, "settled", vec![])),
        Some(answer(&app, "settled", vec![diagnostic(0, "F821", "Undefined name `y`")])),
    ]);
    let result = replace(&agent, &app, "x = 3", "x = y", json!(true)).await;
    assert_eq!(result["diagnostics"]["unchecked"], Value::Null, "{}", result["diagnostics"]);
    assert_eq!(result["diagnostics"]["introduced"][0]["code"], "F821");
}

#[tokio::test]
async fn a_document_no_language_server_serves_is_unavailable() {
    let editor = editor(true).await;
    let uri = editor.open("notes.txt", "a\n", "a\n").await;
    editor
        .answer_diagnostics(vec![Some(answer(&uri, "unavailable", vec![])), Some(answer(&uri, "unavailable", vec![]))]);
    let agent = editor.agent("claude").await;
    let result = replace(&agent, &uri, "a", "b", json!(true)).await;
    assert_eq!(result["diagnostics"]["status"], "unavailable");
}

#[tokio::test]
async fn an_editor_without_diagnostics_is_unavailable_and_not_asked() {
    let editor = editor(false).await;
    let uri = editor.open("app.py", "x = 1\n", "x = 1\n").await;
    let agent = editor.agent("claude").await;
    let result = replace(&agent, &uri, "1", "2", json!(true)).await;
    assert_eq!(result["diagnostics"]["status"], "unavailable");
    assert!(result["diagnostics"]["note"].as_str().unwrap().contains("does not report diagnostics"));
    assert!(editor.diagnostics_requests().is_empty());
}

#[tokio::test]
async fn without_diagnostics_nothing_is_asked_and_nothing_reported() {
    let editor = editor(true).await;
    let uri = editor.open("app.py", "x = 1\n", "x = 1\n").await;
    let agent = editor.agent("claude").await;
    let result = replace(&agent, &uri, "1", "2", Value::Null).await;
    assert_eq!(result.get("diagnostics"), None);
    assert!(editor.diagnostics_requests().is_empty(), "no cost when off");
}

#[tokio::test]
async fn the_connection_default_applies_and_a_write_can_turn_it_off() {
    let editor = editor(true).await;
    let uri = editor.open("app.py", "x = 1\n", "x = 1\n").await;
    let discovery = editor.discovery().await;
    let agent = Agent::connect_with(
        Path::new(discovery["socket"].as_str().unwrap()),
        "claude",
        &["utf-16"],
        json!({"diagnostics": "warnings", "diagnosticsTimeoutMs": 1000}),
    )
    .await;
    let result = replace(&agent, &uri, "1", "2", Value::Null).await;
    assert_eq!(result["diagnostics"]["severity"], "warnings");
    assert_eq!(editor.diagnostics_requests()[1]["wait"]["timeoutMs"], 1000);
    let result = replace(&agent, &uri, "2", "3", json!(false)).await;
    assert_eq!(result.get("diagnostics"), None);
}

#[tokio::test]
async fn a_wrong_diagnostics_value_is_refused_with_what_to_send() {
    let editor = editor(true).await;
    let uri = editor.open("app.py", "x = 1\n", "x = 1\n").await;
    let agent = editor.agent("claude").await;
    let error = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "1", "newStr": "2", "summary": "s", "diagnostics": "all"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "invalidParams");
    assert!(error.message.contains("\"errors\" or \"warnings\""), "{}", error.message);
    assert_eq!(editor.buffer(&uri), "x = 1\n");
}

#[tokio::test]
async fn a_file_the_editor_opens_while_the_edit_waits_is_edited_in_the_editor() {
    let editor = editor(true).await;
    std::fs::write(editor.path("late.py"), "x = 1\n").unwrap();
    let uri = editor.uri("late.py");
    // The baseline is never answered: the server waits for it (2 s) while the editor opens the file.
    editor.answer_diagnostics(vec![None, Some(answer(&uri, "settled", vec![]))]);
    let agent = editor.agent("claude").await;
    let call = agent.spawn_call(
        "verbatim/strReplace",
        json!({"uri": uri, "oldStr": "1", "newStr": "2", "summary": "s", "diagnostics": true}),
    );
    while editor.diagnostics_requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    editor.open_uri(&uri, "x = 1\n").await;
    let result = call.await.unwrap().unwrap();
    assert_eq!(result["applied"], true, "{result}");
    assert_eq!(editor.buffer(&uri), "x = 2\n");
    assert!(result["rev"].as_str().unwrap().starts_with('e'), "the editor's rev: {result}");
}
