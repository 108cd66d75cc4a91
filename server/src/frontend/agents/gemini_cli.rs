//! Gemini CLI: its MCP server and its hooks in `.gemini/settings.json` (project) or
//! `$GEMINI_CLI_HOME/.gemini/settings.json` (user, else `~/.gemini/settings.json`),
//! the server entry with `"trust": true` (else `gemini -p` offers none of its tools);
//! with `--trust`, the project folder in `trustedFolders.json` (a project's servers stay
//! off in a folder not trusted).
//!
//! Its hooks: `BeforeTool` on `replace|write_file` (milliseconds), input `tool_name`,
//! `tool_input` (`file_path`, `old_string`, `new_string`; `content`); answers
//! `{decision: "deny", reason}` (the model reads `Tool execution blocked: <reason>`) or
//! `{decision: "allow", hookSpecificOutput: {tool_input}}` (the whole input). Nothing
//! of a `BeforeTool` allow reaches the model, so the note of a partly kept write is
//! left for the `AfterTool` hook on the same tools, whose `additionalContext` does.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::frontend::agents::cli::{AgentCli, CLAUDE_FIELDS, ChangedInput, EditTool, HookCall, SetupOptions, Verdict};
use crate::frontend::setup::kit::{
    headless_note, hook_note, hook_requirements, json_at, json_server_requirement, json_servers_change, read,
    trusted_server_entry,
};
use crate::frontend::setup::types::{
    FileChange, HookShape, HookSpec, Plan, Requirement, Scope, SetupError, TOOL_TIMEOUT_SECS,
};

use crate::frontend::setup::json_merge::merge_json;

/// Its `AfterTool` run only reads a note the `BeforeTool` run left: quick.
const AFTER_TOOL_TIMEOUT_MS: u64 = 10_000;

#[derive(Debug)]
pub struct GeminiCli;

/// The settings (server and hooks) and the trusted folders.
fn files(options: &SetupOptions) -> (PathBuf, PathBuf) {
    let dirs = &options.dirs;
    let gemini_dir = dirs.gemini_cli_home.as_ref().unwrap_or(&options.home).join(".gemini");
    let trusted = dirs.gemini_trusted_folders.clone().unwrap_or_else(|| gemini_dir.join("trustedFolders.json"));
    let settings = match options.scope {
        Scope::Project => options.project.join(".gemini/settings.json"),
        Scope::User => gemini_dir.join("settings.json"),
    };
    (settings, trusted)
}

impl AgentCli for GeminiCli {
    fn name(&self) -> &'static str {
        "gemini-cli"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["gemini"]
    }
    fn display_name(&self) -> &'static str {
        "Gemini CLI"
    }

    fn call(&self, input: &Value) -> Option<HookCall> {
        HookCall::claude_shaped(input, &["AfterTool"])
    }
    fn tool(&self, name: &str) -> Option<EditTool> {
        match name {
            "replace" => Some(EditTool::Replace(CLAUDE_FIELDS)),
            "write_file" => Some(EditTool::Write(CLAUDE_FIELDS)),
            _ => None,
        }
    }
    fn changed_input(&self) -> ChangedInput {
        ChangedInput::ToldAfter
    }
    fn render(&self, _call: &HookCall, verdict: &Verdict) -> Option<Value> {
        Some(match verdict {
            Verdict::Pass { .. } => return None,
            Verdict::Allow => json!({"decision": "allow"}),
            Verdict::AllowWith { input, .. } => {
                json!({"decision": "allow", "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": input}})
            }
            Verdict::Deny { reason } => json!({"decision": "deny", "reason": reason}),
            Verdict::Note { context } => {
                json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": context}})
            }
        })
    }

    fn trusts_folders(&self) -> bool {
        true
    }
    fn plan(&self, options: &SetupOptions) -> Result<Plan, SetupError> {
        let (settings, trusted) = files(options);
        let mut plan = Plan::default();
        plan.changes.push(json_servers_change(options, &settings, trusted_server_entry(options), options.hook)?);
        if options.hook {
            plan.notes.push(hook_note(options, &settings, ""));
        }
        plan.notes.push(format!(
            "timeout = {}: Gemini CLI waits that long (ms) for a tool, so a person can review an edit. \"trust\": \
             true: Gemini CLI calls Verbatim's tools without a confirmation (and `gemini -p` offers them at all).",
            TOOL_TIMEOUT_SECS * 1000
        ));
        plan.notes.push(headless_note(options, "Gemini CLI's own edit tool"));
        if options.trust_folder {
            let before = read(&trusted)?;
            let folder = options.project.display().to_string();
            let after = merge_json(&trusted, before.as_deref(), |root| {
                if root.get(&folder).and_then(Value::as_str) != Some("TRUST_FOLDER") {
                    root.insert(folder.clone(), json!("TRUST_FOLDER"));
                }
                Ok(())
            })?;
            plan.changes.push(FileChange { path: trusted, before, after });
        } else if !folder_trusted(&trusted, &options.project) {
            plan.notes.push(format!(
                "Gemini CLI turns off every MCP server in a folder it does not trust, and {} is not trusted: trust it \
                 when Gemini CLI asks (or with /permissions), or run `verbatim setup gemini-cli --trust --write`, \
                 which adds it to {}.",
                options.project.display(),
                trusted.display()
            ));
        }
        Ok(plan)
    }

    fn requirements(&self, options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
        let (settings, trusted) = files(options);
        let mut out = vec![
            json_server_requirement(&settings),
            Requirement::new(
                settings.clone(),
                "\"trust\": true on it (else `gemini -p` offers none of its tools)",
                json_at(&settings)["mcpServers"]["verbatim"]["trust"] == true,
            ),
        ];
        if options.scope == Scope::Project {
            out.push(Requirement::new(
                trusted.clone(),
                format!("{} trusted (else Gemini CLI keeps the project's MCP servers off)", options.project.display()),
                folder_trusted(&trusted, &options.project),
            ));
        }
        if options.hook {
            out.extend(hook_requirements(options, &settings));
        }
        Ok(out)
    }
    fn hook_file(&self, options: &SetupOptions) -> Result<PathBuf, SetupError> {
        Ok(files(options).0)
    }
    fn hooks(&self) -> Vec<HookSpec> {
        let millis = |event, timeout| HookSpec {
            event,
            matcher: "replace|write_file",
            timeout,
            millis: true,
            shape: HookShape::Grouped,
        };
        vec![millis("BeforeTool", TOOL_TIMEOUT_SECS * 1000), millis("AfterTool", AFTER_TOOL_TIMEOUT_MS)]
    }
    fn hook_variables(&self) -> &'static [&'static str] {
        &["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]
    }
    fn fix_flags(&self, options: &SetupOptions) -> String {
        if options.scope == Scope::Project { " --trust".into() } else { String::new() }
    }

    fn review_rows(&self) -> &'static [[&'static str; 3]] {
        &[[
            "Gemini CLI",
            "before the write: the hook (any mode, `--yolo` included), or the IDE companion's `openDiff`",
            "before",
        ]]
    }
}

/// Whether Gemini CLI's trusted folders trust `folder` (or a parent of it).
fn folder_trusted(trusted_folders: &Path, folder: &Path) -> bool {
    let Ok(Some(text)) = read(trusted_folders) else { return false };
    let Ok(Value::Object(rules)) = serde_json::from_str::<Value>(&text) else { return false };
    let folder = folder.canonicalize().unwrap_or_else(|_| folder.to_path_buf());
    // The longest rule that holds the folder decides, as in Gemini CLI.
    let mut best: Option<(usize, &str)> = None;
    for (rule, level) in &rules {
        let Some(level) = level.as_str() else { continue };
        let rule_path = Path::new(rule);
        let effective = if level == "TRUST_PARENT" { rule_path.parent().unwrap_or(rule_path) } else { rule_path };
        let effective = effective.canonicalize().unwrap_or_else(|_| effective.to_path_buf());
        if folder.starts_with(&effective) && best.is_none_or(|(length, _)| rule.len() > length) {
            best = Some((rule.len(), level));
        }
    }
    matches!(best, Some((_, "TRUST_FOLDER" | "TRUST_PARENT")))
}
