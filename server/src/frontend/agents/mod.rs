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

pub mod cli;

pub use cli::{AgentCli, CLAUDE_FIELDS, ChangedInput, EditTool, Fields, HookCall, SetupOptions, Verdict};

use crate::frontend::setup::types::Scope;

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

#[cfg(test)]
mod tests;
