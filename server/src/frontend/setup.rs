//! `verbatim setup AGENT`: points an agent at Verbatim's MCP server by merging the
//! right entries into its own configuration files, shown as a diff first.
//!
//! Each agent keeps its MCP servers in its own file and format: Claude Code in
//! `.mcp.json` (project) or `~/.claude.json` (user), plus `permissions.deny` in
//! `.claude/settings.json`; Codex in `~/.codex/config.toml`; Gemini CLI in
//! `.gemini/settings.json` or `~/.gemini/settings.json`. Merging never drops a key:
//! JSON is parsed and written back with every other key as it was (a file with
//! comments, which plain JSON cannot keep, is left alone and the entry is printed to
//! add by hand); TOML goes through `toml_edit`, so comments and order survive. A
//! second run changes nothing.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use verbatim_engine::diff::unified_diff_of_texts;

/// How long an agent should wait for one tool call: a person may be reviewing.
pub const TOOL_TIMEOUT_SECS: u64 = 600;

/// The agents `setup` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
}

impl Agent {
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
}

/// Where the configuration goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The project's own files (shared with everyone who clones it).
    Project,
    /// The user's files in the home directory.
    User,
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
    /// How the agent should start Verbatim's MCP server.
    pub command: String,
    /// Start it with `--diagnostics`: every write reports what the editor's language
    /// servers say after it.
    pub diagnostics: bool,
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
    /// Where the MCP server entry goes, and whether it is TOML.
    servers: PathBuf,
    /// Claude Code's settings (for `permissions.deny`).
    settings: Option<PathBuf>,
}

fn files(options: &SetupOptions) -> Result<Files, SetupError> {
    let (project, home) = (&options.project, &options.home);
    Ok(match (options.agent, options.scope) {
        (Agent::ClaudeCode, Scope::Project) => {
            Files { servers: project.join(".mcp.json"), settings: Some(project.join(".claude/settings.json")) }
        }
        (Agent::ClaudeCode, Scope::User) => {
            Files { servers: home.join(".claude.json"), settings: Some(home.join(".claude/settings.json")) }
        }
        (Agent::Codex, Scope::User) => Files { servers: home.join(".codex/config.toml"), settings: None },
        (Agent::Codex, Scope::Project) => {
            return Err(SetupError::Unsupported(
                "Codex reads its MCP servers from ~/.codex/config.toml only: run `verbatim setup codex --user`.".into(),
            ));
        }
        (Agent::GeminiCli, Scope::Project) => Files { servers: project.join(".gemini/settings.json"), settings: None },
        (Agent::GeminiCli, Scope::User) => Files { servers: home.join(".gemini/settings.json"), settings: None },
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
    if options.diagnostics { vec!["mcp", "--diagnostics"] } else { vec!["mcp"] }
}

/// The MCP server entry, as the agent's format wants it.
fn server_entry(options: &SetupOptions) -> Value {
    let args = mcp_args(options);
    match options.agent {
        Agent::GeminiCli => {
            json!({"command": options.command, "args": args, "timeout": TOOL_TIMEOUT_SECS * 1000})
        }
        _ => json!({"command": options.command, "args": args}),
    }
}

/// What `setup` would change; nothing is written.
pub fn plan(options: &SetupOptions) -> Result<Plan, SetupError> {
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
    match options.agent {
        Agent::ClaudeCode => {
            plan.notes.push(format!(
                "Claude Code waits MCP_TOOL_TIMEOUT milliseconds for a tool. A person may take minutes to review an \
                 edit: start Claude Code with MCP_TOOL_TIMEOUT={} (in your shell profile).",
                TOOL_TIMEOUT_SECS * 1000
            ));
            plan.notes.push(
                "Claude Code's own Edit and Write are reviewed in the editor before they write when Claude Code is \
                 connected to the editor as its IDE: a `claude` started in a terminal the editor opened (Neovim's \
                 :terminal, VS Code's integrated terminal) connects by itself; in any other terminal run `claude --ide` \
                 or type /ide. `verbatim setup claude-code --check` says whether an editor serves this project."
                    .into(),
            );
            if let Some(settings) = files.settings.filter(|_| options.deny_builtin_edit) {
                plan.notes.push(
                    "--deny-builtin-edit: permissions.deny gets \"Edit\", so Claude Code edits only through Verbatim's \
                     str_replace. Worth it where Claude Code cannot connect to the editor as its IDE (claude -p, a \
                     terminal on another machine): there its Edit writes the disk behind the editor."
                        .into(),
                );
                let before = read(&settings)?;
                let after = merge_json(&settings, before.as_deref(), |root| {
                    let deny = object_at(root, "permissions").entry("deny").or_insert_with(|| json!([]));
                    if !deny.is_array() {
                        *deny = json!([]);
                    }
                    if let Value::Array(entries) = deny
                        && !entries.iter().any(|entry| entry == "Edit")
                    {
                        entries.push(json!("Edit"));
                    }
                })?;
                plan.changes.push(FileChange { path: settings, before, after });
            }
        }
        Agent::Codex => plan.notes.push(format!(
            "tool_timeout_sec = {TOOL_TIMEOUT_SECS}: Codex waits that long for a tool, so a person can review an edit."
        )),
        Agent::GeminiCli => plan.notes.push(format!(
            "timeout = {}: Gemini CLI waits that long (ms) for a tool, so a person can review an edit.",
            TOOL_TIMEOUT_SECS * 1000
        )),
    }
    Ok(plan)
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

/// What is configured and what is missing, one line each; `true` when all is set.
pub fn check(options: &SetupOptions) -> Result<(bool, Vec<String>), SetupError> {
    let plan = plan(options)?;
    let mut all = true;
    let lines = plan
        .changes
        .iter()
        .map(|change| {
            let configured = !change.changes_anything();
            all &= configured;
            let what = if change.path.ends_with("settings.json") && options.agent == Agent::ClaudeCode {
                "permissions.deny has \"Edit\""
            } else {
                "the verbatim MCP server"
            };
            format!("{} {}: {what}", if configured { "ok     " } else { "missing" }, change.path.display())
        })
        .collect::<Vec<String>>();
    let mut lines = lines;
    if options.agent == Agent::ClaudeCode {
        lines.extend(ide_lines(&options.project, crate::transport::ide_lock::lock_dir().as_deref()));
    }
    Ok((all, lines))
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
    Ok(document.to_string())
}

fn codex_snippet(options: &SetupOptions) -> String {
    let args: Vec<String> = mcp_args(options).iter().map(|arg| format!("\"{arg}\"")).collect();
    format!(
        "[mcp_servers.verbatim]\ncommand = \"{}\"\nargs = [{}]\ntool_timeout_sec = {TOOL_TIMEOUT_SECS}\n",
        options.command,
        args.join(", ")
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
            command: "verbatim".into(),
            diagnostics: false,
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
                "--- /dev/null\n+++ {0}/project/.mcp.json\n@@ -0,0 +1,10 @@\n+{{\n+  \"mcpServers\": {{\n+    \"verbatim\": {{\n\
                 +      \"command\": \"verbatim\",\n+      \"args\": [\n+        \"mcp\"\n+      ]\n+    }}\n+  }}\n+}}\n",
                dir.path().display()
            )
        );
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("project/.claude/settings.json")).unwrap())
                .unwrap();
        assert_eq!(settings, json!({"permissions": {"deny": ["Edit"]}}));
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
            dir.path().join("project/.claude/settings.json"),
            r#"{"permissions": {"allow": ["Bash(ls)"], "deny": ["Read(.env)"]}, "model": "opus"}"#,
        )
        .unwrap();
        setup_twice(&options);
        let servers: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("project/.mcp.json")).unwrap()).unwrap();
        assert_eq!(
            servers,
            json!({"mcpServers": {"other": {"command": "other-server"}, "verbatim": {"command": "verbatim", "args": ["mcp"]}}, "extra": [1, 2]})
        );
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("project/.claude/settings.json")).unwrap())
                .unwrap();
        assert_eq!(
            settings,
            json!({"permissions": {"allow": ["Bash(ls)"], "deny": ["Read(.env)", "Edit"]}, "model": "opus"})
        );
    }

    #[test]
    fn the_keys_of_a_json_file_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let options = options(Agent::GeminiCli, Scope::Project, dir.path());
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
        let written = "{\n  \"mcpServers\": {\n    \"verbatim\": {\n      \"args\": [\n        \"mcp\"\n      ],\n      \"command\": \"verbatim\"\n    }\n  }\n}\n";
        std::fs::write(dir.path().join("project/.mcp.json"), written).unwrap();
        let plan = plan(&options).unwrap();
        assert!(!plan.changes[0].changes_anything(), "{}", plan.changes[0].diff());
    }

    #[test]
    fn diagnostics_start_the_server_with_its_flag_and_a_second_run_drops_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let with = SetupOptions { diagnostics: true, ..options(Agent::GeminiCli, Scope::Project, dir.path()) };
        setup_twice(&with);
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("project/.gemini/settings.json")).unwrap())
                .unwrap();
        assert_eq!(settings["mcpServers"]["verbatim"]["args"], json!(["mcp", "--diagnostics"]));
        // Without the flag, setup sets the entry back: it says what it will change.
        let without = options(Agent::GeminiCli, Scope::Project, dir.path());
        assert!(plan(&without).unwrap().changes[0].diff().contains("-        \"--diagnostics\""));
        let codex = SetupOptions { diagnostics: true, ..options(Agent::Codex, Scope::User, dir.path()) };
        setup_twice(&codex);
        let toml = std::fs::read_to_string(dir.path().join("home/.codex/config.toml")).unwrap();
        assert!(toml.contains("args = [\"mcp\", \"--diagnostics\"]"), "{toml}");
    }

    #[test]
    fn by_default_the_builtin_edit_stays_allowed_and_the_settings_alone() {
        let dir = tempfile::tempdir().unwrap();
        let options = options(Agent::ClaudeCode, Scope::User, dir.path());
        let plan = setup_twice(&options);
        assert_eq!(plan.changes.len(), 1);
        assert!(dir.path().join("home/.claude.json").exists());
        assert!(!dir.path().join("home/.claude/settings.json").exists());
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
            json!({"theme": "dark", "mcpServers": {"verbatim": {"command": "verbatim", "args": ["mcp"], "timeout": 600000}}})
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
                "{text}\n[mcp_servers.verbatim]\ncommand = \"verbatim\"\nargs = [\"mcp\"]\ntool_timeout_sec = 600\n"
            )
        );
        assert!(matches!(
            plan(&super::tests::options(Agent::Codex, Scope::Project, dir.path())),
            Err(SetupError::Unsupported(_))
        ));
    }
}
