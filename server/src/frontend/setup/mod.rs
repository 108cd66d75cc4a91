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
mod ide;
mod json_merge;

use std::ffi::OsString;

use ide::ide_lines;
use json_merge::{merge_json, object_at, push_unique};

/// How long an agent should wait for one tool call: a person may be reviewing.
pub const TOOL_TIMEOUT_SECS: u64 = 600;

/// Claude Code's permission rule for every tool of the server.
const CLAUDE_ALLOW_RULE: &str = "mcp__verbatim";

/// What Codex passes on to the server: where the editor's discovery files and the
/// journal are (it gives MCP servers only HOME, LANG, PATH, PWD and TMPDIR).
const CODEX_ENV_VARS: [&str; 4] = ["XDG_RUNTIME_DIR", "VERBATIM_RUNTIME_DIR", "XDG_STATE_HOME", "VERBATIM_STATE_DIR"];

/// The agents `setup` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
    QwenCode,
}

impl Agent {
    pub const ALL: [Agent; 4] = [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli, Agent::QwenCode];

    /// Every agent's name, for messages.
    pub const NAMES: &str = "claude-code, codex, gemini-cli or qwen-code";

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "claude-code" | "claude" => Some(Self::ClaudeCode),
            "codex" => Some(Self::Codex),
            "gemini-cli" | "gemini" => Some(Self::GeminiCli),
            "qwen-code" | "qwen" => Some(Self::QwenCode),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::GeminiCli => "gemini-cli",
            Self::QwenCode => "qwen-code",
        }
    }

    /// The scopes this agent can be set up in, the usual one first.
    fn scopes(self) -> &'static [Scope] {
        match self {
            Self::Codex => &[Scope::User],
            _ => &[Scope::Project, Scope::User],
        }
    }
}

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

/// The files an agent's setup touches.
struct Files {
    /// Where the MCP server entry goes.
    servers: PathBuf,
    /// Claude Code's settings (permissions, the project server enabled).
    settings: Option<PathBuf>,
    /// Gemini CLI's trusted folders.
    trusted_folders: Option<PathBuf>,
    /// Where the pre-write hook goes: one of the files above, or Codex's `hooks.json`.
    hooks: PathBuf,
}

fn files(options: &SetupOptions) -> Result<Files, SetupError> {
    let (project, home, dirs) = (&options.project, &options.home, &options.dirs);
    let claude_user =
        |name: &str, fallback: PathBuf| dirs.claude_config_dir.as_ref().map_or(fallback, |dir| dir.join(name));
    let gemini_dir = dirs.gemini_cli_home.as_ref().unwrap_or(home).join(".gemini");
    let trusted_folders =
        Some(dirs.gemini_trusted_folders.clone().unwrap_or_else(|| gemini_dir.join("trustedFolders.json")));
    // Settings that hold both the server and the hook.
    let both = |settings: PathBuf, trusted_folders: Option<PathBuf>| Files {
        servers: settings.clone(),
        settings: None,
        trusted_folders,
        hooks: settings,
    };
    Ok(match (options.agent, options.scope) {
        (Agent::ClaudeCode, Scope::Project) => {
            let settings = project.join(".claude/settings.local.json");
            Files {
                servers: project.join(".mcp.json"),
                settings: Some(settings.clone()),
                trusted_folders: None,
                hooks: settings,
            }
        }
        (Agent::ClaudeCode, Scope::User) => {
            let settings = claude_user("settings.json", home.join(".claude/settings.json"));
            Files {
                servers: claude_user(".claude.json", home.join(".claude.json")),
                settings: Some(settings.clone()),
                trusted_folders: None,
                hooks: settings,
            }
        }
        (Agent::Codex, Scope::User) => {
            let codex_home = dirs.codex_home.as_ref().map_or_else(|| home.join(".codex"), PathBuf::clone);
            Files {
                servers: codex_home.join("config.toml"),
                settings: None,
                trusted_folders: None,
                hooks: codex_home.join("hooks.json"),
            }
        }
        (Agent::Codex, Scope::Project) => {
            return Err(SetupError::Unsupported(
                "Codex reads its MCP servers, and the trust of its hooks, from its own config.toml ($CODEX_HOME, \
                 else ~/.codex); a project's .codex/ only once the project is trusted there: run `verbatim setup \
                 codex --user`."
                    .into(),
            ));
        }
        (Agent::GeminiCli, Scope::Project) => both(project.join(".gemini/settings.json"), trusted_folders),
        (Agent::GeminiCli, Scope::User) => both(gemini_dir.join("settings.json"), trusted_folders),
        (Agent::QwenCode, Scope::Project) => both(project.join(".qwen/settings.json"), None),
        (Agent::QwenCode, Scope::User) => {
            both(dirs.qwen_home.as_ref().map_or_else(|| home.join(".qwen"), PathBuf::clone).join("settings.json"), None)
        }
    })
}

fn read(path: &Path) -> Result<Option<String>, SetupError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(SetupError::Io(format!("cannot read {}: {error}", path.display()))),
    }
}

/// The arguments that start Verbatim's MCP server.
fn mcp_args(options: &SetupOptions) -> Vec<&'static str> {
    let mut args = vec!["mcp"];
    if !options.trust_headless {
        args.push("--no-headless-writes");
    }
    if options.diagnostics {
        args.push("--diagnostics");
    }
    args
}

/// The MCP server entry, as the agent's format wants it.
fn server_entry(options: &SetupOptions) -> Value {
    let args = mcp_args(options);
    match options.agent {
        // `trust`: no confirmation per call, and `gemini -p` offers the tools at all.
        // The editor's review is the gate; headless writes are refused unless trusted.
        Agent::GeminiCli | Agent::QwenCode => {
            json!({"command": options.command, "args": args, "timeout": TOOL_TIMEOUT_SECS * 1000, "trust": true})
        }
        _ => json!({"command": options.command, "args": args}),
    }
}

/// What `setup` would change; nothing is written.
pub fn plan(options: &SetupOptions) -> Result<Plan, SetupError> {
    if options.trust_folder && options.agent != Agent::GeminiCli {
        return Err(SetupError::Unsupported(format!(
            "--trust is for gemini-cli (it trusts the project folder); {} has no such step.",
            options.agent.name()
        )));
    }
    let files = files(options)?;
    let mut plan = Plan::default();
    let hook_in_servers = options.hook && files.hooks == files.servers;
    let before = read(&files.servers)?;
    let after = if options.agent == Agent::Codex {
        // hooks.json first: the trust recorded in config.toml is of the hook as merged.
        let trust = if options.hook {
            let hooks_before = read(&files.hooks)?;
            let hooks_after = merge_json(&files.hooks, hooks_before.as_deref(), |root| hook::merge(root, options))?;
            let trust = codex_hook_trust(options, &hooks_after);
            plan.changes.push(FileChange { path: files.hooks.clone(), before: hooks_before, after: hooks_after });
            trust
        } else {
            None
        };
        merge_codex(&files.servers, before.as_deref(), options, trust.as_ref())?
    } else {
        merge_json(&files.servers, before.as_deref(), |root| {
            let servers = object_at(root, "mcpServers");
            let entry = server_entry(options);
            // An equal entry stays as written, whatever the order of its keys.
            if servers.get("verbatim") != Some(&entry) {
                servers.insert("verbatim".into(), entry);
            }
            if hook_in_servers { hook::merge(root, options) } else { Ok(()) }
        })?
    };
    // Codex reads config.toml first; its hooks.json is listed before it only because
    // the trust is computed from it.
    plan.changes.push(FileChange { path: files.servers, before, after });
    if options.hook {
        plan.notes.push(hook_note(options, &files.hooks));
    }
    let headless_note = |tool: &str| {
        if options.trust_headless {
            "--trust-headless: where no editor with Verbatim serves a file, Verbatim writes it on disk at once, with \
             no review and no prompt."
                .to_owned()
        } else {
            format!(
                "Edits go to the editor's review with no prompt. Where no editor with Verbatim serves a file, Verbatim \
                 does not write it on disk (the server runs with --no-headless-writes): the model is told to use \
                 {tool}, whose permission prompt asks you. Add --trust-headless to let Verbatim write such files itself."
            )
        }
    };
    match options.agent {
        Agent::ClaudeCode => {
            plan.notes.push(format!(
                "Claude Code waits MCP_TOOL_TIMEOUT milliseconds for a tool. A person may take minutes to review an \
                 edit: start Claude Code with MCP_TOOL_TIMEOUT={} (in your shell profile).",
                TOOL_TIMEOUT_SECS * 1000
            ));
            plan.notes.push(headless_note("Claude Code's own Edit"));
            plan.notes.push(
                "Claude Code's own Edit and Write are reviewed in the editor before they write when Claude Code is \
                 connected to the editor as its IDE: a `claude` started in a terminal the editor opened (Neovim's \
                 :terminal, VS Code's integrated terminal) connects by itself; in any other terminal run `claude --ide` \
                 or type /ide. `verbatim setup claude-code --check` says whether an editor serves this project."
                    .into(),
            );
            if let Some(settings) = files.settings {
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
                        "--deny-builtin-edit: permissions.deny gets \"Edit\", so Claude Code edits only through \
                         Verbatim's str_replace. Worth it where Claude Code cannot connect to the editor as its IDE \
                         (claude -p, a terminal on another machine): there its Edit writes the disk behind the editor."
                            .into(),
                    );
                }
                let hook_in_settings = options.hook && files.hooks == settings;
                let before = read(&settings)?;
                let after = merge_json(&settings, before.as_deref(), |root| {
                    if project {
                        push_unique(root, "enabledMcpjsonServers", "verbatim");
                    }
                    let permissions = object_at(root, "permissions");
                    push_unique(permissions, "allow", CLAUDE_ALLOW_RULE);
                    if options.deny_builtin_edit {
                        push_unique(permissions, "deny", "Edit");
                    }
                    if hook_in_settings { hook::merge(root, options) } else { Ok(()) }
                })?;
                plan.changes.push(FileChange { path: settings, before, after });
            }
        }
        Agent::Codex => {
            plan.notes.push(format!(
                "tool_timeout_sec = {TOOL_TIMEOUT_SECS}: Codex waits that long for a tool, so a person can review an \
                 edit. default_tools_approval_mode = \"approve\": Codex calls Verbatim's tools without asking (and \
                 `codex exec` at all). env_vars: Codex passes these on, so the server finds the editor."
            ));
            plan.notes.push(headless_note("Codex's own apply_patch"));
        }
        Agent::GeminiCli => {
            plan.notes.push(format!(
                "timeout = {}: Gemini CLI waits that long (ms) for a tool, so a person can review an edit. \"trust\": \
                 true: Gemini CLI calls Verbatim's tools without a confirmation (and `gemini -p` offers them at all).",
                TOOL_TIMEOUT_SECS * 1000
            ));
            plan.notes.push(headless_note("Gemini CLI's own edit tool"));
            if let Some(trusted) = files.trusted_folders {
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
                        "Gemini CLI turns off every MCP server in a folder it does not trust, and {} is not trusted: \
                         trust it when Gemini CLI asks (or with /permissions), or run `verbatim setup gemini-cli --trust \
                         --write`, which adds it to {}.",
                        options.project.display(),
                        trusted.display()
                    ));
                }
            }
        }
        Agent::QwenCode => {
            plan.notes.push(format!(
                "timeout = {}: Qwen Code waits that long (ms) for a tool, so a person can review an edit. \"trust\": \
                 true: Qwen Code calls Verbatim's tools without a confirmation.",
                TOOL_TIMEOUT_SECS * 1000
            ));
            plan.notes.push(headless_note("Qwen Code's own edit tool"));
        }
    }
    Ok(plan)
}

/// Codex's trust entry for our hook in `hooks.json`'s text as merged.
fn codex_hook_trust(options: &SetupOptions, hooks_json: &str) -> Option<codex_trust::Trust> {
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(hooks_json) else { return None };
    let (group, handler) = hook::find(&root, options.agent)?;
    let key_path = codex_trust::hooks_file_key_path(options.dirs.codex_home.as_deref(), &options.home);
    codex_trust::trust_of(&root, &key_path, group, handler)
}

/// What the hook does, where it is, and how to leave it out.
fn hook_note(options: &SetupOptions, hooks_file: &Path) -> String {
    let spec = hook::HookSpec::of(options.agent);
    let unit = if options.agent == Agent::GeminiCli { "ms" } else { "s" };
    let trust = if options.agent == Agent::Codex {
        " Codex runs a hook only once it is trusted: setup records that trust in config.toml (hooks.state), as \
         Codex's own /hooks does, since `codex exec` skips an untrusted hook without a word."
    } else {
        ""
    };
    format!(
        "Pre-write hook in {}: `{}` runs before the agent's own edit tools ({} on {}, timeout {} {unit}), so that \
         their edits are reviewed in the editor before they are written; where no editor serves the file it answers \
         nothing and the agent goes on as without it.{trust} --no-hook leaves it out (and does not remove one \
         already there).",
        hooks_file.display(),
        hook::command(options),
        spec.event,
        spec.matcher,
        spec.timeout,
    )
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
struct Requirement {
    path: PathBuf,
    what: String,
    met: bool,
    /// What fixes it when `setup` itself does not (else the `setup` command).
    fix: Option<String>,
}

impl Requirement {
    fn new(path: PathBuf, what: impl Into<String>, met: bool) -> Self {
        Self { path, what: what.into(), met, fix: None }
    }
}

fn json_at(path: &Path) -> Value {
    read(path).ok().flatten().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or(Value::Null)
}

fn lists(value: &Value, item: &str) -> bool {
    value.as_array().is_some_and(|items| items.iter().any(|entry| entry == item))
}

fn requirements(options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
    let files = files(options)?;
    let mut out = Vec::new();
    let starts_mcp = |args: Option<&Value>| {
        args.and_then(Value::as_array).and_then(|args| args.first()).and_then(Value::as_str) == Some("mcp")
    };
    match options.agent {
        Agent::Codex => {
            let text = read(&files.servers)?.unwrap_or_default();
            let document = text.parse::<toml_edit::DocumentMut>().ok();
            let table = document.as_ref().and_then(|document| document.get("mcp_servers")?.get("verbatim"));
            let first_arg = table.and_then(|table| table.get("args")?.as_array()?.get(0)?.as_str().map(str::to_owned));
            out.push(Requirement {
                path: files.servers.clone(),
                what: "the verbatim MCP server ([mcp_servers.verbatim], args = [\"mcp\", …])".into(),
                met: first_arg.as_deref() == Some("mcp"),
                fix: None,
            });
            let approve = table
                .and_then(|table| table.get("default_tools_approval_mode")?.as_str().map(str::to_owned))
                .is_some_and(|mode| mode == "approve");
            out.push(Requirement {
                path: files.servers.clone(),
                what: "default_tools_approval_mode = \"approve\" (else `codex exec` refuses every call)".into(),
                met: approve,
                fix: None,
            });
            let forwards = table
                .and_then(|table| {
                    table
                        .get("env_vars")?
                        .as_array()
                        .map(|vars| vars.iter().any(|var| var.as_str() == Some("XDG_RUNTIME_DIR")))
                })
                .unwrap_or(false);
            out.push(Requirement {
                path: files.servers.clone(),
                what: "env_vars with XDG_RUNTIME_DIR (so the server finds the editor)".into(),
                met: forwards,
                fix: None,
            });
        }
        Agent::ClaudeCode | Agent::GeminiCli | Agent::QwenCode => {
            let servers = json_at(&files.servers);
            let entry = &servers["mcpServers"]["verbatim"];
            out.push(Requirement {
                path: files.servers.clone(),
                what: "the verbatim MCP server (mcpServers.verbatim)".into(),
                met: starts_mcp(entry.get("args")),
                fix: None,
            });
            if options.agent == Agent::QwenCode {
                out.push(Requirement::new(
                    files.servers.clone(),
                    "\"trust\": true on it (else Qwen Code confirms every call)",
                    entry["trust"] == true,
                ));
            }
            if options.agent == Agent::GeminiCli {
                out.push(Requirement {
                    path: files.servers.clone(),
                    what: "\"trust\": true on it (else `gemini -p` offers none of its tools)".into(),
                    met: entry["trust"] == true,
                    fix: None,
                });
                if let Some(trusted) = files.trusted_folders.clone().filter(|_| options.scope == Scope::Project) {
                    out.push(Requirement {
                        what: format!(
                            "{} trusted (else Gemini CLI keeps the project's MCP servers off)",
                            options.project.display()
                        ),
                        met: folder_trusted(&trusted, &options.project),
                        path: trusted,
                        fix: None,
                    });
                }
            }
            if let Some(settings) = files.settings.clone() {
                let settings_json = json_at(&settings);
                if options.scope == Scope::Project {
                    out.push(Requirement {
                        path: settings.clone(),
                        what: "enabledMcpjsonServers has \"verbatim\" (no \"New MCP server found\" dialog)".into(),
                        met: lists(&settings_json["enabledMcpjsonServers"], "verbatim")
                            || settings_json["enableAllProjectMcpServers"] == true,
                        fix: None,
                    });
                }
                out.push(Requirement {
                    path: settings.clone(),
                    what: format!("permissions.allow has \"{CLAUDE_ALLOW_RULE}\" (no prompt per call)"),
                    met: lists(&settings_json["permissions"]["allow"], CLAUDE_ALLOW_RULE),
                    fix: None,
                });
                if options.deny_builtin_edit {
                    out.push(Requirement {
                        path: settings,
                        what: "permissions.deny has \"Edit\"".into(),
                        met: lists(&settings_json["permissions"]["deny"], "Edit"),
                        fix: None,
                    });
                }
            }
        }
    }
    if options.hook {
        out.extend(hook_requirements(options, &files));
    }
    Ok(out)
}

/// The hook is there and, for Codex, trusted (that it runs is checked apart: it takes
/// a process).
fn hook_requirements(options: &SetupOptions, files: &Files) -> Vec<Requirement> {
    let root = match json_at(&files.hooks) {
        Value::Object(root) => root,
        _ => serde_json::Map::new(),
    };
    let found = hook::find(&root, options.agent);
    let mut out: Vec<Requirement> = hook::HookSpec::all(options.agent)
        .into_iter()
        .enumerate()
        .map(|(index, spec)| {
            let what = if index == 0 {
                "the pre-write hook"
            } else {
                "the hook after the write (tells the model what was left out)"
            };
            Requirement::new(
                files.hooks.clone(),
                format!("{what} (hooks.{}, matcher \"{}\": `{}`)", spec.event, spec.matcher, hook::command(options)),
                hook::find_in(&root, options.agent, spec).is_some(),
            )
        })
        .collect();
    if options.agent == Agent::Codex
        && let Some((group, handler)) = found
    {
        let key_path = codex_trust::hooks_file_key_path(options.dirs.codex_home.as_deref(), &options.home);
        let trust = codex_trust::trust_of(&root, &key_path, group, handler);
        let config = read(&files.servers).ok().flatten().unwrap_or_default();
        let key = codex_trust::key(&key_path, group, handler);
        let (recorded, disabled) = codex_trust::recorded(&config, &key);
        let trusted = trust.as_ref().is_some_and(|trust| recorded.as_deref() == Some(trust.hash.as_str()));
        let mut requirement = Requirement::new(
            files.servers.clone(),
            format!(
                "Codex trusts the hook (hooks.state.\"{key}\".trusted_hash{}; `codex exec` skips an untrusted hook)",
                if recorded.is_some() && !trusted { " is of another version of it" } else { "" }
            ),
            trusted && !disabled,
        );
        if disabled {
            requirement.what = format!("the hook is turned off in Codex (hooks.state.\"{key}\".enabled = false)");
            requirement.fix =
                Some(format!("remove `enabled = false` from [hooks.state.\"{key}\"] in {}", files.servers.display()));
        }
        out.push(requirement);
    }
    out
}

/// The hook runs: `--check` runs it on a harmless input and wants no decision.
fn hook_run_requirement(options: &SetupOptions) -> Option<Requirement> {
    let files = files(options).ok()?;
    let Value::Object(root) = json_at(&files.hooks) else { return None };
    let command = hook::configured_command(&root, options.agent)?;
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
    Some(Requirement { path: files.hooks, what, met: result.is_ok(), fix })
}

/// The command that sets up `options` (for `fix:` lines).
fn fix_command(options: &SetupOptions) -> String {
    let mut command = format!("verbatim setup {}", options.agent.name());
    if options.scope == Scope::User {
        command.push_str(" --user");
    }
    if options.deny_builtin_edit {
        command.push_str(" --deny-builtin-edit");
    }
    if options.agent == Agent::GeminiCli && options.scope == Scope::Project {
        command.push_str(" --trust");
    }
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
    if options.agent == Agent::ClaudeCode {
        let lock_dir = options
            .dirs
            .claude_config_dir
            .as_ref()
            .map(|dir| dir.join("ide"))
            .or_else(crate::transport::ide_lock::lock_dir);
        lines.extend(ide_lines(&options.project, lock_dir.as_deref()));
    }
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

/// Merges `[mcp_servers.verbatim]` into Codex's TOML; comments and order survive.
fn merge_codex(
    path: &Path,
    text: Option<&str>,
    options: &SetupOptions,
    trust: Option<&codex_trust::Trust>,
) -> Result<String, SetupError> {
    let mut document =
        text.unwrap_or("").parse::<toml_edit::DocumentMut>().map_err(|error| SetupError::Unmergeable {
            path: path.to_owned(),
            why: format!("it is not valid TOML: {error}"),
            by_hand: codex_snippet(options),
        })?;
    let servers = document.entry("mcp_servers").or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let Some(servers) = servers.as_table_mut() else {
        return Err(SetupError::Unmergeable {
            path: path.to_owned(),
            why: "mcp_servers is not a table".into(),
            by_hand: codex_snippet(options),
        });
    };
    let verbatim = servers.entry("verbatim").or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
    let Some(verbatim) = verbatim.as_table_mut() else {
        return Err(SetupError::Unmergeable {
            path: path.to_owned(),
            why: "mcp_servers.verbatim is not a table".into(),
            by_hand: codex_snippet(options),
        });
    };
    let mut set = |key: &str, value: toml_edit::Value| {
        let same = verbatim
            .get(key)
            .and_then(toml_edit::Item::as_value)
            .is_some_and(|old| old.to_string().trim() == value.to_string().trim());
        if !same {
            verbatim.insert(key, toml_edit::value(value));
        }
    };
    set("command", options.command.as_str().into());
    set("args", toml_edit::Value::Array(toml_edit::Array::from_iter(mcp_args(options))));
    set("tool_timeout_sec", i64::try_from(TOOL_TIMEOUT_SECS).unwrap_or(600).into());
    set("default_tools_approval_mode", "approve".into());
    set("env_vars", toml_edit::Value::Array(toml_edit::Array::from_iter(CODEX_ENV_VARS)));
    if let Some(trust) = trust {
        codex_trust::record(&mut document, trust).map_err(|why| SetupError::Unmergeable {
            path: path.to_owned(),
            why,
            by_hand: format!("[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n", trust.key, trust.hash),
        })?;
    }
    Ok(document.to_string())
}

fn codex_snippet(options: &SetupOptions) -> String {
    let quoted = |items: &[&str]| items.iter().map(|item| format!("\"{item}\"")).collect::<Vec<_>>().join(", ");
    format!(
        "[mcp_servers.verbatim]\ncommand = \"{}\"\nargs = [{}]\ntool_timeout_sec = {TOOL_TIMEOUT_SECS}\n\
         default_tools_approval_mode = \"approve\"\nenv_vars = [{}]\n",
        options.command,
        quoted(&mcp_args(options)),
        quoted(&CODEX_ENV_VARS)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
