//! Errors an agent can receive: one kind per documented failure, a message that says
//! what was wrong and what to do next, and structured `data` for programs.
//!
//! [`ErrorKind`] is the list in `docs/protocol.md`; [`ProtocolError::into_jsonrpc`] is
//! the one place where errors become JSON-RPC errors.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value, json};
use tower_lsp_server::jsonrpc;

/// The stable error kinds and codes of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    NotFound,
    Ambiguous,
    Stale,
    EmptyQuote,
    NoChange,
    RangeOrder,
    Overlap,
    Rejected,
    EditorUnavailable,
    UnknownDocument,
    OutsideWorkspace,
    InvalidParams,
    Timeout,
    NotText,
    Io,
    EditorError,
    PermissionDenied,
    NotAnswered,
    NotRevertible,
    UnknownEntry,
}

impl ErrorKind {
    pub const ALL: [Self; 20] = [
        Self::NotFound,
        Self::Ambiguous,
        Self::Stale,
        Self::EmptyQuote,
        Self::NoChange,
        Self::RangeOrder,
        Self::Overlap,
        Self::Rejected,
        Self::EditorUnavailable,
        Self::UnknownDocument,
        Self::OutsideWorkspace,
        Self::InvalidParams,
        Self::Timeout,
        Self::NotText,
        Self::Io,
        Self::EditorError,
        Self::PermissionDenied,
        Self::NotAnswered,
        Self::NotRevertible,
        Self::UnknownEntry,
    ];

    /// The JSON-RPC error code, in the range -33099..=-33000.
    pub fn code(self) -> i64 {
        match self {
            Self::NotFound => -33001,
            Self::Ambiguous => -33002,
            Self::Stale => -33003,
            Self::EmptyQuote => -33004,
            Self::NoChange => -33005,
            Self::RangeOrder => -33006,
            Self::Overlap => -33007,
            Self::Rejected => -33008,
            Self::EditorUnavailable => -33009,
            Self::UnknownDocument => -33010,
            Self::OutsideWorkspace => -33011,
            Self::InvalidParams => -33012,
            Self::Timeout => -33013,
            Self::NotText => -33014,
            Self::Io => -33015,
            Self::EditorError => -33016,
            Self::PermissionDenied => -33017,
            Self::NotAnswered => -33018,
            Self::NotRevertible => -33019,
            Self::UnknownEntry => -33020,
        }
    }

    /// The value of `data.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "notFound",
            Self::Ambiguous => "ambiguous",
            Self::Stale => "stale",
            Self::EmptyQuote => "emptyQuote",
            Self::NoChange => "noChange",
            Self::RangeOrder => "rangeOrder",
            Self::Overlap => "overlap",
            Self::Rejected => "rejected",
            Self::EditorUnavailable => "editorUnavailable",
            Self::UnknownDocument => "unknownDocument",
            Self::OutsideWorkspace => "outsideWorkspace",
            Self::InvalidParams => "invalidParams",
            Self::Timeout => "timeout",
            Self::NotText => "notText",
            Self::Io => "io",
            Self::EditorError => "editorError",
            Self::PermissionDenied => "permissionDenied",
            Self::NotAnswered => "notAnswered",
            Self::NotRevertible => "notRevertible",
            Self::UnknownEntry => "unknownEntry",
        }
    }

    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.code() == code)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error for an agent: kind, message, and extra `data` fields.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProtocolError {
    pub kind: ErrorKind,
    pub message: String,
    /// Fields of `data` besides `kind`.
    pub data: Map<String, Value>,
}

impl ProtocolError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), data: Map::new() }
    }

    /// Adds a field to `data`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Marks the error as concerning entry `index` of a batch, and says so in the message.
    pub fn for_batch_entry(mut self, index: usize) -> Self {
        self.message = format!("edits[{index}]: {}", self.message);
        self.with("edit", index)
    }

    pub fn invalid_params(field: Option<&str>, message: impl Into<String>) -> Self {
        let error = Self::new(ErrorKind::InvalidParams, message);
        match field {
            Some(field) => error.with("field", field),
            None => error,
        }
    }

    pub fn editor_unavailable() -> Self {
        Self::new(
            ErrorKind::EditorUnavailable,
            "No editor is connected to this verbatim server, so the edit cannot be shown for review. \
             Open the file in an editor running verbatim, or use a dry run to see the plan.",
        )
    }

    /// The JSON-RPC error sent on the wire.
    pub fn into_jsonrpc(self) -> jsonrpc::Error {
        let mut data = Map::new();
        data.insert("kind".into(), json!(self.kind.as_str()));
        data.extend(self.data);
        jsonrpc::Error {
            code: jsonrpc::ErrorCode::ServerError(self.kind.code()),
            message: Cow::Owned(self.message),
            data: Some(Value::Object(data)),
        }
    }
}

/// Turns a serde error about params into an `invalidParams` error that says what to send.
pub fn params_error(method: &str, error: &serde_json::Error) -> ProtocolError {
    ProtocolError::invalid_params(
        None,
        format!("invalid params for {method}: {error}. See docs/protocol.md for the fields of {method}."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_in_range() {
        let mut codes: Vec<i64> = ErrorKind::ALL.iter().map(|kind| kind.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ErrorKind::ALL.len());
        assert!(codes.iter().all(|code| (-33099..=-33000).contains(code)));
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_code(kind.code()), Some(kind));
        }
    }

    #[test]
    fn wire_errors_carry_the_kind() {
        let error = ProtocolError::new(ErrorKind::Stale, "moved").with("currentRev", "e1.2").into_jsonrpc();
        assert_eq!(error.code, jsonrpc::ErrorCode::ServerError(-33003));
        assert_eq!(error.data, Some(json!({"kind": "stale", "currentRev": "e1.2"})));
    }

    #[test]
    fn every_kind_is_documented_in_the_protocol() {
        let spec = include_str!("../../../docs/protocol.md");
        for kind in ErrorKind::ALL {
            let row = format!("| {} | `{}` |", kind.code(), kind.as_str());
            assert!(spec.contains(&row), "docs/protocol.md lacks the row `{row}`");
        }
    }
}
