//! The protocol and the service: the wire types and error kinds of `docs/protocol.md`,
//! and the agent methods run against the editor's live documents (lanes, snapshot,
//! plan, apply through the editor, journal).

pub mod access;
pub mod agent_writes;
pub mod clock;
pub mod deliver;
pub mod diagnostics;
pub mod discovery;
pub mod early_decision;
pub mod editor_context;
pub mod editor_order;
pub mod edits;
pub mod error;
pub mod external;
pub mod external_state;
pub mod feedback;
pub mod journal;
pub mod journal_cache;
pub mod journal_texts;
pub mod patching;
pub mod protocol;
pub mod registry;
pub mod revert;
pub mod revert_plan;
pub mod snapshot;
pub mod state;
pub mod timeline;
pub mod timeline_methods;
pub mod to_proto;
