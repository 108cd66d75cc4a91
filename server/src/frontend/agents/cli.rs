//! What an agent module is ([`AgentCli`]) and what it works with: a hook call read from
//! the agent's input ([`HookCall`]), its edit tools and their arguments ([`EditTool`],
//! [`Fields`]), how it takes changed input ([`ChangedInput`]), the verdict it phrases
//! ([`Verdict`]), and what setup is asked for ([`SetupOptions`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::frontend::setup::types::{AgentDirs, HookSpec, Plan, Requirement, Scope, SetupError};

/// What the hook tells the agent, before it is phrased in the agent's own terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// No decision: the agent's own flow goes on. The note goes to stderr.
    Pass { note: String },
    /// Write as the agent proposed.
    Allow,
    /// Write this input instead; tell the model `context`.
    AllowWith { input: Value, context: String },
    /// Write nothing; the model reads `reason`.
    Deny { reason: String },
    /// After the tool ran (Gemini CLI's `AfterTool`): tell the model `context`.
    Note { context: String },
}

/// What to set up.
#[derive(Debug, Clone)]
pub struct SetupOptions {
    /// The agent, from its module.
    pub agent: &'static dyn AgentCli,
    pub scope: Scope,
    /// Deny the agent's built-in edit tool (Claude Code), so that it edits only through
    /// Verbatim's MCP tools.
    pub deny_builtin_edit: bool,
    /// The project directory (the current directory).
    pub project: PathBuf,
    /// The home directory.
    pub home: PathBuf,
    /// Where the agents' own variables put their files.
    pub dirs: AgentDirs,
    /// How the agent should start Verbatim's MCP server.
    pub command: String,
    /// Start it with `--diagnostics`: every write reports what the editor's language
    /// servers say after it.
    pub diagnostics: bool,
    /// Let the server write files on disk when no editor serves them (without it the
    /// server gets `--no-headless-writes`, and the agent's own tool, with its own
    /// permission prompt, makes such edits).
    pub trust_headless: bool,
    /// Gemini CLI: trust the project folder (`trustedFolders.json`).
    pub trust_folder: bool,
    /// Install (and `--check` requires) the pre-write hook.
    pub hook: bool,
    /// Variables set on top of this process's environment when `--check` runs the
    /// hook (the agent runs it with its own environment, which is the person's).
    pub hook_env: Vec<(OsString, OsString)>,
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
pub trait AgentCli: Sync + std::fmt::Debug {
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
    /// Whether `--trust` (trust the project folder) means something for it.
    fn trusts_folders(&self) -> bool {
        false
    }
    /// Why it is set up for the user only, when a generic word does not say it.
    fn user_only_why(&self) -> Option<&'static str> {
        None
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
    /// For an agent whose hook is a plugin file rather than entries in a `hooks`
    /// object ([`AgentCli::hooks`] empty): the command the plugin runs, if the file is ours.
    fn plugin_command(&self, _options: &SetupOptions) -> Option<String> {
        None
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

/// The user's home-relative directory named by a variable, else `home/default`.
pub(crate) fn dir_or(variable: Option<&PathBuf>, home: &Path, default: &str) -> PathBuf {
    variable.map_or_else(|| home.join(default), PathBuf::clone)
}
