//! opencode: no command hooks, but plugins: `verbatim setup opencode` writes one,
//! `$XDG_CONFIG_HOME/opencode/plugin/verbatim.js` (else
//! `~/.config/opencode/plugin/verbatim.js`; user only, loaded in every project with no
//! trust step), which runs `verbatim hook opencode` before opencode's own `edit`,
//! `write` and (for GPT models) `apply_patch` tools.
//!
//! The plugin's `tool.execute.before` gets `input` `{tool, sessionID, callID}` and
//! `output.args` (recorded from 1.18.33, `server/tests/fixtures/hooks/opencode/`):
//! `edit` `{filePath, oldString, newString, replaceAll}`, `write` `{filePath,
//! content}`, `apply_patch` `{patchText}`. It hands `verbatim hook opencode` Claude
//! Code's shape (`hook_event_name: "tool.execute.before"`, `tool_name`, `tool_input`,
//! `session_id`, `tool_use_id`, `cwd`) and reads back `{decision: "deny", reason}`
//! (it throws: nothing is written, the model reads exactly the reason) or `{decision:
//! "allow", args, context}` (it changes `output.args` in place, which opencode writes
//! as if the model had sent it, and appends `context` to the tool's result in
//! `tool.execute.after`, so the model is told what was left out and why).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::frontend::agents::cli::{AgentCli, EditTool, Fields, HookCall, SetupOptions, Verdict, dir_or};
use crate::frontend::setup::hook;
use crate::frontend::setup::kit::{hook_note, read};
use crate::frontend::setup::types::{FileChange, HookSpec, Plan, Requirement, Scope, SetupError};

/// The arguments of `edit` and `write`.
const FIELDS: Fields =
    Fields { path: &["filePath"], old: "oldString", new: "newString", all: Some("replaceAll"), content: "content" };

/// The line that marks the plugin as Verbatim's (a file of that name without it is
/// the person's, never overwritten).
const MARK: &str = "// verbatim-setup: opencode";

/// The plugin, around the command it runs.
const PLUGIN: &str = r#"
// Verbatim's opencode plugin, written by `verbatim setup opencode --write`: before
// opencode's own edit, write and apply_patch tools write, the change is reviewed in
// the editor (`verbatim hook opencode`); opencode then writes exactly what the person
// kept, or nothing, and the model is told what was left out and why. Where no editor
// with Verbatim serves the file, the hook answers nothing and opencode goes on.
import { spawn } from "node:child_process";

const COMMAND = __COMMAND__;
const TOOLS = new Set(["edit", "write", "apply_patch"]);
const notes = new Map();

function ask(payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn("sh", ["-c", COMMAND], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve(null);
      return;
    }
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("error", () => resolve(null));
    child.on("close", () => {
      try { resolve(out.trim() ? JSON.parse(out) : null); } catch { resolve(null); }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

export const Verbatim = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    if (!TOOLS.has(input.tool)) return;
    const answer = await ask({
      hook_event_name: "tool.execute.before", tool_name: input.tool, tool_input: output.args,
      session_id: input.sessionID, tool_use_id: input.callID, cwd: directory,
    });
    if (!answer) return;
    if (answer.decision === "deny") throw new Error(answer.reason);
    if (answer.decision === "allow" && answer.args) {
      for (const key of Object.keys(output.args)) delete output.args[key];
      Object.assign(output.args, answer.args);
    }
    if (answer.context) notes.set(input.callID, answer.context);
  },
  "tool.execute.after": async (input, output) => {
    const note = notes.get(input.callID);
    if (note === undefined) return;
    notes.delete(input.callID);
    output.output = `${output.output ?? ""}\n\n${note}`;
  },
});
"#;

#[derive(Debug)]
pub struct Opencode;

fn plugin_path(options: &SetupOptions) -> PathBuf {
    dir_or(options.dirs.xdg_config_home.as_ref(), &options.home, ".config").join("opencode/plugin/verbatim.js")
}

/// The plugin's text for `options`' command.
pub fn plugin(options: &SetupOptions) -> String {
    let command = Value::String(hook::command(options)).to_string();
    format!("{MARK}{}", PLUGIN.replace("__COMMAND__", &command))
}

/// The command a plugin of ours runs.
fn command_in(text: &str) -> Option<String> {
    if !text.starts_with(MARK) {
        return None;
    }
    let line = text.lines().find_map(|line| line.strip_prefix("const COMMAND = "))?;
    serde_json::from_str::<String>(line.trim_end_matches(';')).ok()
}

impl AgentCli for Opencode {
    fn name(&self) -> &'static str {
        "opencode"
    }
    fn display_name(&self) -> &'static str {
        "opencode"
    }

    fn call(&self, input: &Value) -> Option<HookCall> {
        HookCall::claude_shaped(input, &["tool.execute.after"])
    }
    fn tool(&self, name: &str) -> Option<EditTool> {
        match name {
            "edit" => Some(EditTool::Replace(FIELDS)),
            "write" => Some(EditTool::Write(FIELDS)),
            "apply_patch" => Some(EditTool::Patch(Some("patchText"))),
            _ => None,
        }
    }
    fn patch_input(&self, patch: String) -> Value {
        json!({"patchText": patch})
    }
    fn render(&self, _call: &HookCall, verdict: &Verdict) -> Option<Value> {
        Some(match verdict {
            Verdict::Pass { .. } | Verdict::Note { .. } => return None,
            Verdict::Allow => json!({"decision": "allow"}),
            Verdict::AllowWith { input, context } => json!({"decision": "allow", "args": input, "context": context}),
            Verdict::Deny { reason } => json!({"decision": "deny", "reason": reason}),
        })
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
        let path = plugin_path(options);
        let before = read(&path)?;
        let after = plugin(options);
        if let Some(text) = &before
            && command_in(text).is_none()
        {
            return Err(SetupError::Unmergeable {
                path,
                why: "it is not Verbatim's plugin (it lacks the first line `// verbatim-setup: opencode`), and setup \
                      does not overwrite a file of yours"
                    .into(),
                by_hand: "rename your plugin, then run `verbatim setup opencode --write` again".into(),
            });
        }
        let mut plan = Plan::default();
        plan.changes.push(FileChange { path: path.clone(), before, after });
        plan.notes.push(hook_note(
            options,
            &path,
            " opencode loads the plugins of $XDG_CONFIG_HOME/opencode/plugin in every project, with no trust step.",
        ));
        plan.notes.push(crate::frontend::agents::copilot::hook_only_note(options));
        Ok(plan)
    }
    fn requirements(&self, options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
        if !options.hook {
            return Ok(Vec::new());
        }
        let path = plugin_path(options);
        let text = read(&path)?;
        let met = text.as_deref().and_then(command_in).is_some_and(|command| command == hook::command(options));
        let current = text.is_some_and(|text| text == plugin(options));
        let what = if met && !current {
            "Verbatim's plugin, of another version (run setup again to bring it up to date)".to_owned()
        } else {
            format!("Verbatim's plugin (runs `{}` before edit, write and apply_patch)", hook::command(options))
        };
        Ok(vec![Requirement::new(path, what, met && current)])
    }
    fn hook_file(&self, options: &SetupOptions) -> Result<PathBuf, SetupError> {
        Ok(plugin_path(options))
    }
    fn hooks(&self) -> Vec<HookSpec> {
        Vec::new()
    }
    fn plugin_command(&self, options: &SetupOptions) -> Option<String> {
        command_in(&read(&plugin_path(options)).ok()??)
    }

    fn review_rows(&self) -> &'static [[&'static str; 3]] {
        &[[
            "opencode (`run` and the TUI, any mode: `edit`, `write`, `apply_patch`)",
            "before the write: its plugin (after `verbatim setup opencode --write`); without it, after, as a change \
             on disk",
            "before, once you add Verbatim's MCP server yourself (`setup` installs only the hook)",
        ]]
    }
}
