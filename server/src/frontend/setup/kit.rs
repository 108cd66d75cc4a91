//! The pieces of `verbatim setup` the agents' modules build their plans and checks
//! from: reading files, the MCP server's entry, merging it (and the hooks) into a JSON
//! settings file, the notes every plan carries, and the requirements of a JSON server
//! entry and of the hooks.

use std::path::Path;

use serde_json::{Value, json};

use super::hook;
use super::json_merge::{merge_json, object_at};
use super::types::{FileChange, Requirement, SetupError, TOOL_TIMEOUT_SECS};
use crate::frontend::agents::cli::SetupOptions;

pub(crate) fn read(path: &Path) -> Result<Option<String>, SetupError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(SetupError::Io(format!("cannot read {}: {error}", path.display()))),
    }
}

/// The arguments that start Verbatim's MCP server.
pub(crate) fn mcp_args(options: &SetupOptions) -> Vec<&'static str> {
    let mut args = vec!["mcp"];
    if !options.trust_headless {
        args.push("--no-headless-writes");
    }
    if options.diagnostics {
        args.push("--diagnostics");
    }
    args
}

/// The MCP server entry in Gemini CLI's and Qwen Code's format: `trust` (no
/// confirmation per call; `gemini -p` offers the tools at all) and a timeout in ms.
/// The editor's review is the gate; headless writes are refused unless trusted.
pub(crate) fn trusted_server_entry(options: &SetupOptions) -> Value {
    json!({"command": options.command, "args": mcp_args(options), "timeout": TOOL_TIMEOUT_SECS * 1000, "trust": true})
}

/// The MCP server entry in Claude Code's format.
pub(crate) fn server_entry(options: &SetupOptions) -> Value {
    json!({"command": options.command, "args": mcp_args(options)})
}

/// `mcpServers.verbatim` = `entry` merged into a JSON file, with the hook too when
/// `with_hook` (the file holds both).
pub(crate) fn json_servers_change(
    options: &SetupOptions,
    path: &Path,
    entry: Value,
    with_hook: bool,
) -> Result<FileChange, SetupError> {
    let before = read(path)?;
    let after = merge_json(path, before.as_deref(), |root| {
        let servers = object_at(root, "mcpServers");
        // An equal entry stays as written, whatever the order of its keys.
        if servers.get("verbatim") != Some(&entry) {
            servers.insert("verbatim".into(), entry.clone());
        }
        if with_hook { hook::merge(root, options) } else { Ok(()) }
    })?;
    Ok(FileChange { path: path.to_owned(), before, after })
}

/// Only the hooks merged into a JSON settings file.
pub(crate) fn json_hook_change(options: &SetupOptions, path: &Path) -> Result<FileChange, SetupError> {
    let before = read(path)?;
    let after = merge_json(path, before.as_deref(), |root| hook::merge(root, options))?;
    Ok(FileChange { path: path.to_owned(), before, after })
}

/// The note on writes where no editor serves the file, naming the agent's own tool.
pub(crate) fn headless_note(options: &SetupOptions, tool: &str) -> String {
    if options.trust_headless {
        "--trust-headless: where no editor with Verbatim serves a file, Verbatim writes it on disk at once, with no \
         review and no prompt."
            .to_owned()
    } else {
        format!(
            "Edits go to the editor's review with no prompt. Where no editor with Verbatim serves a file, Verbatim \
             does not write it on disk (the server runs with --no-headless-writes): the model is told to use {tool}, \
             whose permission prompt asks you. Add --trust-headless to let Verbatim write such files itself."
        )
    }
}

/// What the hook does, where it is, and how to leave it out (`trust`: what the agent
/// needs before it runs a hook, if anything).
pub(crate) fn hook_note(options: &SetupOptions, hooks_file: &Path, trust: &str) -> String {
    let (on, timeout) = match hook::pre_write(options.agent) {
        Some(spec) if spec.matcher.is_empty() => (
            format!("{} (every tool; the hook picks the edit tools)", spec.event),
            format!("{} {}", spec.timeout, spec.unit()),
        ),
        Some(spec) => (format!("{} on {}", spec.event, spec.matcher), format!("{} {}", spec.timeout, spec.unit())),
        None => ("each tool call".to_owned(), "none".to_owned()),
    };
    format!(
        "Pre-write hook in {}: `{}` runs before the agent's own edit tools ({on}, timeout {timeout}), so that their \
         edits are reviewed in the editor before they are written; where no editor serves the file it answers \
         nothing and the agent goes on as without it.{trust} --no-hook leaves it out (and does not remove one \
         already there).",
        hooks_file.display(),
        hook::command(options),
    )
}

pub(crate) fn json_at(path: &Path) -> Value {
    read(path).ok().flatten().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or(Value::Null)
}

pub(crate) fn lists(value: &Value, item: &str) -> bool {
    value.as_array().is_some_and(|items| items.iter().any(|entry| entry == item))
}

/// `mcpServers.verbatim` starts `verbatim mcp` in a JSON file.
pub(crate) fn json_server_requirement(path: &Path) -> Requirement {
    let servers = json_at(path);
    let args = servers["mcpServers"]["verbatim"].get("args").and_then(Value::as_array);
    Requirement::new(
        path.to_owned(),
        "the verbatim MCP server (mcpServers.verbatim)",
        args.and_then(|args| args.first()).and_then(Value::as_str) == Some("mcp"),
    )
}

/// The agent's hooks are in `hooks_file` (that they run is checked apart: it takes a
/// process).
pub(crate) fn hook_requirements(options: &SetupOptions, hooks_file: &Path) -> Vec<Requirement> {
    let root = match json_at(hooks_file) {
        Value::Object(root) => root,
        _ => serde_json::Map::new(),
    };
    options
        .agent
        .hooks()
        .into_iter()
        .enumerate()
        .map(|(index, spec)| {
            let what = if index == 0 {
                "the pre-write hook"
            } else {
                "the hook after the write (tells the model what was left out)"
            };
            let matcher =
                if spec.matcher.is_empty() { String::new() } else { format!(", matcher \"{}\"", spec.matcher) };
            Requirement::new(
                hooks_file.to_owned(),
                format!("{what} (hooks.{}{matcher}: `{}`)", spec.event, hook::command(options)),
                hook::find_in(&root, options.agent, spec).is_some(),
            )
        })
        .collect()
}
