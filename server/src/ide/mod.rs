//! The agents' own IDE protocols: an agent that writes files itself (Claude Code, and
//! Gemini CLI, Qwen Code) asks the editor before it writes, and Verbatim answers as the IDE.
//!
//! - [`diff_review`]: the shared core, an agent's whole-file proposal reviewed in the
//!   live buffer and turned into the text the agent is to write;
//! - [`editor_queries`]: what the editor has open, dirty, selected, diagnosed;
//! - [`mcp`]: the small part of MCP these protocols speak, over any transport;
//! - [`claude_code`]: Claude Code's tools and notifications;
//! - [`gemini_cli`]: Gemini CLI's (and Qwen Code's) IDE companion tools and notifications.
//!
//! The transports ([`crate::transport::claude_ws`], [`crate::transport::ide_lock`],
//! [`crate::transport::companion_http`], [`crate::transport::companion_files`])
//! move messages and own no review logic; nothing here imports a transport.

pub mod claude_code;
pub mod diff_review;
pub mod editor_queries;
pub mod gemini_cli;
pub mod mcp;
