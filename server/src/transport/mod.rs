//! The transports: the editor on stdio, agents on the Unix sockets, the frame guard in
//! front of both, discovery files, and `verbatim lsp`, which wires it all together.

pub mod agent;
pub mod claude_ws;
pub mod companion_files;
pub mod companion_http;
pub mod disk_watch;
pub mod editor;
pub mod editor_input;
pub mod framing;
pub mod ide_lock;
pub mod listener;
pub mod lsp;
pub mod ordered_sync;
