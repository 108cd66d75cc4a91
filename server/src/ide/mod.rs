//! The agents' own IDE protocols: an agent that writes files itself (Claude Code, and
//! Gemini CLI, Qwen Code) asks the editor before it writes, and Verbatim answers as the IDE.
//!
//! - [`proposal`]: the shared core, an agent's proposal of whole new file texts
//!   (`openDiff`, or a pre-write hook's `verbatim/propose`) reviewed in the live
//!   buffers and turned into the texts the agent is to write;
//! - [`agent_write`]: the write the agent then makes itself, expected and recognized
//!   (or withdrawn when the editor did not apply the decision);
//! - [`propose`]: `verbatim/propose`, the pre-write hooks' way in to that core;
//! - [`editor_queries`]: what the editor has open, dirty, selected, diagnosed;
//! - [`mcp`]: the small part of MCP these protocols speak, over any transport;
//! - [`claude_code`]: Claude Code's tools and notifications;
//! - [`gemini_cli`]: Gemini CLI's (and Qwen Code's) IDE companion tools and notifications.
//!
//! The transports ([`crate::transport::claude_ws`], [`crate::transport::ide_lock`],
//! [`crate::transport::companion_http`], [`crate::transport::companion_files`])
//! move messages and own no review logic; nothing here imports a transport.

pub mod agent_write;
pub mod claude_code;
pub mod editor_queries;
pub mod gemini_cli;
pub mod mcp;
pub mod proposal;
pub mod propose;
