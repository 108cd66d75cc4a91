//! Diagnostics after an edit: what the editor's own language servers report once
//! the edit has landed, compared with what they reported when it was offered.
//!
//! Only the editor sees other language servers' diagnostics, so the server asks it
//! (`verbatim/diagnostics`) twice: for a baseline when the edit is offered, and,
//! once the edit's change has arrived, to wait for fresh, settled diagnostics. The
//! baseline is moved through the edit's own line changes before the two are
//! compared ([`verbatim_engine::problems`]). The report always says whether it is
//! complete: `settled`, `timedOut` (never a clean bill) or `unavailable`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use ropey::Rope;
use serde_json::{Value, json};
use tokio::time::Instant;
use tower_lsp_server::ls_types::request::Request;

use verbatim_engine::doc_key::DocKey;
use verbatim_engine::position::{Position, PositionEncoding, position_to_char};
use verbatim_engine::problems::{self, LineMap, Problem, Severity};
use verbatim_engine::rev::Rev;

use crate::service::deliver::planned::{AppliedDocument, PlannedDocument};
use crate::service::protocol::{DiagnosticsLevel, DiagnosticsReport, DiagnosticsStatus, ProblemItem};
use crate::service::registry::AgentInfo;
use crate::service::state::{EditorLink, State};

/// How long problems must stay unchanged before they count as settled.
const QUIET_MS: u64 = 300;
/// How long the whole wait may take, unless the agent says otherwise.
pub const DEFAULT_TIMEOUT_MS: u64 = 2500;
/// The longest wait an agent may ask for.
const MAX_TIMEOUT_MS: u64 = 60_000;
/// How long the editor may take to answer for the baseline.
const BASELINE_TIMEOUT: Duration = Duration::from_secs(2);
/// Items per file, and in all, in each list of a report.
const PER_FILE: usize = 10;
const IN_ALL: usize = 30;
/// The longest source line quoted with an item.
const MAX_TEXT_CHARS: usize = 200;

/// `verbatim/diagnostics`, the server's request to the editor.
enum DiagnosticsRequest {}

impl Request for DiagnosticsRequest {
    type Params = Value;
    type Result = Value;
    const METHOD: &'static str = "verbatim/diagnostics";
}

/// The diagnostics the editor holds now for `uris` (errors and warnings), as it
/// answers `verbatim/diagnostics` without `wait`: for an agent's IDE protocol, which
/// asks what the person sees. `Err` says why there is no answer.
pub async fn current(state: &State, uris: &[String]) -> Result<Value, String> {
    let link = state.editor().ok_or("no editor is connected")?;
    if !link.options.diagnostics {
        return Err("the editor does not answer for diagnostics (its Verbatim client has them turned off)".into());
    }
    let params = json!({"uris": uris, "minSeverity": "warning"});
    match tokio::time::timeout(BASELINE_TIMEOUT, link.client.send_request::<DiagnosticsRequest>(params)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(error)) => Err(format!("the editor could not say ({})", error.message)),
        Err(_) => Err(format!("the editor did not answer within {} ms", BASELINE_TIMEOUT.as_millis())),
    }
}

/// A write's request for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    pub warnings: bool,
    pub timeout_ms: u64,
}

impl Ask {
    /// The write's own fields, else the agent's defaults; `None` when off.
    pub fn of(level: Option<DiagnosticsLevel>, timeout_ms: Option<u64>, agent: &AgentInfo) -> Option<Self> {
        let level = level.or(agent.options.diagnostics).unwrap_or(DiagnosticsLevel::Off);
        let timeout_ms = timeout_ms.or(agent.options.diagnostics_timeout_ms).unwrap_or(DEFAULT_TIMEOUT_MS);
        match level {
            DiagnosticsLevel::Off => None,
            level => {
                Some(Self { warnings: level == DiagnosticsLevel::Warnings, timeout_ms: timeout_ms.min(MAX_TIMEOUT_MS) })
            }
        }
    }

    fn min_severity(self) -> &'static str {
        if self.warnings { "warning" } else { "error" }
    }

    fn severity_word(self) -> &'static str {
        if self.warnings { "warnings" } else { "errors" }
    }
}

/// The problems of the edited documents when the edit was offered.
#[derive(Debug, Clone)]
pub enum Baseline {
    /// Per planned document (`None`: the editor sent nothing for it).
    Taken(Vec<Option<Vec<Problem>>>),
    /// Why there is none.
    Missing(String),
}

/// Asks the editor for the problems of the documents about to be edited.
pub async fn baseline(state: &State, documents: &[PlannedDocument], ask: Ask) -> Baseline {
    let link = match diagnostics_editor(state) {
        Ok(link) => link,
        Err(why) => return Baseline::Missing(why),
    };
    let uris: Vec<&str> = documents.iter().map(|document| document.editor_uri.as_str()).collect();
    let params = json!({"uris": uris, "minSeverity": ask.min_severity()});
    let answer = tokio::time::timeout(BASELINE_TIMEOUT, link.client.send_request::<DiagnosticsRequest>(params)).await;
    let answer = match answer {
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => return Baseline::Missing(format!("the editor could not say ({})", error.message)),
        Err(_) => return Baseline::Missing("the editor did not answer for the diagnostics before the edit".into()),
    };
    let by_uri = documents_by_uri(&answer);
    Baseline::Taken(
        documents
            .iter()
            .map(|document| {
                let found = by_uri.get(document.editor_uri.as_str())?;
                (found.status != "unavailable").then(|| problems_of(&found.diagnostics, &document.base, link.encoding))
            })
            .collect(),
    )
}

/// How the edit's lines moved in a document: through the hunks the editor kept, or
/// through the whole edit when it did not say.
fn line_map(document: &PlannedDocument, applied: &AppliedDocument) -> LineMap {
    match &applied.review {
        Some(review) => LineMap::new(
            &document.base,
            review.hunks.iter().zip(&review.kept).filter(|(_, kept)| **kept).map(|(hunk, _)| hunk),
        ),
        None => LineMap::new(
            &document.base,
            &verbatim_engine::proposal_hunks::split(&document.base, &document.replacements),
        ),
    }
}

/// A report the editor's answer could not fill, finished by what went wrong.
type Failed = Box<dyn FnOnce(DiagnosticsReport) -> DiagnosticsReport + Send>;

/// Asks the editor for the problems of `versions` (each document's URI and the
/// version that holds the edit) once its language servers settle.
async fn settled_problems(link: &EditorLink, versions: &[(String, i32)], ask: Ask) -> Result<Value, Failed> {
    let uris: Vec<&String> = versions.iter().map(|(uri, _)| uri).collect();
    let by_uri: serde_json::Map<String, Value> =
        versions.iter().map(|(uri, version)| (uri.clone(), json!(version))).collect();
    let params = json!({
        "uris": uris,
        "minSeverity": ask.min_severity(),
        "wait": {"versions": by_uri, "quietMs": QUIET_MS, "timeoutMs": ask.timeout_ms},
    });
    // The editor does the waiting; give it its time and a little more to answer.
    let limit = Duration::from_millis(ask.timeout_ms + 2000);
    match tokio::time::timeout(limit, link.client.send_request::<DiagnosticsRequest>(params)).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(error)) => {
            let why = format!("the editor could not say ({})", error.message);
            Err(Box::new(move |report| unavailable(report, &why)))
        }
        Err(_) => Err(Box::new(move |mut report| {
            report.status = DiagnosticsStatus::TimedOut;
            report.note = Some(format!(
                "The editor did not answer within {} ms: nothing is known about problems after the edit. This is \
                 not a clean bill.",
                limit.as_millis()
            ));
            report
        })),
    }
}

/// Waits for the problems after the edit and reports what it changed.
pub async fn after(
    state: &Arc<State>,
    documents: &[PlannedDocument],
    applied: &[AppliedDocument],
    baseline: Baseline,
    ask: Ask,
) -> DiagnosticsReport {
    let started = Instant::now();
    let mut report = empty_report(ask);
    let before = match baseline {
        Baseline::Taken(before) => before,
        Baseline::Missing(why) => return unavailable(report, &why),
    };
    let link = match diagnostics_editor(state) {
        Ok(link) => link,
        Err(why) => return unavailable(report, &why),
    };
    // The documents that still exist, with the version that holds the edit.
    let edited: Vec<(usize, i32)> = applied
        .iter()
        .enumerate()
        .filter(|(index, _)| !documents[*index].delete)
        .filter_map(|(index, document)| match document.rev {
            Some(Rev::Editor { version, .. }) => Some((index, version)),
            _ => None,
        })
        .collect();
    if edited.is_empty() {
        return unavailable(report, "no edited document is open in the editor");
    }
    let workspace = state.workspace();
    // Where an edited document is after the edit: under its new name, if it moved.
    let key_of = |index: usize| {
        let document = &documents[index];
        document.rename_to.as_ref().map_or(&document.key, |(key, _)| key)
    };
    let label_of = |index: usize| workspace.label(key_of(index));
    // Edited documents nothing reports on: written on disk (not open in the editor),
    // or with no language server. Named, so that "settled" is never read as covering them.
    let mut unchecked: BTreeSet<String> = applied
        .iter()
        .enumerate()
        .filter(|(index, document)| !documents[*index].delete && !matches!(document.rev, Some(Rev::Editor { .. })))
        .map(|(index, _)| label_of(index))
        .collect();
    let uri_of = |index: usize| {
        let document = &documents[index];
        document.rename_to.as_ref().map_or(document.editor_uri.clone(), |(_, uri)| uri.clone())
    };
    let versions: Vec<(String, i32)> = edited.iter().map(|(index, version)| (uri_of(*index), *version)).collect();
    let answer = match settled_problems(&link, &versions, ask).await {
        Ok(answer) => answer,
        Err(failure) => {
            report.waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            return failure(report);
        }
    };
    report.waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let by_uri = documents_by_uri(&answer);
    let mut statuses = BTreeSet::new();
    let mut sources = BTreeSet::new();
    let mut introduced = Vec::new();
    let mut resolved = Vec::new();
    let mut unsaved = false;
    for (index, _) in &edited {
        let document = &documents[*index];
        let uri = uri_of(*index);
        let Some(found) = by_uri.get(uri.as_str()) else {
            statuses.insert("unavailable");
            unchecked.insert(label_of(*index));
            continue;
        };
        statuses.insert(found.status.as_str());
        if found.status == "unavailable" {
            unchecked.insert(label_of(*index));
        }
        sources.extend(found.sources.iter().cloned());
        let (live, saved) = live_text(state, key_of(*index));
        unsaved |= !saved;
        let Some(live) = live else { continue };
        let after = problems_of(&found.diagnostics, &live, link.encoding);
        sources.extend(after.iter().filter_map(|problem| problem.source.clone()));
        let Some(before) = before.get(*index).cloned().flatten() else {
            // No baseline for this document: its problems cannot be told apart.
            statuses.insert("unavailable");
            unchecked.insert(label_of(*index));
            continue;
        };
        let map = line_map(document, &applied[*index]);
        let comparison = problems::compare(&before, &after, &map);
        report.existing += comparison.existing;
        let label = label_of(*index);
        introduced.extend(comparison.introduced.iter().map(|at| item(&label, &after[*at], &live)));
        resolved.extend(comparison.resolved.iter().map(|at| item(&label, &before[*at], &document.base)));
    }
    report.other_files = others(state, &answer, link.encoding);
    report.status = if statuses.contains("timedOut") {
        DiagnosticsStatus::TimedOut
    } else if statuses.contains("settled") {
        DiagnosticsStatus::Settled
    } else {
        DiagnosticsStatus::Unavailable
    };
    report.sources = sources.into_iter().collect();
    if report.status != DiagnosticsStatus::Unavailable {
        report.unchecked = unchecked.into_iter().collect();
    }
    report.unsaved = unsaved;
    let mut omitted = 0;
    report.introduced = bounded(introduced, &mut omitted);
    report.resolved = bounded(resolved, &mut omitted);
    report.other_files = bounded(std::mem::take(&mut report.other_files), &mut omitted);
    report.omitted = omitted;
    report.note = note(&report, ask);
    report
}

/// The report for a write with diagnostics asked for but none to be had.
pub fn unavailable_report(ask: Ask, why: &str) -> DiagnosticsReport {
    unavailable(empty_report(ask), why)
}

fn empty_report(ask: Ask) -> DiagnosticsReport {
    DiagnosticsReport {
        status: DiagnosticsStatus::Unavailable,
        waited_ms: 0,
        sources: Vec::new(),
        severity: ask.severity_word().into(),
        introduced: Vec::new(),
        resolved: Vec::new(),
        existing: 0,
        other_files: Vec::new(),
        omitted: 0,
        unchecked: Vec::new(),
        unsaved: false,
        note: None,
    }
}

fn unavailable(mut report: DiagnosticsReport, why: &str) -> DiagnosticsReport {
    report.status = DiagnosticsStatus::Unavailable;
    report.note = Some(format!("No diagnostics: {why}. Nothing is known about problems after the edit."));
    report
}

fn note(report: &DiagnosticsReport, ask: Ask) -> Option<String> {
    let mut parts = Vec::new();
    match report.status {
        DiagnosticsStatus::Settled => {}
        DiagnosticsStatus::TimedOut => parts.push(format!(
            "The language server did not settle within {} ms: the lists may be incomplete. This is not a clean bill.",
            ask.timeout_ms
        )),
        DiagnosticsStatus::Unavailable => parts.push(
            "No language server reports diagnostics for the edited document in the editor: nothing is known about \
             problems after the edit."
                .to_owned(),
        ),
    }
    if !report.unchecked.is_empty() {
        let (them, their) = if report.unchecked.len() == 1 { ("it", "its") } else { ("them", "their") };
        parts.push(format!(
            "Not checked: {}. Nothing in the editor reports diagnostics for {them} (no language server, or not open \
             in the editor), so nothing is known about {their} problems.",
            report.unchecked.join(", ")
        ));
    }
    if report.unsaved && report.status != DiagnosticsStatus::Unavailable {
        parts.push(
            "The buffer is not saved: checks that run only on save (cargo check, for instance) have not run.".into(),
        );
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The editor, if it answers `verbatim/diagnostics`; else why not.
fn diagnostics_editor(state: &State) -> Result<EditorLink, String> {
    let link = state.editor().ok_or_else(|| "no editor is connected".to_owned())?;
    if !link.options.diagnostics {
        return Err("the editor does not report diagnostics (its Verbatim client predates them, or turned them \
                    off)"
            .into());
    }
    Ok(link)
}

/// The live text of a document, and whether the file on disk holds it.
fn live_text(state: &State, key: &DocKey) -> (Option<Rope>, bool) {
    let store = state.documents.lock();
    let Some(document) = store.get(key) else { return (None, true) };
    let saved = document.disk_baseline().is_some_and(|disk| disk == document.text);
    (Some(document.text.clone()), saved)
}

/// One document of the editor's answer.
struct Found {
    status: String,
    sources: Vec<String>,
    diagnostics: Vec<Value>,
}

fn documents_by_uri(answer: &Value) -> BTreeMap<&str, Found> {
    answer["documents"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|document| {
            let uri = document["uri"].as_str()?;
            let found = Found {
                status: document["status"].as_str().unwrap_or("settled").to_owned(),
                sources: strings(&document["sources"]),
                diagnostics: document["diagnostics"].as_array().cloned().unwrap_or_default(),
            };
            Some((uri, found))
        })
        .collect()
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().into_iter().flatten().filter_map(|item| item.as_str().map(str::to_owned)).collect()
}

/// LSP diagnostics as problems, columns counted in characters of `text`.
fn problems_of(diagnostics: &[Value], text: &Rope, encoding: PositionEncoding) -> Vec<Problem> {
    diagnostics
        .iter()
        .filter_map(|diagnostic| {
            let start = &diagnostic["range"]["start"];
            let line = usize::try_from(start["line"].as_u64()?).ok()?;
            let character = u32::try_from(start["character"].as_u64().unwrap_or(0)).unwrap_or(u32::MAX);
            let column = if line < text.len_lines() {
                let position = Position::new(u32::try_from(line).unwrap_or(u32::MAX), character);
                position_to_char(text, position, encoding).saturating_sub(text.line_to_char(line))
            } else {
                character as usize
            };
            let code = match &diagnostic["code"] {
                Value::String(code) => Some(code.clone()),
                Value::Number(code) => Some(code.to_string()),
                Value::Object(code) => {
                    code.get("value").map(|value| value.as_str().map_or(value.to_string(), str::to_owned))
                }
                _ => None,
            };
            Some(Problem {
                line,
                column,
                severity: Severity::from_lsp(diagnostic["severity"].as_i64()),
                source: diagnostic["source"].as_str().map(str::to_owned),
                code,
                message: diagnostic["message"].as_str().unwrap_or_default().to_owned(),
            })
        })
        .collect()
}

fn item(label: &str, problem: &Problem, text: &Rope) -> ProblemItem {
    let source_line = if problem.line < text.len_lines() {
        let line = text.line(problem.line).to_string();
        let trimmed = line.trim();
        trimmed.chars().take(MAX_TEXT_CHARS).collect()
    } else {
        String::new()
    };
    ProblemItem {
        location: format!("{label}:{}:{}", problem.line + 1, problem.column + 1),
        path: label.to_owned(),
        line: problem.line + 1,
        column: problem.column + 1,
        severity: problem.severity.as_str().into(),
        source: problem.source.clone(),
        code: problem.code.clone(),
        message: problem.message.clone(),
        text: source_line,
    }
}

/// Problems that appeared in other documents while the editor waited.
fn others(state: &State, answer: &Value, encoding: PositionEncoding) -> Vec<ProblemItem> {
    let workspace = state.workspace();
    let mut out = Vec::new();
    for other in answer["others"].as_array().into_iter().flatten() {
        let Some(uri) = other["uri"].as_str() else { continue };
        let Ok(key) = DocKey::parse(uri) else { continue };
        let (text, _) = live_text(state, &key);
        let text = text.or_else(|| {
            let path = key.path()?;
            verbatim_engine::disk::read_text(path).ok().map(|disk| Rope::from_str(&disk.text))
        });
        let text = text.unwrap_or_default();
        let before = problems_of(other["before"].as_array().map_or(&[], Vec::as_slice), &text, encoding);
        let after = problems_of(other["after"].as_array().map_or(&[], Vec::as_slice), &text, encoding);
        let comparison = problems::compare(&before, &after, &LineMap::default());
        let label = workspace.label(&key);
        out.extend(comparison.introduced.iter().map(|at| item(&label, &after[*at], &text)));
    }
    out
}

/// Errors first, at most [`PER_FILE`] per file and [`IN_ALL`] in all; counts the rest.
fn bounded(mut items: Vec<ProblemItem>, omitted: &mut usize) -> Vec<ProblemItem> {
    items.sort_by(|a, b| {
        let rank = |item: &ProblemItem| if item.severity == "error" { 0 } else { 1 };
        rank(a).cmp(&rank(b)).then(a.path.cmp(&b.path)).then(a.line.cmp(&b.line))
    });
    let mut per_file: BTreeMap<String, usize> = BTreeMap::new();
    let mut kept = Vec::new();
    for item in items {
        let count = per_file.entry(item.path.clone()).or_default();
        if *count >= PER_FILE || kept.len() >= IN_ALL {
            *omitted += 1;
            continue;
        }
        *count += 1;
        kept.push(item);
    }
    kept
}
