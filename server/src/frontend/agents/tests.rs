//! Tests of the list of agents and of each agent module against the payloads the real
//! CLIs handed their hooks (`server/tests/fixtures/hooks/<agent>/`, recorded by
//! `tests/agents/record_payloads.py`), and of `setup` for the agents whose setup is
//! their hook alone.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::frontend::hook::{Proposed, proposal_of, string_edits};
use crate::frontend::setup::{AgentDirs, check, plan, write};

const DISK: &str = "first\nsecond\nthird\n";

/// A recorded payload, its `/project` made `project`, where a.txt holds [`DISK`].
fn recorded(agent: &str, name: &str, project: &Path) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks").join(agent).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    std::fs::write(project.join("a.txt"), DISK).unwrap();
    serde_json::from_str(&text.replace("/project", &project.display().to_string())).unwrap()
}

/// opencode's plugin hands the hook its `input` and `output.args` in Claude Code's shape.
fn as_the_plugin_sends_it(recorded: &Value) -> Value {
    json!({"hook_event_name": recorded["event"], "tool_name": recorded["input"]["tool"],
           "tool_input": recorded["args"], "session_id": recorded["input"]["sessionID"],
           "tool_use_id": recorded["input"]["callID"], "cwd": recorded["directory"]})
}

fn proposal(agent: Agent, input: &Value, project: &Path) -> (HookCall, EditTool, Proposed) {
    let call = agent.cli().call(input).unwrap_or_else(|| panic!("{agent:?} reads {input}"));
    let (tool, proposed) =
        proposal_of(agent, &call, project).unwrap_or_else(|| panic!("{} is an edit tool", call.tool));
    (call, tool, proposed.unwrap())
}

#[test]
fn every_recorded_write_is_read_as_the_file_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let cases: [(Agent, &str, &str, &str); 10] = [
        (Agent::Copilot, "pre-edit.json", "a.txt", "first\nSECOND\nthird\n"),
        (Agent::Copilot, "pre-create.json", "new.txt", "hello\n"),
        (Agent::Copilot, "pre-apply_patch.json", "a.txt", "first\nSECOND\nthird\n"),
        (Agent::Opencode, "before-edit.json", "a.txt", "first\nSECOND\nthird\n"),
        (Agent::Opencode, "before-write.json", "new.txt", "hello\n"),
        (Agent::Opencode, "before-apply_patch.json", "a.txt", "first\nSECOND\nthird\n"),
        (Agent::Droid, "PreToolUse-Edit.json", "a.txt", "first\nSECOND\nthird\n"),
        (Agent::Droid, "PreToolUse-Create.json", "new.txt", "hello\n"),
        (Agent::QwenCode, "PreToolUse-write_file.json", "new.txt", "hello\n"),
        (Agent::QwenCode, "PreToolUse-edit.json", "a.txt", "first\nSECOND\nthird\n"),
    ];
    for (agent, name, file, text) in cases {
        let mut input = recorded(agent.name(), name, project);
        if agent == Agent::Opencode {
            input = as_the_plugin_sends_it(&input);
        }
        let (call, _, proposed) = proposal(agent, &input, project);
        assert!(!call.after, "{name}");
        assert_eq!(call.cwd.as_deref(), Some(project), "{name}");
        assert!(call.session.is_some(), "{name}: the session");
        assert_eq!(proposed.files.len(), 1, "{name}");
        assert_eq!(proposed.files[0].path, project.join(file), "{name}");
        assert_eq!(proposed.files[0].text.as_deref(), Some(text), "{name}");
    }
}

#[test]
fn the_calls_after_the_tool_are_known_and_other_tools_are_not_reviewed() {
    let dir = tempfile::tempdir().unwrap();
    let post = recorded("droid", "PostToolUse-Edit.json", dir.path());
    assert!(Agent::Droid.cli().call(&post).unwrap().after);
    let post = recorded("copilot", "post-edit.json", dir.path());
    assert!(Agent::Copilot.cli().call(&post).unwrap().after);
    for (agent, tool) in [(Agent::Copilot, "bash"), (Agent::Opencode, "read"), (Agent::Droid, "Execute")] {
        assert_eq!(agent.cli().tool(tool), None, "{agent:?} {tool}");
    }
    // Copilot's create makes only new files: over one that exists it fails by itself.
    let create = recorded("copilot", "pre-create.json", dir.path());
    std::fs::write(dir.path().join("new.txt"), "there\n").unwrap();
    let call = Agent::Copilot.cli().call(&create).unwrap();
    let (_, proposed) = proposal_of(Agent::Copilot, &call, dir.path()).unwrap();
    assert!(proposed.unwrap_err().contains("exists already"));
}

/// The same tool's input, rewritten to write `kept`.
fn kept_input(agent: Agent, input: &Value, project: &Path, kept: &str) -> Value {
    let (call, tool, proposed) = proposal(agent, input, project);
    match tool {
        EditTool::Patch(_) => agent
            .cli()
            .patch_input(crate::frontend::hook::patch_tool::rewrite(&proposed, &[Some(kept)]).unwrap().unwrap()),
        _ => string_edits::rewrite(tool, &call.args, &proposed, &[Some(kept)]).unwrap().unwrap(),
    }
}

#[test]
fn each_agent_gets_its_own_answer_shape_for_what_was_kept_and_for_a_rejection() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let kept = "first\nSecond\nthird\n";
    let deny = Verdict::Deny { reason: "The person rejected this change in the editor: not now".into() };

    // Copilot: modifiedArgs, the whole arguments; for apply_patch the patch text itself.
    let edit = recorded("copilot", "pre-edit.json", project);
    let args = kept_input(Agent::Copilot, &edit, project, kept);
    assert_eq!(args, json!({"path": project.join("a.txt"), "old_str": "second\n", "new_str": "Second\n"}));
    let call = Agent::Copilot.cli().call(&edit).unwrap();
    let with = Verdict::AllowWith { input: args.clone(), context: "left out: why".into() };
    assert_eq!(
        Agent::Copilot.cli().render(&call, &with).unwrap(),
        json!({"permissionDecision": "allow", "permissionDecisionReason": "Reviewed in the editor.",
               "modifiedArgs": args, "additionalContext": "left out: why"})
    );
    assert_eq!(
        Agent::Copilot.cli().render(&call, &deny).unwrap(),
        json!({"permissionDecision": "deny",
               "permissionDecisionReason": "The person rejected this change in the editor: not now"})
    );
    let patch = recorded("copilot", "pre-apply_patch.json", project);
    let patch = kept_input(Agent::Copilot, &patch, project, kept);
    assert!(patch.as_str().unwrap().contains("+Second"), "{patch}");

    // opencode: the plugin's own shape; apply_patch's patchText.
    let edit = as_the_plugin_sends_it(&recorded("opencode", "before-edit.json", project));
    let args = kept_input(Agent::Opencode, &edit, project, kept);
    assert_eq!(args, json!({"filePath": project.join("a.txt"), "oldString": "second\n", "newString": "Second\n"}));
    let call = Agent::Opencode.cli().call(&edit).unwrap();
    let with = Verdict::AllowWith { input: args.clone(), context: "left out: why".into() };
    assert_eq!(
        Agent::Opencode.cli().render(&call, &with).unwrap(),
        json!({"decision": "allow", "args": args, "context": "left out: why"})
    );
    assert_eq!(
        Agent::Opencode.cli().render(&call, &deny).unwrap(),
        json!({"decision": "deny", "reason": "The person rejected this change in the editor: not now"})
    );
    let patch = as_the_plugin_sends_it(&recorded("opencode", "before-apply_patch.json", project));
    assert!(kept_input(Agent::Opencode, &patch, project, kept)["patchText"].as_str().unwrap().contains("+Second"));

    // Droid: updatedInput; the note waits for PostToolUse.
    let edit = recorded("droid", "PreToolUse-Edit.json", project);
    let args = kept_input(Agent::Droid, &edit, project, kept);
    assert_eq!(args, json!({"file_path": project.join("a.txt"), "old_str": "second\n", "new_str": "Second\n"}));
    assert_eq!(Agent::Droid.cli().changed_input(), ChangedInput::ToldAfter);
    let call = Agent::Droid.cli().call(&edit).unwrap();
    let rendered = Agent::Droid.cli().render(&call, &deny).unwrap();
    assert_eq!(rendered["hookSpecificOutput"]["permissionDecision"], "deny");
    let post = Agent::Droid.cli().call(&recorded("droid", "PostToolUse-Edit.json", project)).unwrap();
    let note = Agent::Droid.cli().render(&post, &Verdict::Note { context: "left out: why".into() }).unwrap();
    assert_eq!(
        note,
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "left out: why"}})
    );

    // Qwen Code ignores changed input: Verbatim writes the kept part itself.
    assert_eq!(Agent::QwenCode.cli().changed_input(), ChangedInput::Refused);
}

#[test]
fn the_readme_table_is_the_list_of_agents() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let table = review_table();
    assert!(readme.contains(&table), "README.md's table of agents is not:\n{table}");
    for agent in Agent::ALL {
        assert!(!agent.cli().review_rows().is_empty(), "{agent:?} has a row");
        assert_eq!(Agent::parse(agent.name()), Some(agent));
    }
}

fn options(agent: Agent, dir: &Path) -> SetupOptions {
    std::fs::create_dir_all(dir.join("project")).unwrap();
    SetupOptions {
        agent: agent.cli(),
        scope: Scope::User,
        deny_builtin_edit: false,
        project: dir.join("project"),
        home: dir.join("home"),
        dirs: AgentDirs::default(),
        command: "verbatim".into(),
        diagnostics: false,
        trust_headless: false,
        trust_folder: false,
        hook: true,
        hook_env: Vec::new(),
    }
}

#[test]
fn copilot_and_droid_hooks_are_merged_into_the_person_s_settings_once() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (Agent::Copilot, "home/.copilot/settings.json", "preToolUse", json!({"type": "command", "bash": "audit.sh"})),
        (
            Agent::Droid,
            "home/.factory/settings.json",
            "PreToolUse",
            json!({"matcher": "Execute", "hooks": [{"type": "command", "command": "audit.sh"}]}),
        ),
    ];
    for (agent, path, event, theirs) in cases {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mine = json!({"model": "theirs", "hooks": {event: [theirs.clone()]}});
        std::fs::write(&path, mine.to_string()).unwrap();
        let options = options(agent, dir.path());
        write(&plan(&options).unwrap()).unwrap();
        let second = plan(&options).unwrap();
        assert!(second.changes.iter().all(|change| !change.changes_anything()), "{agent:?}: {second:?}");
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written["model"], "theirs");
        assert_eq!(written["hooks"][event][0], theirs, "{agent:?}: theirs first");
        assert_eq!(written["hooks"][event][1], crate::frontend::setup::hook::group(&options), "{agent:?}");
        let project = SetupOptions { scope: Scope::Project, ..options.clone() };
        assert!(plan(&project).unwrap_err().to_string().contains("--user"), "{agent:?}");
        let without = SetupOptions { hook: false, ..options.clone() };
        assert!(plan(&without).unwrap_err().to_string().contains("--no-hook leaves nothing"), "{agent:?}");
    }
    assert_eq!(
        crate::frontend::setup::hook::group(&options(Agent::Copilot, dir.path())),
        json!({"type": "command", "bash": "verbatim hook copilot", "timeoutSec": 600})
    );
}

#[test]
fn opencode_gets_a_plugin_that_runs_the_hook_and_a_file_of_the_person_s_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let options = options(Agent::Opencode, dir.path());
    let path = dir.path().join("home/.config/opencode/plugin/verbatim.js");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "export const Mine = async () => ({});\n").unwrap();
    let error = plan(&options).unwrap_err().to_string();
    assert!(error.contains("not Verbatim's plugin"), "{error}");
    std::fs::remove_file(&path).unwrap();
    let (configured, lines) = check(&options).unwrap();
    assert!(!configured, "{lines:#?}");
    write(&plan(&options).unwrap()).unwrap();
    assert!(plan(&options).unwrap().changes.iter().all(|change| !change.changes_anything()));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("const COMMAND = \"verbatim hook opencode\";"), "{text}");
    assert!(text.contains("\"tool.execute.before\"") && text.contains("\"tool.execute.after\""), "{text}");
    assert_eq!(Agent::Opencode.cli().plugin_command(&options).as_deref(), Some("verbatim hook opencode"));
}
