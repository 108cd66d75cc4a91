//! End to end: quotes that are almost verbatim (the normalization ladder) and the
//! feedback for quotes that are not there, through the real binary and socket.
#![allow(clippy::unwrap_used)]

mod common;

use common::ScriptedEditor;
use serde_json::json;

#[tokio::test]
async fn a_slipped_quote_is_found_and_the_result_says_how() {
    let editor = ScriptedEditor::start().await;
    let text = "fn main() {\r\n\tlet x = 1;  \r\n\trun(x);\r\n}\r\n";
    let uri = editor.open("main.rs", text, text).await;
    let agent = editor.agent("agent").await;
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "summary": "Start at 2",
                   "oldStr": "     1→fn main() {\n     2→    let x = 1;\n     3→    run(x);\n",
                   "newStr": "     1→fn main() {\n     2→    let x = 2;\n     3→    run(x);\n     4→    log(x);\n"}),
        )
        .await
        .unwrap();
    assert_eq!(result["applied"], true);
    assert_eq!(result["normalizations"], json!(["lineNumbers", "lineEndings", "trailingWhitespace", "indentation"]));
    assert_eq!(editor.buffer(&uri), "fn main() {\r\n\tlet x = 2;\r\n\trun(x);\r\n\tlog(x);\r\n}\r\n");

    let exact = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "let x = 2;\n", "newStr": "let x = 3;\n", "exact": true, "summary": "s"}),
        )
        .await
        .unwrap_err();
    assert_eq!(exact.kind(), "notFound");
    assert!(!exact.message.contains("not even ignoring"), "{}", exact.message);

    let deleted = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "\tlog(x);", "newStr": "", "summary": "No log"}))
        .await
        .unwrap();
    assert_eq!(deleted["normalizations"], json!(["deletedTrailingNewline"]));
    assert_eq!(editor.buffer(&uri), "fn main() {\r\n\tlet x = 2;\r\n\trun(x);\r\n}\r\n");
}

#[tokio::test]
async fn an_ambiguous_normalized_quote_is_refused_with_its_matches() {
    let editor = ScriptedEditor::start().await;
    let text = "a();  \nb();\na();\t\nb();\n";
    let uri = editor.open("two.rs", text, text).await;
    let agent = editor.agent("agent").await;
    let error = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "a();\nb();\n", "newStr": "c();\n", "summary": "s"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "ambiguous");
    assert_eq!(error.data["normalizations"], json!(["trailingWhitespace"]));
    assert_eq!(error.data["matchCount"], 2);
    assert!(
        error.message.contains("matches 2 times in two.rs when ignoring trailing whitespace (lines 1, 3)"),
        "{}",
        error.message
    );
    assert_eq!(editor.buffer(&uri), text);
    // The agent picks one: occurrence applies to the normalized matches.
    let result = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "a();\nb();\n", "newStr": "c();\n", "occurrence": 2, "summary": "s"}),
        )
        .await
        .unwrap();
    assert_eq!(result["normalizations"], json!(["trailingWhitespace"]));
    assert_eq!(editor.buffer(&uri), "a();  \nb();\nc();\n");
}

#[tokio::test]
async fn a_missing_quote_shows_the_closest_region_and_other_documents_that_hold_it() {
    let editor = ScriptedEditor::start().await;
    let main = "fn main() {\n    let total = compute(1, 2);\n    report(total);\n}\n";
    let uri = editor.open("main.rs", main, main).await;
    let other = editor.open("lib.rs", "pub fn helper() {}\n", "pub fn helper() {}\n").await;
    let agent = editor.agent("agent").await;
    let error = agent
        .call(
            "verbatim/strReplace",
            json!({"uri": uri, "oldStr": "    let total = compute(1, 3);\n    report(total);\n", "newStr": "x", "summary": "s"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, -33001);
    assert_eq!(error.data["closest"]["startLine"], 2);
    assert_eq!(error.data["closest"]["endLine"], 3);
    assert_eq!(error.data["closest"]["text"], "    let total = compute(1, 2);\n    report(total);");
    assert!(error.data["closest"]["diff"].as_str().unwrap().contains("+    let total = compute(1, 2);"));
    let elsewhere = agent
        .call("verbatim/strReplace", json!({"uri": uri, "oldStr": "pub fn helper() {}", "newStr": "x", "summary": "s"}))
        .await
        .unwrap_err();
    assert_eq!(elsewhere.data["alsoIn"], json!([other]));
    assert!(elsewhere.message.contains("It does occur verbatim in lib.rs"), "{}", elsewhere.message);
}
