//! What `verbatim setup` works with, whatever the agent: the scope, the agents' own
//! directories, a plan of file changes, its errors, the requirements `--check` checks,
//! and the hooks an agent gets ([`HookSpec`]).

use std::fmt;
use std::path::PathBuf;

use verbatim_engine::diff::unified_diff_of_texts;

/// How long an agent should wait for one tool call: a person may be reviewing.
pub const TOOL_TIMEOUT_SECS: u64 = 600;

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

/// Where and how an agent runs the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSpec {
    /// The key under `hooks`.
    pub event: &'static str,
    /// The agent's edit tools, as its matcher spells them (empty: no matcher).
    pub matcher: &'static str,
    /// Long enough for a person to review, in the agent's unit.
    pub timeout: u64,
    /// The timeout is in milliseconds (else seconds).
    pub millis: bool,
    /// How the event's list holds a hook.
    pub shape: HookShape,
}

/// How an event's list holds a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookShape {
    /// Claude Code's: groups `{matcher, hooks: [{type: "command", command, timeout}]}`.
    Grouped,
    /// GitHub Copilot CLI's: the handlers themselves, `{type: "command", bash, timeoutSec}`.
    Flat,
}

impl HookSpec {
    /// A hook in Claude Code's shape, with a timeout in seconds.
    pub const fn grouped(event: &'static str, matcher: &'static str, timeout: u64) -> Self {
        Self { event, matcher, timeout, millis: false, shape: HookShape::Grouped }
    }

    /// The timeout's unit, for notes.
    pub fn unit(self) -> &'static str {
        if self.millis { "ms" } else { "s" }
    }
}
