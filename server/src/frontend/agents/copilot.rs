//! GitHub Copilot CLI: its hook in `$COPILOT_HOME/settings.json` (else
//! `~/.copilot/settings.json`), user only: a repository's `.github/hooks/*.json` runs
//! only in a folder the person trusted and is skipped silently elsewhere, while the
//! user's settings run everywhere. Its MCP servers are not set up by Verbatim.
//!
//! Its hook: `hooks.preToolUse = [{type: "command", bash, timeoutSec}]`, no matcher
//! (every tool comes; the hook picks the edit tools); input (recorded from 1.0.102,
//! `server/tests/fixtures/hooks/copilot/`) `{sessionId, timestamp, cwd, toolName,
//! toolArgs}`: `edit` `{path, old_str, new_str}`, `create` `{path, file_text}`, and for
//! GPT models `apply_patch` whose `toolArgs` is the patch text. Answer
//! `{permissionDecision: "deny", permissionDecisionReason}` (the model reads `Denied
//! by preToolUse hook: <reason>`) or `{permissionDecision: "allow", modifiedArgs,
//! additionalContext}` (the whole arguments, written as given; the context reaches the
//! model as a message after the tool's result).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::frontend::agents::cli::{AgentCli, EditTool, Fields, HookCall, SetupOptions, Verdict, dir_or};
use crate::frontend::setup::kit::{hook_note, hook_requirements, json_hook_change};
use crate::frontend::setup::types::{HookShape, HookSpec, Plan, Requirement, Scope, SetupError, TOOL_TIMEOUT_SECS};

/// The arguments of `edit` and `create`.
const FIELDS: Fields = Fields { path: &["path"], old: "old_str", new: "new_str", all: None, content: "file_text" };

#[derive(Debug)]
pub struct Copilot;

fn settings(options: &SetupOptions) -> PathBuf {
    dir_or(options.dirs.copilot_home.as_ref(), &options.home, ".copilot").join("settings.json")
}

impl AgentCli for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["copilot-cli", "github-copilot"]
    }
    fn display_name(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn call(&self, input: &Value) -> Option<HookCall> {
        let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
        let tool = text("toolName")?;
        let mut args = input.get("toolArgs").cloned().unwrap_or(Value::Null);
        // Arguments may come as JSON text; a free-form tool's are text themselves.
        if let Value::String(text) = &args
            && let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(text)
        {
            args = object;
        }
        let after = input.get("toolResult").is_some();
        Some(HookCall {
            event: if after { "postToolUse" } else { "preToolUse" }.into(),
            tool,
            args,
            cwd: text("cwd").map(PathBuf::from),
            session: text("sessionId"),
            turn: None,
            mode: None,
            after,
        })
    }
    fn tool(&self, name: &str) -> Option<EditTool> {
        match name {
            "edit" | "str_replace" => Some(EditTool::Replace(FIELDS)),
            "create" => Some(EditTool::Create(FIELDS)),
            "apply_patch" => Some(EditTool::Patch(None)),
            _ => None,
        }
    }
    fn patch_input(&self, patch: String) -> Value {
        Value::String(patch)
    }
    fn render(&self, _call: &HookCall, verdict: &Verdict) -> Option<Value> {
        Some(match verdict {
            Verdict::Pass { .. } | Verdict::Note { .. } => return None,
            Verdict::Allow => json!({"permissionDecision": "allow",
                                     "permissionDecisionReason": "The person accepted this change in the editor."}),
            Verdict::AllowWith { input, context } => json!({"permissionDecision": "allow",
                                                            "permissionDecisionReason": "Reviewed in the editor.",
                                                            "modifiedArgs": input, "additionalContext": context}),
            Verdict::Deny { reason } => json!({"permissionDecision": "deny", "permissionDecisionReason": reason}),
        })
    }

    fn scopes(&self) -> &'static [Scope] {
        &[Scope::User]
    }
    fn default_scope(&self) -> Scope {
        Scope::User
    }
    fn plan(&self, options: &SetupOptions) -> Result<Plan, SetupError> {
        let settings = settings(options);
        let mut plan = Plan::default();
        if !options.hook {
            return Err(no_hook_nothing(options));
        }
        plan.changes.push(json_hook_change(options, &settings)?);
        plan.notes.push(hook_note(
            options,
            &settings,
            " In the user's settings it runs in every folder, trusted or not (a repository's .github/hooks run only \
             in a trusted folder).",
        ));
        plan.notes.push(hook_only_note(options));
        Ok(plan)
    }
    fn requirements(&self, options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
        Ok(if options.hook { hook_requirements(options, &settings(options)) } else { Vec::new() })
    }
    fn hook_file(&self, options: &SetupOptions) -> Result<PathBuf, SetupError> {
        Ok(settings(options))
    }
    fn hooks(&self) -> Vec<HookSpec> {
        vec![HookSpec {
            event: "preToolUse",
            matcher: "",
            timeout: TOOL_TIMEOUT_SECS,
            millis: false,
            shape: HookShape::Flat,
        }]
    }

    fn review_rows(&self) -> &'static [[&'static str; 3]] {
        &[[
            "GitHub Copilot CLI (`-p` and interactive, any model: `edit`, `create`, `apply_patch`)",
            "before the write: the hook (after `verbatim setup copilot --write`); without it, after, as a change on \
             disk",
            "before, once you add Verbatim's MCP server yourself (`setup` installs only the hook)",
        ]]
    }
}

/// The note of an agent whose setup is only its hook.
pub(crate) fn hook_only_note(options: &SetupOptions) -> String {
    format!(
        "Only the hook is set up for {0}, not Verbatim's MCP server: {0}'s own edit tools are reviewed in the editor \
         before they write; where no editor with Verbatim serves a file, the hook answers nothing and {0} writes as \
         it would without Verbatim.",
        options.agent.display_name()
    )
}

/// What `--no-hook` means for an agent whose setup is only its hook.
pub(crate) fn no_hook_nothing(options: &SetupOptions) -> SetupError {
    SetupError::Unsupported(format!(
        "{} gets only the pre-write hook from `verbatim setup`, so --no-hook leaves nothing to set up; a hook already \
         there stays (remove it from {} by hand).",
        options.agent.display_name(),
        options.agent.hook_file(options).map(|path| path.display().to_string()).unwrap_or_default()
    ))
}
