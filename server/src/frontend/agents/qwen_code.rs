//! Qwen Code (a fork of Gemini CLI): its MCP server and its hook in
//! `.qwen/settings.json` (project) or `$QWEN_HOME/settings.json` (user, else
//! `~/.qwen/settings.json`), the server entry as Gemini CLI's.
//!
//! Its hook is Claude Code's shape: `PreToolUse` on `edit|write_file` (its tools'
//! names; a matcher also matches their aliases), seconds (a value of 1000 or more is
//! still read as milliseconds, its old unit); input `tool_name`, `tool_input`
//! (`file_path`, `old_string`, `new_string`, `replace_all`; `content`),
//! `permission_mode`. A deny's reason reaches the model as the tool's result. It
//! ignores `updatedInput` in `PreToolUse` (0.24.4), so a partly kept write is made by
//! Verbatim itself and Qwen Code's own write refused, with words that say exactly what
//! was written and why the rest was not ([`ChangedInput::Refused`]).

use std::path::PathBuf;

use serde_json::Value;

use crate::frontend::agents::cli::{
    AgentCli, CLAUDE_FIELDS, ChangedInput, EditTool, HookCall, SetupOptions, Verdict, dir_or,
};
use crate::frontend::setup::kit::{
    headless_note, hook_note, hook_requirements, json_at, json_server_requirement, json_servers_change,
    trusted_server_entry,
};
use crate::frontend::setup::types::{HookSpec, Plan, Requirement, Scope, SetupError, TOOL_TIMEOUT_SECS};

use super::claude_code::pre_tool_use;

#[derive(Debug)]
pub struct QwenCode;

fn settings(options: &SetupOptions) -> PathBuf {
    match options.scope {
        Scope::Project => options.project.join(".qwen/settings.json"),
        Scope::User => dir_or(options.dirs.qwen_home.as_ref(), &options.home, ".qwen").join("settings.json"),
    }
}

impl AgentCli for QwenCode {
    fn name(&self) -> &'static str {
        "qwen-code"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["qwen"]
    }
    fn display_name(&self) -> &'static str {
        "Qwen Code"
    }

    fn call(&self, input: &Value) -> Option<HookCall> {
        HookCall::claude_shaped(input, &[])
    }
    fn tool(&self, name: &str) -> Option<EditTool> {
        match name {
            "edit" => Some(EditTool::Replace(CLAUDE_FIELDS)),
            "write_file" => Some(EditTool::Write(CLAUDE_FIELDS)),
            _ => None,
        }
    }
    fn asks(&self, call: &HookCall) -> bool {
        matches!(call.mode.as_deref(), Some("default" | "plan"))
    }
    fn changed_input(&self) -> ChangedInput {
        ChangedInput::Refused
    }
    fn render(&self, call: &HookCall, verdict: &Verdict) -> Option<Value> {
        pre_tool_use(call, verdict)
    }

    fn plan(&self, options: &SetupOptions) -> Result<Plan, SetupError> {
        let settings = settings(options);
        let mut plan = Plan::default();
        plan.changes.push(json_servers_change(options, &settings, trusted_server_entry(options), options.hook)?);
        if options.hook {
            plan.notes.push(hook_note(options, &settings, ""));
        }
        plan.notes.push(format!(
            "timeout = {}: Qwen Code waits that long (ms) for a tool, so a person can review an edit. \"trust\": \
             true: Qwen Code calls Verbatim's tools without a confirmation.",
            TOOL_TIMEOUT_SECS * 1000
        ));
        plan.notes.push(headless_note(options, "Qwen Code's own edit tool"));
        Ok(plan)
    }
    fn requirements(&self, options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
        let settings = settings(options);
        let mut out = vec![
            json_server_requirement(&settings),
            Requirement::new(
                settings.clone(),
                "\"trust\": true on it (else Qwen Code confirms every call)",
                json_at(&settings)["mcpServers"]["verbatim"]["trust"] == true,
            ),
        ];
        if options.hook {
            out.extend(hook_requirements(options, &settings));
        }
        Ok(out)
    }
    fn hook_file(&self, options: &SetupOptions) -> Result<PathBuf, SetupError> {
        Ok(settings(options))
    }
    fn hooks(&self) -> Vec<HookSpec> {
        vec![HookSpec::grouped("PreToolUse", "edit|write_file", TOOL_TIMEOUT_SECS)]
    }
    fn hook_variables(&self) -> &'static [&'static str] {
        &["QWEN_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]
    }

    fn review_rows(&self) -> &'static [[&'static str; 3]] {
        &[[
            "Qwen Code (`-p` in `auto-edit` or `yolo`, and interactive)",
            "before the write: the hook (after `verbatim setup qwen-code --write`), or the IDE companion's \
             `openDiff`; it cannot take changed input, so a partly kept edit is written by Verbatim and its own \
             write refused with what was written and why the rest was not",
            "before",
        ]]
    }
}
