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
//!   in a folder not trusted).
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

use serde_json::{Map, Value, json};
use verbatim_engine::diff::unified_diff_of_texts;

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
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "claude-code" | "claude" => Some(Self::ClaudeCode),
            "codex" => Some(Self::Codex),
            "gemini-cli" | "gemini" => Some(Self::GeminiCli),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::GeminiCli => "gemini-cli",
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
}

fn files(options: &SetupOptions) -> Result<Files, SetupError> {
    let (project, home, dirs) = (&options.project, &options.home, &options.dirs);
    let claude_user =
        |name: &str, fallback: PathBuf| dirs.claude_config_dir.as_ref().map_or(fallback, |dir| dir.join(name));
    let gemini_dir = dirs.gemini_cli_home.as_ref().unwrap_or(home).join(".gemini");
    let trusted_folders =
        Some(dirs.gemini_trusted_folders.clone().unwrap_or_else(|| gemini_dir.join("trustedFolders.json")));
    Ok(match (options.agent, options.scope) {
        (Agent::ClaudeCode, Scope::Project) => Files {
            servers: project.join(".mcp.json"),
            settings: Some(project.join(".claude/settings.local.json")),
            trusted_folders: None,
        },
        (Agent::ClaudeCode, Scope::User) => Files {
            servers: claude_user(".claude.json", home.join(".claude.json")),
            settings: Some(claude_user("settings.json", home.join(".claude/settings.json"))),
            trusted_folders: None,
        },
        (Agent::Codex, Scope::User) => Files {
            servers: dirs.codex_home.as_ref().map_or_else(|| home.join(".codex"), PathBuf::clone).join("config.toml"),
            settings: None,
            trusted_folders: None,
        },
        (Agent::Codex, Scope::Project) => {
            return Err(SetupError::Unsupported(
                "Codex reads its MCP servers from its own config.toml ($CODEX_HOME, else ~/.codex): run `verbatim \
                 setup codex --user`."
                    .into(),
            ));
        }
        (Agent::GeminiCli, Scope::Project) => {
            Files { servers: project.join(".gemini/settings.json"), settings: None, trusted_folders }
        }
        (Agent::GeminiCli, Scope::User) => {
            Files { servers: gemini_dir.join("settings.json"), settings: None, trusted_folders }
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
        Agent::GeminiCli => {
            json!({"command": options.command, "args": args, "timeout": TOOL_TIMEOUT_SECS * 1000, "trust": true})
        }
        _ => json!({"command": options.command, "args": args}),
    }
}

/// Adds `item` to the array at `key` of `map` (made an array if it is not one).
fn push_unique(map: &mut Map<String, Value>, key: &str, item: &str) {
    let list = map.entry(key).or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    if let Value::Array(entries) = list
        && !entries.iter().any(|entry| entry == item)
    {
        entries.push(json!(item));
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
    let before = read(&files.servers)?;
    let after = if options.agent == Agent::Codex {
        merge_codex(&files.servers, before.as_deref(), options)?
    } else {
        merge_json(&files.servers, before.as_deref(), |root| {
            let servers = object_at(root, "mcpServers");
            let entry = server_entry(options);
            // An equal entry stays as written, whatever the order of its keys.
            if servers.get("verbatim") != Some(&entry) {
                servers.insert("verbatim".into(), entry);
            }
        })?
    };
    plan.changes.push(FileChange { path: files.servers, before, after });
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
    }
    Ok(plan)
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
            });
            let approve = table
                .and_then(|table| table.get("default_tools_approval_mode")?.as_str().map(str::to_owned))
                .is_some_and(|mode| mode == "approve");
            out.push(Requirement {
                path: files.servers.clone(),
                what: "default_tools_approval_mode = \"approve\" (else `codex exec` refuses every call)".into(),
                met: approve,
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
                path: files.servers,
                what: "env_vars with XDG_RUNTIME_DIR (so the server finds the editor)".into(),
                met: forwards,
            });
        }
        Agent::ClaudeCode | Agent::GeminiCli => {
            let servers = json_at(&files.servers);
            let entry = &servers["mcpServers"]["verbatim"];
            out.push(Requirement {
                path: files.servers.clone(),
                what: "the verbatim MCP server (mcpServers.verbatim)".into(),
                met: starts_mcp(entry.get("args")),
            });
            if options.agent == Agent::GeminiCli {
                out.push(Requirement {
                    path: files.servers.clone(),
                    what: "\"trust\": true on it (else `gemini -p` offers none of its tools)".into(),
                    met: entry["trust"] == true,
                });
                if let Some(trusted) = files.trusted_folders.filter(|_| options.scope == Scope::Project) {
                    out.push(Requirement {
                        what: format!(
                            "{} trusted (else Gemini CLI keeps the project's MCP servers off)",
                            options.project.display()
                        ),
                        met: folder_trusted(&trusted, &options.project),
                        path: trusted,
                    });
                }
            }
            if let Some(settings) = files.settings {
                let settings_json = json_at(&settings);
                if options.scope == Scope::Project {
                    out.push(Requirement {
                        path: settings.clone(),
                        what: "enabledMcpjsonServers has \"verbatim\" (no \"New MCP server found\" dialog)".into(),
                        met: lists(&settings_json["enabledMcpjsonServers"], "verbatim")
                            || settings_json["enableAllProjectMcpServers"] == true,
                    });
                }
                out.push(Requirement {
                    path: settings.clone(),
                    what: format!("permissions.allow has \"{CLAUDE_ALLOW_RULE}\" (no prompt per call)"),
                    met: lists(&settings_json["permissions"]["allow"], CLAUDE_ALLOW_RULE),
                });
                if options.deny_builtin_edit {
                    out.push(Requirement {
                        path: settings,
                        what: "permissions.deny has \"Edit\"".into(),
                        met: lists(&settings_json["permissions"]["deny"], "Edit"),
                    });
                }
            }
        }
    }
    Ok(out)
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
    command.push_str(" --write");
    command
}

/// What is configured and what is missing, one line each; `true` when all is set.
pub fn check(options: &SetupOptions) -> Result<(bool, Vec<String>), SetupError> {
    let report = check_report(options)?;
    Ok((report.configured, report.lines))
}

fn check_report(options: &SetupOptions) -> Result<CheckReport, SetupError> {
    let requirements = requirements(options)?;
    let configured = requirements.iter().all(|requirement| requirement.met);
    let mut lines: Vec<String> = requirements
        .iter()
        .map(|requirement| {
            format!(
                "{} {}: {}",
                if requirement.met { "ok     " } else { "missing" },
                requirement.path.display(),
                requirement.what
            )
        })
        .collect();
    if !configured {
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
        let mut best: Option<(usize, CheckReport, Scope)> = None;
        for &scope in agent.scopes() {
            let options = SetupOptions { agent, scope, trust_folder: false, ..base.clone() };
            let Ok(requirements) = requirements(&options) else { continue };
            let met = requirements.iter().filter(|requirement| requirement.met).count();
            let Ok(report) = check_report(&options) else { continue };
            let better = match &best {
                None => true,
                Some((best_met, best_report, _)) => !best_report.configured && (report.configured || met > *best_met),
            };
            if better {
                best = Some((met, report, scope));
            }
        }
        let Some((_, report, scope)) = best else { continue };
        all &= report.configured;
        let scope = match scope {
            Scope::Project => "project",
            Scope::User => "user",
        };
        let state = if report.configured { "set up" } else { "not set up" };
        lines.push(format!("{}: {state} ({scope})", agent.name()));
        lines.extend(report.lines.into_iter().map(|line| format!("  {line}")));
    }
    (all, lines)
}

/// Which editors Claude Code can connect to as its IDE from `project` (informational:
/// the MCP setup works without one).
fn ide_lines(project: &Path, lock_dir: Option<&Path>) -> Vec<String> {
    use crate::transport::ide_lock::{IDE_NAME_SUFFIX, LockContent};
    let Some(lock_dir) = lock_dir else {
        return vec!["info    IDE: no HOME nor CLAUDE_CONFIG_DIR, so no editor can be found".into()];
    };
    let mut ours = Vec::new();
    let mut others = Vec::new();
    for entry in std::fs::read_dir(lock_dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let Some(port) = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .filter(|_| path.extension().is_some_and(|ext| ext == "lock"))
        else {
            continue;
        };
        let Ok(lock) = serde_json::from_slice::<LockContent>(&std::fs::read(&path).unwrap_or_default()) else {
            continue;
        };
        if !crate::transport::discovery::process_alive(lock.pid)
            || !lock.workspace_folders.iter().any(|folder| project.starts_with(folder))
        {
            continue;
        }
        let line = format!("{} (port {port})", lock.ide_name);
        if lock.ide_name.ends_with(IDE_NAME_SUFFIX) { ours.push(line) } else { others.push(line) }
    }
    let mut lines = Vec::new();
    if ours.is_empty() {
        lines.push(format!(
            "info    IDE: no editor running Verbatim has {} open: open it in Neovim or VS Code with Verbatim, and \
             Claude Code's own edits are reviewed there",
            project.display()
        ));
    } else {
        lines.push(format!(
            "ok      IDE: {} serves this project: `claude` in the editor's terminal connects by itself; elsewhere \
             `claude --ide`",
            ours.join(", ")
        ));
    }
    if !others.is_empty() {
        lines.push(format!(
            "info    IDE: {} too (another IDE integration, such as Anthropic's own extension): in a terminal an editor \
             opened, Claude Code connects to that editor's port (CLAUDE_CODE_SSE_PORT); `claude --ide` or /ide lets you \
             choose. Turn one off to leave no doubt (Verbatim: verbatim.claudeCode.enabled, or claude_code = false)",
            others.join(", ")
        ));
    }
    lines
}

fn object_at<'a>(root: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let value = root.entry(key).or_insert_with(|| json!({}));
    if !value.is_object() {
        *value = json!({});
    }
    match value {
        Value::Object(map) => map,
        _ => unreachable!("just made an object"),
    }
}

/// Merges into a JSON file's text (or a new one); every other key stays as it was.
fn merge_json(
    path: &Path,
    text: Option<&str>,
    change: impl FnOnce(&mut Map<String, Value>),
) -> Result<String, SetupError> {
    let mut root = match text.map(str::trim) {
        None | Some("") => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(unmergeable(path, "it is JSON, but not an object", change));
            }
            Err(error) => {
                let why = if text.contains("//") || text.contains("/*") {
                    "it has comments, which a JSON writer would drop".to_owned()
                } else {
                    format!("it is not valid JSON: {error}")
                };
                return Err(unmergeable(path, &why, change));
            }
        },
    };
    let before = root.clone();
    change(&mut root);
    if text.is_some() && root == before {
        // Already configured: leave the file byte for byte as it is.
        return Ok(text.unwrap_or_default().to_owned());
    }
    let mut out = serde_json::to_string_pretty(&Value::Object(root))
        .map_err(|error| SetupError::Io(format!("cannot write JSON: {error}")))?;
    out.push('\n');
    Ok(out)
}

fn unmergeable(path: &Path, why: &str, change: impl FnOnce(&mut Map<String, Value>)) -> SetupError {
    let mut entry = Map::new();
    change(&mut entry);
    let by_hand = serde_json::to_string_pretty(&Value::Object(entry)).unwrap_or_default();
    SetupError::Unmergeable { path: path.to_owned(), why: why.to_owned(), by_hand }
}

/// Merges `[mcp_servers.verbatim]` into Codex's TOML; comments and order survive.
fn merge_codex(path: &Path, text: Option<&str>, options: &SetupOptions) -> Result<String, SetupError> {
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
mod tests {
    use super::*;

    fn options(agent: Agent, scope: Scope, dir: &Path) -> SetupOptions {
        SetupOptions {
            agent,
            scope,
            deny_builtin_edit: false,
            project: dir.join("project"),
            home: dir.join("home"),
            dirs: AgentDirs::default(),
            command: "verbatim".into(),
            diagnostics: false,
            trust_headless: false,
            trust_folder: false,
        }
    }

    /// Plans, writes, and checks that a second plan changes nothing.
    fn setup_twice(options: &SetupOptions) -> Plan {
        let first = plan(options).unwrap();
        write(&first).unwrap();
        let second = plan(options).unwrap();
        assert!(second.changes.iter().all(|change| !change.changes_anything()), "{second:?}");
        assert!(check(options).unwrap().0);
        first
    }

    #[test]
    fn claude_code_in_a_fresh_project_gets_the_server_and_on_request_the_deny_rule() {
        let dir = tempfile::tempdir().unwrap();
        let options =
            SetupOptions { deny_builtin_edit: true, ..options(Agent::ClaudeCode, Scope::Project, dir.path()) };
        assert!(!check(&options).unwrap().0);
        let plan = setup_twice(&options);
        assert_eq!(
            plan.changes[0].diff(),
            format!(
                "--- /dev/null\n+++ {0}/project/.mcp.json\n@@ -0,0 +1,11 @@\n+{{\n+  \"mcpServers\": {{\n+    \"verbatim\": {{\n\
                 +      \"command\": \"verbatim\",\n+      \"args\": [\n+        \"mcp\",\n+        \"--no-headless-writes\"\n\
                 +      ]\n+    }}\n+  }}\n+}}\n",
                dir.path().display()
            )
        );
        let settings: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("project/.claude/settings.local.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            settings,
            json!({"enabledMcpjsonServers": ["verbatim"], "permissions": {"allow": ["mcp__verbatim"], "deny": ["Edit"]}})
        );
        assert!(!dir.path().join("project/.claude/settings.json").exists(), "the shared settings stay as they are");
    }

    #[test]
    fn existing_settings_keep_every_other_key_and_server() {
        let dir = tempfile::tempdir().unwrap();
        let options =
            SetupOptions { deny_builtin_edit: true, ..options(Agent::ClaudeCode, Scope::Project, dir.path()) };
        std::fs::create_dir_all(dir.path().join("project/.claude")).unwrap();
        std::fs::write(
            dir.path().join("project/.mcp.json"),
            r#"{"mcpServers": {"other": {"command": "other-server"}}, "extra": [1, 2]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("project/.claude/settings.local.json"),
            r#"{"permissions": {"allow": ["Bash(ls)"], "deny": ["Read(.env)"]}, "model": "opus"}"#,
        )
        .unwrap();
        setup_twice(&options);
        let servers: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("project/.mcp.json")).unwrap()).unwrap();
        assert_eq!(
            servers,
            json!({"mcpServers": {"other": {"command": "other-server"}, "verbatim": {"command": "verbatim", "args": ["mcp", "--no-headless-writes"]}}, "extra": [1, 2]})
        );
        let settings: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("project/.claude/settings.local.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            settings,
            json!({"permissions": {"allow": ["Bash(ls)", "mcp__verbatim"], "deny": ["Read(.env)", "Edit"]}, "model": "opus", "enabledMcpjsonServers": ["verbatim"]})
        );
    }

    #[test]
    fn the_keys_of_a_json_file_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let options = SetupOptions { trust_folder: true, ..options(Agent::GeminiCli, Scope::Project, dir.path()) };
        std::fs::create_dir_all(dir.path().join("project/.gemini")).unwrap();
        let path = dir.path().join("project/.gemini/settings.json");
        std::fs::write(&path, "{\n  \"theme\": \"dark\",\n  \"autoAccept\": false\n}\n").unwrap();
        let plan = setup_twice(&options);
        let text = std::fs::read_to_string(&path).unwrap();
        let (theme, auto, servers) = (
            text.find("\"theme\"").unwrap(),
            text.find("\"autoAccept\"").unwrap(),
            text.find("\"mcpServers\"").unwrap(),
        );
        assert!(theme < auto && auto < servers, "the person's keys first, as they were; the new one last:\n{text}");
        let diff = plan.changes[0].diff();
        assert!(!diff.contains("-  \"theme\""), "no line of the person's moves:\n{diff}");
    }

    #[test]
    fn an_entry_written_with_its_keys_in_another_order_is_already_configured() {
        let dir = tempfile::tempdir().unwrap();
        let options = options(Agent::ClaudeCode, Scope::Project, dir.path());
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        let written = "{\n  \"mcpServers\": {\n    \"verbatim\": {\n      \"args\": [\n        \"mcp\",\n        \"--no-headless-writes\"\n      ],\n      \"command\": \"verbatim\"\n    }\n  }\n}\n";
        std::fs::write(dir.path().join("project/.mcp.json"), written).unwrap();
        let plan = plan(&options).unwrap();
        assert!(!plan.changes[0].changes_anything(), "{}", plan.changes[0].diff());
    }

    #[test]
    fn diagnostics_start_the_server_with_its_flag_and_a_second_run_drops_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let with = SetupOptions {
            diagnostics: true,
            trust_folder: true,
            ..options(Agent::GeminiCli, Scope::Project, dir.path())
        };
        setup_twice(&with);
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("project/.gemini/settings.json")).unwrap())
                .unwrap();
        assert_eq!(settings["mcpServers"]["verbatim"]["args"], json!(["mcp", "--no-headless-writes", "--diagnostics"]));
        // Without the flag, setup sets the entry back: it says what it will change.
        let without = options(Agent::GeminiCli, Scope::Project, dir.path());
        assert!(plan(&without).unwrap().changes[0].diff().contains("-        \"--diagnostics\""));
        let codex = SetupOptions { diagnostics: true, ..options(Agent::Codex, Scope::User, dir.path()) };
        setup_twice(&codex);
        let toml = std::fs::read_to_string(dir.path().join("home/.codex/config.toml")).unwrap();
        assert!(toml.contains("args = [\"mcp\", \"--no-headless-writes\", \"--diagnostics\"]"), "{toml}");
    }

    #[test]
    fn by_default_the_builtin_edit_stays_allowed_and_verbatim_s_tools_need_no_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let options = options(Agent::ClaudeCode, Scope::User, dir.path());
        let plan = setup_twice(&options);
        assert_eq!(plan.changes.len(), 2);
        assert!(dir.path().join("home/.claude.json").exists());
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("home/.claude/settings.json")).unwrap())
                .unwrap();
        assert_eq!(settings, json!({"permissions": {"allow": ["mcp__verbatim"]}}), "no deny rule, no dialog key");
    }

    #[test]
    fn check_names_the_editors_that_serve_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let lock = |port: u16, name: &str, pid: u32| {
            let content = crate::transport::ide_lock::LockContent {
                pid,
                workspace_folders: vec![project.display().to_string()],
                ide_name: name.into(),
                transport: "ws".into(),
                auth_token: "t".into(),
            };
            std::fs::write(dir.path().join(format!("{port}.lock")), serde_json::to_vec(&content).unwrap()).unwrap();
        };
        let none = ide_lines(&project.join("src"), Some(dir.path()));
        assert!(none[0].starts_with("info    IDE: no editor running Verbatim"), "{none:?}");
        lock(1111, "Neovim (Verbatim)", std::process::id());
        lock(2222, "Visual Studio Code", std::process::id());
        lock(3333, "Neovim (Verbatim)", u32::MAX - 1);
        let lines = ide_lines(&project.join("src"), Some(dir.path()));
        assert!(lines[0].starts_with("ok      IDE: Neovim (Verbatim) (port 1111) serves"), "{lines:?}");
        assert!(lines[1].contains("Visual Studio Code (port 2222) too"), "{lines:?}");
        assert_eq!(lines.len(), 2, "a dead process's lock file is not listed");
    }

    #[test]
    fn a_json_file_with_comments_is_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        let options = options(Agent::GeminiCli, Scope::Project, dir.path());
        std::fs::create_dir_all(dir.path().join("project/.gemini")).unwrap();
        let text = "{\n  // my theme\n  \"theme\": \"dark\"\n}\n";
        std::fs::write(dir.path().join("project/.gemini/settings.json"), text).unwrap();
        let error = plan(&options).unwrap_err();
        assert!(error.to_string().contains("it has comments"), "{error}");
        assert!(error.to_string().contains("\"timeout\": 600000"), "{error}");
        assert_eq!(std::fs::read_to_string(dir.path().join("project/.gemini/settings.json")).unwrap(), text);
    }

    #[test]
    fn gemini_cli_gets_the_server_with_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let options = options(Agent::GeminiCli, Scope::User, dir.path());
        std::fs::create_dir_all(dir.path().join("home/.gemini")).unwrap();
        std::fs::write(dir.path().join("home/.gemini/settings.json"), r#"{"theme": "dark"}"#).unwrap();
        setup_twice(&options);
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("home/.gemini/settings.json")).unwrap())
                .unwrap();
        assert_eq!(
            settings,
            json!({"theme": "dark", "mcpServers": {"verbatim": {"command": "verbatim", "args": ["mcp", "--no-headless-writes"], "timeout": 600000, "trust": true}}})
        );
    }

    #[test]
    fn codex_toml_keeps_comments_and_order_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let options = options(Agent::Codex, Scope::User, dir.path());
        std::fs::create_dir_all(dir.path().join("home/.codex")).unwrap();
        let text = "# my settings\nmodel = \"o4\" # the model\n\n[mcp_servers.other]\ncommand = \"other\"\n";
        std::fs::write(dir.path().join("home/.codex/config.toml"), text).unwrap();
        setup_twice(&options);
        let after = std::fs::read_to_string(dir.path().join("home/.codex/config.toml")).unwrap();
        assert_eq!(
            after,
            format!(
                "{text}\n[mcp_servers.verbatim]\ncommand = \"verbatim\"\nargs = [\"mcp\", \"--no-headless-writes\"]\n\
                 tool_timeout_sec = 600\ndefault_tools_approval_mode = \"approve\"\n\
                 env_vars = [\"XDG_RUNTIME_DIR\", \"VERBATIM_RUNTIME_DIR\", \"XDG_STATE_HOME\", \"VERBATIM_STATE_DIR\"]\n"
            )
        );
        assert!(matches!(
            plan(&super::tests::options(Agent::Codex, Scope::Project, dir.path())),
            Err(SetupError::Unsupported(_))
        ));
    }

    #[test]
    fn the_agents_own_variables_move_their_files() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = AgentDirs {
            claude_config_dir: Some(dir.path().join("claude-config")),
            codex_home: Some(dir.path().join("codex-home")),
            gemini_cli_home: Some(dir.path().join("gemini-home")),
            gemini_trusted_folders: None,
        };
        let with = |agent, scope| SetupOptions { dirs: dirs.clone(), ..options(agent, scope, dir.path()) };
        setup_twice(&with(Agent::ClaudeCode, Scope::User));
        assert!(dir.path().join("claude-config/.claude.json").exists());
        assert!(dir.path().join("claude-config/settings.json").exists());
        setup_twice(&with(Agent::Codex, Scope::User));
        assert!(dir.path().join("codex-home/config.toml").exists());
        setup_twice(&with(Agent::GeminiCli, Scope::User));
        assert!(dir.path().join("gemini-home/.gemini/settings.json").exists());
        assert!(!dir.path().join("home").exists(), "nothing in HOME when the agents' variables point elsewhere");
    }

    #[test]
    fn gemini_cli_trusts_the_folder_only_when_asked_and_otherwise_says_it_must() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        let untrusted = options(Agent::GeminiCli, Scope::Project, dir.path());
        let shown = plan(&untrusted).unwrap();
        assert_eq!(shown.changes.len(), 1, "no trusted folder written unless asked");
        assert!(
            shown.notes.iter().any(|note| note.contains("is not trusted") && note.contains("--trust")),
            "{shown:?}"
        );
        write(&shown).unwrap();
        let (configured, lines) = check(&untrusted).unwrap();
        assert!(!configured);
        assert!(lines.iter().any(|line| line.starts_with("missing") && line.contains("trusted")), "{lines:?}");
        assert!(lines.iter().any(|line| line == "fix:    verbatim setup gemini-cli --trust --write"), "{lines:?}");

        let trusted = SetupOptions { trust_folder: true, ..untrusted.clone() };
        setup_twice(&trusted);
        let folders: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("home/.gemini/trustedFolders.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(folders, json!({dir.path().join("project").display().to_string(): "TRUST_FOLDER"}));
        assert!(check(&untrusted).unwrap().0, "trusted now, with or without --trust");
        let wrong = SetupOptions { trust_folder: true, ..options(Agent::Codex, Scope::User, dir.path()) };
        assert!(matches!(plan(&wrong), Err(SetupError::Unsupported(message)) if message.contains("gemini-cli")));
    }

    #[test]
    fn trust_headless_starts_the_server_without_the_refusal() {
        let dir = tempfile::tempdir().unwrap();
        let trusting = SetupOptions { trust_headless: true, ..options(Agent::ClaudeCode, Scope::Project, dir.path()) };
        let plan = setup_twice(&trusting);
        assert!(plan.changes[0].after.contains("\"mcp\"\n") && !plan.changes[0].after.contains("--no-headless"));
        assert!(plan.notes.iter().any(|note| note.starts_with("--trust-headless")), "{plan:?}");
        // A server set up either way counts as set up.
        assert!(check(&options(Agent::ClaudeCode, Scope::Project, dir.path())).unwrap().0);
    }

    #[test]
    fn check_all_reports_every_agent_fresh_half_and_fully_set_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        let base = options(Agent::ClaudeCode, Scope::Project, dir.path());
        let (all, lines) = check_all(&base);
        assert!(!all);
        for fix in [
            "fix:    verbatim setup claude-code --write",
            "fix:    verbatim setup codex --user --write",
            "fix:    verbatim setup gemini-cli --trust --write",
        ] {
            assert!(lines.iter().any(|line| line.trim() == fix), "{fix} not in {lines:#?}");
        }
        // Half: Claude Code's server without its permissions (as `claude mcp add` leaves it).
        std::fs::write(
            dir.path().join("project/.mcp.json"),
            r#"{"mcpServers": {"verbatim": {"command": "verbatim", "args": ["mcp"]}}}"#,
        )
        .unwrap();
        let (_, lines) = check_all(&base);
        let claude: Vec<&String> = lines.iter().take_while(|line| !line.starts_with("codex")).collect();
        assert!(claude[0].starts_with("claude-code: not set up (project)"), "{claude:#?}");
        assert!(
            claude.iter().any(|line| line.trim_start().starts_with("ok") && line.contains(".mcp.json")),
            "{claude:#?}"
        );
        assert!(
            claude.iter().any(|line| line.trim_start().starts_with("missing") && line.contains("settings.local.json"))
        );
        // Everything.
        for options in [
            options(Agent::ClaudeCode, Scope::Project, dir.path()),
            options(Agent::Codex, Scope::User, dir.path()),
            SetupOptions { trust_folder: true, ..options(Agent::GeminiCli, Scope::User, dir.path()) },
        ] {
            write(&plan(&options).unwrap()).unwrap();
        }
        let (all, lines) = check_all(&base);
        assert!(all, "{lines:#?}");
        assert!(lines.iter().any(|line| line == "gemini-cli: set up (user)"), "{lines:#?}");
        assert!(!lines.iter().any(|line| line.contains("fix:")), "{lines:#?}");
    }
}
