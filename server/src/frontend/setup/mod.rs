//! `verbatim setup AGENT`: points an agent at Verbatim's MCP server by merging the
//! right entries into its own configuration files, shown as a diff first, so that the
//! agent uses Verbatim's tools with no dialog and no per-call prompt: an edit that
//! goes to the editor is reviewed there, which is the person's gate.
//!
//! Each agent's files, and how its entries merge into them, are in its module
//! (`crate::frontend::agents`: Claude Code's `.mcp.json` and settings, Codex's
//! `config.toml` and `hooks.json` with the hook's trust, Gemini CLI's and Qwen Code's
//! `settings.json`, GitHub Copilot CLI's and Factory Droid's user settings, opencode's
//! plugin); here is what setup does with any of them: the plan, shown as a diff, then
//! written ([`write`]), and `--check` for one agent or all ([`check`], [`check_all`]),
//! built from [`types`], [`kit`] and [`hook`] (the hooks merged among the person's own,
//! and run by `--check` on a harmless input).
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

use std::path::PathBuf;

use serde_json::Value;

pub mod codex_trust;
pub mod hook;
pub(crate) mod ide;
pub(crate) mod json_merge;
pub mod kit;
pub mod types;

pub use crate::frontend::agents::Agent;
pub use crate::frontend::agents::cli::SetupOptions;
pub use types::{AgentDirs, FileChange, Plan, Requirement, Scope, SetupError, TOOL_TIMEOUT_SECS};

/// What `setup` would change; nothing is written.
pub fn plan(options: &SetupOptions) -> Result<Plan, SetupError> {
    if options.trust_folder && !options.agent.trusts_folders() {
        return Err(SetupError::Unsupported(format!(
            "--trust is for gemini-cli (it trusts the project folder); {} has no such step.",
            options.agent.name()
        )));
    }
    if !options.agent.scopes().contains(&options.scope) {
        return Err(unsupported_scope(options));
    }
    options.agent.plan(options)
}

/// The error for a scope the agent is not set up in.
fn unsupported_scope(options: &SetupOptions) -> SetupError {
    let name = options.agent.name();
    SetupError::Unsupported(match options.agent.user_only_why() {
        Some(why) => why.into(),
        None => format!(
            "{} is set up for the user only (its hooks then run in every project with no trust step): run \
             `verbatim setup {name} --user`.",
            options.agent.display_name()
        ),
    })
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

fn requirements(options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
    if !options.agent.scopes().contains(&options.scope) {
        return Err(unsupported_scope(options));
    }
    options.agent.requirements(options)
}

/// The hook command configured for the agent (in its hooks file, or its plugin), for
/// `--check` to run.
fn configured_hook_command(options: &SetupOptions) -> Option<String> {
    let agent = options.agent;
    if let Some(command) = agent.plugin_command(options) {
        return Some(command);
    }
    let path = agent.hook_file(options).ok()?;
    let Value::Object(root) = kit::json_at(&path) else { return None };
    hook::configured_command(&root, agent)
}

/// The hook runs: `--check` runs it on a harmless input and wants no decision.
fn hook_run_requirement(options: &SetupOptions) -> Option<Requirement> {
    let cli = options.agent;
    let hooks_file = cli.hook_file(options).ok()?;
    let command = configured_hook_command(options)?;
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
    command.push_str(&options.agent.fix_flags(options));
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
    lines.extend(options.agent.check_lines(options));
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
            let options = SetupOptions { agent: agent.cli(), scope, trust_folder: false, ..base.clone() };
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
