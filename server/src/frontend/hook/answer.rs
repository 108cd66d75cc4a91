//! A [`Verdict`] in each agent's own hook output: Codex's, Claude Code's and Qwen
//! Code's `PreToolUse` (`hookSpecificOutput.permissionDecision`, `updatedInput`,
//! `permissionDecisionReason`, `additionalContext`), Gemini CLI's `BeforeTool`
//! (`decision`, `reason`, `hookSpecificOutput.tool_input`) and `AfterTool`
//! (`hookSpecificOutput.additionalContext`). No decision is no output at all.

use serde_json::{Value, json};

use super::{HookAgent, Verdict};

/// What the hook prints on stdout (one JSON line), or nothing for no decision.
pub fn render(agent: HookAgent, input: &Value, verdict: &Verdict) -> String {
    let value = match agent {
        HookAgent::GeminiCli => gemini(verdict),
        HookAgent::Codex | HookAgent::ClaudeCode | HookAgent::QwenCode => pre_tool_use(input, verdict),
    };
    value.map_or_else(String::new, |value| format!("{value}\n"))
}

fn pre_tool_use(input: &Value, verdict: &Verdict) -> Option<Value> {
    let event = input.get("hook_event_name").and_then(Value::as_str).unwrap_or("PreToolUse");
    let output = match verdict {
        Verdict::Pass { .. } => return None,
        Verdict::Allow => json!({"hookEventName": event, "permissionDecision": "allow",
                                 "permissionDecisionReason": "The person accepted this change in the editor."}),
        Verdict::AllowWith { input, context } => json!({"hookEventName": event, "permissionDecision": "allow",
                                                        "permissionDecisionReason": "Reviewed in the editor.",
                                                        "updatedInput": input, "additionalContext": context}),
        Verdict::Deny { reason } => json!({"hookEventName": event, "permissionDecision": "deny",
                                           "permissionDecisionReason": reason}),
        Verdict::Note { context } => json!({"hookEventName": event, "additionalContext": context}),
    };
    Some(json!({"hookSpecificOutput": output}))
}

fn gemini(verdict: &Verdict) -> Option<Value> {
    Some(match verdict {
        Verdict::Pass { .. } => return None,
        Verdict::Allow => json!({"decision": "allow"}),
        Verdict::AllowWith { input, .. } => {
            json!({"decision": "allow", "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": input}})
        }
        Verdict::Deny { reason } => json!({"decision": "deny", "reason": reason}),
        Verdict::Note { context } => {
            json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": context}})
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_reads_its_own_shape() {
        let input = json!({"hook_event_name": "PreToolUse"});
        let deny = Verdict::Deny { reason: "The person rejected this change in the editor: no".into() };
        let codex: Value = serde_json::from_str(&render(HookAgent::Codex, &input, &deny)).expect("json");
        assert_eq!(codex["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            codex["hookSpecificOutput"]["permissionDecisionReason"],
            "The person rejected this change in the editor: no"
        );
        let gemini: Value = serde_json::from_str(&render(HookAgent::GeminiCli, &input, &deny)).expect("json");
        assert_eq!(gemini, json!({"decision": "deny", "reason": "The person rejected this change in the editor: no"}));
        let with = Verdict::AllowWith { input: json!({"command": "p"}), context: "left out".into() };
        let claude: Value = serde_json::from_str(&render(HookAgent::ClaudeCode, &input, &with)).expect("json");
        assert_eq!(claude["hookSpecificOutput"]["updatedInput"], json!({"command": "p"}));
        assert_eq!(claude["hookSpecificOutput"]["additionalContext"], "left out");
        assert_eq!(render(HookAgent::Codex, &input, &Verdict::Pass { note: "x".into() }), "");
    }
}
