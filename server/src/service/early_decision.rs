//! The person's decision on a reviewed edit, told by the editor just before it applies
//! the hunks they kept (`verbatim/reviewDecided`).
//!
//! An agent that writes the file itself once the person has decided (Claude Code's and
//! Gemini CLI's `openDiff`, [`crate::ide::proposal`]) needs only the decision: the
//! text it is to write is the disk text plus the kept hunks. Waiting for the editor to
//! apply them and send its `didChange` first costs what the editor takes to apply an
//! edit (VS Code: 90–160 ms at 1,000–10,000 lines in code-server). So the server keeps
//! the hunks of each offer of such an edit here ([`EarlyDecisions::offered`]), and when
//! the decision comes, the review that listens for its document ([`EarlyDecisions::listen`])
//! gets the buffer's text before and after the kept hunks at once. The edit itself is
//! still confirmed as always (the editor's answer, then its change); the review deals
//! with the rare edit the editor then fails to apply.
//!
//! A decision for an offer nobody keeps here (an ordinary agent's edit, an offer
//! replaced by a newer one) is ignored: the editor's answer decides those.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use ropey::Rope;
use tokio::sync::oneshot;
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::proposal_hunks::{self, ProposalHunk};

use crate::service::protocol::ReviewDecidedParams;

/// The text of one document before and after the hunks the person kept.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The edit (`verbatim.id`).
    pub id: u64,
    pub before: Rope,
    pub after: Rope,
    /// When the editor's decision arrived.
    pub at: std::time::Instant,
    /// The person's words for what they left out.
    pub reason: Option<String>,
}

/// One document of an offer: what it was planned against, and its hunks.
#[derive(Debug, Clone)]
pub struct OfferedDocument {
    pub key: DocKey,
    pub base: Rope,
    pub hunks: Vec<ProposalHunk>,
}

struct Offered {
    offer: u32,
    documents: Vec<OfferedDocument>,
}

#[derive(Default)]
struct Inner {
    /// By the edit's id (`verbatim.id`): its current offer.
    offers: HashMap<u64, Offered>,
    /// By document: the review waiting for its decision, by its number.
    listeners: HashMap<DocKey, (u64, oneshot::Sender<Decided>)>,
    next_listener: u64,
    /// The edits whose decision went to a listener, until [`EarlyDecisions::settled`]: the
    /// agent has its answer, so such an edit is not offered again.
    answered: std::collections::HashSet<u64>,
}

/// The offers whose decision is wanted early, and who wants it.
#[derive(Default)]
pub struct EarlyDecisions {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for EarlyDecisions {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        formatter
            .debug_struct("EarlyDecisions")
            .field("offers", &inner.offers.len())
            .field("listeners", &inner.listeners.len())
            .field("answered", &inner.answered.len())
            .finish()
    }
}

impl EarlyDecisions {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps the hunks of offer `offer` of edit `id` until the guard is dropped (the
    /// editor answered it, or the request ended).
    pub fn offered(&self, id: u64, offer: u32, documents: Vec<OfferedDocument>) -> OfferedGuard<'_> {
        self.lock().offers.insert(id, Offered { offer, documents });
        OfferedGuard { decisions: self, id, offer }
    }

    /// Waits for the decision on the next edit of `key` that is decided early. One
    /// listener per document: edits of one document are reviewed one at a time.
    pub fn listen(&self, key: &DocKey) -> Listener<'_> {
        let (sender, receiver) = oneshot::channel();
        let mut inner = self.lock();
        inner.next_listener += 1;
        let number = inner.next_listener;
        inner.listeners.insert(key.clone(), (number, sender));
        Listener { decisions: self, key: key.clone(), number, receiver }
    }

    /// `verbatim/reviewDecided`: the editor is about to apply the hunks it names as kept.
    pub fn decided(&self, params: &ReviewDecidedParams) {
        let at = std::time::Instant::now();
        let mut inner = self.lock();
        let Some(offered) = inner.offers.get(&params.id) else {
            tracing::trace!(id = params.id, "verbatim/reviewDecided for an edit not decided early: ignored");
            return;
        };
        if offered.offer != params.offer {
            tracing::debug!(
                id = params.id,
                offer = params.offer,
                current = offered.offer,
                "verbatim/reviewDecided for an older offer: ignored"
            );
            return;
        }
        let decisions = params.hunks.iter().map(|hunk| (hunk.index, hunk.accepted));
        let counts: Vec<usize> = offered.documents.iter().map(|document| document.hunks.len()).collect();
        let Some(kept) = proposal_hunks::kept_per_document(decisions, &counts) else {
            tracing::warn!(id = params.id, "verbatim/reviewDecided names hunks the offer does not have: ignored");
            return;
        };
        let decided: Vec<(DocKey, Decided)> = offered
            .documents
            .iter()
            .zip(kept)
            .map(|(document, kept)| {
                let after = proposal_hunks::apply_subset(&document.base, &document.hunks, &kept);
                (
                    document.key.clone(),
                    Decided { id: params.id, before: document.base.clone(), after, at, reason: params.reason.clone() },
                )
            })
            .collect();
        for (key, decided) in decided {
            if let Some((_, listener)) = inner.listeners.remove(&key)
                && listener.send(decided).is_ok()
            {
                inner.answered.insert(params.id);
            }
        }
    }

    /// Whether edit `id`'s agent was answered from the decision: the edit is then not
    /// offered again over the person's typing (the agent writes the file anyway).
    pub fn answered_early(&self, id: u64) -> bool {
        self.lock().answered.contains(&id)
    }

    /// Edit `id` is over, applied or not.
    pub fn settled(&self, id: u64) {
        self.lock().answered.remove(&id);
    }
}

/// Forgets an offer once its request is over.
pub struct OfferedGuard<'a> {
    decisions: &'a EarlyDecisions,
    id: u64,
    offer: u32,
}

impl Drop for OfferedGuard<'_> {
    fn drop(&mut self) {
        let mut inner = self.decisions.lock();
        if inner.offers.get(&self.id).is_some_and(|offered| offered.offer == self.offer) {
            inner.offers.remove(&self.id);
        }
    }
}

/// A review waiting for its decision; stops listening when dropped.
pub struct Listener<'a> {
    decisions: &'a EarlyDecisions,
    key: DocKey,
    number: u64,
    receiver: oneshot::Receiver<Decided>,
}

impl Listener<'_> {
    /// Resolves with the decision once it comes; never, if it does not.
    pub async fn decided(&mut self) -> Decided {
        match (&mut self.receiver).await {
            Ok(decided) => decided,
            Err(_) => std::future::pending().await,
        }
    }
}

impl Drop for Listener<'_> {
    fn drop(&mut self) {
        let mut inner = self.decisions.lock();
        if inner.listeners.get(&self.key).is_some_and(|(number, _)| *number == self.number) {
            inner.listeners.remove(&self.key);
        }
        // A decision sent but never taken (the editor's answer came first): nobody was
        // answered from it.
        if let Ok(decided) = self.receiver.try_recv() {
            inner.answered.remove(&decided.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::protocol::HunkDecision;
    use verbatim_engine::plan::Replacement;

    fn document(text: &str, edits: &[(usize, usize, &str)]) -> OfferedDocument {
        let base = Rope::from_str(text);
        let replacements: Vec<Replacement> = edits
            .iter()
            .map(|&(start, end, new)| Replacement { range: start..end, new_text: new.to_owned() })
            .collect();
        OfferedDocument {
            key: DocKey::parse("file:///p/a.txt").expect("a file URI"),
            hunks: proposal_hunks::split(&base, &replacements),
            base,
        }
    }

    fn params(id: u64, offer: u32, kept: &[bool]) -> ReviewDecidedParams {
        ReviewDecidedParams {
            id,
            offer,
            hunks: kept.iter().enumerate().map(|(index, &accepted)| HunkDecision { index, accepted }).collect(),
            reason: None,
        }
    }

    #[tokio::test]
    async fn the_listener_gets_the_text_with_the_kept_hunks_only() {
        let decisions = EarlyDecisions::default();
        let offered = document("one\ntwo\nthree\nfour\nfive\nsix\nseven\n", &[(0, 3, "ONE"), (28, 33, "SEVEN")]);
        assert_eq!(offered.hunks.len(), 2);
        let key = offered.key.clone();
        let _offer = decisions.offered(7, 1, vec![offered]);
        let mut listener = decisions.listen(&key);
        decisions.decided(&params(7, 1, &[false, true]));
        let decided = listener.decided().await;
        assert_eq!(decided.id, 7);
        assert!(decisions.answered_early(7));
        decisions.settled(7);
        assert!(!decisions.answered_early(7));
        assert_eq!(decided.before.to_string(), "one\ntwo\nthree\nfour\nfive\nsix\nseven\n");
        assert_eq!(decided.after.to_string(), "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n");
    }

    #[tokio::test]
    async fn a_decision_on_another_offer_or_an_unknown_edit_or_a_hunk_left_undecided_is_ignored() {
        let decisions = EarlyDecisions::default();
        let offered = document("one\ntwo\n", &[(0, 3, "ONE")]);
        let key = offered.key.clone();
        let _offer = decisions.offered(7, 2, vec![offered]);
        let mut listener = decisions.listen(&key);
        decisions.decided(&params(7, 1, &[true]));
        decisions.decided(&params(8, 2, &[true]));
        decisions.decided(&ReviewDecidedParams { id: 7, offer: 2, hunks: vec![], reason: None });
        decisions.decided(&params(7, 2, &[true, true]));
        let waited = tokio::time::timeout(std::time::Duration::from_millis(20), listener.decided()).await;
        assert!(waited.is_err(), "no decision reached the listener");
    }

    #[test]
    fn a_decision_the_review_never_took_answered_nobody() {
        let decisions = EarlyDecisions::default();
        let offered = document("one\n", &[(0, 3, "ONE")]);
        let key = offered.key.clone();
        let _offer = decisions.offered(7, 1, vec![offered]);
        let listener = decisions.listen(&key);
        decisions.decided(&params(7, 1, &[true]));
        assert!(decisions.answered_early(7));
        drop(listener);
        assert!(!decisions.answered_early(7), "the editor's answer came first: the edit may be offered again");
    }

    #[test]
    fn an_offer_is_forgotten_when_its_request_ends_and_a_listener_when_it_stops() {
        let decisions = EarlyDecisions::default();
        let offered = document("one\n", &[(0, 3, "ONE")]);
        let key = offered.key.clone();
        drop(decisions.offered(7, 1, vec![offered.clone()]));
        drop(decisions.listen(&key));
        assert!(decisions.lock().offers.is_empty());
        assert!(decisions.lock().listeners.is_empty());
        // A newer offer of the same edit survives the end of the older one's request.
        let older = decisions.offered(7, 1, vec![offered.clone()]);
        let _newer = decisions.offered(7, 2, vec![offered]);
        drop(older);
        assert_eq!(decisions.lock().offers.get(&7).map(|offered| offered.offer), Some(2));
    }
}
