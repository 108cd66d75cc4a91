//! The command line's grammar: every subcommand and option of `verbatim`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::exit::EXIT_CODES_HELP;

#[derive(Debug, Parser)]
#[command(
    name = "verbatim",
    version,
    about = "Let AI agents edit files inside your editor by quoting text",
    long_about = "Let AI agents edit files inside your editor by quoting text.\n\n\
        Editors start `verbatim lsp`. Agents call the other commands (or `verbatim mcp`): each one finds the \
        editor whose workspace folder holds the file and sends the edit there for review; when no editor serves \
        the file, it edits the file on disk (headless).",
    after_help = EXIT_CODES_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The commands. A new protocol method becomes a variant here from whose arguments
/// `cli::call` builds the method's params type and sends it through
/// `Frontend::request`, like `Patch`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve an editor on stdio (the editor starts this) and agents on a Unix socket.
    Lsp {
        /// Put the agent socket here instead of the runtime directory.
        #[arg(long)]
        socket: Option<PathBuf>,
        /// Write logs to this file instead of stderr.
        #[arg(long)]
        log_file: Option<PathBuf>,
        /// Accepted and ignored: the editor is always served on stdio (LSP clients add this flag).
        #[arg(long, hide = true)]
        stdio: bool,
    },
    /// Print a file's text as the editor has it (unsaved changes included), else as on disk.
    ///
    /// The text goes to stdout exactly; a header with its rev goes to stderr.
    Read {
        /// The file (absolute, relative to the current directory, or a file: URI).
        path: String,
        #[command(flatten)]
        route: RouteArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Replace a quoted piece of text (verbatim/strReplace).
    #[command(after_help = EXIT_CODES_HELP)]
    Edit(EditArgs),
    /// Replace a block, from the start of one quote through the end of another (verbatim/replaceRange).
    #[command(name = "replace-range", after_help = EXIT_CODES_HELP)]
    ReplaceRange(ReplaceRangeArgs),
    /// Apply a JSON batch from stdin, shaped like verbatim/batchEdit params, all or nothing.
    ///
    /// `uri`s may be paths, relative to the current directory.
    #[command(after_help = EXIT_CODES_HELP)]
    Batch {
        /// The summary, if the JSON has none.
        #[arg(long, short = 'm')]
        summary: Option<String>,
        /// Show the change without applying it.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        diagnostics: DiagnosticsArgs,
        #[command(flatten)]
        route: RouteArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Apply a patch from stdin (verbatim/applyPatch): OpenAI's apply_patch format or SEARCH/REPLACE blocks.
    ///
    /// All of it applies or none does. Through the editor that serves the current
    /// directory (relative paths from its workspace folders), or on disk when none does
    /// (relative paths from the current directory).
    #[command(after_help = EXIT_CODES_HELP)]
    Patch {
        /// Read the patch from this file instead of stdin.
        #[arg(long, value_name = "FILE")]
        patch_file: Option<PathBuf>,
        /// One line saying why, shown to the person who reviews the change.
        #[arg(long, short = 'm')]
        summary: String,
        /// Show the change without applying it.
        #[arg(long)]
        dry_run: bool,
        /// Match every hunk exactly, without the normalization ladder.
        #[arg(long)]
        exact: bool,
        #[command(flatten)]
        diagnostics: DiagnosticsArgs,
        #[command(flatten)]
        route: RouteArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Create a file, or replace a whole file, with the text on stdin (verbatim/write).
    #[command(after_help = EXIT_CODES_HELP)]
    Write {
        /// The file (absolute, relative to the current directory, or a file: URI).
        path: String,
        /// Read the text from this file instead of stdin.
        #[arg(long, value_name = "FILE")]
        text_file: Option<PathBuf>,
        /// Required to replace an existing file: the rev of your last read.
        #[arg(long)]
        base_rev: Option<String>,
        /// One line saying why, shown to the person who reviews the write.
        #[arg(long, short = 'm')]
        summary: String,
        #[command(flatten)]
        diagnostics: DiagnosticsArgs,
        #[command(flatten)]
        route: RouteArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// List the documents open in the editor that serves the current directory.
    Documents {
        #[command(flatten)]
        route: RouteArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// List the running verbatim servers: pid, socket, workspace folders, editor.
    Editors {
        /// Print JSON (the discovery files).
        #[arg(long)]
        json: bool,
    },
    /// Show the journal of writes for the workspace of the current directory, grouped by
    /// session and turn (--json: one entry per line with its id, session and turn).
    Log(LogArgs),
    /// Undo journaled changes as a new change that keeps everything done since: an entry
    /// or write (IDs from `verbatim log`), a whole turn (--turn) or session (--session).
    ///
    /// Files open in an editor are offered there as one review; the others are written
    /// on disk (atomically, byte-exact). Where a later change touched the same lines, the
    /// revert is never applied blindly: the editor shows both texts, and on disk the
    /// lines are left as they are and listed (exit code 23).
    Revert(RevertArgs),
    /// Point an agent at verbatim: claude-code, codex, gemini-cli or qwen-code.
    ///
    /// Sets up Verbatim's MCP server and the agent's pre-write hook (`verbatim hook
    /// AGENT`, which has the agent's own edits reviewed in the editor before they are
    /// written; --no-hook leaves it out; for Codex, its trust is recorded in config.toml).
    ///
    /// Shows the change to the agent's configuration as a diff; writes it only with --write.
    /// Merges into existing files and keeps every other key (TOML comments too); a second
    /// run changes nothing. Afterwards the agent calls Verbatim's tools with no dialog and no
    /// prompt: an edit that goes to the editor is reviewed there. A write where no editor
    /// serves the file would have no review, so it is refused and the agent is told to use
    /// its own edit tool, whose permission prompt asks you; --trust-headless lets Verbatim
    /// write such files itself. `verbatim setup --check` checks every agent.
    Setup(SetupArgs),
    /// Review an agent's own edit in the editor before it writes: the pre-write hook of
    /// claude-code, codex, gemini-cli, qwen-code, copilot, droid, or opencode's plugin
    /// (`verbatim setup AGENT --write` installs it).
    ///
    /// Reads the hook's JSON on stdin and answers on stdout in that agent's terms: allow
    /// when the person kept every hunk, allow with changed input that writes exactly what
    /// they kept (and tells the model what was left out and why), or deny with their
    /// reason. When no editor with Verbatim serves the file, or anything fails, it prints
    /// nothing (no decision: the agent's own flow goes on), explains on stderr, and exits 0.
    Hook(HookArgs),
    /// Serve the Model Context Protocol on stdio: tools for reading and editing files.
    Mcp {
        #[command(flatten)]
        route: RouteArgs,
        /// Every write reports the problems it introduced and resolved, from the
        /// editor's language servers, unless the tool call says otherwise: `errors`
        /// (the default) or `warnings`.
        #[arg(long, value_name = "LEVEL", num_args = 0..=1, default_missing_value = "errors", value_parser = ["errors", "warnings"])]
        diagnostics: Option<String>,
        /// Write logs to this file instead of stderr.
        #[arg(long)]
        log_file: Option<PathBuf>,
    },
}

/// `verbatim hook`.
#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    /// The agent whose hook this is: claude-code, codex, gemini-cli, qwen-code, copilot,
    /// opencode or droid.
    pub agent: String,
    /// Withdraw a review the person has not decided after this many seconds, and tell
    /// the agent nothing was written (keep it below the agent's hook timeout).
    #[arg(long, value_name = "SECS", default_value_t = verbatim::frontend::hook::DEFAULT_REVIEW_SECS)]
    pub review_timeout: u64,
}

/// `verbatim setup`.
#[derive(Debug, Clone, Args)]
pub struct SetupArgs {
    /// claude-code, codex, gemini-cli, qwen-code, copilot, opencode or droid. Without
    /// one, --check checks them all.
    pub agent: Option<String>,
    /// Configure this project (the current directory): the default.
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Configure the user's files in the home directory.
    #[arg(long)]
    pub user: bool,
    /// Write the change (without it, only show it).
    #[arg(long, conflicts_with = "check")]
    pub write: bool,
    /// Claude Code: deny its built-in Edit tool (permissions.deny), so it edits only
    /// through Verbatim's MCP tools. Not needed when Claude Code connects to the editor
    /// as its IDE (started in the editor's terminal, or with `claude --ide`): its Edit is
    /// then reviewed in the editor. Worth it where it cannot connect (`claude -p`, a
    /// terminal on another machine), since there its Edit writes the disk behind the editor.
    #[arg(long)]
    pub deny_builtin_edit: bool,
    /// Accepted for old scripts: the built-in Edit tool now stays allowed by default.
    #[arg(long, hide = true)]
    pub keep_builtin: bool,
    /// Start the MCP server with --diagnostics: every write reports the problems it
    /// introduced and resolved, from the editor's language servers.
    #[arg(long)]
    pub diagnostics: bool,
    /// Let Verbatim write files on disk when no editor with Verbatim serves them, with
    /// no review and no prompt. Without it, such writes are refused and the agent is
    /// told to make them with its own edit tool, so that its permission prompt asks you
    /// (edits that go to the editor never prompt: the editor's review is the gate).
    #[arg(long)]
    pub trust_headless: bool,
    /// Gemini CLI: trust the project folder (in Gemini CLI's trustedFolders.json).
    /// Gemini CLI turns off a project's MCP servers in a folder it does not trust.
    #[arg(long)]
    pub trust: bool,
    /// Leave out the pre-write hook (`verbatim hook AGENT`, run by the agent before its
    /// own edit tool writes, so that the edit is reviewed in the editor first). It does
    /// not remove a hook that is already there: delete it from the file setup names.
    /// With --check: the hook is not required.
    #[arg(long)]
    pub no_hook: bool,
    /// Report what is configured and what is missing, and the command that fixes it;
    /// exits 2 if anything is missing. Runs the pre-write hook on a harmless input to
    /// see that it works. Without an agent: every agent.
    #[arg(long)]
    pub check: bool,
}

/// How a command answers.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Print the result as JSON: the protocol's result plus "via" ("editor" or "headless").
    #[arg(long)]
    pub json: bool,
}

/// How a command reaches documents.
#[derive(Debug, Clone, Args)]
pub struct RouteArgs {
    /// Use the verbatim server on this socket instead of finding one.
    #[arg(long, conflicts_with = "headless")]
    pub socket: Option<PathBuf>,
    /// Edit files on disk even when an editor serves them.
    #[arg(long)]
    pub headless: bool,
    /// The agent's name, shown in the editor's review and in the journal.
    #[arg(long)]
    pub agent: Option<String>,
    /// Without an editor, only touch files inside this folder (may be repeated).
    #[arg(long, value_name = "DIR")]
    pub root: Vec<PathBuf>,
    /// Without an editor, commit every write to git, with the summary as the message.
    #[arg(long)]
    pub git_commit: bool,
    /// The agent's turn (the person's request it works on), for the journal's timeline.
    #[arg(long, value_name = "TURN")]
    pub turn: Option<String>,
    /// Never write a file on disk without the editor's review: when no editor with
    /// Verbatim serves the file, refuse the write (reads and dry runs still work) and
    /// say so, so that the agent uses its own edit tool, whose permission prompt asks
    /// the person. `verbatim setup` starts the MCP server with it unless --trust-headless.
    #[arg(long, conflicts_with = "headless")]
    pub no_headless_writes: bool,
}

/// A required quote: given inline or read from a file (`-` is stdin).
macro_rules! quote_args {
    ($name:ident, $field:ident, $file:ident, $flag:literal, $doc:literal) => {
        #[derive(Debug, Clone, Args)]
        #[group(required = true, multiple = false)]
        pub struct $name {
            #[doc = $doc]
            #[arg(long = $flag, allow_hyphen_values = true, value_name = "TEXT")]
            pub $field: Option<String>,
            #[arg(
                        long = concat!($flag, "-file"),
                        value_name = "FILE",
                        help = concat!("Read --", $flag, " from this file (- for stdin), so that no shell mangles it")
                    )]
            pub $file: Option<PathBuf>,
        }
    };
}

quote_args!(OldArg, old, old_file, "old", "The exact text to replace.");
quote_args!(NewArg, new, new_file, "new", "The replacement text.");
quote_args!(FromArg, from, from_file, "from", "The start of the block (included).");
quote_args!(ToArg, to, to_file, "to", "The end of the block (included).");

/// `after` and `before`: optional quotes that narrow the window.
#[derive(Debug, Clone, Args)]
pub struct WindowArgs {
    /// Only search after this quote (unique in the file).
    #[arg(long, allow_hyphen_values = true, value_name = "TEXT", conflicts_with = "after_file")]
    pub after: Option<String>,
    /// Read --after from this file (- for stdin).
    #[arg(long, value_name = "FILE")]
    pub after_file: Option<PathBuf>,
    /// Only search before this quote (unique after --after, else in the file).
    #[arg(long, allow_hyphen_values = true, value_name = "TEXT", conflicts_with = "before_file")]
    pub before: Option<String>,
    /// Read --before from this file (- for stdin).
    #[arg(long, value_name = "FILE")]
    pub before_file: Option<PathBuf>,
}

/// What every write takes.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// One line saying why, shown to the person who reviews the edit.
    #[arg(long, short = 'm')]
    pub summary: String,
    /// The rev of your last read: refuse the edit if the file changed since.
    #[arg(long)]
    pub base_rev: Option<String>,
    /// Show the change without applying it.
    #[arg(long)]
    pub dry_run: bool,
    /// Match quotes exactly, without the normalization ladder.
    #[arg(long)]
    pub exact: bool,
    #[command(flatten)]
    pub diagnostics: DiagnosticsArgs,
}

/// Ask the editor's language servers what the write changed.
#[derive(Debug, Clone, Args)]
pub struct DiagnosticsArgs {
    /// After the write, report the problems it introduced and resolved, from the
    /// editor's own language servers: `errors` (the default) or `warnings` (errors
    /// and warnings).
    #[arg(long, value_name = "LEVEL", num_args = 0..=1, default_missing_value = "errors", value_parser = ["errors", "warnings"])]
    pub diagnostics: Option<String>,
    /// How long to wait for the language servers to settle (default 2500).
    #[arg(long, value_name = "MS", requires = "diagnostics")]
    pub diagnostics_timeout_ms: Option<u64>,
}

impl DiagnosticsArgs {
    /// `--diagnostics` as the params' `diagnostics`.
    pub fn level(&self) -> Option<verbatim::service::protocol::DiagnosticsLevel> {
        self.diagnostics.as_deref().and_then(verbatim::service::protocol::DiagnosticsLevel::from_name)
    }
}

#[derive(Debug, Clone, Args)]
pub struct EditArgs {
    /// The file (absolute, relative to the current directory, or a file: URI).
    pub path: String,
    #[command(flatten)]
    pub old: OldArg,
    #[command(flatten)]
    pub new: NewArg,
    #[command(flatten)]
    pub window: WindowArgs,
    /// Replace the N-th match (1-based), as listed by an ambiguous error.
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub occurrence: Option<u64>,
    /// Replace every match.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub write: WriteArgs,
    #[command(flatten)]
    pub route: RouteArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ReplaceRangeArgs {
    /// The file (absolute, relative to the current directory, or a file: URI).
    pub path: String,
    #[command(flatten)]
    pub from: FromArg,
    #[command(flatten)]
    pub to: ToArg,
    #[command(flatten)]
    pub new: NewArg,
    #[command(flatten)]
    pub window: WindowArgs,
    #[command(flatten)]
    pub write: WriteArgs,
    #[command(flatten)]
    pub route: RouteArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RevertArgs {
    /// Entry ids (`<writeId>.<n>`) or write ids, from `verbatim log --json`.
    #[arg(value_name = "ID", conflicts_with_all = ["turn", "session"], required_unless_present_any = ["turn", "session"])]
    pub ids: Vec<String>,
    /// Revert every change of this turn.
    #[arg(long, conflicts_with = "session")]
    pub turn: Option<String>,
    /// Revert every change of this session.
    #[arg(long)]
    pub session: Option<String>,
    /// One line saying why (default: "Revert: " and what it reverts).
    #[arg(long, short = 'm')]
    pub summary: Option<String>,
    /// Show what would be reverted, and the conflicts, without changing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// The turn to journal the revert under.
    #[arg(long, value_name = "TURN")]
    pub as_turn: Option<String>,
    /// Use the verbatim server on this socket instead of finding one.
    #[arg(long, conflicts_with = "headless")]
    pub socket: Option<PathBuf>,
    /// Revert on disk even when an editor serves the files.
    #[arg(long)]
    pub headless: bool,
    /// Who reverts, as the journal and the review name it.
    #[arg(long)]
    pub agent: Option<String>,
    /// Without an editor, read only the journals of these folders and touch only their
    /// files (may be repeated).
    #[arg(long, value_name = "DIR")]
    pub root: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    /// Show at most this many entries, newest first.
    #[arg(long, short = 'n', default_value_t = 20)]
    pub limit: usize,
    /// The journal of this workspace folder instead of the current directory's.
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    pub workspace: Option<PathBuf>,
    /// Every workspace's journal.
    #[arg(long)]
    pub all: bool,
    /// Only entries about this file.
    #[arg(long)]
    pub path: Option<String>,
    /// Only entries of this agent.
    #[arg(long)]
    pub agent: Option<String>,
    /// Show each entry's diff.
    #[arg(long)]
    pub diff: bool,
    /// Print JSON lines, as stored.
    #[arg(long)]
    pub json: bool,
}
