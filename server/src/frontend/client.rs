//! The agent side of the socket: connect to a verbatim server, introduce the agent
//! with `initialize`, and call `verbatim/*` methods over Content-Length framing.
//!
//! The CLI and the MCP server open one connection per call: the agent shows up in
//! `verbatim/status` while its call runs, and a cancelled call simply closes its
//! connection. Errors in the protocol's range come back as [`ProtocolError`]s.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::service::error::{ErrorKind, ProtocolError};
use crate::transport::framing::{DEFAULT_MAX_MESSAGE_BYTES, encode};

/// How an agent introduces itself (`clientInfo` in `initialize`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub version: Option<String>,
}

/// Why a call over the socket failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A documented protocol error.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// Any other JSON-RPC error (an internal error, a method this server lacks).
    #[error("the verbatim server answered with error {code}: {message}")]
    Rpc { code: i64, message: String },
    /// The connection could not be made, or closed before the answer.
    #[error("{0}")]
    Connection(String),
}

/// One agent connection to a verbatim server.
#[derive(Debug)]
pub struct AgentClient {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: i64,
    socket: PathBuf,
}

impl AgentClient {
    /// Connects and initializes. Positions in results are counted in Unicode
    /// scalar values (`utf-32`), as people and most languages count characters.
    pub async fn connect(socket: &Path, identity: &Identity) -> Result<Self, ClientError> {
        let stream = UnixStream::connect(socket).await.map_err(|error| {
            ClientError::Connection(format!("cannot connect to the verbatim server at {}: {error}", socket.display()))
        })?;
        let (read, write) = stream.into_split();
        let mut client = Self { reader: BufReader::new(read), writer: write, next_id: 1, socket: socket.to_owned() };
        let mut client_info = json!({"name": identity.name});
        if let Some(version) = &identity.version {
            client_info["version"] = json!(version);
        }
        client
            .call(
                "initialize",
                json!({
                    "processId": std::process::id(),
                    "clientInfo": client_info,
                    "rootUri": null,
                    "capabilities": {"general": {"positionEncodings": ["utf-32"]}},
                }),
            )
            .await?;
        client.notify("initialized", json!({})).await?;
        Ok(client)
    }

    /// Sends a request and waits for its answer, however long the editor takes.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        loop {
            let message = self.receive().await?;
            if let Some(request_id) = message.get("method").and(message.get("id")) {
                // The server asked us something: agents offer nothing.
                let answer = json!({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "not supported by this agent"}});
                self.send(&answer).await?;
                continue;
            }
            if message.get("method").is_some() || message.get("id") != Some(&json!(id)) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(wire_error(error));
            }
            return Ok(message.get("result").cloned().unwrap_or(Value::Null));
        }
    }

    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), ClientError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    /// Ends the session politely.
    pub async fn close(mut self) {
        if self.call("shutdown", Value::Null).await.is_ok() {
            let _ = self.notify("exit", Value::Null).await;
        }
        let _ = self.writer.shutdown().await;
    }

    async fn send(&mut self, message: &Value) -> Result<(), ClientError> {
        let frame = encode(message);
        let outcome = async {
            self.writer.write_all(&frame).await?;
            self.writer.flush().await
        }
        .await;
        outcome.map_err(|error| self.closed(&error.to_string()))
    }

    async fn receive(&mut self) -> Result<Value, ClientError> {
        let mut length = None;
        loop {
            let mut line = String::new();
            let read = self.reader.read_line(&mut line).await.map_err(|error| self.closed(&error.to_string()))?;
            if read == 0 {
                return Err(self.closed("the connection closed"));
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length:") {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let length = length
            .filter(|length| *length <= DEFAULT_MAX_MESSAGE_BYTES)
            .ok_or_else(|| self.closed("a frame without a usable Content-Length"))?;
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).await.map_err(|error| self.closed(&error.to_string()))?;
        serde_json::from_slice(&body).map_err(|error| self.closed(&format!("a frame that is not JSON ({error})")))
    }

    fn closed(&self, why: &str) -> ClientError {
        ClientError::Connection(format!(
            "the verbatim server at {} stopped answering ({why}); its editor may have closed",
            self.socket.display()
        ))
    }
}

/// A JSON-RPC error object as a [`ClientError`].
pub fn wire_error(error: &Value) -> ClientError {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("").to_owned();
    match ErrorKind::from_code(code) {
        Some(kind) => {
            let mut data = error.get("data").and_then(Value::as_object).cloned().unwrap_or_default();
            data.remove("kind");
            ClientError::Protocol(ProtocolError { kind, message, data })
        }
        None => ClientError::Rpc { code, message },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_errors_come_back_whole() {
        let wire = ProtocolError::new(ErrorKind::Stale, "moved").with("currentRev", "e1.2").into_jsonrpc();
        let wire = serde_json::to_value(wire).expect("json");
        match wire_error(&wire) {
            ClientError::Protocol(error) => {
                assert_eq!(error, ProtocolError::new(ErrorKind::Stale, "moved").with("currentRev", "e1.2"));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(wire_error(&json!({"code": -32601, "message": "no"})), ClientError::Rpc { code: -32601, .. }));
    }
}
