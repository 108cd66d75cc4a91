//! The write an agent makes itself once the person has decided on its proposal
//! ([`crate::ide::proposal`]): announced, recognized when the disk shows it (the
//! baseline moves there, nothing is offered, the editor hears `synced`), or withdrawn
//! when the editor did not apply the decision after all (then the write reaches the
//! buffer as any change on disk does: merged and offered for review, never lost).
//!
//! The record of announced writes is [`crate::service::agent_writes`]; the watcher's
//! side, a change on disk that turns out to be one, is in [`crate::service::external`].

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ropey::Rope;
use verbatim_engine::doc_key::DocKey;

use crate::service::agent_writes::EXPECTED_WRITE_TTL;
use crate::service::external::{self, DiskRead};
use crate::service::state::State;

/// The first look at the disk for an announced write (then twice as long each time, up to 1 s).
const EXPECTED_WRITE_POLL: Duration = Duration::from_millis(100);

/// An agent will write `text` to the file of `key`: what the person accepted in the
/// buffer. The watcher may not see the write (its directory did not exist yet, or
/// `externalChanges` is off), so the file is also looked at now and then until it shows
/// the text or the announcement expires.
pub fn expect(state: &Arc<State>, key: &DocKey, text: String) {
    state.agent_writes.announce(key, text);
    let (state, key) = (Arc::downgrade(state), key.clone());
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + EXPECTED_WRITE_TTL;
        let mut interval = EXPECTED_WRITE_POLL;
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(interval).await;
            interval = (interval * 2).min(Duration::from_secs(1));
            let Some(state) = state.upgrade() else { return };
            if !state.agent_writes.awaits(&key) {
                return;
            }
            let Some(path) = key.path().map(Path::to_path_buf) else { return };
            let on_disk = tokio::task::spawn_blocking(move || external::read_disk(&path)).await;
            let Ok(DiskRead::Text(disk)) = on_disk else { continue };
            let _lane = state.lock_lanes(std::slice::from_ref(&key)).await;
            if !state.agent_writes.take_if_expected(&key, &disk) {
                continue;
            }
            external::written_as_expected(&state, &key, &disk).await;
            return;
        }
    });
}

/// An announced write whose decision the editor then failed to apply to the buffer
/// (the agent was answered from the decision, [`crate::service::early_decision`]): the
/// write is no longer expected, so it reaches the buffer as any change on disk does.
/// If it arrived already and was taken as expected, the baseline goes back to `before`
/// and the disk is compared again.
pub async fn withdraw(state: Arc<State>, key: DocKey, before: String, written: &str) {
    state.agent_writes.forget(&key);
    let taken = state
        .documents
        .lock()
        .get(&key)
        .and_then(|document| document.disk_baseline())
        .is_some_and(|baseline| baseline == written);
    if taken {
        state.documents.update(|store| store.set_disk_baseline(&key, Some(Rope::from_str(&before))));
        external::on_disk_change(state, key, None).await;
    }
}
