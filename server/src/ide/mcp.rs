//! The small part of MCP (JSON-RPC 2.0) that an agent's IDE protocol needs: the
//! handshake, `tools/list`, `tools/call` (each call concurrent, cancellable), empty
//! prompt and resource lists, `ping`, and notifications to the agent.
//!
//! It reads and writes JSON values and knows no transport: the WebSocket endpoint of
//! Claude Code (and the HTTP endpoint of Gemini CLI) move the messages. A tool set
//! ([`Tools`]) says what the tools are; this module only runs the session. `rmcp`,
//! which `verbatim mcp` uses, was not taken here: its server expects its own
//! transports and typed tool routers, while these sessions need raw notifications
//! with the agent's own method names (`selection_changed`) and answers shaped exactly
//! as the agent reads them.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The protocol version answered when the agent names none.
const DEFAULT_PROTOCOL_VERSION: &str = "2025-06-18";

/// What a tool call answers: MCP `content` blocks, and whether it is an error result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub content: Vec<Value>,
    pub is_error: bool,
}

impl ToolResult {
    /// One text block per string.
    pub fn texts<I: IntoIterator<Item = S>, S: Into<String>>(texts: I) -> Self {
        let content = texts.into_iter().map(|text| json!({"type": "text", "text": text.into()})).collect();
        Self { content, is_error: false }
    }

    pub fn error(message: impl Into<String>) -> Self {
        Self { is_error: true, ..Self::texts([message]) }
    }
}

pub type ToolFuture = Pin<Box<dyn Future<Output = ToolResult> + Send>>;

/// A set of tools served over one session.
pub trait Tools: Send + Sync + 'static {
    /// `serverInfo.name` in the `initialize` answer.
    fn server_name(&self) -> &'static str;
    /// The `tools/list` entries (`name`, `description`, `inputSchema`).
    fn list(&self) -> Vec<Value>;
    /// Runs one call. `cancel` fires when the agent cancels it or the session ends:
    /// the call then answers promptly (what it answers may not be read).
    fn call(self: Arc<Self>, name: String, arguments: Value, cancel: CancellationToken) -> ToolFuture;
    /// The agent's `initialize` params (its name and version), once.
    fn initialized(&self, _client: &Value) {}
}

/// Messages to the agent.
pub type Outgoing = mpsc::UnboundedSender<Value>;

/// Runs a session until `incoming` ends; every call still running is then cancelled.
pub async fn serve(tools: Arc<dyn Tools>, mut incoming: mpsc::Receiver<Value>, outgoing: Outgoing) {
    let running: Arc<Mutex<HashMap<String, CancellationToken>>> = Arc::default();
    while let Some(message) = incoming.recv().await {
        let method = message.get("method").and_then(Value::as_str).map(ToOwned::to_owned);
        let id = message.get("id").cloned().filter(|id| !id.is_null());
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method, id) {
            (Some(method), Some(id)) => {
                if method == "tools/call" {
                    start_call(&tools, &running, &outgoing, id, params);
                } else {
                    let _ = outgoing.send(answer(&*tools, &method, &params, id));
                }
            }
            (Some(method), None) => notification(&running, &method, &params),
            // A response to a request of ours (none are sent) or garbage: logged only.
            (None, _) => tracing::debug!("an IDE connection sent a message that is neither request nor notification"),
        }
    }
    for (_, cancel) in running.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).drain() {
        cancel.cancel();
    }
}

/// Sends a notification to the agent.
pub fn notify(outgoing: &Outgoing, method: &str, params: Value) {
    let _ = outgoing.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
}

fn answer(tools: &dyn Tools, method: &str, params: &Value, id: Value) -> Value {
    let result = match method {
        "initialize" => {
            tools.initialized(params);
            let version = params.get("protocolVersion").and_then(Value::as_str).unwrap_or(DEFAULT_PROTOCOL_VERSION);
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}, "prompts": {"listChanged": false}, "resources": {}},
                "serverInfo": {"name": tools.server_name(), "version": env!("CARGO_PKG_VERSION")},
            })
        }
        "ping" => json!({}),
        "tools/list" => json!({"tools": tools.list()}),
        "prompts/list" => json!({"prompts": []}),
        "resources/list" => json!({"resources": []}),
        "resources/templates/list" => json!({"resourceTemplates": []}),
        _ => {
            tracing::debug!(method, "an IDE connection called a method that is not served");
            return json!({"jsonrpc": "2.0", "id": id,
                          "error": {"code": -32601, "message": format!("method not found: {method}")}});
        }
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn start_call(
    tools: &Arc<dyn Tools>,
    running: &Arc<Mutex<HashMap<String, CancellationToken>>>,
    outgoing: &Outgoing,
    id: Value,
    params: Value,
) {
    let Some(name) = params.get("name").and_then(Value::as_str).map(ToOwned::to_owned) else {
        let _ = outgoing.send(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32602, "message": "tools/call needs params.name, the tool to call"}}));
        return;
    };
    let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
    let cancel = CancellationToken::new();
    let key = id.to_string();
    running.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(key.clone(), cancel.clone());
    let (tools, running, outgoing) = (tools.clone(), running.clone(), outgoing.clone());
    tokio::spawn(async move {
        tracing::debug!(tool = %name, "IDE tool call");
        let result = tools.call(name, arguments, cancel).await;
        running.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&key);
        let _ = outgoing.send(json!({"jsonrpc": "2.0", "id": id,
            "result": {"content": result.content, "isError": result.is_error}}));
    });
}

fn notification(running: &Mutex<HashMap<String, CancellationToken>>, method: &str, params: &Value) {
    match method {
        "notifications/cancelled" => {
            let Some(id) = params.get("requestId") else { return };
            if let Some(cancel) =
                running.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&id.to_string())
            {
                tracing::info!(request = %id, "the agent cancelled a tool call");
                cancel.cancel();
            }
        }
        _ => tracing::debug!(method, "IDE notification"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    struct Echo;

    impl Tools for Echo {
        fn server_name(&self) -> &'static str {
            "test"
        }
        fn list(&self) -> Vec<Value> {
            vec![json!({"name": "echo"}), json!({"name": "wait"})]
        }
        fn call(self: Arc<Self>, name: String, arguments: Value, cancel: CancellationToken) -> ToolFuture {
            Box::pin(async move {
                if name == "wait" {
                    cancel.cancelled().await;
                    return ToolResult::texts(["cancelled"]);
                }
                ToolResult::texts([arguments.to_string()])
            })
        }
    }

    async fn session() -> (mpsc::Sender<Value>, mpsc::UnboundedReceiver<Value>) {
        let (to_session, incoming) = mpsc::channel(8);
        let (outgoing, from_session) = mpsc::unbounded_channel();
        tokio::spawn(serve(Arc::new(Echo), incoming, outgoing));
        (to_session, from_session)
    }

    #[tokio::test]
    async fn handshake_list_and_call() {
        let (send, mut receive) = session().await;
        send.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
        )
        .await
        .unwrap();
        let answer = receive.recv().await.unwrap();
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
        send.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.unwrap();
        send.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await.unwrap();
        assert_eq!(receive.recv().await.unwrap()["result"]["tools"][0]["name"], "echo");
        send.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"a": 1}}}))
            .await
            .unwrap();
        let answer = receive.recv().await.unwrap();
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["result"]["content"][0]["text"], "{\"a\":1}");
        send.send(json!({"jsonrpc": "2.0", "id": 4, "method": "nope"})).await.unwrap();
        assert_eq!(receive.recv().await.unwrap()["error"]["code"], -32601);
    }

    #[tokio::test]
    async fn a_call_is_cancelled_by_the_agent_and_others_go_on_meanwhile() {
        let (send, mut receive) = session().await;
        send.send(json!({"jsonrpc": "2.0", "id": "w", "method": "tools/call", "params": {"name": "wait"}}))
            .await
            .unwrap();
        send.send(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"})).await.unwrap();
        assert_eq!(receive.recv().await.unwrap()["id"], 5);
        send.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "w"}}))
            .await
            .unwrap();
        let answer = receive.recv().await.unwrap();
        assert_eq!(answer["id"], "w");
        assert_eq!(answer["result"]["content"][0]["text"], "cancelled");
    }

    #[tokio::test]
    async fn the_end_of_the_session_cancels_every_call() {
        let (send, mut receive) = session().await;
        send.send(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "wait"}}))
            .await
            .unwrap();
        tokio::task::yield_now().await;
        drop(send);
        let answer = receive.recv().await.unwrap();
        assert_eq!(answer["id"], 9);
    }
}
