//! `verbatim setup AGENT`: points an agent at Verbatim's MCP server by merging the
//! right entries into its own configuration files, shown as a diff first, so that the
//! agent uses Verbatim's tools with no dialog and no per-call prompt: an edit that
//! goes to the editor is reviewed there, which is the person's gate.
//!
//! Each agent keeps its MCP servers in its own file and format:
//! - Claude Code: `.mcp.json` (project) or `$CLAUDE_CONFIG_DIR/.claude.json` (user,
//!   else `~/.claude.json`), and the permissions in `.claude/settings.local.json`
//!   (project: `claude -p` in a project not yet trusted reads `permissions.allow` only
//!   from there; `enabledMcpjsonServers` spares the "New MCP server found" dialog) or
//!   `$CLAUDE_CONFIG_DIR/settings.json` (user, else `~/.claude/settings.json`);
//! - Codex: `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`), with
//!   `default_tools_approval_mode = "approve"` (else `codex exec` refuses every call)
//!   and `env_vars` (Codex starts servers with almost no environment);
//! - Gemini CLI: `.gemini/settings.json` or `$GEMINI_CLI_HOME/.gemini/settings.json`,
//!   the entry with `"trust": true` (else `gemini -p` offers none of its tools), and,
//!   with `--trust`, the folder in `trustedFolders.json` (a project's servers stay off
//!   in a folder not trusted);
//! - Qwen Code: `.qwen/settings.json` or `$QWEN_HOME/settings.json` (else
//!   `~/.qwen/settings.json`), the entry as Gemini CLI's (Qwen Code is its fork).
//!
//! Beside the server, `setup` installs the agent's pre-write hook, `verbatim hook
//! AGENT` ([`hook`]), so that the agent's own edit tool is reviewed in the editor
//! before it writes: in the same settings file (Claude Code's permissions file, Gemini
//! CLI's and Qwen Code's settings), or for Codex in `$CODEX_HOME/hooks.json`, with
//! Codex's trust of it recorded in `config.toml` ([`codex_trust`]). `--no-hook` leaves
//! it out.
//!
//! Writes on disk without an editor have no review: unless the person passes
//! `--trust-headless`, the server is started with `--no-headless-writes`, and such a
//! write is refused with words that send the model to its own edit tool, whose
//! permission prompt asks the person.
//!
//! Merging never drops a key: JSON is parsed and written back with every other key as
//! it was (a file with comments, which plain JSON cannot keep, is left alone and the
//! entry is printed to add by hand); TOML goes through `toml_edit`, so comments and
//! order survive. A second run changes nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use verbatim_engine::diff::unified_diff_of_texts;

pub mod codex_trust;
pub mod hook;
pub(crate) mod ide;
pub(crate) mod json_merge;

use std::ffi::OsString;

use json_merge::{merge_json, object_at};

/// How long an agent should wait for one tool call: a person may be reviewing.
pub const TOOL_TIMEOUT_SECS: u64 = 600;

pub use crate::frontend::agents::Agent;

/// Where the configuration goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The project's own files (shared with everyone who clones it).
    Project,
    /// The user's files in the home directory.
    User,
}

/// The agents' own environment variables that move their files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentDirs {
    /// `$CLAUDE_CONFIG_DIR`: Claude Code's user files (`.claude.json`, `settings.json`).
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME`: Codex's `config.toml`.
    pub codex_home: Option<PathBuf>,
    /// `$GEMINI_CLI_HOME`: the directory holding Gemini CLI's `.gemini`.
    pub gemini_cli_home: Option<PathBuf>,
    /// `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`.
    pub gemini_trusted_folders: Option<PathBuf>,
    /// `$QWEN_HOME`: Qwen Code's user directory (else `~/.qwen`).
    pub qwen_home: Option<PathBuf>,
    /// `$COPILOT_HOME`: GitHub Copilot CLI's user directory (else `~/.copilot`).
    pub copilot_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (else `~/.config`): opencode's `opencode/`.
    pub xdg_config_home: Option<PathBuf>,
}

impl AgentDirs {
    /// From this process's environment (empty values count as unset).
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
        Self {
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            gemini_cli_home: var("GEMINI_CLI_HOME"),
            gemini_trusted_folders: var("GEMINI_CLI_TRUSTED_FOLDERS_PATH"),
            qwen_home: var("QWEN_HOME"),
            copilot_home: var("COPILOT_HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
        }
    }
}

/// What to set up.
#[derive(Debug, Clone)]
pub struct SetupOptions {
    pub agent: Agent,
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

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    /// `None` when the file does not exist yet.
    pub before: Option<String>,
    pub after: String,
}

impl FileChange {
    pub fn changes_anything(&self) -> bool {
        self.before.as_deref() != Some(self.after.as_str())
    }

    /// A unified diff of the change, with the file's path.
    pub fn diff(&self) -> String {
        let name = self.path.display().to_string();
        let old_label = if self.before.is_some() { name.clone() } else { "/dev/null".into() };
        unified_diff_of_texts(self.before.as_deref().unwrap_or(""), &self.after, &old_label, &name)
    }
}

/// What `setup` would do: file changes, and notes for the person.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub changes: Vec<FileChange>,
    pub notes: Vec<String>,
}

/// Why `setup` cannot proceed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupError {
    /// The combination makes no sense (what to do instead).
    Unsupported(String),
    /// A file cannot be merged safely; nothing was written.
    Unmergeable {
        path: PathBuf,
        why: String,
        by_hand: String,
    },
    Io(String),
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported(message) | Self::Io(message) => f.write_str(message),
            Self::Unmergeable { path, why, by_hand } => write!(
                f,
                "{} cannot be merged safely ({why}), so nothing was written. Add this to it by hand:\n{by_hand}",
                path.display()
            ),
        }
    }
}

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

/// What `setup` would change; nothing is written.
pub fn plan(options: &SetupOptions) -> Result<Plan, SetupError> {
    if options.trust_folder && options.agent != Agent::GeminiCli {
        return Err(SetupError::Unsupported(format!(
            "--trust is for gemini-cli (it trusts the project folder); {} has no such step.",
            options.agent.name()
        )));
    }
    if !options.agent.scopes().contains(&options.scope) {
        return Err(unsupported_scope(options));
    }
    options.agent.cli().plan(options)
}

/// The error for a scope the agent is not set up in.
fn unsupported_scope(options: &SetupOptions) -> SetupError {
    let name = options.agent.name();
    SetupError::Unsupported(match options.agent {
        Agent::Codex => "Codex reads its MCP servers, and the trust of its hooks, from its own config.toml \
                         ($CODEX_HOME, else ~/.codex); a project's .codex/ only once the project is trusted there: \
                         run `verbatim setup codex --user`."
            .into(),
        _ => format!(
            "{} is set up for the user only (its hooks then run in every project with no trust step): run \
             `verbatim setup {name} --user`.",
            options.agent.display_name()
        ),
    })
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
    let (on, timeout) = match hook::HookSpec::of(options.agent) {
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

/// Writes the changes of a plan; returns the files written.
pub fn write(plan: &Plan) -> Result<Vec<PathBuf>, SetupError> {
    let mut written = Vec::new();
    for change in plan.changes.iter().filter(|change| change.changes_anything()) {
        if let Some(dir) = change.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|error| SetupError::Io(format!("cannot create {}: {error}", dir.display())))?;
        }
        let temporary = change.path.with_extension("verbatim-setup.tmp");
        std::fs::write(&temporary, &change.after)
            .and_then(|()| std::fs::rename(&temporary, &change.path))
            .map_err(|error| SetupError::Io(format!("cannot write {}: {error}", change.path.display())))?;
        written.push(change.path.clone());
    }
    Ok(written)
}

/// One agent's state, as `--check` reports it.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// Everything the agent needs is in place.
    pub configured: bool,
    /// `ok      PATH: what`, `missing PATH: what`, `info    …`, and `fix:` with the command.
    pub lines: Vec<String>,
}

/// A requirement of one file, checked in what is there (not against the exact text
/// `setup` would write: an entry with `--diagnostics` or `--trust-headless` is set up).
pub struct Requirement {
    pub path: PathBuf,
    pub what: String,
    pub met: bool,
    /// What fixes it when `setup` itself does not (else the `setup` command).
    pub fix: Option<String>,
}

impl Requirement {
    pub fn new(path: PathBuf, what: impl Into<String>, met: bool) -> Self {
        Self { path, what: what.into(), met, fix: None }
    }
}

pub(crate) fn json_at(path: &Path) -> Value {
    read(path).ok().flatten().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or(Value::Null)
}

pub(crate) fn lists(value: &Value, item: &str) -> bool {
    value.as_array().is_some_and(|items| items.iter().any(|entry| entry == item))
}

fn requirements(options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
    if !options.agent.scopes().contains(&options.scope) {
        return Err(unsupported_scope(options));
    }
    options.agent.cli().requirements(options)
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
    hook::HookSpec::all(options.agent)
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

/// The hook runs: `--check` runs it on a harmless input and wants no decision.
fn hook_run_requirement(options: &SetupOptions) -> Option<Requirement> {
    let cli = options.agent.cli();
    let hooks_file = cli.hook_file(options).ok()?;
    let command = cli.configured_hook_command(options)?;
    let result = hook::run(&command, options, &options.hook_env);
    let what = match &result {
        Ok(()) => format!("the hook runs: `{command}` answers a harmless input with no decision, exit 0"),
        Err(why) => format!(
            "the hook does not run as a hook must (`{command}`, a harmless input, in {}): {why}",
            options.project.display()
        ),
    };
    let fix = result.is_err().then(|| {
        format!(
            "make `{command}` work in a shell of yours (is `verbatim` on the PATH {} runs with, and as recent as this one?)",
            options.agent.name()
        )
    });
    Some(Requirement { path: hooks_file, what, met: result.is_ok(), fix })
}

/// The command that sets up `options` (for `fix:` lines).
fn fix_command(options: &SetupOptions) -> String {
    let mut command = format!("verbatim setup {}", options.agent.name());
    if options.scope == Scope::User {
        command.push_str(" --user");
    }
    command.push_str(&options.agent.cli().fix_flags(options));
    if !options.hook {
        command.push_str(" --no-hook");
    }
    command.push_str(" --write");
    command
}

/// What is configured and what is missing, one line each; `true` when all is set.
pub fn check(options: &SetupOptions) -> Result<(bool, Vec<String>), SetupError> {
    let report = check_report(options)?;
    Ok((report.configured, report.lines))
}

fn check_report(options: &SetupOptions) -> Result<CheckReport, SetupError> {
    let mut requirements = requirements(options)?;
    if options.hook {
        requirements.extend(hook_run_requirement(options));
    }
    let configured = requirements.iter().all(|requirement| requirement.met);
    let mut lines: Vec<String> = requirements
        .iter()
        .map(|requirement| {
            let state = match (requirement.met, requirement.fix.is_some()) {
                (true, _) => "ok     ",
                (false, false) => "missing",
                (false, true) => "failed ",
            };
            format!("{state} {}: {}", requirement.path.display(), requirement.what)
        })
        .collect();
    for requirement in requirements.iter().filter(|requirement| !requirement.met) {
        if let Some(fix) = &requirement.fix {
            lines.push(format!("fix:    {fix}"));
        }
    }
    if requirements.iter().any(|requirement| !requirement.met && requirement.fix.is_none()) {
        lines.push(format!("fix:    {}", fix_command(options)));
    }
    lines.extend(options.agent.cli().check_lines(options));
    Ok(CheckReport { configured, lines })
}

/// `verbatim setup --check` with no agent: every agent, in the scope where it is set
/// up (or the one closest to it), each with what is missing and the command that
/// fixes it. `true` when every agent is set up.
pub fn check_all(base: &SetupOptions) -> (bool, Vec<String>) {
    let mut all = true;
    let mut lines = Vec::new();
    for agent in Agent::ALL {
        // The scope closest to set up, by what its files hold (the hook is run once,
        // for that scope only).
        let mut best: Option<(usize, bool, SetupOptions)> = None;
        for &scope in agent.scopes() {
            let options = SetupOptions { agent, scope, trust_folder: false, ..base.clone() };
            let Ok(requirements) = requirements(&options) else { continue };
            let met = requirements.iter().filter(|requirement| requirement.met).count();
            let complete = met == requirements.len();
            let better = match &best {
                None => true,
                Some((best_met, best_complete, _)) => !best_complete && (complete || met > *best_met),
            };
            if better {
                best = Some((met, complete, options));
            }
        }
        let Some((_, _, options)) = best else { continue };
        let Ok(report) = check_report(&options) else { continue };
        all &= report.configured;
        let scope = match options.scope {
            Scope::Project => "project",
            Scope::User => "user",
        };
        let state = if report.configured { "set up" } else { "not set up" };
        lines.push(format!("{}: {state} ({scope})", agent.name()));
        lines.extend(report.lines.into_iter().map(|line| format!("  {line}")));
    }
    (all, lines)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
