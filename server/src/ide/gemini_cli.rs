//! Gemini CLI's IDE companion tools (Qwen Code speaks the same), served to one
//! session: `openDiff` as a Verbatim review ([`crate::ide::proposal`]) whose
//! outcome follows as `ide/diffAccepted` / `ide/diffRejected`, `closeDiff`, and the
//! editor's context as `ide/contextUpdate`.
//!
//! `openDiff` answers `{content: []}` at once: the CLI waits for the notification.
//! `closeDiff` comes when the person answered in the terminal instead: the review is
//! withdrawn and the answer is the text to write, as the companion spec says: the
//! proposal unchanged while the person has decided nothing in the editor, or what
//! they kept when the review had ended already.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use verbatim_engine::position::PositionEncoding;

use crate::ide::editor_queries;
use crate::ide::mcp::{self, Outgoing, ToolFuture, ToolResult, Tools};
use crate::ide::proposal::{self, DiffOutcome};
use crate::service::editor_context::{ContextEvent, Selection};
use crate::service::registry::AgentInfo;
use crate::service::state::State;

/// The name the CLI goes by in reviews, the registry and the journal.
pub const AGENT_NAME: &str = "Gemini CLI";
/// The spec's debounce of `ide/contextUpdate`.
const CONTEXT_DEBOUNCE: Duration = Duration::from_millis(50);
/// How often the set of open files is compared with the last one sent.
const OPEN_FILES_POLL: Duration = Duration::from_millis(500);
/// The CLI keeps this many open files (`IDE_MAX_OPEN_FILES`).
pub const MAX_OPEN_FILES: usize = 10;
/// The CLI keeps this much selected text (`IDE_MAX_SELECTED_TEXT_LENGTH`, UTF-16 units).
pub const MAX_SELECTED_TEXT: usize = 16384;
/// How many ended reviews are remembered for a late `closeDiff`.
const ENDED_KEPT: usize = 16;

/// A review waiting for the person.
struct PendingDiff {
    number: u64,
    proposal: String,
    withdraw: CancellationToken,
}

/// Reviews that ended, newest last: the file, and the text to write or `None` (rejected).
type Ended = Arc<Mutex<VecDeque<(PathBuf, Option<String>)>>>;

/// One CLI session.
pub struct GeminiCliIde {
    state: Arc<State>,
    agent: Mutex<AgentInfo>,
    outgoing: Outgoing,
    pending: Arc<Mutex<HashMap<PathBuf, PendingDiff>>>,
    ended: Ended,
    next_review: std::sync::atomic::AtomicU64,
    closed: CancellationToken,
}

fn guard<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl GeminiCliIde {
    /// Registers the session as an agent and starts its context updates.
    pub fn connect(state: Arc<State>, outgoing: Outgoing) -> Arc<Self> {
        let id = state.registry().next_agent_id();
        let agent = AgentInfo {
            id,
            session: crate::service::registry::session_of(id),
            turn: None,
            name: AGENT_NAME.into(),
            version: None,
            connected_at: crate::service::clock::now_rfc3339(),
            encoding: PositionEncoding::Utf16,
            access: state.main_socket_access(),
            options: Default::default(),
        };
        state.registry().add_agent(agent.clone());
        state.notify_status();
        let ide = Arc::new(Self {
            state,
            agent: Mutex::new(agent),
            outgoing,
            pending: Arc::default(),
            ended: Arc::default(),
            next_review: std::sync::atomic::AtomicU64::new(1),
            closed: CancellationToken::new(),
        });
        tokio::spawn(forward_context(ide.state.clone(), ide.outgoing.clone(), ide.closed.clone()));
        ide
    }

    fn open_diff(&self, arguments: &Value) -> ToolResult {
        let text = |name: &str| arguments.get(name).and_then(Value::as_str);
        let (Some(path), Some(proposal)) = (text("filePath"), text("newContent")) else {
            return ToolResult::error("openDiff needs filePath and newContent");
        };
        let path = PathBuf::from(path);
        if !path.is_absolute() {
            return ToolResult::error(format!("{} is not an absolute path", path.display()));
        }
        let number = self.next_review.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let withdraw = CancellationToken::new();
        let previous = guard(&self.pending)
            .insert(path.clone(), PendingDiff { number, proposal: proposal.to_owned(), withdraw: withdraw.clone() });
        if let Some(previous) = previous {
            // The same file again: the older review is replaced, as an IDE replaces its diff view.
            previous.withdraw.cancel();
        }
        // The task holds no reference to the session, which ends (and withdraws it) on drop.
        let proposal = proposal.to_owned();
        let agent = guard(&self.agent).clone();
        let (state, outgoing) = (self.state.clone(), self.outgoing.clone());
        let (pending, ended, closed) = (self.pending.clone(), self.ended.clone(), self.closed.clone());
        tokio::spawn(async move {
            let outcome = tokio::select! {
                outcome = proposal::review_file(&state, &agent, &path, &proposal) => Some(outcome),
                () = withdraw.cancelled() => None,
                () = closed.cancelled() => None,
            };
            // Withdrawn (closeDiff, a newer openDiff, the session gone): closeDiff answers.
            let Some(outcome) = outcome else { return };
            {
                let mut pending = guard(&pending);
                if pending.get(&path).is_some_and(|diff| diff.number == number) {
                    pending.remove(&path);
                } else {
                    return;
                }
            }
            let file_path = path.display().to_string();
            let written = match outcome {
                DiffOutcome::Accepted { text, modified } => {
                    tracing::info!(path = %file_path, modified, "openDiff: accepted; the CLI writes the file");
                    mcp::notify(&outgoing, "ide/diffAccepted", json!({"filePath": file_path, "content": text}));
                    Some(text)
                }
                DiffOutcome::Rejected { why } => {
                    tracing::info!(path = %file_path, "openDiff: rejected ({why})");
                    mcp::notify(&outgoing, "ide/diffRejected", json!({"filePath": file_path}));
                    None
                }
            };
            let mut ended = guard(&ended);
            ended.push_back((path, written));
            while ended.len() > ENDED_KEPT {
                ended.pop_front();
            }
        });
        ToolResult { content: vec![], is_error: false }
    }

    fn close_diff(&self, arguments: &Value) -> ToolResult {
        let Some(path) = arguments.get("filePath").and_then(Value::as_str) else {
            return ToolResult::error("closeDiff needs filePath");
        };
        let suppress = arguments.get("suppressNotification").and_then(Value::as_bool).unwrap_or(false);
        let path_buf = PathBuf::from(path);
        let content = if let Some(diff) = guard(&self.pending).remove(&path_buf) {
            tracing::info!(path, "closeDiff: the review is withdrawn; the proposal is the text to write");
            diff.withdraw.cancel();
            if !suppress {
                mcp::notify(&self.outgoing, "ide/diffClosed", json!({"filePath": path, "content": diff.proposal}));
            }
            Some(diff.proposal)
        } else {
            let ended = guard(&self.ended);
            match ended.iter().rev().find(|(ended, _)| *ended == path_buf) {
                Some((_, written)) => written.clone(),
                None => return ToolResult::error(format!("No open diff for {path}")),
            }
        };
        ToolResult::texts([json!({"content": content}).to_string()])
    }
}

impl Drop for GeminiCliIde {
    fn drop(&mut self) {
        self.closed.cancel();
        for (_, diff) in guard(&self.pending).drain() {
            diff.withdraw.cancel();
        }
        let id = guard(&self.agent).id;
        self.state.registry().remove_agent(id);
        self.state.notify_status();
    }
}

impl Tools for GeminiCliIde {
    fn server_name(&self) -> &'static str {
        "verbatim"
    }

    fn initialized(&self, client: &Value) {
        let version = client.pointer("/clientInfo/version").and_then(Value::as_str).map(ToOwned::to_owned);
        let mut agent = guard(&self.agent);
        agent.version = version;
        self.state.registry().add_agent(agent.clone());
    }

    fn list(&self) -> Vec<Value> {
        tool_list()
    }

    fn call(self: Arc<Self>, name: String, arguments: Value, _cancel: CancellationToken) -> ToolFuture {
        Box::pin(async move {
            match name.as_str() {
                "openDiff" => self.open_diff(&arguments),
                "closeDiff" => self.close_diff(&arguments),
                other => ToolResult::error(format!("Unknown tool: {other}")),
            }
        })
    }
}

/// The tools, with the spec's `OpenDiffRequest` and `CloseDiffRequest` as schemas.
pub fn tool_list() -> Vec<Value> {
    let string = |description: &str| json!({"type": "string", "description": description});
    vec![
        json!({
            "name": "openDiff",
            "description": "Open a diff view to create or modify a file: a Verbatim review in the editor's live buffer. \
                            The outcome follows as ide/diffAccepted or ide/diffRejected.",
            "inputSchema": {"type": "object", "properties": {
                "filePath": string("The absolute path to the file to be diffed."),
                "newContent": string("The proposed new content for the file."),
            }, "required": ["filePath", "newContent"]},
        }),
        json!({
            "name": "closeDiff",
            "description": "Close the diff view of a file: withdraws its review and answers the content to write",
            "inputSchema": {"type": "object", "properties": {
                "filePath": string("The absolute path to the file to be diffed."),
                "suppressNotification": {"type": "boolean"},
            }, "required": ["filePath"]},
        }),
    ]
}

/// When each file was last focused, in milliseconds since the epoch.
#[derive(Default)]
struct Recency {
    focused: HashMap<PathBuf, u64>,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as u64)
}

/// The `IdeContext` of the editor now: its open files on disk, most recent first, at
/// most [`MAX_OPEN_FILES`], the focused one with its cursor (1-based) and selection
/// (at most [`MAX_SELECTED_TEXT`]).
pub fn context(state: &State, recency: &mut HashMap<PathBuf, u64>) -> Value {
    let selection = state.context.latest_selection();
    let documents = editor_queries::open_documents(state);
    let start = now_ms();
    let mut files: Vec<(u64, bool, PathBuf)> = documents
        .into_iter()
        .filter(|document| document.path.is_file())
        .map(|document| {
            let stamp = *recency.entry(document.path.clone()).or_insert(start.saturating_sub(1));
            (stamp, document.active, document.path)
        })
        .collect();
    recency.retain(|path, _| files.iter().any(|(_, _, open)| open == path));
    files.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    files.truncate(MAX_OPEN_FILES);
    let open_files: Vec<Value> = files
        .into_iter()
        .map(|(timestamp, active, path)| {
            let mut file = json!({"path": path.display().to_string(), "timestamp": timestamp});
            if active {
                file["isActive"] = json!(true);
                if let Some(selection) = selection.as_ref().filter(|selection| selection.path == path) {
                    file["cursor"] =
                        json!({"line": selection.range.end.line + 1, "character": selection.range.end.character + 1});
                    if !selection.text.is_empty() {
                        file["selectedText"] = json!(truncate(&selection.text, MAX_SELECTED_TEXT));
                    }
                }
            }
            file
        })
        .collect();
    json!({"workspaceState": {"openFiles": open_files, "isTrusted": true}})
}

/// At most `limit` UTF-16 units of `text`, cut at a character boundary.
fn truncate(text: &str, limit: usize) -> &str {
    let mut units = 0;
    for (index, character) in text.char_indices() {
        units += character.len_utf16();
        if units > limit {
            return &text[..index];
        }
    }
    text
}

/// Sends `ide/contextUpdate` after each change of the editor's context, debounced,
/// until the session ends.
async fn forward_context(state: Arc<State>, outgoing: Outgoing, closed: CancellationToken) {
    let mut events = state.context.subscribe();
    let mut recency = Recency::default();
    let mut last_sent: Option<Value> = None;
    // The first update goes out once the session is up.
    let mut due: Option<tokio::time::Instant> = Some(tokio::time::Instant::now() + CONTEXT_DEBOUNCE);
    let mut poll = tokio::time::interval(OPEN_FILES_POLL);
    let mut last_open = open_paths(&state);
    loop {
        tokio::select! {
            () = closed.cancelled() => return,
            () = tokio::time::sleep_until(due.unwrap_or_else(tokio::time::Instant::now)), if due.is_some() => {
                due = None;
                let update = context(&state, &mut recency.focused);
                if last_sent.as_ref() != Some(&update) {
                    mcp::notify(&outgoing, "ide/contextUpdate", update.clone());
                    let active = update["workspaceState"]["openFiles"].as_array().and_then(|files| files.first());
                    tracing::debug!(
                        active = %active.and_then(|file| file["path"].as_str()).unwrap_or(""),
                        cursor_line = %active.map_or(serde_json::Value::Null, |file| file["cursor"]["line"].clone()),
                        "ide/contextUpdate sent"
                    );
                    last_sent = Some(update);
                }
            }
            _ = poll.tick() => {
                let open = open_paths(&state);
                if open != last_open {
                    last_open = open;
                    due.get_or_insert_with(|| tokio::time::Instant::now() + CONTEXT_DEBOUNCE);
                }
            }
            event = events.recv() => match event {
                Ok(ContextEvent::Selection(Selection { path, .. })) => {
                    recency.focused.insert(path, now_ms());
                    due.get_or_insert_with(|| tokio::time::Instant::now() + CONTEXT_DEBOUNCE);
                }
                Ok(ContextEvent::AtMention(_)) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
        }
    }
}

/// The open files, sorted.
fn open_paths(state: &State) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> =
        editor_queries::open_documents(state).into_iter().map(|document| document.path).collect();
    paths.sort_unstable();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_are_cut_at_the_spec_limit_on_a_character_boundary() {
        assert_eq!(truncate("abc", 2), "ab");
        assert_eq!(truncate("aé", 2), "aé");
        assert_eq!(truncate("a😀", 2), "a");
        let long = "x".repeat(MAX_SELECTED_TEXT + 10);
        assert_eq!(truncate(&long, MAX_SELECTED_TEXT).len(), MAX_SELECTED_TEXT);
    }

    #[test]
    fn the_tools_are_the_specs() {
        let names: Vec<Value> = tool_list().iter().map(|tool| tool["name"].clone()).collect();
        assert_eq!(names, [json!("openDiff"), json!("closeDiff")]);
        assert_eq!(tool_list()[0]["inputSchema"]["required"], json!(["filePath", "newContent"]));
        assert_eq!(tool_list()[1]["inputSchema"]["required"], json!(["filePath"]));
    }
}
