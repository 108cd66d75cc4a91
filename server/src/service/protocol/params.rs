//! The params of the methods an agent's front-end sends (`verbatim mcp`'s tools and the
//! CLI's commands): their one declaration, for the wire, for the MCP tools and for the
//! CLI alike.
//!
//! On the wire (serde) the names are camelCase and unknown fields are refused. The JSON
//! Schema derived from the same types is the MCP tools' input schema, in the model's
//! words: snake_case names, `path` for `uri` (a path or a URI; the front-end makes it a
//! URI), and descriptions that teach the model what to send. A field's doc comment is
//! that description; `#[schemars(description)]` replaces it where the model's words
//! differ from the wire's (`path`), and `#[schemars(skip)]` leaves out of the tools what
//! only the wire and the CLI offer (`diagnosticsTimeoutMs`, `asTurn`, `workspace`).
//! Fields several methods share are declared once too, as groups of `params!`.
//! [`MethodParams`] ties each type to its method.

use std::borrow::Cow;

use rmcp::schemars::{self, JsonSchema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::method;

/// What the MCP tools say of a `path`.
const PATH: &str =
    "The file: an absolute path, a path relative to the directory the MCP server runs in, or a file: URI.";

/// The params of one method an agent's front-end sends.
pub trait MethodParams: Serialize + DeserializeOwned + JsonSchema + std::fmt::Debug + 'static {
    /// The method's name on the wire.
    const METHOD: &'static str;

    /// The documents the call names (`uri`, each `edits[].uri`): a front-end makes
    /// paths URIs through these. None by default.
    fn uris_mut(&mut self) -> Vec<&mut String> {
        Vec::new()
    }

    /// The params as sent: absent fields left out, not `null` (a front-end adds its
    /// own `turn` and `diagnostics` where the call has none).
    fn to_wire(&self) -> Value {
        without_nulls(serde_json::to_value(self).unwrap_or(Value::Null))
    }
}

fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter().filter(|(_, value)| !value.is_null()).map(|(k, v)| (k, without_nulls(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// Declares a method's params: the derives and names they all have (camelCase on the
/// wire with unknown fields refused, snake_case in the tools' schema), then the fields
/// given, where `@name` stands for a group of fields several methods share (`@uri`,
/// `@turn`, `@window`, `@edit_options`, `@diagnostics`, in the arms below).
macro_rules! params {
    ($(#[$attr:meta])* pub struct $name:ident { $($body:tt)* }) => {
        params!(@munch ($(#[$attr])* $name) [] $($body)*);
    };
    (@munch ($(#[$attr:meta])* $name:ident) [$($fields:tt)*]) => {
        #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        #[schemars(rename_all = "snake_case")]
        $(#[$attr])*
        pub struct $name { $($fields)* }
    };
    (@munch $header:tt [$($fields:tt)*] @uri, $($rest:tt)*) => {
        params!(@munch $header [$($fields)*
            /// The document's URI.
            #[schemars(rename = "path", description = PATH)]
            pub uri: String,
        ] $($rest)*);
    };
    (@munch $header:tt [$($fields:tt)*] @turn, $($rest:tt)*) => {
        params!(@munch $header [$($fields)*
            /// The agent's turn, for the journal's timeline (optional).
            #[serde(default)]
            #[schemars(description = "Your turn (the person's request you are working on), for the timeline's grouping; optional.")]
            pub turn: Option<String>,
        ] $($rest)*);
    };
    (@munch $header:tt [$($fields:tt)*] @window, $($rest:tt)*) => {
        params!(@munch $header [$($fields)*
            #[serde(default)]
            #[schemars(description = "A quote that occurs once in the file: only text after it is searched.")]
            pub after: Option<String>,
            #[serde(default)]
            #[schemars(description = "A quote that occurs once after `after` (or in the file): only text before it is searched.")]
            pub before: Option<String>,
        ] $($rest)*);
    };
    (@munch $header:tt [$($fields:tt)*] @edit_options, $($rest:tt)*) => {
        params!(@munch $header [$($fields)*
            /// The rev from read_file: refuse the edit if the file changed since.
            #[serde(default)]
            pub base_rev: Option<String>,
            /// Compute and show the edit without applying it.
            #[serde(default)]
            pub dry_run: bool,
            /// Match quotes exactly: no normalization ladder, no deletion nicety.
            #[serde(default)]
            #[schemars(description = "Match quotes exactly: no forgiving of line numbers, typography, line endings, trailing whitespace or indentation.")]
            pub exact: bool,
        ] $($rest)*);
    };
    (@munch $header:tt [$($fields:tt)*] @diagnostics, $($rest:tt)*) => {
        params!(@munch $header [$($fields)*
            /// Report what the editor's language servers say after the edit.
            #[serde(default)]
            #[schemars(description = "After the edit, report the problems it introduced and resolved, from the editor's own language servers: \"errors\", or \"warnings\" (errors and warnings). Off unless asked.")]
            pub diagnostics: Option<DiagnosticsLevel>,
            /// How long to wait for the language servers to settle.
            #[serde(default)]
            #[schemars(skip)]
            pub diagnostics_timeout_ms: Option<u64>,
        ] $($rest)*);
    };
    (@munch $header:tt [$($fields:tt)*] $(#[$field_attr:meta])* pub $field:ident: $type:ty, $($rest:tt)*) => {
        params!(@munch $header [$($fields)* $(#[$field_attr])* pub $field: $type,] $($rest)*);
    };
}

params! {
    /// `verbatim/documents`: no params (`null` on the wire).
    #[derive(Default)]
    pub struct DocumentsParams {}
}

params! {
    /// `verbatim/read`.
    pub struct ReadParams {
        @uri,
    }
}

params! {
    /// `verbatim/strReplace`.
    pub struct StrReplaceParams {
        @uri,
        /// The exact text to replace; must occur once in the window unless occurrence or replace_all says which.
        pub old_str: String,
        /// The replacement text.
        pub new_str: String,
        /// One line saying why; shown to the person who reviews the edit.
        pub summary: String,
        @turn,
        @window,
        /// Which match to replace (1-based), as listed by an ambiguous error.
        #[serde(default)]
        #[schemars(range(min = 1))]
        pub occurrence: Option<u64>,
        /// Replace every match in the window.
        #[serde(default)]
        pub replace_all: bool,
        @edit_options,
        @diagnostics,
    }
}

params! {
    /// `verbatim/replaceRange`.
    pub struct ReplaceRangeParams {
        @uri,
        /// The start of the block (included); must occur once in the window.
        pub from_str: String,
        /// The end of the block (included); must occur once after from_str.
        pub to_str: String,
        /// The text that replaces the whole block.
        pub new_str: String,
        /// One line saying why; shown to the person who reviews the edit.
        pub summary: String,
        @turn,
        @window,
        @edit_options,
        @diagnostics,
    }
}

params! {
    /// One entry of a batch: a strReplace entry (`oldStr`) or a replaceRange entry
    /// (`fromStr` and `toStr`). Which one is decided by the fields present.
    #[schemars(rename = "BatchEditEntry", description = "One entry of `batch_edit`: old_str, or from_str and to_str.")]
    pub struct BatchEntry {
        @uri,
        /// A str_replace entry: the exact text to replace.
        #[serde(default)]
        pub old_str: Option<String>,
        /// A replace_range entry: the start of the block.
        #[serde(default)]
        pub from_str: Option<String>,
        /// A replace_range entry: the end of the block.
        #[serde(default)]
        pub to_str: Option<String>,
        /// The replacement text.
        pub new_str: String,
        #[serde(default)]
        pub after: Option<String>,
        #[serde(default)]
        pub before: Option<String>,
        /// str_replace entries only: which match (1-based).
        #[serde(default)]
        #[schemars(range(min = 1))]
        pub occurrence: Option<u64>,
        /// str_replace entries only: every match.
        #[serde(default)]
        pub replace_all: bool,
        #[serde(default)]
        pub base_rev: Option<String>,
        /// Match this entry's quotes exactly.
        #[serde(default)]
        pub exact: bool,
    }
}

params! {
    /// `verbatim/batchEdit`.
    pub struct BatchEditParams {
        /// The edits, applied all together or not at all.
        pub edits: Vec<BatchEntry>,
        /// One line saying why; shown to the person who reviews the change.
        pub summary: String,
        @turn,
        /// Compute and show the edits without applying them.
        #[serde(default)]
        pub dry_run: bool,
        @diagnostics,
    }
}

params! {
    /// `verbatim/applyPatch`: an OpenAI `apply_patch` patch or SEARCH/REPLACE blocks.
    pub struct ApplyPatchParams {
        /// The patch: OpenAI's apply_patch format (*** Begin Patch ... *** End Patch) or SEARCH/REPLACE blocks.
        pub patch: String,
        /// One line saying why; shown to the person who reviews the change.
        pub summary: String,
        @turn,
        /// Compute and show the change without applying it.
        #[serde(default)]
        pub dry_run: bool,
        /// Match every hunk exactly, without the normalization ladder.
        #[serde(default)]
        pub exact: bool,
        @diagnostics,
    }
}

params! {
    /// `verbatim/write`.
    pub struct WriteParams {
        @uri,
        /// The whole new text of the file.
        pub text: String,
        /// One line saying why; shown to the person who reviews the change.
        pub summary: String,
        @turn,
        /// Required to replace an existing file: the rev from your last read_file.
        #[serde(default)]
        pub base_rev: Option<String>,
        @diagnostics,
    }
}

params! {
    /// `verbatim/timeline` params.
    #[derive(Default)]
    pub struct TimelineParams {
        /// The workspace folder whose journal is read (a `file:` URI or a path).
        #[serde(default)]
        #[schemars(skip)]
        pub workspace: Option<String>,
        /// Only this agent's changes.
        #[serde(default)]
        pub agent: Option<String>,
        /// Only changes to this document.
        #[serde(default)]
        #[schemars(rename = "path", description = "Only changes to this file (a path or URI).")]
        pub uri: Option<String>,
        /// At most this many sessions, the newest.
        #[serde(default)]
        #[schemars(description = "At most this many sessions, newest first (default 20).")]
        pub limit: Option<usize>,
        /// At most this many edits (writes), the newest first.
        #[serde(default)]
        #[schemars(
            description = "At most this many edits, newest first (default 100); the answer says how many\nthere are in all."
        )]
        pub max_edits: Option<usize>,
    }
}

params! {
    /// `verbatim/revert` params: exactly one of `ids`, `turn`, `session`.
    #[derive(Default)]
    pub struct RevertParams {
        /// Entry ids or write ids to revert, from the `timeline` tool.
        #[serde(default)]
        pub ids: Option<Vec<String>>,
        /// Revert every change of this turn.
        #[serde(default)]
        pub turn: Option<String>,
        /// Revert every change of this session.
        #[serde(default)]
        pub session: Option<String>,
        /// One line saying why; shown to the person who reviews the revert.
        #[serde(default)]
        pub summary: Option<String>,
        /// Show what would be reverted, and the conflicts, without changing anything.
        #[serde(default)]
        pub dry_run: bool,
        /// The turn to journal the revert under.
        #[serde(default)]
        #[schemars(skip)]
        pub as_turn: Option<String>,
    }
}

/// Methods on one document, named by `uri`.
macro_rules! on_one_document {
    ($($params:ty => $method:ident),*) => {$(
        impl MethodParams for $params {
            const METHOD: &'static str = method::$method;

            fn uris_mut(&mut self) -> Vec<&mut String> {
                vec![&mut self.uri]
            }
        }
    )*};
}

on_one_document!(ReadParams => READ, StrReplaceParams => STR_REPLACE, ReplaceRangeParams => REPLACE_RANGE, WriteParams => WRITE);

impl MethodParams for DocumentsParams {
    const METHOD: &'static str = method::DOCUMENTS;

    fn to_wire(&self) -> Value {
        Value::Null
    }
}

impl MethodParams for BatchEditParams {
    const METHOD: &'static str = method::BATCH_EDIT;

    fn uris_mut(&mut self) -> Vec<&mut String> {
        self.edits.iter_mut().map(|edit| &mut edit.uri).collect()
    }
}

/// The patch names its files: the call goes to the editor serving the working directory.
impl MethodParams for ApplyPatchParams {
    const METHOD: &'static str = method::APPLY_PATCH;
}

impl MethodParams for TimelineParams {
    const METHOD: &'static str = method::TIMELINE;

    fn uris_mut(&mut self) -> Vec<&mut String> {
        self.uri.iter_mut().collect()
    }
}

/// A revert names journal entries, not documents.
impl MethodParams for RevertParams {
    const METHOD: &'static str = method::REVERT;
}

/// Which problems a write asks about: `false`, `true` (errors), `"errors"` or
/// `"warnings"` (errors and warnings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticsLevel {
    Off,
    Errors,
    Warnings,
}

impl DiagnosticsLevel {
    /// `errors` or `warnings`, as the CLI's `--diagnostics` and the wire name them.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "errors" => Some(Self::Errors),
            "warnings" => Some(Self::Warnings),
            _ => None,
        }
    }
}

impl Serialize for DiagnosticsLevel {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Off => serializer.serialize_bool(false),
            Self::Errors => serializer.serialize_str("errors"),
            Self::Warnings => serializer.serialize_str("warnings"),
        }
    }
}

impl<'de> Deserialize<'de> for DiagnosticsLevel {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match &value {
            Value::Bool(false) => Some(Self::Off),
            Value::Bool(true) => Some(Self::Errors),
            Value::String(text) => Self::from_name(text),
            _ => None,
        }
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "diagnostics must be true, false, \"errors\" or \"warnings\", not {value}"
            ))
        })
    }
}

/// The tools offer the two levels by name (`true` and `false` are accepted all the same).
impl JsonSchema for DiagnosticsLevel {
    fn schema_name() -> Cow<'static, str> {
        "DiagnosticsChoice".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> schemars::Schema {
        json_schema!({
            "description": "Which problems to report after an edit.",
            "type": "string",
            "enum": ["errors", "warnings"]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostics_level_is_read_back_as_it_was_sent() {
        for level in [DiagnosticsLevel::Off, DiagnosticsLevel::Errors, DiagnosticsLevel::Warnings] {
            let sent = serde_json::to_value(level).expect("serialisable");
            assert_eq!(serde_json::from_value::<DiagnosticsLevel>(sent.clone()).ok(), Some(level), "{sent}");
        }
        assert_eq!(serde_json::to_value(DiagnosticsLevel::Off).ok(), Some(Value::Bool(false)));
    }
}
