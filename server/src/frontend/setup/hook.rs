//! The pre-write hook `setup` installs: `verbatim hook AGENT` as a command hook on the
//! event each agent fires before its own file-editing tool, merged into the agent's
//! `hooks` among the person's own, and run on a harmless input by `--check`.
//!
//! Each agent's module ([`crate::frontend::agents`]) gives its hooks as [`HookSpec`]s:
//! the event, the matcher naming its edit tools, the timeout and its unit, and the
//! shape of the event's list (Claude Code's groups, or GitHub Copilot CLI's handlers).
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

use super::types::{HookShape, HookSpec};
use crate::frontend::agents::cli::{AgentCli, SetupOptions};

/// The agent's pre-write hook.
pub fn pre_write(agent: &dyn AgentCli) -> Option<HookSpec> {
    agent.hooks().first().copied()
}

/// How long `--check` lets the hook run on its harmless input.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// The tool name of `--check`'s input: no agent has a tool of that name, so the hook
/// must answer nothing.
pub const CHECK_TOOL_NAME: &str = "verbatim_setup_check";

/// The command the agent runs, spelled as the MCP server's command is.
pub fn command(options: &SetupOptions) -> String {
    format!("{} hook {}", options.command, options.agent.name())
}

/// Our group for the pre-write event, as `setup` writes it.
pub fn group(options: &SetupOptions) -> Value {
    pre_write(options.agent).map_or(Value::Null, |spec| group_of(options, spec))
}

fn group_of(options: &SetupOptions, spec: HookSpec) -> Value {
    match spec.shape {
        HookShape::Grouped => json!({
            "matcher": spec.matcher,
            "hooks": [{"type": "command", "command": command(options), "timeout": spec.timeout}],
        }),
        HookShape::Flat => json!({"type": "command", "bash": command(options), "timeoutSec": spec.timeout}),
    }
}

/// The handlers of one entry of an event's list: a group's `hooks`, or the entry itself.
fn handlers(entry: &Value, shape: HookShape) -> Vec<&Value> {
    match shape {
        HookShape::Grouped => {
            entry.get("hooks").and_then(Value::as_array).map(|list| list.iter().collect()).unwrap_or_default()
        }
        HookShape::Flat => vec![entry],
    }
}

/// The handler's command: `command`, or Copilot's `bash`.
fn handler_command(handler: &Value) -> Option<&str> {
    handler.get("command").or(handler.get("bash")).and_then(Value::as_str)
}

/// Whether a hook command is `verbatim hook AGENT`, by any path to `verbatim`.
fn is_ours(command: &str, agent: &dyn AgentCli) -> bool {
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
pub fn find(root: &Map<String, Value>, agent: &dyn AgentCli) -> Option<(usize, usize)> {
    find_in(root, agent, pre_write(agent)?)
}

/// Where our handler for `spec`'s event is, as [`find`].
pub fn find_in(root: &Map<String, Value>, agent: &dyn AgentCli, spec: HookSpec) -> Option<(usize, usize)> {
    let groups = root.get("hooks")?.get(spec.event)?.as_array()?;
    groups.iter().enumerate().find_map(|(group_index, group)| {
        let handler_index = handlers(group, spec.shape).into_iter().position(|handler| {
            handler.get("type").and_then(Value::as_str) == Some("command")
                && handler_command(handler).is_some_and(|command| is_ours(command, agent))
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
    options.agent.hooks().into_iter().try_for_each(|spec| merge_spec(root, options, spec))
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
    let is_ours_handler = |handler: &&Value| handler_command(handler).is_some_and(|c| is_ours(c, options.agent));
    let alone = |group: &Value| {
        let list = handlers(group, spec.shape);
        list.len() == 1 && list.first().is_some_and(is_ours_handler)
    };
    let mut found = false;
    for group in groups.iter_mut() {
        if handlers(group, spec.shape).iter().any(is_ours_handler) {
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
pub fn configured_command(root: &Map<String, Value>, agent: &dyn AgentCli) -> Option<String> {
    let spec = pre_write(agent)?;
    let (group_index, handler_index) = find_in(root, agent, spec)?;
    let group = root.get("hooks")?.get(spec.event)?.get(group_index)?;
    handler_command(handlers(group, spec.shape).get(handler_index)?).map(str::to_owned)
}

/// The variables the agent sets for its hooks (on top of its own environment), as far
/// as they matter to `verbatim hook`.
fn agent_variables(options: &SetupOptions) -> Vec<(&'static str, &Path)> {
    options.agent.hook_variables().iter().map(|name| (*name, options.project.as_path())).collect()
}

/// `--check`'s harmless input: the agent's event for a tool no agent has.
pub fn check_input(options: &SetupOptions) -> Value {
    json!({
        "hook_event_name": pre_write(options.agent).map_or("PreToolUse", |spec| spec.event),
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
    use crate::frontend::agents::Agent;

    #[test]
    fn ours_is_verbatim_hook_agent_by_any_path() {
        assert!(is_ours("verbatim hook codex", Agent::Codex.cli()));
        assert!(is_ours("/usr/local/bin/verbatim  hook codex", Agent::Codex.cli()));
        assert!(!is_ours("verbatim hook claude-code", Agent::Codex.cli()));
        assert!(!is_ours("verbatim-other hook codex", Agent::Codex.cli()));
        assert!(!is_ours("verbatim hook codex --flag", Agent::Codex.cli()));
        assert!(!is_ours("echo verbatim hook codex", Agent::Codex.cli()));
    }
}
