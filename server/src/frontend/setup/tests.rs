//! Unit tests of `setup`: each agent's files planned, written, re-planned and checked.

use std::ffi::OsString;
use std::path::Path;

use serde_json::{Value, json};

use super::*;
use ide::ide_lines;

/// Claude Code's hook group as `setup` writes it.
static CLAUDE_HOOK: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
    || json!({"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": "verbatim hook claude-code", "timeout": 600}]}),
);

/// A `verbatim` on the hook's PATH that answers as `verbatim hook` does to an input
/// that is no edit: nothing on stdout, exit 0.
fn fake_verbatim(dir: &Path, script: &str) -> Vec<(OsString, OsString)> {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("verbatim");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let search = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    vec![(OsString::from("PATH"), search)]
}

fn options(agent: Agent, scope: Scope, dir: &Path) -> SetupOptions {
    std::fs::create_dir_all(dir.join("project")).unwrap();
    SetupOptions {
        agent: agent.cli(),
        scope,
        deny_builtin_edit: false,
        project: dir.join("project"),
        home: dir.join("home"),
        dirs: AgentDirs::default(),
        command: "verbatim".into(),
        diagnostics: false,
        trust_headless: false,
        trust_folder: false,
        hook: true,
        hook_env: fake_verbatim(dir, "cat >/dev/null"),
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
    let options = SetupOptions { deny_builtin_edit: true, ..options(Agent::ClaudeCode, Scope::Project, dir.path()) };
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
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("project/.claude/settings.local.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings,
        json!({"enabledMcpjsonServers": ["verbatim"], "permissions": {"allow": ["mcp__verbatim"], "deny": ["Edit"]}, "hooks": {"PreToolUse": [CLAUDE_HOOK.clone()]}})
    );
    assert!(!dir.path().join("project/.claude/settings.json").exists(), "the shared settings stay as they are");
}

#[test]
fn existing_settings_keep_every_other_key_and_server() {
    let dir = tempfile::tempdir().unwrap();
    let options = SetupOptions { deny_builtin_edit: true, ..options(Agent::ClaudeCode, Scope::Project, dir.path()) };
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
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("project/.claude/settings.local.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings,
        json!({"permissions": {"allow": ["Bash(ls)", "mcp__verbatim"], "deny": ["Read(.env)", "Edit"]}, "model": "opus", "enabledMcpjsonServers": ["verbatim"], "hooks": {"PreToolUse": [CLAUDE_HOOK.clone()]}})
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
    let (theme, auto, servers) =
        (text.find("\"theme\"").unwrap(), text.find("\"autoAccept\"").unwrap(), text.find("\"mcpServers\"").unwrap());
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
    let with =
        SetupOptions { diagnostics: true, trust_folder: true, ..options(Agent::GeminiCli, Scope::Project, dir.path()) };
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
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("home/.claude/settings.json")).unwrap()).unwrap();
    assert_eq!(
        settings,
        json!({"permissions": {"allow": ["mcp__verbatim"]}, "hooks": {"PreToolUse": [CLAUDE_HOOK.clone()]}}),
        "no deny rule, no dialog key; the hook"
    );
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
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("home/.gemini/settings.json")).unwrap()).unwrap();
    assert_eq!(
        settings,
        json!({"theme": "dark", "mcpServers": {"verbatim": {"command": "verbatim", "args": ["mcp", "--no-headless-writes"], "timeout": 600000, "trust": true}}, "hooks": {"BeforeTool": [{"matcher": "replace|write_file", "hooks": [{"type": "command", "command": "verbatim hook gemini-cli", "timeout": 600000}]}], "AfterTool": [{"matcher": "replace|write_file", "hooks": [{"type": "command", "command": "verbatim hook gemini-cli", "timeout": 10000}]}]}})
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
             env_vars = [\"XDG_RUNTIME_DIR\", \"VERBATIM_RUNTIME_DIR\", \"XDG_STATE_HOME\", \"VERBATIM_STATE_DIR\"]\n\n\
             [hooks.state.\"{}/home/.codex/hooks.json:pre_tool_use:0:0\"]\n\
             trusted_hash = \"sha256:aa4152c711e307223f0eaf343c3a6c7deade20ea39001d27dd7eb90ca59c1296\"\n",
            dir.path().display()
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
        qwen_home: Some(dir.path().join("qwen-home")),
        copilot_home: Some(dir.path().join("copilot-home")),
        xdg_config_home: Some(dir.path().join("config-home")),
    };
    let with = |agent, scope| SetupOptions { dirs: dirs.clone(), ..options(agent, scope, dir.path()) };
    setup_twice(&with(Agent::ClaudeCode, Scope::User));
    assert!(dir.path().join("claude-config/.claude.json").exists());
    assert!(dir.path().join("claude-config/settings.json").exists());
    setup_twice(&with(Agent::Codex, Scope::User));
    assert!(dir.path().join("codex-home/config.toml").exists());
    setup_twice(&with(Agent::GeminiCli, Scope::User));
    assert!(dir.path().join("gemini-home/.gemini/settings.json").exists());
    setup_twice(&with(Agent::QwenCode, Scope::User));
    assert!(dir.path().join("qwen-home/settings.json").exists());
    setup_twice(&with(Agent::Copilot, Scope::User));
    assert!(dir.path().join("copilot-home/settings.json").exists());
    setup_twice(&with(Agent::Opencode, Scope::User));
    assert!(dir.path().join("config-home/opencode/plugin/verbatim.js").exists());
    assert!(!dir.path().join("home").exists(), "nothing in HOME when the agents' variables point elsewhere");
}

#[test]
fn gemini_cli_trusts_the_folder_only_when_asked_and_otherwise_says_it_must() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("project")).unwrap();
    let untrusted = options(Agent::GeminiCli, Scope::Project, dir.path());
    let shown = plan(&untrusted).unwrap();
    assert_eq!(shown.changes.len(), 1, "no trusted folder written unless asked");
    assert!(shown.notes.iter().any(|note| note.contains("is not trusted") && note.contains("--trust")), "{shown:?}");
    write(&shown).unwrap();
    let (configured, lines) = check(&untrusted).unwrap();
    assert!(!configured);
    assert!(lines.iter().any(|line| line.starts_with("missing") && line.contains("trusted")), "{lines:?}");
    assert!(lines.iter().any(|line| line == "fix:    verbatim setup gemini-cli --trust --write"), "{lines:?}");

    let trusted = SetupOptions { trust_folder: true, ..untrusted.clone() };
    setup_twice(&trusted);
    let folders: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("home/.gemini/trustedFolders.json")).unwrap())
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
    assert!(claude.iter().any(|line| line.trim_start().starts_with("ok") && line.contains(".mcp.json")), "{claude:#?}");
    assert!(claude.iter().any(|line| line.trim_start().starts_with("missing") && line.contains("settings.local.json")));
    // Everything.
    for options in [
        options(Agent::ClaudeCode, Scope::Project, dir.path()),
        options(Agent::Codex, Scope::User, dir.path()),
        SetupOptions { trust_folder: true, ..options(Agent::GeminiCli, Scope::User, dir.path()) },
        options(Agent::QwenCode, Scope::Project, dir.path()),
        options(Agent::Copilot, Scope::User, dir.path()),
        options(Agent::Opencode, Scope::User, dir.path()),
        options(Agent::Droid, Scope::User, dir.path()),
    ] {
        write(&plan(&options).unwrap()).unwrap();
    }
    let (all, lines) = check_all(&base);
    assert!(all, "{lines:#?}");
    assert!(lines.iter().any(|line| line == "gemini-cli: set up (user)"), "{lines:#?}");
    assert!(!lines.iter().any(|line| line.contains("fix:")), "{lines:#?}");
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_hook_is_appended_after_the_person_s_hooks_on_the_same_event_and_a_second_run_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]});
    let stop = json!([{"hooks": [{"type": "command", "command": "notify.sh"}]}]);
    for (agent, path, event) in [
        (Agent::ClaudeCode, "project/.claude/settings.local.json", "PreToolUse"),
        (Agent::GeminiCli, "project/.gemini/settings.json", "BeforeTool"),
        (Agent::QwenCode, "project/.qwen/settings.json", "PreToolUse"),
        (Agent::Codex, "home/.codex/hooks.json", "PreToolUse"),
    ] {
        let scope = if agent == Agent::Codex { Scope::User } else { Scope::Project };
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, json!({"hooks": {event: [theirs.clone()], "Stop": stop.clone()}}).to_string()).unwrap();
        let options = SetupOptions { trust_folder: agent == Agent::GeminiCli, ..options(agent, scope, dir.path()) };
        setup_twice(&options);
        let hooks = &json_file(&path)["hooks"];
        assert_eq!(hooks[event], json!([theirs.clone(), hook::group(&options)]), "{agent:?}");
        assert_eq!(hooks["Stop"], stop, "{agent:?}: the other events stay");
    }
    // Codex: the trust is of our hook in its place, after the person's group.
    let config = std::fs::read_to_string(dir.path().join("home/.codex/config.toml")).unwrap();
    let key = format!("{}/home/.codex/hooks.json:pre_tool_use:1:0", dir.path().display());
    assert_eq!(
        codex_trust::recorded(&config, &key).0.as_deref(),
        Some("sha256:aa4152c711e307223f0eaf343c3a6c7deade20ea39001d27dd7eb90ca59c1296")
    );
}

#[test]
fn a_group_of_ours_that_changed_is_set_back_in_place_and_trusted_again() {
    let dir = tempfile::tempdir().unwrap();
    let options = options(Agent::Codex, Scope::User, dir.path());
    setup_twice(&options);
    let path = dir.path().join("home/.codex/hooks.json");
    let mut hooks = json_file(&path);
    hooks["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = json!(60);
    std::fs::write(&path, hooks.to_string()).unwrap();
    let (configured, lines) = check(&options).unwrap();
    assert!(!configured);
    assert!(
        lines.iter().any(|line| line.starts_with("missing") && line.contains("of another version of it")),
        "{lines:#?}"
    );
    assert!(lines.contains(&"fix:    verbatim setup codex --user --write".to_owned()), "{lines:#?}");
    setup_twice(&options);
    assert_eq!(json_file(&path)["hooks"]["PreToolUse"], json!([hook::group(&options)]));
}

#[test]
fn no_hook_leaves_it_out_does_not_remove_one_and_check_does_not_require_it() {
    let dir = tempfile::tempdir().unwrap();
    let without = SetupOptions { hook: false, ..options(Agent::Codex, Scope::User, dir.path()) };
    let plan = setup_twice(&without);
    assert_eq!(plan.changes.len(), 1, "config.toml only");
    assert!(!dir.path().join("home/.codex/hooks.json").exists());
    assert!(!std::fs::read_to_string(dir.path().join("home/.codex/config.toml")).unwrap().contains("hooks"));
    let with = options(Agent::Codex, Scope::User, dir.path());
    let (configured, lines) = check(&with).unwrap();
    assert!(!configured);
    assert!(lines.iter().any(|line| line.starts_with("missing") && line.contains("the pre-write hook")), "{lines:#?}");
    setup_twice(&with);
    let plan = setup_twice(&without);
    assert!(plan.changes.iter().all(|change| !change.changes_anything()));
    assert!(dir.path().join("home/.codex/hooks.json").exists(), "--no-hook removes nothing");
}

#[test]
fn qwen_code_gets_the_server_and_the_hook_in_its_settings() {
    let dir = tempfile::tempdir().unwrap();
    let options = options(Agent::QwenCode, Scope::Project, dir.path());
    setup_twice(&options);
    assert_eq!(
        json_file(&dir.path().join("project/.qwen/settings.json")),
        json!({
            "mcpServers": {"verbatim": {"command": "verbatim", "args": ["mcp", "--no-headless-writes"], "timeout": 600000, "trust": true}},
            "hooks": {"PreToolUse": [{"matcher": "edit|write_file", "hooks": [{"type": "command", "command": "verbatim hook qwen-code", "timeout": 600}]}]}
        })
    );
    setup_twice(&super::tests::options(Agent::QwenCode, Scope::User, dir.path()));
    assert!(dir.path().join("home/.qwen/settings.json").exists());
}

#[test]
fn check_runs_the_hook_and_says_what_failed() {
    let dir = tempfile::tempdir().unwrap();
    let options = options(Agent::ClaudeCode, Scope::Project, dir.path());
    write(&plan(&options).unwrap()).unwrap();
    let failing = [
        ("echo '{\"decision\": \"allow\"}'", "wrote to stdout"),
        ("echo 'no editor' >&2; exit 3", "exited with exit status: 3 (stderr: no editor)"),
        ("exit 127", "is it on the agent's PATH"),
    ];
    for (script, said) in failing {
        let broken = SetupOptions { hook_env: fake_verbatim(dir.path(), script), ..options.clone() };
        let (configured, lines) = check(&broken).unwrap();
        assert!(!configured, "{script}");
        assert!(lines.iter().any(|line| line.starts_with("failed ") && line.contains(said)), "{said}: {lines:#?}");
        assert!(
            lines.iter().any(|line| line.starts_with("fix:    make `verbatim hook claude-code` work")),
            "{lines:#?}"
        );
    }
    // The hook gets the harmless input on stdin, in the project, with the agent's variables.
    let log = dir.path().join("input.json");
    let logging = format!("cat > {}; echo \"$CLAUDE_PROJECT_DIR\" > {}.dir", log.display(), log.display());
    let observed = SetupOptions { hook_env: fake_verbatim(dir.path(), &logging), ..options.clone() };
    assert!(check(&observed).unwrap().0);
    assert_eq!(json_file(&log), hook::check_input(&options));
    assert_eq!(json_file(&log)["tool_name"], "verbatim_setup_check");
    let project_dir = std::fs::read_to_string(format!("{}.dir", log.display())).unwrap();
    assert_eq!(project_dir.trim(), options.project.display().to_string());
}

#[test]
fn hooks_that_are_not_an_object_are_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    let options = options(Agent::GeminiCli, Scope::Project, dir.path());
    std::fs::create_dir_all(dir.path().join("project/.gemini")).unwrap();
    let text = r#"{"hooks": {"BeforeTool": "mine"}}"#;
    std::fs::write(dir.path().join("project/.gemini/settings.json"), text).unwrap();
    let error = plan(&options).unwrap_err();
    assert!(error.to_string().contains("\"hooks\".\"BeforeTool\" is not a list"), "{error}");
    assert!(error.to_string().contains("verbatim hook gemini-cli"), "the entry to add by hand: {error}");
}
