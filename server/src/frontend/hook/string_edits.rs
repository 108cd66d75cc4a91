//! The string-replacement and whole-file tools, for their agents' pre-write hooks
//! (Claude Code's Edit, MultiEdit and Write, Gemini CLI's `replace` and `write_file`,
//! Qwen Code's `edit` and `write_file`, Copilot's `edit` and `create`, opencode's `edit`
//! and `write`, Droid's `Edit` and `Create`; each agent's module names the tool's
//! arguments, [`Fields`]). Each input becomes the file's whole new text; and the other
//! way round, the input of the same tool that writes exactly what the person kept (a
//! replacement whose old text is unique, or the whole content).
//!
//! A replacement whose old text is not in the file, or is there more often than the
//! tool allows, is the agent's own error: no decision, and the tool reports it.

use std::path::Path;

use serde_json::{Map, Value, json};
use verbatim_engine::agent_tools::{replace, replace_expected, unique_edit};

use super::{Proposed, ProposedWrite, absolute, disk_text};
use crate::frontend::agents::{EditTool, Fields};

/// The path the arguments name, by the first of the tool's path fields present.
fn path_of<'a>(fields: &Fields, args: &'a Map<String, Value>) -> Option<&'a str> {
    fields.path.iter().find_map(|name| args.get(*name).and_then(Value::as_str))
}

/// The file `tool` would write and its new text (`asks`: the agent's mode would ask).
pub fn proposed(tool: &str, kind: EditTool, args: &Value, cwd: &Path, asks: bool) -> Result<Proposed, String> {
    let args = args.as_object().ok_or(format!("{tool}'s input is not an object"))?;
    let (EditTool::Replace(fields)
    | EditTool::MultiReplace(fields)
    | EditTool::Write(fields)
    | EditTool::Create(fields)) = kind
    else {
        return Err(format!("{tool} is not a string-replacement or whole-file tool"));
    };
    let text = |name: &str| args.get(name).and_then(Value::as_str);
    let spelled = path_of(&fields, args).ok_or(format!("{tool}'s input has no {}", fields.path[0]))?;
    let path = absolute(cwd, spelled);
    let disk = disk_text(&path)?;
    let current = disk.clone().unwrap_or_default();
    if let (EditTool::Create(_), Some(_)) = (kind, &disk) {
        return Err(format!("{tool}: {spelled} exists already, and {tool} makes only new files"));
    }
    let new_text = match kind {
        EditTool::Write(_) | EditTool::Create(_) => {
            text(fields.content).ok_or(format!("{tool}'s input has no {}", fields.content))?.to_owned()
        }
        EditTool::Replace(_) => {
            replace_one(&fields, args, &current, disk.is_none()).map_err(|why| format!("{tool}: {why}"))?
        }
        _ => {
            let edits = args.get("edits").and_then(Value::as_array).ok_or(format!("{tool}'s input has no edits"))?;
            let mut text = current.clone();
            let mut missing = disk.is_none();
            for (index, edit) in edits.iter().enumerate() {
                let edit = edit.as_object().ok_or(format!("{tool}'s edits[{index}] is not an object"))?;
                text = replace_one(&fields, edit, &text, missing)
                    .map_err(|why| format!("{tool}'s edits[{index}]: {why}"))?;
                missing = false;
            }
            text
        }
    };
    let name = path.file_name().map_or_else(|| spelled.to_owned(), |name| name.to_string_lossy().into_owned());
    Ok(Proposed {
        files: vec![ProposedWrite { path, spelled: spelled.to_owned(), disk, text: Some(new_text) }],
        summary: format!("{tool} {name}"),
        asks,
        exact: true,
    })
}

/// One replacement; an empty old text on a missing file creates it (as Claude Code's Edit does).
fn replace_one(fields: &Fields, edit: &Map<String, Value>, text: &str, missing: bool) -> Result<String, String> {
    let field = |name: &str| edit.get(name).and_then(Value::as_str);
    let old = field(fields.old).ok_or(format!("no {}", fields.old))?;
    let new = field(fields.new).ok_or(format!("no {}", fields.new))?;
    if old.is_empty() && missing {
        return Ok(new.to_owned());
    }
    let all = fields.all.and_then(|name| edit.get(name)).and_then(Value::as_bool).unwrap_or(false);
    let outcome = match edit.get("expected_replacements").and_then(Value::as_u64) {
        Some(expected) => replace_expected(text, old, new, usize::try_from(expected).unwrap_or(usize::MAX)),
        None => replace(text, old, new, all),
    };
    outcome.map_err(|error| error.to_string())
}

/// The same tool's input, writing `kept` over the file as it is on disk now.
pub fn rewrite(
    kind: EditTool,
    args: &Value,
    proposed: &Proposed,
    kept: &[Option<&str>],
) -> Result<Option<Value>, String> {
    let (EditTool::Replace(fields)
    | EditTool::MultiReplace(fields)
    | EditTool::Write(fields)
    | EditTool::Create(fields)) = kind
    else {
        return Err("not a string-replacement or whole-file tool".into());
    };
    let (Some(file), Some(Some(kept))) = (proposed.files.first(), kept.first()) else {
        return Err("the review left no text for the file".into());
    };
    let mut tool_input = args.as_object().cloned().unwrap_or_default();
    let now = disk_text(&file.path)?.unwrap_or_default();
    if now == *kept {
        return Ok(None);
    }
    if let EditTool::Write(_) | EditTool::Create(_) = kind {
        tool_input.insert(fields.content.into(), json!(kept));
        return Ok(Some(Value::Object(tool_input)));
    }
    let (old, new) = match unique_edit(&now, kept) {
        Some(edit) => (edit.old, edit.new),
        // An empty file: an empty old text writes it whole.
        None => (String::new(), (*kept).to_owned()),
    };
    if let EditTool::MultiReplace(_) = kind {
        let mut edit = Map::new();
        edit.insert(fields.old.into(), json!(old));
        edit.insert(fields.new.into(), json!(new));
        if let Some(all) = fields.all {
            edit.insert(all.into(), json!(false));
        }
        tool_input.insert("edits".into(), json!([edit]));
    } else {
        tool_input.insert(fields.old.into(), json!(old));
        tool_input.insert(fields.new.into(), json!(new));
        if let Some(all) = fields.all.filter(|all| tool_input.contains_key(*all)) {
            tool_input.insert(all.into(), json!(false));
        }
        if tool_input.contains_key("expected_replacements") {
            tool_input.insert("expected_replacements".into(), json!(1));
        }
    }
    Ok(Some(Value::Object(tool_input)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::agents::{Agent, HookCall};

    /// What the agent's hook would review for this input, as `verbatim hook` reads it.
    fn through(agent: Agent, input: &Value, cwd: &Path) -> Result<Option<Proposed>, String> {
        let call = agent.cli().call(input).expect("a call");
        super::super::proposal_of(agent, &call, cwd).map(|(_, proposed)| proposed).transpose()
    }

    fn rewrite_for(
        agent: Agent,
        input: &Value,
        proposed: &Proposed,
        kept: &[Option<&str>],
    ) -> Result<Option<Value>, String> {
        let call: HookCall = agent.cli().call(input).expect("a call");
        let tool = agent.cli().tool(&call.tool).expect("an edit tool");
        rewrite(tool, &call.args, proposed, kept)
    }

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
        let proposed = through(Agent::ClaudeCode, &edit, dir.path()).expect("ok").expect("an edit");
        assert_eq!(proposed.files[0].text.as_deref(), Some("one\nTWO\nthree\n"));
        assert!(proposed.asks, "default mode asks");
        let multi = call(
            "MultiEdit",
            json!({"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "1"}, {"old_string": "1\ntwo", "new_string": "1\n2"}]}),
            dir.path(),
            "acceptEdits",
        );
        let proposed = through(Agent::ClaudeCode, &multi, dir.path()).expect("ok").expect("an edit");
        assert_eq!(proposed.files[0].text.as_deref(), Some("1\n2\nthree\n"));
        assert!(!proposed.asks, "acceptEdits does not ask");
        let write = call("write_file", json!({"file_path": "b.txt", "content": "new\n"}), dir.path(), "");
        let proposed = through(Agent::GeminiCli, &write, dir.path()).expect("ok").expect("a write");
        assert_eq!(proposed.files[0].disk, None);
        assert_eq!(proposed.files[0].text.as_deref(), Some("new\n"));
    }

    #[test]
    fn an_old_string_that_is_not_unique_is_the_agents_own_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "x\nx\n").expect("write");
        let edit =
            call("Edit", json!({"file_path": "a.txt", "old_string": "x", "new_string": "y"}), dir.path(), "default");
        let error = through(Agent::ClaudeCode, &edit, dir.path()).expect_err("not unique");
        assert!(error.contains("occurs 2 times"), "{error}");
        let all = call(
            "Edit",
            json!({"file_path": "a.txt", "old_string": "x", "new_string": "y", "replace_all": true}),
            dir.path(),
            "default",
        );
        let proposed = through(Agent::ClaudeCode, &all, dir.path()).expect("ok").expect("an edit");
        assert_eq!(proposed.files[0].text.as_deref(), Some("y\ny\n"));
        // Another tool: not this hook's business.
        let read = call("Read", json!({"file_path": "a.txt"}), dir.path(), "default");
        assert_eq!(through(Agent::ClaudeCode, &read, dir.path()), Ok(None));
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
        let proposed = through(Agent::ClaudeCode, &edit, dir.path()).expect("ok").expect("an edit");
        let kept = "alpha\nx\nBETA\nx\n";
        let input = rewrite_for(Agent::ClaudeCode, &edit, &proposed, &[Some(kept)]).expect("ok").expect("an input");
        let (old, new) = (input["old_string"].as_str().expect("old"), input["new_string"].as_str().expect("new"));
        assert_eq!(replace(disk, old, new, false).as_deref(), Ok(kept));
        assert_eq!(input["file_path"], json!(a));
    }
}
