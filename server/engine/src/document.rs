//! One open document: a rope, the editor's version, and the incremental changes
//! that keep it equal to the editor's buffer.

use ropey::Rope;

use crate::history::History;
use crate::position::PositionEncoding;
use crate::rev::Rev;
use crate::text_change::{TextChange, apply_change};
use crate::unsent::{self, Reconciled, Unsent};

/// A live editor buffer.
#[derive(Debug, Clone)]
pub struct Document {
    /// The URI exactly as the editor sent it; used whenever we talk to the editor.
    pub editor_uri: String,
    pub language_id: String,
    /// The editor's version. Versions only grow but may jump (Neovim's changedtick).
    pub version: i32,
    /// Which `didOpen` started this session (see [`Rev`]).
    pub session: u64,
    pub text: Rope,
    /// What the file on disk held when the buffer last agreed with it (read at
    /// `didOpen`, replaced at every `didSave` and whenever a change made on disk
    /// outside the editor has been offered): the base of the three-way merge of the
    /// next such change. `None` when the file could not be read as text. Read it with
    /// [`Document::disk_baseline`], set it with [`Document::set_disk_baseline`].
    disk_baseline: Option<DiskBaseline>,
    /// What the file holds after a change on disk the editor was asked to reload the
    /// buffer from (the buffer had no unsaved changes). It becomes the baseline when
    /// a change makes the buffer equal to it, i.e. when the reload arrives; until then
    /// the baseline stays what the buffer last agreed with, so a reload the editor
    /// did not make (the person typed first) is merged with the next change instead.
    pub reload_expected: Option<Rope>,
    /// The version the buffer had when the reload was asked for (see
    /// [`Document::awaits_editor_text`]).
    reload_asked_at: i32,
    /// The editor said it applied an edit at this version but has not sent the change
    /// yet (a client that sends changes later); cleared by the next change.
    applied_unsent_at: Option<i32>,
    /// The text and version the editor last sent, while the server's copy holds edits
    /// the editor said it applied and has not sent yet (see [`Document::assume_applied`]).
    /// `None` when the server's copy is the editor's own.
    unsent: Option<Unsent>,
    /// The recent revisions and the changes between them (bounded; see [`History`]).
    pub history: History,
    /// Changes applied since the rope was last packed (see [`Document::apply_changes`]).
    changes_since_packed: usize,
}

/// A rope is packed again once it has taken this many changes, or one per this many
/// bytes of text if that is more: an insertion into a full leaf splits it into two
/// half-empty ones, so scattered typing would otherwise nearly double a buffer's
/// memory. Packing copies the text once (O(n)); spaced this way it costs well under a
/// microsecond per change, amortized.
const PACK_AFTER_CHANGES: usize = 32;
const PACK_BYTES_PER_CHANGE: usize = 4096;

/// How a disk baseline is kept.
#[derive(Debug, Clone)]
enum DiskBaseline {
    /// The buffer's own text at this version: rebuilt from the history when needed,
    /// so a buffer that agreed with the file costs nothing extra as it is edited.
    Version(i32),
    /// A text of its own (the disk differs from every kept revision of the buffer).
    Text(Rope),
}

impl Document {
    /// A document as `didOpen` gives it, with no history and no disk baseline yet.
    pub fn new(editor_uri: String, language_id: String, version: i32, session: u64, text: Rope) -> Self {
        Self {
            editor_uri,
            language_id,
            version,
            session,
            text,
            disk_baseline: None,
            reload_expected: None,
            reload_asked_at: 0,
            applied_unsent_at: None,
            unsent: None,
            history: History::default(),
            changes_since_packed: 0,
        }
    }

    /// Asks for the buffer to be reloaded to `text` (what the file now holds).
    pub fn expect_reload(&mut self, text: Rope) {
        self.reload_expected = Some(text);
        self.reload_asked_at = self.version;
    }

    /// Records that the editor applied an edit it has not sent yet.
    pub fn expect_applied_change(&mut self) {
        self.applied_unsent_at = Some(self.version);
    }

    /// Takes an edit the editor said it applied and has not sent yet: the server's copy
    /// becomes `text` at `version` at once (the server knows what it sent), and the
    /// editor's later change is reconciled with it (see [`crate::unsent`]).
    /// `replacements` (of the current text) are recorded in the history, so a plan
    /// against the text before can still be moved over the edit; `None` when they do
    /// not describe `text`.
    pub fn assume_applied(&mut self, replacements: Option<&[crate::plan::Replacement]>, text: Rope, version: i32) {
        let edits = replacements.map(|replacements| unsent::edits_of_replacements(&self.text, replacements));
        self.detach_baseline();
        let unsent = self.unsent.get_or_insert_with(|| Unsent {
            text: self.text.clone(),
            version: self.version,
            steps: Vec::new(),
        });
        unsent.steps.push(text.clone());
        match edits {
            Some(edits) => self.history.record(self.version, edits),
            None => self.history.clear(),
        }
        self.text = text;
        self.version = version;
    }

    /// Whether the server's copy holds edits the editor has not sent yet.
    pub fn has_unsent(&self) -> bool {
        self.unsent.is_some()
    }

    /// The editor says (in an error that names it) that its copy is at `version`
    /// while the server's copy holds edits it has not sent: the server's guess of the
    /// version after them was wrong, and takes the editor's. The text stays.
    pub fn correct_unsent_version(&mut self, version: i32) -> bool {
        if self.unsent.is_none() || version == self.version {
            return false;
        }
        self.detach_baseline();
        self.history.record(self.version, Vec::new());
        self.version = version;
        true
    }

    /// A change the editor was asked for (a reload from disk) or said it made (an
    /// applied edit) has not arrived yet: what the buffer holds is about to be replaced.
    pub fn awaits_editor_text(&self) -> bool {
        let reload = self.reload_expected.is_some() && self.version == self.reload_asked_at;
        reload || self.applied_unsent_at == Some(self.version)
    }

    /// What the file on disk held when the buffer last agreed with it.
    pub fn disk_baseline(&self) -> Option<Rope> {
        match self.disk_baseline.as_ref()? {
            DiskBaseline::Version(version) if *version == self.version => Some(self.text.clone()),
            DiskBaseline::Version(version) => self.history.text_at(*version, &self.text),
            DiskBaseline::Text(text) => Some(text.clone()),
        }
    }

    /// Records what the file on disk holds while the buffer agrees with it; equal to
    /// the buffer, it is kept as the buffer's version (no copy of the text).
    pub fn set_disk_baseline(&mut self, baseline: Option<Rope>) {
        self.reload_expected = None;
        self.disk_baseline = baseline.map(|text| {
            if text.len_bytes() == self.text.len_bytes() && text == self.text {
                DiskBaseline::Version(self.version)
            } else {
                DiskBaseline::Text(text)
            }
        });
    }

    /// Gives a baseline kept as an older version a text of its own before the history
    /// could drop that version.
    fn keep_baseline_through(&mut self, changes: &[TextChange]) {
        let Some(DiskBaseline::Version(version)) = self.disk_baseline else { return };
        let whole_text = changes.iter().any(|change| change.range.is_none());
        if version != self.version && (whole_text || self.history.may_drop(version)) {
            self.disk_baseline = self.history.text_at(version, &self.text).map(DiskBaseline::Text);
        }
    }

    /// Gives a baseline kept as a version a text of its own (before a change that is
    /// not an ordinary `didChange`).
    fn detach_baseline(&mut self) {
        let Some(DiskBaseline::Version(version)) = self.disk_baseline else { return };
        self.disk_baseline = if version == self.version {
            Some(DiskBaseline::Text(self.text.clone()))
        } else {
            self.history.text_at(version, &self.text).map(DiskBaseline::Text)
        };
    }

    pub fn rev(&self) -> Rev {
        Rev::Editor { session: self.session, version: self.version }
    }

    /// Applies the changes of one `didChange`, in order, then takes the new version;
    /// the revision it leaves is kept in the history with the changes' byte edits.
    /// While the server's copy holds edits the editor has not sent, the changes are
    /// relative to the editor's last text instead: they are replayed there, the
    /// editor's text replaces the server's copy, and the result says whether it held
    /// the assumed edits.
    pub fn apply_changes(
        &mut self,
        changes: &[TextChange],
        version: i32,
        encoding: PositionEncoding,
    ) -> Option<Reconciled> {
        if let Some(mut unsent) = self.unsent.take() {
            let (client, reconciled) = unsent::replay(&mut unsent, changes, encoding);
            if reconciled == Reconciled::Partway {
                // The server's copy already holds this and the edits still to come.
                unsent.version = version;
                self.unsent = Some(unsent);
                return Some(reconciled);
            }
            self.detach_baseline();
            let edits = unsent::edit_between(&self.text, &client).into_iter().collect();
            self.history.record(self.version, edits);
            self.text = client;
            self.version = version;
            self.take_expected_reload();
            return Some(reconciled);
        }
        self.keep_baseline_through(changes);
        let mut edits = Vec::with_capacity(changes.len());
        for change in changes {
            let applied = apply_change(&mut self.text, change, encoding);
            // A change of the whole text leaves `None`: nothing planned before can be moved over it.
            edits.push(applied.removed.map(|removed| (applied.edit, removed)));
        }
        match edits.into_iter().collect::<Option<Vec<_>>>() {
            Some(edits) => self.history.record(self.version, edits),
            None => self.history.clear(),
        }
        self.version = version;
        self.changes_since_packed += changes.len();
        if self.changes_since_packed >= PACK_AFTER_CHANGES.max(self.text.len_bytes() / PACK_BYTES_PER_CHANGE) {
            self.text = packed(&self.text);
            self.changes_since_packed = 0;
        }
        self.take_expected_reload();
        None
    }

    /// A reload the editor was asked for has arrived: the disk baseline is the buffer.
    fn take_expected_reload(&mut self) {
        if let Some(expected) = &self.reload_expected
            && expected.len_bytes() == self.text.len_bytes()
            && *expected == self.text
        {
            self.reload_expected = None;
            self.disk_baseline = Some(DiskBaseline::Version(self.version));
        }
    }
}

/// The same text in full leaves.
fn packed(rope: &Rope) -> Rope {
    let mut builder = ropey::RopeBuilder::new();
    for chunk in rope.chunks() {
        builder.append(chunk);
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Position;
    use crate::text_change::apply_change;
    use proptest::prelude::*;

    /// Spec semantics on a plain string: lines end at `\r\n`, `\r` or `\n`; a column
    /// past the end clamps to the line end; a column inside a character rounds down.
    fn naive_offset(text: &str, line: u32, character: u32, encoding: PositionEncoding) -> usize {
        let bytes = text.as_bytes();
        let mut line_start = 0;
        let mut current = 0;
        let mut i = 0;
        while current < line {
            if i >= bytes.len() {
                return text.len();
            }
            match bytes[i] {
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                    i += 1;
                    current += 1;
                    line_start = i + 1;
                }
                b'\r' | b'\n' => {
                    current += 1;
                    line_start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        let line_end = text[line_start..].find(['\r', '\n']).map_or(text.len(), |end| line_start + end);
        let mut units = 0;
        for (offset, ch) in text[line_start..line_end].char_indices() {
            let width = match encoding {
                PositionEncoding::Utf8 => ch.len_utf8(),
                PositionEncoding::Utf16 => ch.len_utf16(),
                PositionEncoding::Utf32 => 1,
            };
            if units + width > character as usize {
                return line_start + offset;
            }
            units += width;
        }
        line_end
    }

    fn encoding_strategy() -> impl Strategy<Value = PositionEncoding> {
        prop_oneof![Just(PositionEncoding::Utf8), Just(PositionEncoding::Utf16), Just(PositionEncoding::Utf32)]
    }

    fn text_strategy() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("a"),
                Just("é"),
                Just("😀"),
                Just("\r"),
                Just("\n"),
                Just("\r\n"),
                Just("e\u{301}"),
                Just("xyz")
            ],
            0..12,
        )
        .prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn incremental_changes_keep_the_rope_equal_to_a_string_model(
            initial in text_strategy(),
            encoding in encoding_strategy(),
            changes in proptest::collection::vec((0u32..8, 0u32..12, 0u32..8, 0u32..12, text_strategy()), 1..25),
        ) {
            let mut model = initial.clone();
            let mut rope = Rope::from_str(&initial);
            for (start_line, start_char, end_line, end_char, text) in changes {
                let start = Position::new(start_line, start_char);
                let end = Position::new(end_line, end_char);
                let a = naive_offset(&model, start.line, start.character, encoding);
                let b = naive_offset(&model, end.line, end.character, encoding);
                model.replace_range(a.min(b)..a.max(b), &text);
                apply_change(&mut rope, &TextChange { range: Some(start..end), text }, encoding);
                prop_assert_eq!(rope.to_string(), model.clone());
                let model_lines = 1 + model.matches("\r\n").count()
                    + model.replace("\r\n", "").matches(['\r', '\n']).count();
                prop_assert_eq!(rope.len_lines(), model_lines);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Every kept revision's text is rebuilt exactly from the live text.
        #[test]
        fn the_history_rebuilds_every_kept_revision(
            initial in text_strategy(),
            encoding in encoding_strategy(),
            changes in proptest::collection::vec((0u32..8, 0u32..12, 0u32..8, 0u32..12, text_strategy()), 1..20),
        ) {
            let mut document = Document::new("file:///t".into(), "plaintext".into(), 0, 1, Rope::from_str(&initial));
            document.set_disk_baseline(Some(document.text.clone()));
            let mut texts = vec![initial.clone()];
            for (version, (start_line, start_char, end_line, end_char, text)) in changes.into_iter().enumerate() {
                let range = Position::new(start_line, start_char)..Position::new(end_line, end_char);
                document.apply_changes(&[TextChange { range: Some(range), text }], version as i32 + 1, encoding);
                texts.push(document.text.to_string());
            }
            // The baseline was the text at version 0, and still is.
            prop_assert_eq!(document.disk_baseline().map(|text| text.to_string()), Some(initial.clone()));
            for (version, expected) in texts.iter().enumerate().take(texts.len() - 1) {
                let rebuilt = document.history.text_at(version as i32, &document.text).map(|text| text.to_string());
                prop_assert_eq!(rebuilt, Some(expected.clone()));
            }
        }
    }

    #[test]
    fn packing_the_rope_keeps_the_text_and_the_history() {
        let line = "let value = 1234567890; // a line of code\n";
        let text: String = line.repeat(2000);
        let mut document = Document::new("file:///t".into(), "rust".into(), 0, 1, Rope::from_str(&text));
        let mut lines: Vec<String> = text.lines().map(|line| format!("{line}\n")).collect();
        for version in 1..=200 {
            let row = (version as u32 * 7919) % 2000;
            let at = Position::new(row, 4);
            document.apply_changes(
                &[TextChange { range: Some(at..at), text: "x".into() }],
                version,
                PositionEncoding::Utf16,
            );
            lines[row as usize].insert(4, 'x');
        }
        assert!(document.text == lines.concat(), "the text survives packing");
        let at_150 = document.history.text_at(150, &document.text).map(|text| text.len_bytes());
        assert_eq!(at_150, Some(text.len() + 150));
    }

    #[test]
    fn a_baseline_kept_as_a_version_outlives_the_history_and_a_whole_text_change() {
        let mut document = Document::new("file:///t".into(), "plaintext".into(), 0, 1, Rope::from_str("base\n"));
        document.set_disk_baseline(Some(Rope::from_str("base\n")));
        let at = Position::new(0, 0);
        for version in 1..=(crate::history::MAX_REVISIONS as i32 + 20) {
            let change = TextChange { range: Some(at..at), text: "x".into() };
            document.apply_changes(&[change], version, PositionEncoding::Utf16);
        }
        assert!(document.history.text_at(0, &document.text).is_none(), "version 0 left the history");
        assert_eq!(document.disk_baseline().map(|text| text.to_string()).as_deref(), Some("base\n"));

        let mut document = Document::new("file:///t".into(), "plaintext".into(), 0, 1, Rope::from_str("base\n"));
        document.set_disk_baseline(Some(Rope::from_str("base\n")));
        document.apply_changes(&[TextChange { range: Some(at..at), text: "x".into() }], 1, PositionEncoding::Utf16);
        document.apply_changes(&[TextChange { range: None, text: "all new\n".into() }], 2, PositionEncoding::Utf16);
        assert_eq!(document.disk_baseline().map(|text| text.to_string()).as_deref(), Some("base\n"));
    }

    #[test]
    fn a_newline_typed_after_a_cr_joins_them_into_one_line_break() {
        let mut rope = Rope::from_str("a\rb");
        let at = Position::new(0, 2);
        apply_change(&mut rope, &TextChange { range: Some(at..at), text: "\n".into() }, PositionEncoding::Utf16);
        // `\r` ended line 0, so (0, 2) clamps to before it: the text becomes "a\n\rb".
        assert_eq!(rope.to_string(), "a\n\rb");
        let after_cr = Position::new(2, 0);
        apply_change(
            &mut rope,
            &TextChange { range: Some(after_cr..after_cr), text: "\n".into() },
            PositionEncoding::Utf16,
        );
        assert_eq!(rope.to_string(), "a\n\r\nb");
        assert_eq!(rope.len_lines(), 3);
    }
}
