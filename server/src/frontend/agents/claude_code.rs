//! Claude Code: its MCP servers in `.mcp.json` (project) or `$CLAUDE_CONFIG_DIR/.claude.json`
//! (user, else `~/.claude.json`); its permissions, and the pre-write hook, in
//! `.claude/settings.local.json` (project: `claude -p` in a project not yet trusted reads
//! `permissions.allow` only from there; `enabledMcpjsonServers` spares the "New MCP
//! server found" dialog) or `$CLAUDE_CONFIG_DIR/settings.json` (user, else
//! `~/.claude/settings.json`).
//!
//! Its hook: `PreToolUse` on `Edit|Write|MultiEdit` (seconds), input `tool_name`,
//! `tool_input` (`file_path`, `old_string`, `new_string`, `replace_all`; `content`;
//! `edits`), `permission_mode`; answer `hookSpecificOutput.permissionDecision` with
//! `updatedInput` (written as given) and `additionalContext` (read by the model), or
//! `deny` with `permissionDecisionReason` (the model reads it as the tool's error).
//! Its own IDE protocol (`openDiff`) is served elsewhere (`crate::ide`).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::frontend::agents::cli::{AgentCli, CLAUDE_FIELDS, EditTool, HookCall, SetupOptions, Verdict};
use crate::frontend::setup::hook;
use crate::frontend::setup::kit::{
    headless_note, hook_note, hook_requirements, json_at, json_server_requirement, json_servers_change, lists, read,
    server_entry,
};
use crate::frontend::setup::types::{FileChange, HookSpec, Plan, Requirement, Scope, SetupError, TOOL_TIMEOUT_SECS};

use crate::frontend::setup::json_merge::{merge_json, object_at, push_unique};

/// Claude Code's permission rule for every tool of the server.
const ALLOW_RULE: &str = "mcp__verbatim";

#[derive(Debug)]
pub struct ClaudeCode;

/// Where its files are: the servers, and the settings (permissions and the hook).
fn files(options: &SetupOptions) -> (PathBuf, PathBuf) {
    let (project, home, dirs) = (&options.project, &options.home, &options.dirs);
    let user = |name: &str, fallback: PathBuf| dirs.claude_config_dir.as_ref().map_or(fallback, |dir| dir.join(name));
    match options.scope {
        Scope::Project => (project.join(".mcp.json"), project.join(".claude/settings.local.json")),
        Scope::User => {
            (user(".claude.json", home.join(".claude.json")), user("settings.json", home.join(".claude/settings.json")))
        }
    }
}

/// The `PreToolUse` answer, which Codex, Qwen Code and Droid read too.
pub fn pre_tool_use(call: &HookCall, verdict: &Verdict) -> Option<Value> {
    let event = if call.event.is_empty() { "PreToolUse" } else { call.event.as_str() };
    let output = match verdict {
        Verdict::Pass { .. } => return None,
        Verdict::Allow => json!({"hookEventName": event, "permissionDecision": "allow",
                                 "permissionDecisionReason": "The person accepted this change in the editor."}),
        Verdict::AllowWith { input, context } => json!({"hookEventName": event, "permissionDecision": "allow",
                                                        "permissionDecisionReason": "Reviewed in the editor.",
                                                        "updatedInput": input, "additionalContext": context}),
        Verdict::Deny { reason } => json!({"hookEventName": event, "permissionDecision": "deny",
                                           "permissionDecisionReason": reason}),
        Verdict::Note { context } => json!({"hookEventName": event, "additionalContext": context}),
    };
    Some(json!({"hookSpecificOutput": output}))
}

impl AgentCli for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["claude"]
    }
    fn display_name(&self) -> &'static str {
        "Claude Code"
    }

    fn call(&self, input: &Value) -> Option<HookCall> {
        HookCall::claude_shaped(input, &[])
    }
    fn tool(&self, name: &str) -> Option<EditTool> {
        match name {
            "Edit" => Some(EditTool::Replace(CLAUDE_FIELDS)),
            "MultiEdit" => Some(EditTool::MultiReplace(CLAUDE_FIELDS)),
            "Write" => Some(EditTool::Write(CLAUDE_FIELDS)),
            _ => None,
        }
    }
    fn asks(&self, call: &HookCall) -> bool {
        matches!(call.mode.as_deref(), Some("default" | "plan"))
    }
    fn render(&self, call: &HookCall, verdict: &Verdict) -> Option<Value> {
        pre_tool_use(call, verdict)
    }

    fn plan(&self, options: &SetupOptions) -> Result<Plan, SetupError> {
        let (servers, settings) = files(options);
        let mut plan = Plan::default();
        plan.changes.push(json_servers_change(options, &servers, server_entry(options), false)?);
        if options.hook {
            plan.notes.push(hook_note(options, &settings, ""));
        }
        plan.notes.push(format!(
            "Claude Code waits MCP_TOOL_TIMEOUT milliseconds for a tool. A person may take minutes to review an \
             edit: start Claude Code with MCP_TOOL_TIMEOUT={} (in your shell profile).",
            TOOL_TIMEOUT_SECS * 1000
        ));
        plan.notes.push(headless_note(options, "Claude Code's own Edit"));
        plan.notes.push(
            "Claude Code's own Edit and Write are reviewed in the editor before they write when Claude Code is \
             connected to the editor as its IDE: a `claude` started in a terminal the editor opened (Neovim's \
             :terminal, VS Code's integrated terminal) connects by itself; in any other terminal run `claude --ide` \
             or type /ide. `verbatim setup claude-code --check` says whether an editor serves this project."
                .into(),
        );
        let project = options.scope == Scope::Project;
        if project {
            plan.notes.push(
                ".claude/settings.local.json is yours, not the project's: keep it out of git (Claude Code reads \
                 permissions from it even in a project not yet trusted, as `claude -p` needs)."
                    .into(),
            );
        }
        if options.deny_builtin_edit {
            plan.notes.push(
                "--deny-builtin-edit: permissions.deny gets \"Edit\", so Claude Code edits only through Verbatim's \
                 str_replace. Worth it where Claude Code cannot connect to the editor as its IDE (claude -p, a \
                 terminal on another machine): there its Edit writes the disk behind the editor."
                    .into(),
            );
        }
        let before = read(&settings)?;
        let after = merge_json(&settings, before.as_deref(), |root| {
            if project {
                push_unique(root, "enabledMcpjsonServers", "verbatim");
            }
            let permissions = object_at(root, "permissions");
            push_unique(permissions, "allow", ALLOW_RULE);
            if options.deny_builtin_edit {
                push_unique(permissions, "deny", "Edit");
            }
            if options.hook { hook::merge(root, options) } else { Ok(()) }
        })?;
        plan.changes.push(FileChange { path: settings, before, after });
        Ok(plan)
    }

    fn requirements(&self, options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
        let (servers, settings) = files(options);
        let mut out = vec![json_server_requirement(&servers)];
        let settings_json = json_at(&settings);
        if options.scope == Scope::Project {
            out.push(Requirement::new(
                settings.clone(),
                "enabledMcpjsonServers has \"verbatim\" (no \"New MCP server found\" dialog)",
                lists(&settings_json["enabledMcpjsonServers"], "verbatim")
                    || settings_json["enableAllProjectMcpServers"] == true,
            ));
        }
        out.push(Requirement::new(
            settings.clone(),
            format!("permissions.allow has \"{ALLOW_RULE}\" (no prompt per call)"),
            lists(&settings_json["permissions"]["allow"], ALLOW_RULE),
        ));
        if options.deny_builtin_edit {
            out.push(Requirement::new(
                settings.clone(),
                "permissions.deny has \"Edit\"",
                lists(&settings_json["permissions"]["deny"], "Edit"),
            ));
        }
        if options.hook {
            out.extend(hook_requirements(options, &settings));
        }
        Ok(out)
    }
    fn hook_file(&self, options: &SetupOptions) -> Result<PathBuf, SetupError> {
        Ok(files(options).1)
    }
    fn hooks(&self) -> Vec<HookSpec> {
        vec![HookSpec::grouped("PreToolUse", "Edit|Write|MultiEdit", TOOL_TIMEOUT_SECS)]
    }
    fn hook_variables(&self) -> &'static [&'static str] {
        &["CLAUDE_PROJECT_DIR"]
    }
    fn fix_flags(&self, options: &SetupOptions) -> String {
        if options.deny_builtin_edit { " --deny-builtin-edit".into() } else { String::new() }
    }
    fn check_lines(&self, options: &SetupOptions) -> Vec<String> {
        let lock_dir = options
            .dirs
            .claude_config_dir
            .as_ref()
            .map(|dir| dir.join("ide"))
            .or_else(crate::transport::ide_lock::lock_dir);
        crate::frontend::setup::ide::ide_lines(&options.project, lock_dir.as_deref())
    }

    fn review_rows(&self) -> &'static [[&'static str; 3]] {
        &[
            [
                "Claude Code, interactive in the editor's terminal",
                "before the write: IDE protocol (`openDiff`), or the hook once set up (one review either way)",
                "before: the editor's review",
            ],
            [
                "Claude Code `-p`, `acceptEdits`, `bypassPermissions`",
                "before the write: the hook (after `verbatim setup claude-code --write`); without it, after the \
                 write, as a change on disk",
                "before",
            ],
        ]
    }
}
