//! Causal order between the editor's connection and the agents' (issue 42): an
//! agent's request is answered against every text-sync message (`didOpen`,
//! `didChange`, `didClose`, `willSave`, `didSave`) the server had received from the
//! editor when the request arrived.
//!
//! The editor's messages are applied in order by `transport::ordered_sync`, from
//! tower-lsp-server's read loop; that loop shares one task with the editor's request
//! handlers, so a message it has been handed can wait there (a busy `initialized`,
//! a full queue) while an agent's request, on its own connection, is already being
//! answered. The frame guard counts each text-sync message as it hands it on
//! ([`EditorOrder::received`]), `ordered_sync` counts each one applied
//! ([`EditorOrder::applied`]), and an agent's request first waits until the applied
//! count reaches the received count it saw ([`EditorOrder::caught_up`]). On the
//! ordinary path both counts are equal and nothing waits.
//!
//! What this cannot see: bytes the editor wrote that the guard has not read yet (in
//! the pipe, or in the runtime's stdin reader). Those are not yet received; an edit
//! planned without them is still sent right, because the version it carries is
//! decided from the store at the moment of sending, and an editor's refusal of an
//! edit sent without a version, for a file it opened since, is moved onto the opened
//! buffer and offered again (`edits.rs`), never reported as the person's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// The longest an agent's request waits for the editor's messages received before it.
/// Reached only when the editor's read loop is held up: the request is then answered
/// against what is applied, and the counts are brought level so that later requests
/// do not wait for a message that will never be applied.
const CATCH_UP_LIMIT: Duration = Duration::from_secs(2);

/// How often the editor's input is looked at again while bytes wait in it, when
/// nothing says it moved (the reading thread taking bytes does not).
const INPUT_POLL: Duration = Duration::from_millis(1);

/// Says whether bytes the editor wrote wait to be read (its pipe's `FIONREAD`).
pub type PendingInput = Box<dyn Fn() -> bool + Send + Sync>;

/// The editor's text-sync messages received and applied, counted.
#[derive(Default)]
pub struct EditorOrder {
    received: AtomicU64,
    applied: AtomicU64,
    changed: Notify,
    pending_input: std::sync::OnceLock<PendingInput>,
}

impl std::fmt::Debug for EditorOrder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("EditorOrder")
            .field("received", &self.received)
            .field("applied", &self.applied)
            .finish_non_exhaustive()
    }
}

impl EditorOrder {
    /// The methods `ordered_sync` applies in order, and this order counts.
    pub fn is_text_sync(method: &str) -> bool {
        matches!(
            method,
            "textDocument/didOpen"
                | "textDocument/didChange"
                | "textDocument/didClose"
                | "textDocument/willSave"
                | "textDocument/didSave"
        )
    }

    /// How to tell that the editor's input holds bytes not read yet (set once, by the
    /// transport that owns the editor's input).
    pub fn watch_input(&self, pending: PendingInput) {
        let _ = self.pending_input.set(pending);
    }

    /// A text-sync message was received from the editor: counted before it is handed on.
    pub fn received(&self) {
        self.received.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// The frame guard handled more of the editor's input (any message, or a frame it
    /// refused): a request waiting for the input to be read looks again.
    pub fn input_moved(&self) {
        self.changed.notify_waiters();
    }

    /// A text-sync message was applied to the store (or dropped as malformed).
    pub fn applied(&self) {
        self.applied.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Waits until the editor's input holds nothing unread and every text-sync
    /// message received so far is applied, at most [`CATCH_UP_LIMIT`]. Returns at
    /// once when nothing is pending.
    pub async fn caught_up(&self) {
        self.caught_up_within(CATCH_UP_LIMIT).await;
    }

    /// Whether the editor's input holds bytes not read yet.
    fn unread_input(&self) -> bool {
        self.pending_input.get().is_some_and(|pending| pending())
    }

    async fn caught_up_within(&self, limit: Duration) -> bool {
        if !self.unread_input() && self.applied.load(Ordering::SeqCst) >= self.received.load(Ordering::SeqCst) {
            return true;
        }
        let waited = tokio::time::timeout(limit, async {
            // The bytes waiting in the input are read first (a message read off the
            // input is counted as received before it is handed on)...
            loop {
                // Made before the look, so that progress between the two wakes it.
                let changed = self.changed.notified();
                if !self.unread_input() {
                    break;
                }
                let _ = tokio::time::timeout(INPUT_POLL, changed).await;
            }
            // ...then every message received by then is applied.
            let target = self.received.load(Ordering::SeqCst);
            loop {
                let changed = self.changed.notified();
                if self.applied.load(Ordering::SeqCst) >= target {
                    return;
                }
                changed.await;
            }
        })
        .await;
        if waited.is_err() {
            tracing::warn!(
                "the editor's text changes sent before an agent's request were not applied within {} ms; \
                 answering against the text applied so far",
                limit.as_millis()
            );
            self.applied.fetch_max(self.received.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        waited.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn nothing_pending_answers_at_once() {
        let order = EditorOrder::default();
        order.received();
        order.applied();
        assert!(order.caught_up_within(Duration::ZERO).await);
    }

    #[tokio::test]
    async fn a_request_waits_for_the_messages_received_before_it() {
        let order = Arc::new(EditorOrder::default());
        order.received();
        order.received();
        let waiter = tokio::spawn({
            let order = order.clone();
            async move { order.caught_up_within(Duration::from_secs(60)).await }
        });
        order.applied();
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "one of two applied");
        order.applied();
        assert!(waiter.await.expect("the waiter"), "both applied");
    }

    #[tokio::test]
    async fn messages_received_after_the_request_are_not_waited_for() {
        let order = Arc::new(EditorOrder::default());
        order.received();
        let waiter = tokio::spawn({
            let order = order.clone();
            async move { order.caught_up_within(Duration::from_secs(60)).await }
        });
        tokio::task::yield_now().await;
        order.received();
        order.applied();
        assert!(waiter.await.expect("the waiter"));
    }

    #[tokio::test]
    async fn a_message_never_applied_holds_up_one_request_only() {
        let order = EditorOrder::default();
        order.received();
        assert!(!order.caught_up_within(Duration::from_millis(1)).await);
        assert!(order.caught_up_within(Duration::ZERO).await, "the counts were brought level");
    }
}
