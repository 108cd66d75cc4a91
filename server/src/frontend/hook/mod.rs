//! `verbatim hook AGENT`: the command every agent runs as its pre-write hook (or, for
//! opencode, that its plugin runs). The agent's module ([`crate::frontend::agents`])
//! reads the call from its input shape and names its edit tool; this works out the
//! whole new text of every file the tool would write ([`patch_tool`] for `apply_patch`,
//! [`string_edits`] for the string-replacement and whole-file tools), hands them to the
//! `verbatim lsp` whose workspace holds the files (`verbatim/propose`: one review in the
//! live buffers), and answers in the agent's own shape: allow unchanged when every hunk
//! was kept, allow with changed input that writes exactly what was kept (and tell the
//! model what was left out, and why: in the answer, or through the hook after the tool,
//! [`context_notes`]), or deny with the person's reason. An agent that ignores changed
//! input (Qwen Code) has the kept part written by Verbatim and its own write denied,
//! with words saying what was written and why the rest was not.
//!
//! It never gets in the agent's way: when no editor serves the file, when no server
//! answers, when the input is not what it expects or when anything fails, it gives no
//! decision (empty stdout), explains in one line on stderr and exits 0, so that the
//! agent's own flow (its permission prompt or its mode) goes on.

pub mod context_notes;
pub mod patch_tool;
pub mod string_edits;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use verbatim_engine::doc_key::DocKey;

use crate::frontend::agents::Agent;
pub use crate::frontend::agents::cli::Verdict;
use crate::frontend::agents::cli::{ChangedInput, EditTool, HookCall};
use crate::frontend::client::{AgentClient, ClientError, Identity};
use crate::frontend::{Frontend, FrontendOptions, Via};
use crate::service::protocol::{ProposeDecision, ProposeResult, method};

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
pub async fn run(agent: Agent, input: &str, options: FrontendOptions, review_secs: u64) -> HookOutput {
    let cli = agent.cli();
    let call = match serde_json::from_str::<Value>(input) {
        Err(error) => return no_decision(agent, &format!("the hook's input is not JSON ({error})")),
        Ok(value) => match cli.call(&value) {
            Some(call) => call,
            None => return no_decision(agent, "the hook's input is not a tool call Verbatim knows"),
        },
    };
    let verdict = decide(agent, &call, options, review_secs).await;
    if let Verdict::Pass { note } = &verdict {
        return no_decision(agent, note);
    }
    if let Verdict::AllowWith { context, .. } = &verdict
        && cli.changed_input() == ChangedInput::ToldAfter
    {
        // Nothing of this answer reaches the model: the hook after the tool tells it.
        context_notes::leave(&call, context);
    }
    let stdout = cli.render(&call, &verdict).map_or_else(String::new, |value| format!("{value}\n"));
    HookOutput { stdout, stderr: String::new() }
}

/// No decision: nothing on stdout, the reason (if any) on stderr.
fn no_decision(agent: Agent, note: &str) -> HookOutput {
    let stderr = if note.is_empty() {
        String::new()
    } else {
        format!("verbatim hook: {note}; no decision, {} goes on as usual\n", agent.display_name())
    };
    HookOutput { stdout: String::new(), stderr }
}

/// The tool the call is and what it would write; `None` when it is not a tool the
/// hook reviews; an error when its input is not what the tool takes (the agent's own
/// error to report).
pub fn proposal_of(agent: Agent, call: &HookCall, cwd: &Path) -> Option<(EditTool, Result<Proposed, String>)> {
    let cli = agent.cli();
    let tool = cli.tool(&call.tool)?;
    let asks = cli.asks(call);
    let proposed = match tool {
        EditTool::Patch(field) => {
            let text = match field {
                Some(field) => call.args.get(field).and_then(Value::as_str),
                None => call.args.as_str(),
            };
            match text {
                Some(text) => patch_tool::proposed(text, cwd, asks),
                None => Err(format!("{}'s input has no patch", call.tool)),
            }
        }
        _ => string_edits::proposed(&call.tool, tool, &call.args, cwd, asks),
    };
    Some((tool, proposed))
}

async fn decide(agent: Agent, call: &HookCall, options: FrontendOptions, review_secs: u64) -> Verdict {
    let pass = |note: String| Verdict::Pass { note };
    if call.after {
        return match context_notes::take(call) {
            Some(context) => Verdict::Note { context },
            None => pass(String::new()),
        };
    }
    let cwd = call.cwd.clone().unwrap_or_else(|| options.cwd.clone());
    let (tool, proposed) = match proposal_of(agent, call, &cwd) {
        // Not a tool this hook reviews (the setup check sends one).
        None => return pass(String::new()),
        Some((_, Err(why))) => return pass(why),
        Some((tool, Ok(proposed))) => (tool, proposed),
    };
    let options =
        FrontendOptions { agent: Identity { name: agent.display_name().to_owned(), version: None }, cwd, ..options };
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
        "session": call.session,
        "turn": call.turn,
    });
    let identity = frontend.agent();
    let request = propose(&socket, &identity, params);
    let result = match tokio::time::timeout(Duration::from_secs(review_secs), request).await {
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
    verdict_of(agent, call, tool, &proposed, &result)
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
fn verdict_of(agent: Agent, call: &HookCall, tool: EditTool, proposed: &Proposed, result: &ProposeResult) -> Verdict {
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
            let context = if result.decision == ProposeDecision::Accepted {
                "The person accepted this change in the editor.".to_owned()
            } else {
                result.message.clone()
            };
            if agent.cli().changed_input() == ChangedInput::Refused {
                return written_by_verbatim(agent, proposed, &kept, &context);
            }
            let rewritten = match tool {
                EditTool::Patch(_) => {
                    patch_tool::rewrite(proposed, &kept).map(|patch| patch.map(|patch| agent.cli().patch_input(patch)))
                }
                _ => string_edits::rewrite(tool, &call.args, proposed, &kept),
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

/// For an agent that cannot take changed input: Verbatim writes what the person kept
/// and refuses the agent's own write, saying what was written and why the rest was not.
fn written_by_verbatim(agent: Agent, proposed: &Proposed, kept: &[Option<&str>], context: &str) -> Verdict {
    let mut written = Vec::new();
    for (file, kept) in proposed.files.iter().zip(kept) {
        let now = disk_text(&file.path).ok().flatten();
        if now.as_deref() == *kept {
            continue;
        }
        let result = match kept {
            Some(text) => write_atomically(&file.path, text),
            None => std::fs::remove_file(&file.path).map_err(|error| error.to_string()),
        };
        if let Err(why) = result {
            return Verdict::Deny {
                reason: format!(
                    "{context} Verbatim could not write the kept part to {} ({why}), so nothing more was written. \
                     Write exactly the kept part again.",
                    file.spelled
                ),
            };
        }
        written.push(file.spelled.clone());
    }
    let what = if written.is_empty() {
        "The editor has already made the kept part of this change, so nothing was left to write".to_owned()
    } else {
        format!("Verbatim has written the part the person kept to {} (it is on disk now)", written.join(", "))
    };
    Verdict::Deny {
        reason: format!(
            "{what}; {} cannot write a changed version itself, so its own write was stopped: do not write this \
             change again. {context}",
            agent.display_name()
        ),
    }
}

/// Writes `text` to `path` through a temporary file beside it, keeping its permissions.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let temporary = path.with_extension("verbatim-hook.tmp");
    let permissions = std::fs::metadata(path).ok().map(|metadata| metadata.permissions());
    std::fs::write(&temporary, text)
        .and_then(|()| permissions.map_or(Ok(()), |permissions| std::fs::set_permissions(&temporary, permissions)))
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|error| error.to_string())
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
