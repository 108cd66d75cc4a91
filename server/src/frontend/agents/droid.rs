//! Factory Droid: its hooks in `~/.factory/settings.json` (user only), in Claude
//! Code's shape: `PreToolUse` on its edit tools, and `PostToolUse` on the same tools.
//! Its MCP servers are not set up by Verbatim.
//!
//! Input (recorded from 0.225.2, `server/tests/fixtures/hooks/droid/`): `session_id`,
//! `cwd`, `permission_mode`, `hook_event_name`, `tool_name`, `tool_input`: `Edit`
//! `{file_path, old_str, new_str, change_all}`, `Create` `{file_path, content}`. A deny's
//! reason reaches the model (`Error: <reason>`); `allow` with `updatedInput` is merged
//! over the input and written, but the model's history keeps its own arguments and an
//! `additionalContext` of `PreToolUse` does not reach it: the note of a partly kept
//! write is left for the `PostToolUse` run, whose `additionalContext` does.

use std::path::PathBuf;

use serde_json::Value;

use crate::frontend::agents::cli::{AgentCli, ChangedInput, EditTool, Fields, HookCall, SetupOptions, Verdict};
use crate::frontend::setup::kit::{hook_note, hook_requirements, json_hook_change};
use crate::frontend::setup::types::{HookSpec, Plan, Requirement, Scope, SetupError, TOOL_TIMEOUT_SECS};

use super::claude_code::pre_tool_use;

/// The arguments of `Edit` and `Create`.
const FIELDS: Fields =
    Fields { path: &["file_path"], old: "old_str", new: "new_str", all: Some("change_all"), content: "content" };

/// Its edit tools, as its matcher names them.
const MATCHER: &str = "Edit|Create";

/// The `PostToolUse` run only reads a note the `PreToolUse` run left: quick.
const AFTER_TOOL_TIMEOUT_SECS: u64 = 10;

#[derive(Debug)]
pub struct Droid;

fn settings(options: &SetupOptions) -> PathBuf {
    options.home.join(".factory/settings.json")
}

impl AgentCli for Droid {
    fn name(&self) -> &'static str {
        "droid"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["factory", "factory-droid"]
    }
    fn display_name(&self) -> &'static str {
        "Factory Droid"
    }

    fn call(&self, input: &Value) -> Option<HookCall> {
        HookCall::claude_shaped(input, &["PostToolUse"])
    }
    fn tool(&self, name: &str) -> Option<EditTool> {
        match name {
            "Edit" => Some(EditTool::Replace(FIELDS)),
            "Create" => Some(EditTool::Write(FIELDS)),
            _ => None,
        }
    }
    fn changed_input(&self) -> ChangedInput {
        ChangedInput::ToldAfter
    }
    fn render(&self, call: &HookCall, verdict: &Verdict) -> Option<Value> {
        pre_tool_use(call, verdict)
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User]
    }
    fn default_scope(&self) -> Scope {
        Scope::User
    }
    fn plan(&self, options: &SetupOptions) -> Result<Plan, SetupError> {
        if !options.hook {
            return Err(crate::frontend::agents::copilot::no_hook_nothing(options));
        }
        let settings = settings(options);
        let mut plan = Plan::default();
        plan.changes.push(json_hook_change(options, &settings)?);
        plan.notes.push(hook_note(
            options,
            &settings,
            " Its PostToolUse hook on the same tools tells the model what the person left out of a write and why.",
        ));
        plan.notes.push(crate::frontend::agents::copilot::hook_only_note(options));
        Ok(plan)
    }
    fn requirements(&self, options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
        Ok(if options.hook { hook_requirements(options, &settings(options)) } else { Vec::new() })
    }
    fn hook_file(&self, options: &SetupOptions) -> Result<PathBuf, SetupError> {
        Ok(settings(options))
    }
    fn hooks(&self) -> Vec<HookSpec> {
        vec![
            HookSpec::grouped("PreToolUse", MATCHER, TOOL_TIMEOUT_SECS),
            HookSpec::grouped("PostToolUse", MATCHER, AFTER_TOOL_TIMEOUT_SECS),
        ]
    }
    fn hook_variables(&self) -> &'static [&'static str] {
        &["FACTORY_PROJECT_DIR"]
    }

    fn review_rows(&self) -> &'static [[&'static str; 3]] {
        &[[
            "Factory Droid (`exec` and interactive: `Edit`, `Create`)",
            "before the write: the hook (after `verbatim setup droid --write`); without it, after, as a change on disk",
            "before, once you add Verbatim's MCP server yourself (`setup` installs only the hook)",
        ]]
    }
}
