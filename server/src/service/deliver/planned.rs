//! What delivery works on: a planned document (an edit, a created, deleted or moved
//! file), who proposes it ([`Origin`]), and what the editor did with it.

use std::collections::{BTreeMap, BTreeSet};

use ropey::Rope;
use verbatim_engine::doc_key::DocKey;
use verbatim_engine::normalize::Normalization;
use verbatim_engine::plan::Replacement;
use verbatim_engine::proposal_hunks::ProposalHunk;
use verbatim_engine::rev::Rev;

/// One document of a plan, ready to be sent.
#[derive(Debug, Clone)]
pub struct PlannedDocument {
    pub key: DocKey,
    /// The URI to send to the editor (the editor's own spelling for open documents).
    pub editor_uri: String,
    /// How the document is named in messages.
    pub label: String,
    pub base: Rope,
    /// `None` for a file being created.
    pub base_rev: Option<Rev>,
    /// The open document's session and version; `None` for a file that is not open.
    pub open: Option<(u64, i32)>,
    /// Sorted and disjoint.
    pub replacements: Vec<Replacement>,
    pub predicted: Rope,
    pub create: bool,
    /// Delete the file: no text edit is sent, and `predicted` is empty.
    pub delete: bool,
    /// Move the file to this document (key and URI) after its text edits.
    pub rename_to: Option<(DocKey, String)>,
    /// What it took to find the plan's quotes (reported to the agent).
    pub normalizations: BTreeSet<Normalization>,
    /// The agent's `baseRev`, when the plan was moved over changes made since it.
    pub rebased_from: Option<String>,
    /// What the person should know about some replacements, by their index in
    /// `replacements` (a revert's conflict): sent as the `note` of each hunk that
    /// holds one of them.
    pub hunk_notes: BTreeMap<usize, String>,
}

/// The document a plan is made on, as it was read: where it is, what it holds.
#[derive(Debug, Clone)]
pub struct PlanBase {
    pub key: DocKey,
    /// The URI to send to the editor (the editor's own spelling for open documents).
    pub editor_uri: String,
    /// How the document is named in messages.
    pub label: String,
    pub text: Rope,
    /// `None` for a file that does not exist yet.
    pub rev: Option<Rev>,
    /// The open document's session and version; `None` for a file that is not open.
    pub open: Option<(u64, i32)>,
}

impl PlannedDocument {
    /// `replacements` of the base's text; a base that does not exist yet is created.
    pub fn edit(base: PlanBase, replacements: Vec<Replacement>) -> Self {
        let predicted = verbatim_engine::plan::apply(&base.text, &replacements);
        Self::with_prediction(base, replacements, predicted)
    }

    /// The file deleted: `replacements` say what goes (all of it, or nothing when the
    /// deletion is shown as the file's operation alone); nothing is left.
    pub fn delete(base: PlanBase, replacements: Vec<Replacement>) -> Self {
        Self { delete: true, create: false, ..Self::with_prediction(base, replacements, Rope::new()) }
    }

    /// A file that does not exist, created with `text` (written whole, no replacement).
    pub fn create_whole(base: PlanBase, text: Rope) -> Self {
        Self { create: true, ..Self::with_prediction(base, Vec::new(), text) }
    }

    /// The file moved to `to` after its text edits.
    pub fn moving_to(self, to: DocKey) -> Self {
        let uri = to.to_uri();
        Self { rename_to: Some((to, uri)), ..self }
    }

    /// What it took to find the plan's quotes.
    pub fn with_normalizations(self, normalizations: BTreeSet<Normalization>) -> Self {
        Self { normalizations, ..self }
    }

    /// Notes for the person on some replacements (by index).
    pub fn with_hunk_notes(self, hunk_notes: BTreeMap<usize, String>) -> Self {
        Self { hunk_notes, ..self }
    }

    /// The same change moved onto the document as it is now (`replacements` of its
    /// current text), remembering the revision it was first planned on.
    pub fn moved_onto(&self, now: PlanBase, replacements: Vec<Replacement>) -> Self {
        let rebased_from = self.rebased_from.clone().or_else(|| self.base_rev.map(|rev| rev.to_string()));
        Self {
            predicted: verbatim_engine::plan::apply(&now.text, &replacements),
            base: now.text,
            base_rev: now.rev,
            open: now.open,
            editor_uri: now.editor_uri,
            replacements,
            rebased_from,
            ..self.clone()
        }
    }

    fn with_prediction(base: PlanBase, replacements: Vec<Replacement>, predicted: Rope) -> Self {
        Self {
            create: base.rev.is_none(),
            key: base.key,
            editor_uri: base.editor_uri,
            label: base.label,
            base: base.text,
            base_rev: base.rev,
            open: base.open,
            replacements,
            predicted,
            delete: false,
            rename_to: None,
            normalizations: BTreeSet::new(),
            rebased_from: None,
            hunk_notes: BTreeMap::new(),
        }
    }

    /// The file itself is created, deleted or moved.
    pub(crate) fn changes_the_file(&self) -> bool {
        self.create || self.delete || self.rename_to.is_some()
    }
}

/// Who proposes an edit to the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// An agent: the label names it, and `needsConfirmation` is the editor's setting.
    Agent,
    /// A change made on disk outside the editor, merged into the buffer: the label is
    /// the summary alone, the annotation id is `verbatim/disk/<id>`, and
    /// `needsConfirmation` follows the editor's `externalChanges` setting.
    Disk,
    /// An agent that writes files itself and asks the editor first (Claude Code's
    /// `openDiff`, a hook in a mode that asks): labelled like an agent's edit, always
    /// `needsConfirmation`, since the person's review is the whole point of the request.
    Ide,
    /// An agent that writes files itself in a mode that does not ask (a pre-write hook
    /// under Codex, `acceptEdits`, `--yolo`): labelled like an agent's edit,
    /// `needsConfirmation` as the editor's setting says.
    IdeUnasked,
    /// A revert of recorded changes (`verbatim/revert`): labelled like an agent's edit,
    /// always `needsConfirmation`: it may offer conflicts, where taking the revert drops
    /// a later change.
    Revert,
}

impl Origin {
    /// The agent writes the reviewed text to disk itself (a proposal, `ide/proposal.rs`).
    pub fn writes_itself(self) -> bool {
        matches!(self, Self::Ide | Self::IdeUnasked)
    }

    /// How the editor is told who proposes the edit (`verbatim.origin`).
    pub(crate) fn as_wire(self) -> &'static str {
        match self {
            Self::Agent | Self::Ide | Self::IdeUnasked | Self::Revert => "agent",
            Self::Disk => "disk",
        }
    }
}

/// What the editor did with one document.
#[derive(Debug, Clone)]
pub struct AppliedDocument {
    /// `None` for a deleted file.
    pub rev: Option<Rev>,
    /// The live text, when it differs from the prediction.
    pub differs: Option<Rope>,
    /// The live text once the edit arrived (`None` for a deleted file, or a file
    /// written on disk that never reached the editor's buffers).
    pub live: Option<Rope>,
    /// The proposal's hunks and which of them the editor applied; `None` when the
    /// edit did not go through an editor.
    pub review: Option<HunkReview>,
    /// The editor said it applied the edit, but its change has not arrived (a plain
    /// client that sends changes later): `rev` is `None` and `live` unknown.
    pub pending_sync: bool,
}

/// The hunks of one document's proposal, and which of them were kept.
#[derive(Debug, Clone)]
pub struct HunkReview {
    pub hunks: Vec<ProposalHunk>,
    pub kept: Vec<bool>,
    /// The number of the document's first hunk in the whole edit.
    pub first_index: usize,
}

impl HunkReview {
    pub fn all_kept(&self) -> bool {
        self.kept.iter().all(|kept| *kept)
    }
}

/// What the editor did with an edit.
#[derive(Debug, Clone)]
pub struct EditorOutcome {
    pub documents: Vec<AppliedDocument>,
    /// The person's words for what they left out.
    pub reason: Option<String>,
}

/// Which edit an offer belongs to: an edit offered again (the document moved
/// during review) keeps its id, and its offers are counted.
#[derive(Debug, Clone, Default)]
pub struct Offer {
    pub id: Option<u64>,
    pub count: u32,
}
