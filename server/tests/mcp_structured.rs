//! End to end: what `verbatim mcp` puts in `structuredContent`, which is all that
//! Claude Code and Codex show the model of a successful call. Every result of every
//! tool with an output schema is checked against that schema (a strict reading: no
//! property the schema does not name), carries a `message` with the text's sentences,
//! and the fields the model acts on: the rev to pass as base_rev next, the hunks the
//! person kept and why, `rebased`, and for errors their kind and data.
#![allow(clippy::unwrap_used)]

mod cli_support;
mod common;

use std::path::Path;
use std::time::Duration;

use common::{Review, ScriptedEditor};
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

#[derive(Clone)]
struct Client;

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("structured-test", "1.0.0"))
    }
}

struct Mcp {
    client: RunningService<RoleClient, Client>,
    tools: Vec<Tool>,
}

async fn start(cwd: &Path, runtime_dir: &Path, state_dir: &Path) -> Mcp {
    start_with(cwd, runtime_dir, state_dir, &[]).await
}

async fn start_with(cwd: &Path, runtime_dir: &Path, state_dir: &Path, args: &[&str]) -> Mcp {
    let mut command = tokio::process::Command::new(cli_support::binary());
    command
        .arg("mcp")
        .args(args)
        .current_dir(cwd)
        .env("VERBATIM_RUNTIME_DIR", runtime_dir)
        .env("VERBATIM_STATE_DIR", state_dir);
    let client = Client.serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    Mcp { client, tools }
}

impl Mcp {
    /// Calls a tool and checks its structured content against the tool's output schema.
    async fn call(&self, tool: &str, args: Value) -> (CallToolResult, Value) {
        let Value::Object(arguments) = args else { panic!("arguments must be an object") };
        let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let result =
            tokio::time::timeout(Duration::from_secs(30), self.client.call_tool(request)).await.unwrap().unwrap();
        let declared = self.tools.iter().find(|candidate| candidate.name == tool).unwrap();
        let schema = Value::Object((**declared.output_schema.as_ref().expect("an output schema")).clone());
        let structured =
            result.structured_content.clone().unwrap_or_else(|| panic!("no structuredContent: {result:?}"));
        let mut problems = Vec::new();
        validate(&schema, &schema, &structured, "$", &mut problems);
        assert!(problems.is_empty(), "{tool}'s result breaks its outputSchema: {problems:?}\n{structured:#}");
        let text = text(&result);
        let message = structured["message"].as_str().unwrap();
        assert!(!message.is_empty());
        // The message says what the text says; only the diffs are left to their fields
        // (so a sentence that leads into a diff in the text ends with a period instead).
        for line in message.lines().filter(|line| !line.is_empty()) {
            let sentence = line.trim_end_matches(['.', ':']);
            assert!(text.contains(sentence), "message line {line:?} is not in the text:\n{text}");
        }
        (result, structured)
    }
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|content| content.as_text().map(|text| text.text.clone())).collect()
}

/// A strict reading of the JSON Schema subset schemars writes: type (or a list of
/// types), properties (no others unless additionalProperties allows them), required,
/// items, $ref into $defs, minimum, enum, anyOf/oneOf.
fn validate(root: &Value, schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/$defs/");
        return validate(root, &root["$defs"][name], value, at, problems);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let fits = options.iter().any(|option| {
                let mut inner = Vec::new();
                validate(root, option, value, at, &mut inner);
                inner.is_empty()
            });
            if !fits {
                problems.push(format!("{at}: fits none of {key}"));
            }
            return;
        }
    }
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        if !types.iter().any(|wanted| *wanted == actual || (*wanted == "number" && actual == "integer")) {
            problems.push(format!("{at}: {actual}, the schema says {types:?}"));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        problems.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let (Some(minimum), Some(number)) = (schema.get("minimum").and_then(Value::as_f64), value.as_f64())
        && number < minimum
    {
        problems.push(format!("{at}: {number} < minimum {minimum}"));
    }
    if let Value::Object(object) = value {
        let properties = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        for required in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !object.contains_key(required.as_str().unwrap_or_default()) {
                problems.push(format!("{at}: required {required} is missing"));
            }
        }
        let others = schema.get("additionalProperties");
        for (key, item) in object {
            match (properties.get(key), others) {
                (Some(property), _) => validate(root, property, item, &format!("{at}.{key}"), problems),
                (None, Some(Value::Bool(true))) => {}
                (None, Some(extra @ Value::Object(_))) => validate(root, extra, item, &format!("{at}.{key}"), problems),
                (None, _) => problems.push(format!("{at}: {key} is not in the schema")),
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (value, schema.get("items")) {
        for (index, item) in items.iter().enumerate() {
            validate(root, item_schema, item, &format!("{at}[{index}]"), problems);
        }
    }
}

fn formats(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(format) = map.get("format") {
                out.push(format!("{path}: {format}"));
            }
            for (key, inner) in map {
                formats(inner, &format!("{path}.{key}"), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| formats(item, path, out)),
        _ => {}
    }
}

const MAIN: &str = "fn main() {\n    let x = 1;\n    run(x);\n}\n\nfn other() {\n    let x = 1;\n}\n";

#[tokio::test]
async fn the_schemas_say_integer_with_a_minimum_and_no_format_clients_do_not_know() {
    let project = cli_support::Project::new();
    let mcp = start(project.dir.path(), project.runtime.path(), project.state.path()).await;
    for tool in &mcp.tools {
        let mut found = Vec::new();
        formats(&Value::Object((*tool.input_schema).clone()), &tool.name, &mut found);
        if let Some(output) = &tool.output_schema {
            formats(&Value::Object((**output).clone()), &tool.name, &mut found);
        }
        assert!(found.is_empty(), "formats a client may not know: {found:?}");
        // read_file returns the file as text only: as JSON it would reach the model escaped.
        assert_eq!(tool.output_schema.is_none(), tool.name == "read_file", "{}", tool.name);
    }
    let str_replace = mcp.tools.iter().find(|tool| tool.name == "str_replace").unwrap();
    let occurrence = &str_replace.input_schema["properties"]["occurrence"];
    assert_eq!(occurrence["minimum"], 1, "{occurrence}");
    assert!(occurrence["type"].to_string().contains("integer"), "{occurrence}");
    mcp.client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_headless_edit_and_every_error_kind_carry_message_and_fields() {
    let project = cli_support::Project::new();
    project.write("src/main.rs", MAIN);
    let mcp = start(project.dir.path(), project.runtime.path(), project.state.path()).await;
    let path = project.dir.path().join("src/main.rs").canonicalize().unwrap().display().to_string();

    let (_, ambiguous) = mcp
        .call(
            "str_replace",
            json!({"path": "src/main.rs", "old_str": "let x = 1;", "new_str": "let x = 2;", "summary": "s"}),
        )
        .await;
    assert_eq!(ambiguous["applied"], false);
    assert_eq!(ambiguous["error"]["kind"], "ambiguous");
    assert_eq!(ambiguous["error"]["matches"].as_array().unwrap().len(), 2, "{ambiguous:#}");
    assert_eq!(ambiguous["error"]["matches"][1]["line"], 7);
    assert!(ambiguous["message"].as_str().unwrap().contains("occurrence 2 (line 7, column 5)"), "{ambiguous:#}");

    let (result, edit) = mcp
        .call(
            "str_replace",
            json!({"path": "src/main.rs", "old_str": "let x = 1;", "new_str": "let x = 2;", "occurrence": 2, "summary": "Start at 2"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(edit["applied"], true);
    assert_eq!(edit["via"], "headless");
    let file = &edit["files"][0];
    assert_eq!(file["path"], path.as_str());
    let rev = file["rev"].as_str().unwrap().to_owned();
    let message = edit["message"].as_str().unwrap();
    assert!(message.starts_with("src/main.rs: applied on disk (rev d"), "{message}");
    assert!(message.contains(&format!("The file is now at rev {rev}: pass it as base_rev")), "{message}");
    assert!(!message.contains("+    let x = 2;"), "the diff is a field of its own:\n{message}");
    assert!(file["diff"].as_str().unwrap().contains("+    let x = 2;"), "{file}");

    // The rev it gave is the one to edit with next.
    let (_, next) = mcp
        .call(
            "str_replace",
            json!({"path": "src/main.rs", "old_str": "run(x);", "new_str": "go(x);", "base_rev": rev, "summary": "Go"}),
        )
        .await;
    assert_eq!(next["applied"], true, "{next:#}");
    let (_, stale) = mcp
        .call(
            "str_replace",
            json!({"path": "src/main.rs", "old_str": "go(x);", "new_str": "stop(x);", "base_rev": rev, "summary": "Stop"}),
        )
        .await;
    assert_eq!(stale["error"]["kind"], "stale", "{stale:#}");
    assert!(stale["error"]["current_rev"].as_str().unwrap().starts_with('d'), "{stale:#}");

    let (_, missing) = mcp
        .call(
            "str_replace",
            json!({"path": "src/main.rs", "old_str": "fn otter() {", "new_str": "fn x() {", "summary": "s"}),
        )
        .await;
    assert_eq!(missing["error"]["kind"], "notFound");
    assert!(missing["error"]["closest"]["text"].as_str().unwrap().contains("fn other() {"), "{missing:#}");
    assert!(missing["message"].as_str().unwrap().contains("The closest text (line 6 on):"), "{missing:#}");
    // Two regions as close: both, the second under `also_close`.
    let (_, two) = mcp
        .call(
            "str_replace",
            json!({"path": "src/main.rs", "old_str": "let x = 0;", "new_str": "let x = 5;", "summary": "s"}),
        )
        .await;
    assert_eq!(two["error"]["closest"]["start_line"], 2, "{two:#}");
    assert_eq!(two["error"]["also_close"][0]["start_line"], 7, "{two:#}");
    assert!(
        two["message"].as_str().unwrap().contains("Nearly as close (line 7 on):\n     7 |     let x = 2;"),
        "{two:#}"
    );

    let (_, invalid) = mcp.call("replace_range", json!({"path": "src/main.rs", "summary": "s"})).await;
    assert_eq!(invalid["error"]["kind"], "invalidParams", "{invalid:#}");

    let (_, created) =
        mcp.call("write_file", json!({"path": "notes.md", "text": "# Notes\n", "summary": "Notes"})).await;
    assert_eq!(created["applied"], true, "{created:#}");
    assert_eq!(created["files"][0]["base_rev"], Value::Null, "a new file has no base rev: {created:#}");
    let (_, dry) = mcp
        .call(
            "str_replace",
            json!({"path": "notes.md", "old_str": "# Notes", "new_str": "# N", "summary": "N", "dry_run": true}),
        )
        .await;
    assert_eq!((dry["applied"].clone(), dry["dry_run"].clone()), (json!(false), json!(true)), "{dry:#}");
    assert!(dry["message"].as_str().unwrap().starts_with("Dry run: nothing was written."), "{dry:#}");

    let patch =
        "*** Begin Patch\n*** Add File: b.txt\n+b\n*** Update File: notes.md\n@@\n-# Notes\n+# Notes!\n*** End Patch\n";
    let (_, patched) = mcp.call("apply_patch", json!({"patch": patch, "summary": "Two files"})).await;
    assert_eq!(patched["files"].as_array().unwrap().len(), 2, "{patched:#}");
    let message = patched["message"].as_str().unwrap();
    assert!(message.contains("b.txt is now at rev d") && message.contains("notes.md is now at rev d"), "{message}");

    let (_, documents) = mcp.call("list_documents", json!({})).await;
    assert_eq!(documents["documents"], json!([]));
    assert!(documents["message"].as_str().unwrap().starts_with("No documents are open"));
    mcp.client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_partial_review_and_a_rebase_reach_the_model_in_the_structured_form() {
    let editor = ScriptedEditor::start_with(common::EditorOptions {
        initialization_options: json!({"needsConfirmation": true}),
        ..common::EditorOptions::default()
    })
    .await;
    let before = "import os\n\nx = 1\n\ny = 2\n";
    let uri = editor.open("app.py", before, before).await;
    let mcp = start(editor.workspace.path(), editor.runtime_dir.path(), editor.state_dir.path()).await;

    editor.set_review(Review::AcceptHunks { keep: vec![1], reason: Some("x stays".into()), report: true });
    let (_, partial) = mcp
        .call(
            "str_replace",
            json!({"path": "app.py", "old_str": "x = 1\n\ny = 2", "new_str": "x = 3\n\ny = 4", "summary": "Both"}),
        )
        .await;
    assert_eq!(partial["applied"], true);
    assert_eq!(partial["via"], "editor");
    assert_eq!(partial["partial"], true);
    assert_eq!(partial["reason"], "x stays");
    let hunks = &partial["files"][0]["hunks"];
    assert_eq!(
        hunks,
        &json!([{"index": 0, "accepted": false, "line": 3, "old_lines": 1, "new_lines": 1},
                {"index": 1, "accepted": true, "line": 5, "old_lines": 1, "new_lines": 1}]),
        "{partial:#}"
    );
    let message = partial["message"].as_str().unwrap();
    for said in [
        "1 of 2 hunks applied in the editor",
        "the person left out line 3",
        "Their reason: x stays",
        "Read the file again",
    ] {
        assert!(message.contains(said), "{said:?} not in {message}");
    }
    assert_eq!(editor.buffer(&uri), "import os\n\nx = 1\n\ny = 4\n");

    // The person types elsewhere after the agent's read: the edit is moved over it.
    editor.set_review(Review::Accept);
    let (read, _) = (
        mcp.client
            .call_tool(
                CallToolRequestParams::new("read_file")
                    .with_arguments(Map::from_iter([("path".into(), json!("app.py"))])),
            )
            .await
            .unwrap(),
        (),
    );
    let header = text(&read);
    assert!(read.structured_content.is_none(), "read_file answers in text only");
    let rev = header.split(" · ").nth(1).unwrap().strip_prefix("rev ").unwrap().to_owned();
    editor.type_text(&uri, "import os", "import sys").await;
    let (_, rebased) = mcp
        .call(
            "str_replace",
            json!({"path": "app.py", "old_str": "y = 4", "new_str": "y = 5", "base_rev": rev, "summary": "y"}),
        )
        .await;
    assert_eq!(rebased["files"][0]["rebased"], true, "{rebased:#}");
    assert_eq!(rebased["files"][0]["rebased_from"], rev.as_str());
    assert!(rebased["message"].as_str().unwrap().contains("moved over the changes made since"), "{rebased:#}");
    let documents = mcp.call("list_documents", json!({})).await.1;
    assert_eq!(documents["documents"][0]["rev"], rebased["files"][0]["rev"], "{documents:#}");

    // A refusal is an error with its kind, and the person's words in the message.
    editor.set_review(Review::Reject(Some("not now".into())));
    let (result, rejected) = mcp
        .call("str_replace", json!({"path": "app.py", "old_str": "y = 5", "new_str": "y = 6", "summary": "y"}))
        .await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(rejected["error"]["kind"], "rejected");
    assert!(rejected["message"].as_str().unwrap().contains("not now"), "{rejected:#}");
    mcp.client.cancel().await.unwrap();
}

#[tokio::test]
async fn with_no_headless_writes_a_write_without_an_editor_is_refused_and_says_what_to_use() {
    let project = cli_support::Project::new();
    project.write("a.txt", "one\n");
    let mcp =
        start_with(project.dir.path(), project.runtime.path(), project.state.path(), &["--no-headless-writes"]).await;
    let read = mcp
        .client
        .call_tool(
            CallToolRequestParams::new("read_file").with_arguments(Map::from_iter([("path".into(), json!("a.txt"))])),
        )
        .await
        .unwrap();
    assert_ne!(read.is_error, Some(true), "reads still work: {read:?}");
    assert!(text(&read).contains("so Verbatim will not edit it: use your own edit tool"), "{read:?}");
    let instructions = mcp.client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(instructions.contains("it does not write it: edit such files with your own edit tool"), "{instructions}");
    let (_, dry) = mcp
        .call(
            "str_replace",
            json!({"path": "a.txt", "old_str": "one", "new_str": "two", "summary": "s", "dry_run": true}),
        )
        .await;
    assert_eq!(dry["dry_run"], true, "a dry run writes nothing, so it is allowed: {dry:#}");
    let (result, refused) =
        mcp.call("str_replace", json!({"path": "a.txt", "old_str": "one", "new_str": "two", "summary": "s"})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(refused["error"]["kind"], "permissionDenied");
    assert_eq!(refused["error"]["reason"], "headlessWritesOff");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("no review") && message.contains("your own file-editing tool"), "{message}");
    let (_, patch) = mcp
        .call(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n", "summary": "b"}),
        )
        .await;
    assert_eq!(patch["error"]["kind"], "permissionDenied", "{patch:#}");
    assert_eq!(project.text("a.txt"), "one\n");
    assert!(!project.dir.path().join("b.txt").exists());
    mcp.client.cancel().await.unwrap();
}
