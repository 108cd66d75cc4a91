//! `verbatim hook AGENT`: the command every agent runs as its pre-write hook (Codex's
//! and Claude Code's and Qwen Code's `PreToolUse`, Gemini CLI's `BeforeTool`).
//!
//! It reads the hook's JSON on stdin, works out the whole new text of every file the
//! agent's own tool would write ([`codex`] for `apply_patch`, [`string_edits`] for the
//! string-replacement and whole-file tools), hands them to the `verbatim lsp` whose
//! workspace holds the files (`verbatim/propose`: one review in the live buffers), and
//! answers the agent in its own words ([`answer`]): allow unchanged when every hunk was
//! kept, allow with changed input that writes exactly what was kept (and tell the model
//! what was left out, and why), or deny with the person's reason.
//!
//! It never gets in the agent's way: when no editor serves the file, when no server
//! answers, when the input is not what it expects or when anything fails, it gives no
//! decision (empty stdout), explains in one line on stderr and exits 0, so that the
//! agent's own flow (its permission prompt or its mode) goes on.

pub mod answer;
pub mod codex;
pub mod context_notes;
pub mod string_edits;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use verbatim_engine::doc_key::DocKey;

use crate::frontend::client::{AgentClient, ClientError, Identity};
use crate::frontend::{Frontend, FrontendOptions, Via};
use crate::service::protocol::{ProposeDecision, ProposeResult, method};

/// The agents whose hooks Verbatim answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookAgent {
    Codex,
    ClaudeCode,
    GeminiCli,
    QwenCode,
}

impl HookAgent {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "codex" => Some(Self::Codex),
            "claude-code" | "claude" => Some(Self::ClaudeCode),
            "gemini-cli" | "gemini" => Some(Self::GeminiCli),
            "qwen-code" | "qwen" => Some(Self::QwenCode),
            _ => None,
        }
    }

    /// How the agent is named in the review, the registry and the journal.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::Codex => "Codex",
            Self::ClaudeCode => "Claude Code",
            Self::GeminiCli => "Gemini CLI",
            Self::QwenCode => "Qwen Code",
        }
    }
}

/// What the agent's tool would write, worked out from its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    pub files: Vec<ProposedWrite>,
    /// For the review's title.
    pub summary: String,
    /// The agent's mode would ask the person before this write.
    pub asks: bool,
    /// The texts are exactly what the agent's own tool writes; otherwise (a patch
    /// found only by normalizing), an allow carries the reviewed texts as new input.
    pub exact: bool,
}

/// One file the tool would write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedWrite {
    /// Absolute.
    pub path: PathBuf,
    /// The path as the tool's input spells it.
    pub spelled: String,
    /// The file on disk now (`None`: it does not exist).
    pub disk: Option<String>,
    /// The new text (`None`: the file is deleted).
    pub text: Option<String>,
}

/// What the hook tells the agent, before it is phrased in the agent's own terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// No decision: the agent's own flow goes on. The note goes to stderr.
    Pass { note: String },
    /// Write as the agent proposed.
    Allow,
    /// Write this input instead; tell the model `context`.
    AllowWith { input: Value, context: String },
    /// Write nothing; the model reads `reason`.
    Deny { reason: String },
    /// After the tool ran (Gemini CLI's `AfterTool`): tell the model `context`.
    Note { context: String },
}

/// How long a review may wait for the person before the hook withdraws it: setup gives
/// each agent's hook 600 s, and the answer must be written before that.
pub const DEFAULT_REVIEW_SECS: u64 = 590;

/// The answer to one hook call: what to print on stdout (empty for no decision) and on stderr.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookOutput {
    pub stdout: String,
    pub stderr: String,
}

/// Runs the hook on its stdin text.
pub async fn run(agent: HookAgent, input: &str, options: FrontendOptions, review_secs: u64) -> HookOutput {
    let verdict = decide(agent, input, options, review_secs).await;
    let mut output = HookOutput::default();
    if let Verdict::Pass { note } = &verdict {
        if !note.is_empty() {
            output.stderr = format!("verbatim hook: {note}; no decision, {} goes on as usual\n", agent.display_name());
        }
        return output;
    }
    let input: Value = serde_json::from_str(input).unwrap_or(Value::Null);
    output.stdout = answer::render(agent, &input, &verdict);
    if let Verdict::AllowWith { context, .. } = &verdict {
        // Gemini CLI shows the model nothing of a BeforeTool allow: its AfterTool hook does.
        if agent == HookAgent::GeminiCli {
            context_notes::leave(&input, context);
        }
    }
    output
}

async fn decide(agent: HookAgent, input: &str, options: FrontendOptions, review_secs: u64) -> Verdict {
    let pass = |note: String| Verdict::Pass { note };
    let value: Value = match serde_json::from_str(input) {
        Ok(value) => value,
        Err(error) => return pass(format!("the hook's input is not JSON ({error})")),
    };
    let event = value.get("hook_event_name").and_then(Value::as_str).unwrap_or("");
    if event == "AfterTool" {
        return match context_notes::take(&value) {
            Some(context) => Verdict::Note { context },
            None => pass(String::new()),
        };
    }
    let cwd = value.get("cwd").and_then(Value::as_str).map(PathBuf::from).unwrap_or_else(|| options.cwd.clone());
    let proposed = match agent {
        HookAgent::Codex => codex::proposed(&value, &cwd),
        HookAgent::ClaudeCode | HookAgent::GeminiCli | HookAgent::QwenCode => {
            string_edits::proposed(agent, &value, &cwd)
        }
    };
    let proposed = match proposed {
        Ok(Some(proposed)) => proposed,
        // Not a tool this hook reviews (the setup check sends one).
        Ok(None) => return pass(String::new()),
        Err(why) => return pass(why),
    };
    let options = FrontendOptions {
        agent: Identity { name: agent.display_name().to_owned(), version: None },
        cwd: cwd.clone(),
        ..options
    };
    let frontend = Frontend::new(options);
    let uris: Vec<String> = proposed.files.iter().map(|file| DocKey::File(file.path.clone()).to_uri()).collect();
    let socket = match frontend.resolve(&uris).await {
        Ok(Via::Editor { socket }) => socket,
        Ok(Via::Headless) => return pass("no editor with Verbatim serves this file".into()),
        Err(error) => return pass(error.message),
    };
    let params = json!({
        "files": proposed.files.iter().zip(&uris).map(|(file, uri)| json!({"uri": uri, "text": file.text})).collect::<Vec<_>>(),
        "summary": proposed.summary,
        "review": if proposed.asks { "always" } else { "editor" },
        "session": value.get("session_id").and_then(Value::as_str),
        "turn": value.get("turn_id").or(value.get("prompt_id")).and_then(Value::as_str),
    });
    let identity = frontend.agent();
    let call = propose(&socket, &identity, params);
    let result = match tokio::time::timeout(Duration::from_secs(review_secs), call).await {
        Err(_) => {
            return Verdict::Deny {
                reason: format!(
                    "The person did not decide on this change in the editor within {} minutes, so it was withdrawn \
                     and nothing was written. Ask them whether they want it, then try again.",
                    review_secs.div_ceil(60)
                ),
            };
        }
        Ok(Err(ClientError::Protocol(error))) => return pass(error.message),
        Ok(Err(error)) => return pass(error.to_string()),
        Ok(Ok(result)) => result,
    };
    verdict_of(agent, &value, &proposed, &result)
}

async fn propose(socket: &Path, identity: &Identity, params: Value) -> Result<ProposeResult, ClientError> {
    let mut client = AgentClient::connect(socket, identity).await?;
    let result = client.call(method::PROPOSE, params).await;
    // No polite shutdown: the answer is in, and the agent waits for it; the server ends
    // the session when the connection closes.
    drop(client);
    serde_json::from_value(result?).map_err(|error| ClientError::Connection(format!("an unexpected answer ({error})")))
}

/// The review's result as what the agent is to do.
fn verdict_of(agent: HookAgent, input: &Value, proposed: &Proposed, result: &ProposeResult) -> Verdict {
    match result.decision {
        ProposeDecision::Rejected => Verdict::Deny { reason: result.message.clone() },
        // As proposed, exactly as the agent's own tool writes it, onto the files as they
        // were (the editor created or deleted none of them).
        ProposeDecision::Accepted if proposed.exact && disk_unchanged(proposed) => Verdict::Allow,
        ProposeDecision::Accepted | ProposeDecision::Partial => {
            let kept: Vec<Option<&str>> = proposed
                .files
                .iter()
                .map(|file| {
                    let uri = DocKey::File(file.path.clone()).to_uri();
                    result.files.iter().find(|outcome| outcome.uri == uri).and_then(|outcome| outcome.text.as_deref())
                })
                .collect();
            let rewritten = match agent {
                HookAgent::Codex => codex::rewrite(proposed, &kept),
                _ => string_edits::rewrite(agent, input, proposed, &kept),
            };
            let context = if result.decision == ProposeDecision::Accepted {
                "The person accepted this change in the editor.".to_owned()
            } else {
                result.message.clone()
            };
            match rewritten {
                Ok(Some(input)) => Verdict::AllowWith { input, context },
                // What was kept is on disk already (the editor made it): nothing left to write.
                Ok(None) => Verdict::Deny {
                    reason: format!(
                        "{context} The editor has already made the change, so there is nothing left to write."
                    ),
                },
                Err(why) => Verdict::Deny {
                    reason: format!(
                        "{context} But Verbatim could not express the kept part as this tool's input ({why}), so \
                         nothing was written. Write exactly the kept part again."
                    ),
                },
            }
        }
    }
}

/// Every file is on disk as it was when the tool's input was read.
fn disk_unchanged(proposed: &Proposed) -> bool {
    proposed.files.iter().all(|file| disk_text(&file.path).ok().as_ref() == Some(&file.disk))
}

/// The path a tool names, absolute.
pub(crate) fn absolute(cwd: &Path, spelled: &str) -> PathBuf {
    let path = Path::new(spelled);
    if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) }
}

/// The file's text on disk, `None` when it does not exist.
pub(crate) fn disk_text(path: &Path) -> Result<Option<String>, String> {
    match verbatim_engine::disk::read_text(path) {
        Ok(disk) => Ok(Some(disk.text)),
        Err(verbatim_engine::disk::DiskError::Missing) => Ok(None),
        Err(error) => Err(format!("{} cannot be read ({error})", path.display())),
    }
}
