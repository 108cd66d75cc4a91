//! The agent CLIs Verbatim knows, one module each ("an agent is one file"): what
//! Verbatim knows of one agent (its configuration files and how `verbatim setup`
//! merges into them, its hook's input and output shapes, its edit tools and their
//! arguments, trust, how the person's reason reaches its model) is in that agent's
//! module, behind [`AgentCli`]; `verbatim setup`, `verbatim hook`, `verbatim setup
//! --check` and the README's table of agents are driven by [`Agent::ALL`].
//!
//! Adding an agent is its module, its tests, and a line in [`Agent`].

pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod droid;
pub mod gemini_cli;
pub mod opencode;
pub mod qwen_code;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::frontend::hook::Verdict;
use crate::frontend::setup::hook::HookSpec;
use crate::frontend::setup::{Plan, Requirement, Scope, SetupError, SetupOptions};

/// The agents Verbatim knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
    QwenCode,
    Copilot,
    Opencode,
    Droid,
}

impl Agent {
    pub const ALL: [Agent; 7] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::GeminiCli,
        Agent::QwenCode,
        Agent::Copilot,
        Agent::Opencode,
        Agent::Droid,
    ];

    /// Every agent's name, for messages.
    pub const NAMES: &str = "claude-code, codex, gemini-cli, qwen-code, copilot, opencode or droid";

    /// What this agent is, from its module.
    pub fn cli(self) -> &'static dyn AgentCli {
        match self {
            Self::ClaudeCode => &claude_code::ClaudeCode,
            Self::Codex => &codex::Codex,
            Self::GeminiCli => &gemini_cli::GeminiCli,
            Self::QwenCode => &qwen_code::QwenCode,
            Self::Copilot => &copilot::Copilot,
            Self::Opencode => &opencode::Opencode,
            Self::Droid => &droid::Droid,
        }
    }

    /// The agent a name (or one of its short names) stands for.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|agent| agent.name() == name || agent.cli().aliases().contains(&name))
    }

    /// The name on the command line (`verbatim setup NAME`, `verbatim hook NAME`).
    pub fn name(self) -> &'static str {
        self.cli().name()
    }

    /// How the agent is named in the review, the registry and the journal.
    pub fn display_name(self) -> &'static str {
        self.cli().display_name()
    }

    /// The scopes this agent can be set up in, the usual one first.
    pub fn scopes(self) -> &'static [Scope] {
        self.cli().scopes()
    }
}

/// What a hook call asks, read from the agent's own input shape.
#[derive(Debug, Clone, PartialEq)]
pub struct HookCall {
    /// The event (`PreToolUse`, `BeforeTool`, `preToolUse`, `tool.execute.before`, or
    /// an event after the tool ran: see [`HookCall::after`]).
    pub event: String,
    /// The tool's name, as the agent spells it.
    pub tool: String,
    /// The tool's arguments (an object, or the patch text of a free-form tool).
    pub args: Value,
    pub cwd: Option<PathBuf>,
    pub session: Option<String>,
    pub turn: Option<String>,
    /// The agent's permission mode, where its input says it.
    pub mode: Option<String>,
    /// This call runs after the tool (Gemini CLI's `AfterTool`, Droid's `PostToolUse`,
    /// opencode's `tool.execute.after`): only a note left for it is answered.
    pub after: bool,
}

impl HookCall {
    /// Claude Code's shape, which Codex, Gemini CLI, Qwen Code and Droid share:
    /// `hook_event_name`, `tool_name`, `tool_input`, `cwd`, `session_id`, and
    /// `turn_id` or `prompt_id`, `permission_mode`.
    pub fn claude_shaped(input: &Value, after_events: &[&str]) -> Option<Self> {
        let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
        let event = text("hook_event_name").unwrap_or_default();
        Some(Self {
            after: after_events.contains(&event.as_str()),
            event,
            tool: text("tool_name")?,
            args: input.get("tool_input").cloned().unwrap_or(Value::Null),
            cwd: text("cwd").map(PathBuf::from),
            session: text("session_id"),
            turn: text("turn_id").or_else(|| text("prompt_id")),
            mode: text("permission_mode"),
        })
    }
}

/// The names a string-replacement or whole-file tool gives its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// The file (the first one present is read; a rewrite keeps the one given).
    pub path: &'static [&'static str],
    pub old: &'static str,
    pub new: &'static str,
    /// Replace every occurrence (a flag), if the tool has one.
    pub all: Option<&'static str>,
    /// The whole content of a whole-file tool.
    pub content: &'static str,
}

/// Claude Code's names, which Gemini CLI and Qwen Code share.
pub const CLAUDE_FIELDS: Fields = Fields {
    path: &["file_path", "absolute_path"],
    old: "old_string",
    new: "new_string",
    all: Some("replace_all"),
    content: "content",
};

/// An agent's file-writing tool, as the hook reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditTool {
    /// One replacement.
    Replace(Fields),
    /// Several in order (`edits`: each with the same names).
    MultiReplace(Fields),
    /// The whole file.
    Write(Fields),
    /// A new file only: over a file that exists the tool fails by itself (GitHub
    /// Copilot CLI's `create`), so there is nothing to review.
    Create(Fields),
    /// A Codex-format patch (`*** Begin Patch`): in the named argument, or the whole
    /// argument (`None`: a free-form tool whose input is the patch text).
    Patch(Option<&'static str>),
}

/// How an agent takes input the person changed in review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangedInput {
    /// It writes the changed input, and its pre-write answer tells the model why.
    Told,
    /// It writes the changed input, but nothing of the pre-write answer reaches the
    /// model: the note is left for the agent's after-the-tool hook.
    ToldAfter,
    /// It ignores changed input: Verbatim writes the kept part itself and refuses the
    /// agent's own write, saying exactly what was written and why the rest was not.
    Refused,
}

/// One agent CLI: everything Verbatim knows of it.
pub trait AgentCli: Sync {
    /// The name on the command line.
    fn name(&self) -> &'static str;
    /// Short names also accepted.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// The name people know it by.
    fn display_name(&self) -> &'static str;

    // The hook.

    /// The call, read from the agent's hook input; `None` when it is not a call.
    fn call(&self, input: &Value) -> Option<HookCall>;
    /// The file-writing tool of that name, if it is one the hook reviews.
    fn tool(&self, name: &str) -> Option<EditTool>;
    /// Whether the agent's mode asks the person before this write.
    fn asks(&self, _call: &HookCall) -> bool {
        false
    }
    /// How it takes the changed input of a partly kept write.
    fn changed_input(&self) -> ChangedInput {
        ChangedInput::Told
    }
    /// A patch argument (the whole reviewed patch) as the tool's input.
    fn patch_input(&self, patch: String) -> Value {
        json!({"command": patch})
    }
    /// The verdict in the agent's own output shape (`None`: print nothing).
    fn render(&self, call: &HookCall, verdict: &Verdict) -> Option<Value>;

    // Setup.

    /// The scopes it can be set up in, the usual one first.
    fn scopes(&self) -> &'static [Scope] {
        &[Scope::Project, Scope::User]
    }
    /// The scope `setup` uses when neither `--project` nor `--user` is given.
    fn default_scope(&self) -> Scope {
        Scope::Project
    }
    /// What `setup` would change (nothing is written).
    fn plan(&self, options: &SetupOptions) -> Result<Plan, SetupError>;
    /// What `--check` requires, as found in the files now (the hook's too).
    fn requirements(&self, options: &SetupOptions) -> Result<Vec<Requirement>, SetupError>;
    /// The file that holds the hook (or plugin).
    fn hook_file(&self, options: &SetupOptions) -> Result<PathBuf, SetupError>;
    /// Its hooks, in the agent's `hooks` object: the pre-write one first.
    fn hooks(&self) -> Vec<HookSpec>;
    /// The hook command found in its configuration, for `--check` to run.
    fn configured_hook_command(&self, options: &SetupOptions) -> Option<String> {
        let path = self.hook_file(options).ok()?;
        let Value::Object(root) = crate::frontend::setup::json_at(&path) else { return None };
        crate::frontend::setup::hook::configured_command(&root, options.agent)
    }
    /// The variables the agent sets for its hooks, as far as `verbatim hook` reads them.
    fn hook_variables(&self) -> &'static [&'static str] {
        &[]
    }
    /// `setup`'s flags beyond the scope and `--no-hook`, for the `fix:` line.
    fn fix_flags(&self, _options: &SetupOptions) -> String {
        String::new()
    }
    /// Lines `--check` adds after the requirements.
    fn check_lines(&self, _options: &SetupOptions) -> Vec<String> {
        Vec::new()
    }

    /// Its rows of the README's table "which agent's edits are reviewed before the
    /// write": the agent and mode, its own edit tool, Verbatim's tools (MCP).
    fn review_rows(&self) -> &'static [[&'static str; 3]];
}

/// The README's table of which agent's edits are reviewed before the write, and by
/// which path: a row per agent and mode, from [`Agent::ALL`], then what any other
/// writer and Cursor's CLI get.
pub fn review_table() -> String {
    let mut table = String::from("| agent | its own edit tool | Verbatim's tools (MCP) |\n|---|---|---|\n");
    let rows = Agent::ALL.iter().flat_map(|agent| agent.cli().review_rows().iter()).chain(OTHER_ROWS.iter());
    for [agent, own, mcp] in rows {
        table.push_str(&format!("| {agent} | {own} | {mcp} |\n"));
    }
    table
}

/// The rows after the agents': writers Verbatim has no hook in.
const OTHER_ROWS: [[&str; 3]; 2] = [
    [
        "Cursor's CLI (`cursor-agent`)",
        "after the write, as a change on disk merged into the buffer (it has no hook Verbatim can answer, and it \
         cannot run without its vendor's login: untested here)",
        "before (an MCP client)",
    ],
    ["anything else (Aider, `sed -i`, a script)", "after the write, as a change on disk merged into the buffer", "—"],
];

/// The user's home-relative directory named by a variable, else `home/default`.
pub(crate) fn dir_or(variable: Option<&PathBuf>, home: &Path, default: &str) -> PathBuf {
    variable.map_or_else(|| home.join(default), PathBuf::clone)
}

#[cfg(test)]
mod tests;
