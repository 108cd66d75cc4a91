//! A guard in front of every connection's byte stream: it checks each
//! Content-Length frame before tower-lsp-server sees it.
//!
//! tower-lsp-server's decoder ends a connection at the first frame it cannot
//! decode. Here, a frame without a usable Content-Length, a body that is not JSON
//! (malformed, invalid UTF-8, nested too deeply), a message that is not JSON-RPC 2.0,
//! or a message over the size limit is answered with a JSON-RPC error (`-32700` parse
//! error or `-32600` invalid request) and dropped; the connection keeps being served.
//! Good frames pass through unchanged. Output frames are forwarded whole, so an error
//! answer can never be interleaved inside another message.

use std::io;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The largest message accepted unless configured otherwise (`VERBATIM_MAX_MESSAGE_BYTES`).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;
/// The longest header line accepted.
const MAX_HEADER_LINE: usize = 8 * 1024;
const PIPE_CAPACITY: usize = 256 * 1024;

/// Limits applied to incoming frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLimits {
    pub max_message_bytes: usize,
}

impl Default for FrameLimits {
    fn default() -> Self {
        let from_env = std::env::var("VERBATIM_MAX_MESSAGE_BYTES").ok().and_then(|value| value.parse().ok());
        Self { max_message_bytes: from_env.unwrap_or(DEFAULT_MAX_MESSAGE_BYTES) }
    }
}

/// Puts the guard between a raw connection and the LSP server. Returns the
/// streams the server reads from and writes to.
/// The token is cancelled when the input ends (the peer closed the connection).
pub fn guard<R, W>(input: R, output: W, limits: FrameLimits) -> (DuplexStream, DuplexStream, CancellationToken)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    guard_observed(input, output, limits, ())
}

/// Told what the guard does with a connection's input, as it goes.
pub trait Observer: Send + Sync + 'static {
    /// A request or notification with this method, just before it is handed on.
    fn message(&self, _method: &str) {}
    /// The input's first `bytes` bytes are handled: handed on, answered or skipped.
    fn handled(&self, _bytes: u64) {}
}

impl Observer for () {}

/// [`guard`], telling `observer` what it does (the editor's connection counts its
/// text sync there: `service::editor_order`).
pub fn guard_observed<R, W>(
    input: R,
    output: W,
    limits: FrameLimits,
    observer: impl Observer,
) -> (DuplexStream, DuplexStream, CancellationToken)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_server, server_input) = tokio::io::duplex(PIPE_CAPACITY);
    let (server_output, from_server) = tokio::io::duplex(PIPE_CAPACITY);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel();
    let input_closed = CancellationToken::new();
    let closed = input_closed.clone();
    tokio::spawn(async move {
        if let Err(error) = read_loop(input, &mut to_server, &errors_tx, limits, &observer).await {
            tracing::debug!("connection input ended: {error}");
        }
        closed.cancel();
        let _ = to_server.shutdown().await;
    });
    tokio::spawn(async move {
        if let Err(error) = write_loop(from_server, errors_rx, output).await {
            tracing::debug!("connection output ended: {error}");
        }
    });
    (server_input, server_output, input_closed)
}

/// Why a frame was refused.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameError {
    pub code: i64,
    pub message: String,
    pub id: Value,
}

impl FrameError {
    fn parse(message: String) -> Self {
        Self { code: -32700, message, id: Value::Null }
    }

    fn invalid(message: String, id: Value) -> Self {
        Self { code: -32600, message, id }
    }

    fn to_frame(&self) -> Vec<u8> {
        encode(&json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}))
    }
}

pub fn encode(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap_or_default();
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend(body);
    frame
}

async fn read_loop<R: AsyncRead + Unpin>(
    input: R,
    to_server: &mut DuplexStream,
    errors: &mpsc::UnboundedSender<Vec<u8>>,
    limits: FrameLimits,
    observer: &impl Observer,
) -> io::Result<()> {
    let mut reader = BufReader::new(input);
    // Bytes of the input handled so far: every frame's headers and body.
    let mut handled: u64 = 0;
    loop {
        if handled > 0 {
            observer.handled(handled);
        }
        let Some(length) = read_headers(&mut reader, errors, &mut handled).await? else { return Ok(()) };
        handled += length as u64;
        if length > limits.max_message_bytes {
            let error = FrameError::invalid(
                format!(
                    "message of {length} bytes exceeds the limit of {} bytes (set VERBATIM_MAX_MESSAGE_BYTES to raise it); it was skipped",
                    limits.max_message_bytes
                ),
                Value::Null,
            );
            let _ = errors.send(error.to_frame());
            let skipped = tokio::io::copy(&mut (&mut reader).take(length as u64), &mut tokio::io::sink()).await?;
            if skipped < length as u64 {
                return Ok(());
            }
            continue;
        }
        let mut body = vec![0; length];
        if let Err(error) = reader.read_exact(&mut body).await {
            return if error.kind() == io::ErrorKind::UnexpectedEof { Ok(()) } else { Err(error) };
        }
        match check_envelope(&body) {
            Ok(method) => {
                if let Some(method) = method {
                    observer.message(&method);
                }
                to_server.write_all(format!("Content-Length: {length}\r\n\r\n").as_bytes()).await?;
                to_server.write_all(&body).await?;
            }
            Err(error) => {
                tracing::warn!("refused a frame: {}", error.message);
                let _ = errors.send(error.to_frame());
            }
        }
    }
}

/// Reads header lines up to the blank line; returns the Content-Length, or `None`
/// at the end of input. Header blocks without a usable length are answered and skipped.
async fn read_headers<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    errors: &mpsc::UnboundedSender<Vec<u8>>,
    handled: &mut u64,
) -> io::Result<Option<usize>> {
    loop {
        let mut length: Option<Result<usize, String>> = None;
        let mut saw_header = false;
        loop {
            let mut line = Vec::new();
            let read = (&mut *reader).take(MAX_HEADER_LINE as u64).read_until(b'\n', &mut line).await?;
            if read == 0 {
                return Ok(None);
            }
            *handled += read as u64;
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if saw_header {
                    break;
                }
                continue;
            }
            saw_header = true;
            if let Some((name, value)) = text.split_once(':')
                && name.trim().eq_ignore_ascii_case("content-length")
            {
                length = Some(value.trim().parse::<usize>().map_err(|_| value.trim().to_owned()));
            }
        }
        match length {
            Some(Ok(length)) => return Ok(Some(length)),
            Some(Err(value)) => {
                let _ = errors.send(
                    FrameError::parse(format!("invalid Content-Length header `{value}`: expected a byte count"))
                        .to_frame(),
                );
            }
            None => {
                let _ = errors.send(
                    FrameError::parse(
                        "missing Content-Length header: every message needs `Content-Length: N` then a blank line"
                            .into(),
                    )
                    .to_frame(),
                );
            }
        }
    }
}

/// Checks that a body is a JSON-RPC 2.0 message tower-lsp-server can decode.
pub fn check_body(body: &[u8]) -> Result<(), FrameError> {
    check_envelope(body).map(|_| ())
}

/// [`check_body`], and the method of a request or notification.
fn check_envelope(body: &[u8]) -> Result<Option<String>, FrameError> {
    let text = std::str::from_utf8(body)
        .map_err(|error| FrameError::parse(format!("message body is not valid UTF-8 ({error})")))?;
    // Only the envelope is kept; `params` and `result` (a whole document, for a
    // didOpen) are checked for syntax and nesting depth without being built.
    let message: Envelope = serde_json::from_str(text).map_err(|error| {
        if error.is_data() {
            FrameError::invalid(
                format!("a JSON-RPC message must be one JSON object with distinct fields (batches are not supported): {error}"),
                Value::Null,
            )
        } else {
            FrameError::parse(format!("message body is not valid JSON: {error}"))
        }
    })?;
    let id = message.id.unwrap_or(Value::Null);
    let id_ok = matches!(id, Value::Null | Value::Number(_) | Value::String(_)) && !id.is_f64();
    let reply_id = if id_ok { id.clone() } else { Value::Null };
    if message.jsonrpc.as_ref() != Some(&json!("2.0")) {
        return Err(FrameError::invalid("`jsonrpc` must be \"2.0\"".into(), reply_id));
    }
    if !id_ok {
        return Err(FrameError::invalid("`id` must be an integer or a string".into(), Value::Null));
    }
    match message.method {
        Some(Value::String(method)) => Ok(Some(method)),
        Some(_) => Err(FrameError::invalid("`method` must be a string".into(), reply_id)),
        None if message.result || message.error.is_some() => {
            if let Some(error) = message.error
                && !(error.get("code").is_some_and(Value::is_i64) && error.get("message").is_some_and(Value::is_string))
            {
                return Err(FrameError::invalid(
                    "a response `error` needs an integer `code` and a string `message`".into(),
                    Value::Null,
                ));
            }
            Ok(None)
        }
        None => Err(FrameError::invalid(
            "a message needs a `method` (request or notification) or a `result`/`error` (response)".into(),
            reply_id,
        )),
    }
}

/// The fields of a JSON-RPC message that decide whether it is well formed.
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(default)]
    jsonrpc: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default, rename = "params")]
    _params: Option<IgnoredAny>,
    /// Whether `result` is present (a `null` result counts).
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default)]
    error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(deserializer).map(|_| true)
}

async fn write_loop<W: AsyncWrite + Unpin>(
    from_server: DuplexStream,
    mut errors: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) -> io::Result<()> {
    let mut reader = BufReader::new(from_server);
    let mut errors_open = true;
    loop {
        tokio::select! {
            frame = read_trusted_frame(&mut reader) => {
                let Some(frame) = frame? else { return Ok(()) };
                output.write_all(&frame).await?;
                output.flush().await?;
            }
            error = errors.recv(), if errors_open => match error {
                Some(frame) => {
                    output.write_all(&frame).await?;
                    output.flush().await?;
                }
                None => errors_open = false,
            },
        }
    }
}

/// Reads one whole frame written by tower-lsp-server (headers included).
async fn read_trusted_frame<R: AsyncRead + Unpin>(reader: &mut BufReader<R>) -> io::Result<Option<Vec<u8>>> {
    let mut frame = Vec::new();
    let mut length = 0usize;
    loop {
        let start = frame.len();
        if reader.read_until(b'\n', &mut frame).await? == 0 {
            return Ok(None);
        }
        let line = String::from_utf8_lossy(&frame[start..]).trim_end().to_owned();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let start = frame.len();
    frame.resize(start + length, 0);
    reader.read_exact(&mut frame[start..]).await?;
    Ok(Some(frame))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_checked() {
        assert!(check_body(br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#).is_ok());
        assert!(check_body(br#"{"jsonrpc":"2.0","method":"x","params":[1]}"#).is_ok());
        assert!(check_body(br#"{"jsonrpc":"2.0","id":"a","result":null}"#).is_ok());
        assert_eq!(check_body(b"{not json").map_err(|e| e.code), Err(-32700));
        assert_eq!(check_body(b"\xff\xfe").map_err(|e| e.code), Err(-32700));
        assert_eq!(check_body(br#"{"jsonrpc":"2.0","id":true}"#).map_err(|e| e.code), Err(-32600));
        assert_eq!(check_body(br#"[1,2]"#).map_err(|e| e.code), Err(-32600));
        // tower-lsp-server's own decoder would refuse a repeated field and drop the connection.
        assert_eq!(check_body(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#).map_err(|e| e.code), Err(-32600));
        assert!(check_body(br#"{"jsonrpc":"2.0","method":"x","params":{"text":"a\nb","deep":[[[1]]]}}"#).is_ok());
        assert_eq!(check_body(br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#).map_err(|e| e.id), Err(json!(1)));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(check_body(deep.as_bytes()).map_err(|e| e.code), Err(-32700));
    }

    #[tokio::test]
    async fn bad_frames_are_answered_and_good_ones_pass() {
        let (client, server_side) = tokio::io::duplex(4096);
        let (server_read, server_write) = tokio::io::split(server_side);
        let (mut from_guard, _to_guard, _closed) =
            guard(server_read, server_write, FrameLimits { max_message_bytes: 100 });
        let (mut client_read, mut client_write) = tokio::io::split(client);
        let good = encode(&json!({"jsonrpc": "2.0", "method": "ok"}));
        let mut input = Vec::new();
        input.extend(b"Content-Length: 9\r\n\r\n{not json");
        input.extend(b"X-Nothing: 1\r\n\r\n");
        input.extend(format!("Content-Length: 200\r\n\r\n{}", "x".repeat(200)).as_bytes());
        input.extend(&good);
        client_write.write_all(&input).await.expect("write");
        let mut passed = vec![0; good.len()];
        from_guard.read_exact(&mut passed).await.expect("read");
        assert_eq!(passed, good);
        let mut reader = BufReader::new(&mut client_read);
        let mut codes = Vec::new();
        for _ in 0..3 {
            let frame = read_trusted_frame(&mut reader).await.expect("frame").expect("some");
            let body_start = frame.windows(4).position(|w| w == b"\r\n\r\n").expect("headers") + 4;
            let value: Value = serde_json::from_slice(&frame[body_start..]).expect("json");
            codes.push(value["error"]["code"].as_i64().expect("code"));
        }
        assert_eq!(codes, vec![-32700, -32700, -32600]);
    }
}
