//! The string-replacement and whole-file tools, for their agents' pre-write hooks:
//! Claude Code's Edit, MultiEdit and Write, Gemini CLI's `replace` and `write_file`,
//! Qwen Code's `edit` and `write_file`. Each input becomes the file's whole new text;
//! and the other way round, the input of the same tool that writes exactly what the
//! person kept (a replacement whose old text is unique, or the whole content).
//!
//! A replacement whose old text is not in the file, or is there more often than the
//! tool allows, is the agent's own error: no decision, and the tool reports it.

use std::path::Path;

use serde_json::{Map, Value, json};
use verbatim_engine::agent_tools::{replace, replace_expected, unique_edit};

use super::{HookAgent, Proposed, ProposedWrite, absolute, disk_text};

/// What kind of tool a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// One replacement (`old_string`, `new_string`).
    Replace,
    /// Several, in order (Claude Code's MultiEdit: `edits`).
    MultiReplace,
    /// The whole file (`content`).
    Write,
}

fn kind(agent: HookAgent, tool: &str) -> Option<Kind> {
    match (agent, tool) {
        (HookAgent::ClaudeCode, "Edit") | (HookAgent::GeminiCli, "replace") | (HookAgent::QwenCode, "edit") => {
            Some(Kind::Replace)
        }
        (HookAgent::ClaudeCode, "MultiEdit") => Some(Kind::MultiReplace),
        (HookAgent::ClaudeCode, "Write") | (HookAgent::GeminiCli | HookAgent::QwenCode, "write_file") => {
            Some(Kind::Write)
        }
        _ => None,
    }
}

/// Whether the agent's mode asks the person before this write.
fn asks(agent: HookAgent, input: &Value) -> bool {
    let mode = input.get("permission_mode").and_then(Value::as_str);
    match agent {
        // Claude Code's and Qwen Code's modes that ask before an edit.
        HookAgent::ClaudeCode | HookAgent::QwenCode => matches!(mode, Some("default" | "plan")),
        // Gemini CLI's hook input does not say its approval mode.
        _ => false,
    }
}

/// The file the tool would write and its new text; `Ok(None)` for another tool.
pub fn proposed(agent: HookAgent, input: &Value, cwd: &Path) -> Result<Option<Proposed>, String> {
    let tool = input.get("tool_name").and_then(Value::as_str).unwrap_or("");
    let Some(kind) = kind(agent, tool) else { return Ok(None) };
    let tool_input = input.get("tool_input").and_then(Value::as_object).ok_or("the hook's input has no tool_input")?;
    let text = |name: &str| tool_input.get(name).and_then(Value::as_str);
    let spelled = text("file_path").or(text("absolute_path")).ok_or(format!("{tool}'s input has no file_path"))?;
    let path = absolute(cwd, spelled);
    let disk = disk_text(&path)?;
    let current = disk.clone().unwrap_or_default();
    let new_text = match kind {
        Kind::Write => text("content").ok_or(format!("{tool}'s input has no content"))?.to_owned(),
        Kind::Replace => replace_one(tool_input, &current, disk.is_none()).map_err(|why| format!("{tool}: {why}"))?,
        Kind::MultiReplace => {
            let edits = tool_input.get("edits").and_then(Value::as_array).ok_or("MultiEdit's input has no edits")?;
            let mut text = current.clone();
            let mut missing = disk.is_none();
            for (index, edit) in edits.iter().enumerate() {
                let edit = edit.as_object().ok_or(format!("MultiEdit's edits[{index}] is not an object"))?;
                text = replace_one(edit, &text, missing).map_err(|why| format!("MultiEdit's edits[{index}]: {why}"))?;
                missing = false;
            }
            text
        }
    };
    let name = path.file_name().map_or_else(|| spelled.to_owned(), |name| name.to_string_lossy().into_owned());
    Ok(Some(Proposed {
        files: vec![ProposedWrite { path, spelled: spelled.to_owned(), disk, text: Some(new_text) }],
        summary: format!("{tool} {name}"),
        asks: asks(agent, input),
        exact: true,
    }))
}

/// One replacement; an empty old text on a missing file creates it (as Claude Code's Edit does).
fn replace_one(edit: &Map<String, Value>, text: &str, missing: bool) -> Result<String, String> {
    let field = |name: &str| edit.get(name).and_then(Value::as_str);
    let old = field("old_string").ok_or("no old_string")?;
    let new = field("new_string").ok_or("no new_string")?;
    if old.is_empty() && missing {
        return Ok(new.to_owned());
    }
    let outcome = match edit.get("expected_replacements").and_then(Value::as_u64) {
        Some(expected) => replace_expected(text, old, new, usize::try_from(expected).unwrap_or(usize::MAX)),
        None => replace(text, old, new, edit.get("replace_all").and_then(Value::as_bool).unwrap_or(false)),
    };
    outcome.map_err(|error| error.to_string())
}

/// The same tool's input, writing `kept` over the file as it is on disk now.
pub fn rewrite(
    agent: HookAgent,
    input: &Value,
    proposed: &Proposed,
    kept: &[Option<&str>],
) -> Result<Option<Value>, String> {
    let tool = input.get("tool_name").and_then(Value::as_str).unwrap_or("");
    let kind = kind(agent, tool).ok_or("not an edit tool")?;
    let (Some(file), Some(Some(kept))) = (proposed.files.first(), kept.first()) else {
        return Err("the review left no text for the file".into());
    };
    let mut tool_input = input.get("tool_input").and_then(Value::as_object).cloned().unwrap_or_default();
    let now = disk_text(&file.path)?.unwrap_or_default();
    if now == *kept {
        return Ok(None);
    }
    match kind {
        Kind::Write => {
            tool_input.insert("content".into(), json!(kept));
        }
        Kind::Replace | Kind::MultiReplace => {
            let (old, new) = match unique_edit(&now, kept) {
                Some(edit) => (edit.old, edit.new),
                // An empty file: an empty old text writes it whole.
                None => (String::new(), (*kept).to_owned()),
            };
            if kind == Kind::MultiReplace {
                tool_input
                    .insert("edits".into(), json!([{"old_string": old, "new_string": new, "replace_all": false}]));
            } else {
                tool_input.insert("old_string".into(), json!(old));
                tool_input.insert("new_string".into(), json!(new));
                if tool_input.contains_key("replace_all") {
                    tool_input.insert("replace_all".into(), json!(false));
                }
                if tool_input.contains_key("expected_replacements") {
                    tool_input.insert("expected_replacements".into(), json!(1));
                }
            }
        }
    }
    Ok(Some(Value::Object(tool_input)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, tool_input: Value, cwd: &Path, mode: &str) -> Value {
        json!({"tool_name": tool, "tool_input": tool_input, "cwd": cwd, "permission_mode": mode,
               "session_id": "s", "hook_event_name": "PreToolUse"})
    }

    #[test]
    fn edit_multiedit_and_write_give_the_whole_new_text() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.txt");
        std::fs::write(&a, "one\ntwo\nthree\n").expect("write");
        let edit =
            call("Edit", json!({"file_path": a, "old_string": "two", "new_string": "TWO"}), dir.path(), "default");
        let proposed = super::proposed(HookAgent::ClaudeCode, &edit, dir.path()).expect("ok").expect("an edit");
        assert_eq!(proposed.files[0].text.as_deref(), Some("one\nTWO\nthree\n"));
        assert!(proposed.asks, "default mode asks");
        let multi = call(
            "MultiEdit",
            json!({"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "1"}, {"old_string": "1\ntwo", "new_string": "1\n2"}]}),
            dir.path(),
            "acceptEdits",
        );
        let proposed = super::proposed(HookAgent::ClaudeCode, &multi, dir.path()).expect("ok").expect("an edit");
        assert_eq!(proposed.files[0].text.as_deref(), Some("1\n2\nthree\n"));
        assert!(!proposed.asks, "acceptEdits does not ask");
        let write = call("write_file", json!({"file_path": "b.txt", "content": "new\n"}), dir.path(), "");
        let proposed = super::proposed(HookAgent::GeminiCli, &write, dir.path()).expect("ok").expect("a write");
        assert_eq!(proposed.files[0].disk, None);
        assert_eq!(proposed.files[0].text.as_deref(), Some("new\n"));
    }

    #[test]
    fn an_old_string_that_is_not_unique_is_the_agents_own_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "x\nx\n").expect("write");
        let edit =
            call("Edit", json!({"file_path": "a.txt", "old_string": "x", "new_string": "y"}), dir.path(), "default");
        let error = proposed(HookAgent::ClaudeCode, &edit, dir.path()).expect_err("not unique");
        assert!(error.contains("occurs 2 times"), "{error}");
        let all = call(
            "Edit",
            json!({"file_path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": true}),
            dir.path(),
            "default",
        );
        let proposed = super::proposed(HookAgent::ClaudeCode, &all, dir.path()).expect("ok").expect("an edit");
        assert_eq!(proposed.files[0].text.as_deref(), Some("y\ny\n"));
        // Another tool: not this hook's business.
        let read = call("Read", json!({"file_path": "a.txt"}), dir.path(), "default");
        assert_eq!(super::proposed(HookAgent::ClaudeCode, &read, dir.path()), Ok(None));
    }

    #[test]
    fn the_rewritten_edit_writes_exactly_what_was_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.txt");
        let disk = "alpha\nx\nbeta\nx\n";
        std::fs::write(&a, disk).expect("write");
        let edit = call(
            "Edit",
            json!({"file_path": a, "old_string": "alpha\nx\nbeta\nx", "new_string": "ALPHA\nx\nBETA\nx", "replace_all": false}),
            dir.path(),
            "acceptEdits",
        );
        let proposed = super::proposed(HookAgent::ClaudeCode, &edit, dir.path()).expect("ok").expect("an edit");
        let kept = "alpha\nx\nBETA\nx\n";
        let input = rewrite(HookAgent::ClaudeCode, &edit, &proposed, &[Some(kept)]).expect("ok").expect("an input");
        let (old, new) = (input["old_string"].as_str().expect("old"), input["new_string"].as_str().expect("new"));
        assert_eq!(replace(disk, old, new, false).as_deref(), Ok(kept));
        assert_eq!(input["file_path"], json!(a));
    }
}
