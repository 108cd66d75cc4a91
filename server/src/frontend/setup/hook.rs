//! The pre-write hook `setup` installs: `verbatim hook AGENT` as a command hook on the
//! event each agent fires before its own file-editing tool, merged into the agent's
//! `hooks` among the person's own, and run on a harmless input by `--check`.
//!
//! Every agent keeps hooks in the same shape, `hooks.EVENT = [{matcher, hooks: [{type:
//! "command", command, timeout}]}]`; what differs is the event, the tool names the
//! matcher names and the timeout's unit:
//! - Codex: `PreToolUse` on `apply_patch`, seconds;
//! - Claude Code: `PreToolUse` on `Edit|Write|MultiEdit`, seconds;
//! - Gemini CLI: `BeforeTool` on `replace|write_file`, milliseconds; and `AfterTool` on
//!   the same tools, which passes the model what a partly kept write left out (its
//!   `BeforeTool` allow cannot say it);
//! - Qwen Code: `PreToolUse` on `edit|write_file` (its tools' names; a matcher also
//!   matches their aliases), seconds (a value of 1000 or more is still read as
//!   milliseconds, its old unit).
//!
//! Ours is the group whose command runs `verbatim hook AGENT` (whatever path leads to
//! `verbatim`). A new one is appended after the person's groups: Codex keys its trust
//! by position, so a hook inserted before the person's would un-trust theirs.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::{Agent, SetupOptions, TOOL_TIMEOUT_SECS};

/// How long `--check` lets the hook run on its harmless input.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// The tool name of `--check`'s input: no agent has a tool of that name, so the hook
/// must answer nothing.
pub const CHECK_TOOL_NAME: &str = "verbatim_setup_check";

/// Where and how an agent runs the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSpec {
    /// The key under `hooks`.
    pub event: &'static str,
    /// The agent's edit tools, as its matcher spells them.
    pub matcher: &'static str,
    /// Long enough for a person to review, in the agent's unit.
    pub timeout: u64,
}

impl HookSpec {
    pub fn of(agent: Agent) -> Self {
        match agent {
            Agent::Codex => Self { event: "PreToolUse", matcher: "apply_patch", timeout: TOOL_TIMEOUT_SECS },
            Agent::ClaudeCode => {
                Self { event: "PreToolUse", matcher: "Edit|Write|MultiEdit", timeout: TOOL_TIMEOUT_SECS }
            }
            Agent::GeminiCli => {
                Self { event: "BeforeTool", matcher: "replace|write_file", timeout: TOOL_TIMEOUT_SECS * 1000 }
            }
            Agent::QwenCode => Self { event: "PreToolUse", matcher: "edit|write_file", timeout: TOOL_TIMEOUT_SECS },
        }
    }

    /// Every hook the agent gets: the pre-write one first, then any that follow it.
    pub fn all(agent: Agent) -> Vec<Self> {
        let mut specs = vec![Self::of(agent)];
        if agent == Agent::GeminiCli {
            specs.push(Self { event: "AfterTool", matcher: "replace|write_file", timeout: AFTER_TOOL_TIMEOUT_MS });
        }
        specs
    }
}

/// Gemini CLI's `AfterTool` run only reads a note the `BeforeTool` run left: quick.
const AFTER_TOOL_TIMEOUT_MS: u64 = 10_000;

/// The command the agent runs, spelled as the MCP server's command is.
pub fn command(options: &SetupOptions) -> String {
    format!("{} hook {}", options.command, options.agent.name())
}

/// Our group for the pre-write event, as `setup` writes it.
pub fn group(options: &SetupOptions) -> Value {
    group_of(options, HookSpec::of(options.agent))
}

fn group_of(options: &SetupOptions, spec: HookSpec) -> Value {
    json!({
        "matcher": spec.matcher,
        "hooks": [{"type": "command", "command": command(options), "timeout": spec.timeout}],
    })
}

/// Whether a hook command is `verbatim hook AGENT`, by any path to `verbatim`.
fn is_ours(command: &str, agent: Agent) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    match words.as_slice() {
        [program, "hook", name] => {
            *name == agent.name() && Path::new(program).file_name().is_some_and(|file| file == "verbatim")
        }
        _ => false,
    }
}

/// Where our handler is: the index of its group in `hooks.EVENT` and its index in
/// that group's `hooks`.
pub fn find(root: &Map<String, Value>, agent: Agent) -> Option<(usize, usize)> {
    find_in(root, agent, HookSpec::of(agent))
}

/// Where our handler for `spec`'s event is, as [`find`].
pub fn find_in(root: &Map<String, Value>, agent: Agent, spec: HookSpec) -> Option<(usize, usize)> {
    let groups = root.get("hooks")?.get(spec.event)?.as_array()?;
    groups.iter().enumerate().find_map(|(group_index, group)| {
        let handlers = group.get("hooks")?.as_array()?;
        let handler_index = handlers.iter().position(|handler| {
            handler.get("type").and_then(Value::as_str) == Some("command")
                && handler.get("command").and_then(Value::as_str).is_some_and(|command| is_ours(command, agent))
        })?;
        Some((group_index, handler_index))
    })
}

/// Puts our group in `root` (a settings file's top object): appended after the
/// person's groups, or, when a group of ours alone is there, set back to what `setup`
/// writes in the same place. A group of the person's that also runs our command is
/// theirs: left as it is. Refuses, with the reason, when `hooks` or its event holds
/// something else than what the agent reads there.
pub fn merge(root: &mut Map<String, Value>, options: &SetupOptions) -> Result<(), String> {
    HookSpec::all(options.agent).into_iter().try_for_each(|spec| merge_spec(root, options, spec))
}

fn merge_spec(root: &mut Map<String, Value>, options: &SetupOptions, spec: HookSpec) -> Result<(), String> {
    let event = spec.event;
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let Value::Object(hooks) = hooks else {
        return Err("its \"hooks\" is not an object".into());
    };
    let groups = hooks.entry(event).or_insert_with(|| json!([]));
    let Value::Array(groups) = groups else {
        return Err(format!("its \"hooks\".\"{event}\" is not a list"));
    };
    let ours = group_of(options, spec);
    let alone = |group: &Value| {
        group.get("hooks").and_then(Value::as_array).is_some_and(|handlers| {
            handlers.len() == 1
                && handlers[0].get("command").and_then(Value::as_str).is_some_and(|c| is_ours(c, options.agent))
        })
    };
    let mut found = false;
    for group in groups.iter_mut() {
        if group.get("hooks").and_then(Value::as_array).is_some_and(|handlers| {
            handlers.iter().any(|handler| {
                handler.get("command").and_then(Value::as_str).is_some_and(|c| is_ours(c, options.agent))
            })
        }) {
            // An equal group stays as written, whatever the order of its keys.
            if alone(group) && *group != ours {
                *group = ours.clone();
            }
            found = true;
            break;
        }
    }
    if !found {
        groups.push(ours);
    }
    Ok(())
}

/// The command of our handler in `root`, if there is one.
pub fn configured_command(root: &Map<String, Value>, agent: Agent) -> Option<String> {
    let (group_index, handler_index) = find(root, agent)?;
    let groups = root.get("hooks")?.get(HookSpec::of(agent).event)?;
    groups.get(group_index)?.get("hooks")?.get(handler_index)?.get("command")?.as_str().map(str::to_owned)
}

/// The variables the agent sets for its hooks (on top of its own environment), as far
/// as they matter to `verbatim hook`.
fn agent_variables(options: &SetupOptions) -> Vec<(&'static str, &Path)> {
    let project = options.project.as_path();
    match options.agent {
        Agent::Codex => Vec::new(),
        Agent::ClaudeCode => vec![("CLAUDE_PROJECT_DIR", project)],
        Agent::GeminiCli => vec![("GEMINI_PROJECT_DIR", project), ("CLAUDE_PROJECT_DIR", project)],
        Agent::QwenCode => {
            vec![("QWEN_PROJECT_DIR", project), ("GEMINI_PROJECT_DIR", project), ("CLAUDE_PROJECT_DIR", project)]
        }
    }
}

/// `--check`'s harmless input: the agent's event for a tool no agent has.
pub fn check_input(options: &SetupOptions) -> Value {
    json!({
        "hook_event_name": HookSpec::of(options.agent).event,
        "tool_name": CHECK_TOOL_NAME,
        "tool_input": {},
        "session_id": "verbatim-setup-check",
        "cwd": options.project.display().to_string(),
    })
}

/// Runs `command` as the agent would (`sh -c`, in the project, with this process's
/// environment, the agent's variables and `extra_env`) on the harmless input, for at
/// most ten seconds. `Ok` when it exits 0 with nothing on stdout, as a hook with no
/// decision must; otherwise what went wrong, in one line.
pub fn run(command: &str, options: &SetupOptions, extra_env: &[(OsString, OsString)]) -> Result<(), String> {
    let input = check_input(options).to_string();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(&options.project)
        .envs(agent_variables(options))
        .envs(extra_env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start `sh -c {command}` in {}: {error}", options.project.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that exits without reading its input is not wrong: ignore a closed pipe.
        let _ = stdin.write_all(input.as_bytes());
    }
    let read_all = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = read_all(child.stdout.take().map(|pipe| Box::new(pipe) as Box<dyn Read + Send>));
    let stderr = read_all(child.stderr.take().map(|pipe| Box::new(pipe) as Box<dyn Read + Send>));
    let deadline = Instant::now() + CHECK_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let last_stderr_line = stderr.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("").trim();
    let said = if last_stderr_line.is_empty() { String::new() } else { format!(" (stderr: {last_stderr_line})") };
    match status {
        None => Err(format!("it did not answer within {} s", CHECK_TIMEOUT.as_secs())),
        Some(status) if status.code() == Some(127) => {
            Err(format!("the shell cannot find its program: is it on the agent's PATH?{said}"))
        }
        Some(status) if !status.success() => Err(format!("it exited with {status}{said}")),
        Some(_) if !stdout.trim().is_empty() => {
            Err(format!("it wrote to stdout, where the agent reads a decision: {}", stdout.trim()))
        }
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ours_is_verbatim_hook_agent_by_any_path() {
        assert!(is_ours("verbatim hook codex", Agent::Codex));
        assert!(is_ours("/usr/local/bin/verbatim  hook codex", Agent::Codex));
        assert!(!is_ours("verbatim hook claude-code", Agent::Codex));
        assert!(!is_ours("verbatim-other hook codex", Agent::Codex));
        assert!(!is_ours("verbatim hook codex --flag", Agent::Codex));
        assert!(!is_ours("echo verbatim hook codex", Agent::Codex));
    }
}
