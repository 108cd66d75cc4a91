//! Codex CLI: its MCP server in `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`;
//! user only), with `default_tools_approval_mode = "approve"` (else `codex exec`
//! refuses every call) and `env_vars` (Codex starts servers with almost no
//! environment); its hook in `$CODEX_HOME/hooks.json`, and Codex's trust of it recorded
//! in `config.toml` ([`codex_trust`]: `codex exec` skips an untrusted hook silently).
//!
//! Its hook: `PreToolUse` on `apply_patch` (seconds), `tool_input.command` the whole
//! patch; answers as Claude Code's (`updatedInput: {command: <patch>}`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::frontend::agents::cli::{AgentCli, EditTool, HookCall, SetupOptions, Verdict, dir_or};
use crate::frontend::setup::codex_trust;
use crate::frontend::setup::hook;
use crate::frontend::setup::kit::{headless_note, hook_note, hook_requirements, json_at, mcp_args, read};
use crate::frontend::setup::types::{FileChange, HookSpec, Plan, Requirement, SetupError, TOOL_TIMEOUT_SECS};

use super::claude_code::pre_tool_use;
use crate::frontend::setup::json_merge::merge_json;

/// What Codex passes on to the server: where the editor's discovery files and the
/// journal are (it gives MCP servers only HOME, LANG, PATH, PWD and TMPDIR).
const ENV_VARS: [&str; 4] = ["XDG_RUNTIME_DIR", "VERBATIM_RUNTIME_DIR", "XDG_STATE_HOME", "VERBATIM_STATE_DIR"];

#[derive(Debug)]
pub struct Codex;

/// `config.toml` and `hooks.json`.
fn files(options: &SetupOptions) -> (PathBuf, PathBuf) {
    let codex_home = dir_or(options.dirs.codex_home.as_ref(), &options.home, ".codex");
    (codex_home.join("config.toml"), codex_home.join("hooks.json"))
}

impl AgentCli for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }
    fn display_name(&self) -> &'static str {
        "Codex"
    }

    fn call(&self, input: &Value) -> Option<HookCall> {
        HookCall::claude_shaped(input, &[])
    }
    fn tool(&self, name: &str) -> Option<EditTool> {
        (name == "apply_patch").then_some(EditTool::Patch(Some("command")))
    }
    fn asks(&self, call: &HookCall) -> bool {
        matches!(call.mode.as_deref(), Some("untrusted" | "on-request" | "default"))
    }
    fn render(&self, call: &HookCall, verdict: &Verdict) -> Option<Value> {
        pre_tool_use(call, verdict)
    }

    fn scopes(&self) -> &'static [crate::frontend::setup::Scope] {
        &[crate::frontend::setup::Scope::User]
    }
    fn user_only_why(&self) -> Option<&'static str> {
        Some(
            "Codex reads its MCP servers, and the trust of its hooks, from its own config.toml ($CODEX_HOME, else \
             ~/.codex); a project's .codex/ only once the project is trusted there: run `verbatim setup codex --user`.",
        )
    }
    fn plan(&self, options: &SetupOptions) -> Result<Plan, SetupError> {
        let (config, hooks) = files(options);
        let mut plan = Plan::default();
        // hooks.json first: the trust recorded in config.toml is of the hook as merged.
        let trust = if options.hook {
            let hooks_before = read(&hooks)?;
            let hooks_after = merge_json(&hooks, hooks_before.as_deref(), |root| hook::merge(root, options))?;
            let trust = hook_trust(options, &hooks_after);
            plan.changes.push(FileChange { path: hooks.clone(), before: hooks_before, after: hooks_after });
            trust
        } else {
            None
        };
        let before = read(&config)?;
        let after = merge_codex(&config, before.as_deref(), options, trust.as_ref())?;
        plan.changes.push(FileChange { path: config, before, after });
        if options.hook {
            plan.notes.push(hook_note(
                options,
                &hooks,
                " Codex runs a hook only once it is trusted: setup records that trust in config.toml (hooks.state), \
                 as Codex's own /hooks does, since `codex exec` skips an untrusted hook without a word.",
            ));
        }
        plan.notes.push(format!(
            "tool_timeout_sec = {TOOL_TIMEOUT_SECS}: Codex waits that long for a tool, so a person can review an \
             edit. default_tools_approval_mode = \"approve\": Codex calls Verbatim's tools without asking (and \
             `codex exec` at all). env_vars: Codex passes these on, so the server finds the editor."
        ));
        plan.notes.push(headless_note(options, "Codex's own apply_patch"));
        Ok(plan)
    }

    fn requirements(&self, options: &SetupOptions) -> Result<Vec<Requirement>, SetupError> {
        let (config, hooks) = files(options);
        let text = read(&config)?.unwrap_or_default();
        let document = text.parse::<toml_edit::DocumentMut>().ok();
        let table = document.as_ref().and_then(|document| document.get("mcp_servers")?.get("verbatim"));
        let first_arg = table.and_then(|table| table.get("args")?.as_array()?.get(0)?.as_str().map(str::to_owned));
        let approve = table
            .and_then(|table| table.get("default_tools_approval_mode")?.as_str().map(str::to_owned))
            .is_some_and(|mode| mode == "approve");
        let forwards = table
            .and_then(|table| {
                table
                    .get("env_vars")?
                    .as_array()
                    .map(|vars| vars.iter().any(|var| var.as_str() == Some("XDG_RUNTIME_DIR")))
            })
            .unwrap_or(false);
        let mut out = vec![
            Requirement::new(
                config.clone(),
                "the verbatim MCP server ([mcp_servers.verbatim], args = [\"mcp\", …])",
                first_arg.as_deref() == Some("mcp"),
            ),
            Requirement::new(
                config.clone(),
                "default_tools_approval_mode = \"approve\" (else `codex exec` refuses every call)",
                approve,
            ),
            Requirement::new(
                config.clone(),
                "env_vars with XDG_RUNTIME_DIR (so the server finds the editor)",
                forwards,
            ),
        ];
        if options.hook {
            out.extend(hook_requirements(options, &hooks));
            out.extend(trust_requirement(options, &config, &hooks));
        }
        Ok(out)
    }
    fn hook_file(&self, options: &SetupOptions) -> Result<PathBuf, SetupError> {
        Ok(files(options).1)
    }
    fn hooks(&self) -> Vec<HookSpec> {
        vec![HookSpec::grouped("PreToolUse", "apply_patch", TOOL_TIMEOUT_SECS)]
    }

    fn review_rows(&self) -> &'static [[&'static str; 3]] {
        &[[
            "Codex (`exec` and the TUI, any approval policy)",
            "before the write: the hook (after `verbatim setup codex --user --write`); without it, after, as a change \
             on disk",
            "before",
        ]]
    }
}

/// Codex's trust entry for our hook in `hooks.json`'s text as merged.
fn hook_trust(options: &SetupOptions, hooks_json: &str) -> Option<codex_trust::Trust> {
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(hooks_json) else { return None };
    let (group, handler) = hook::find(&root, options.agent)?;
    let key_path = codex_trust::hooks_file_key_path(options.dirs.codex_home.as_deref(), &options.home);
    codex_trust::trust_of(&root, &key_path, group, handler)
}

/// Codex trusts our hook as it is now (and has not turned it off).
fn trust_requirement(options: &SetupOptions, config: &Path, hooks: &Path) -> Option<Requirement> {
    let Value::Object(root) = json_at(hooks) else { return None };
    let (group, handler) = hook::find(&root, options.agent)?;
    let key_path = codex_trust::hooks_file_key_path(options.dirs.codex_home.as_deref(), &options.home);
    let trust = codex_trust::trust_of(&root, &key_path, group, handler);
    let text = read(config).ok().flatten().unwrap_or_default();
    let key = codex_trust::key(&key_path, group, handler);
    let (recorded, disabled) = codex_trust::recorded(&text, &key);
    let trusted = trust.as_ref().is_some_and(|trust| recorded.as_deref() == Some(trust.hash.as_str()));
    let mut requirement = Requirement::new(
        config.to_owned(),
        format!(
            "Codex trusts the hook (hooks.state.\"{key}\".trusted_hash{}; `codex exec` skips an untrusted hook)",
            if recorded.is_some() && !trusted { " is of another version of it" } else { "" }
        ),
        trusted && !disabled,
    );
    if disabled {
        requirement.what = format!("the hook is turned off in Codex (hooks.state.\"{key}\".enabled = false)");
        requirement.fix =
            Some(format!("remove `enabled = false` from [hooks.state.\"{key}\"] in {}", config.display()));
    }
    Some(requirement)
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
    set("env_vars", toml_edit::Value::Array(toml_edit::Array::from_iter(ENV_VARS)));
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
        quoted(&ENV_VARS)
    )
}
