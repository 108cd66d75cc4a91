//! Every pair of a language through every dialect and slip, sent to the headless
//! front-end as `verbatim edit --headless` and `verbatim patch --headless` send them,
//! each case counted; with a dump directory, each patch case is also written there
//! for the peers' scripts (`tests/agents/codex_apply_patch_replay.py`,
//! `tests/agents/aider_search_replace_replay.py`).

use std::path::Path;

use verbatim::headless::Headless;
use verbatim::service::error::ProtocolError;

use super::cases::{Case, Dialect, case};
use super::corpus::Pair;
use super::hunks::hunks_between;
use super::outcome::{Outcome, Tallies, classify};
use super::slips::Slip;
use crate::common::Random;

/// A case that was written wrong or partly: what to show for it.
#[derive(Debug, Clone)]
pub struct Failure {
    pub language: String,
    pub dialect: Dialect,
    pub slip: Slip,
    pub origin: String,
    pub outcome: Outcome,
    /// The request's quote or patch, and the error's message for a partial write.
    pub detail: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Failure { language, dialect, slip, origin, outcome, detail } = self;
        write!(f, "{language} {} {} {origin} ({outcome:?}):\n{detail}", dialect.name(), slip.name())
    }
}

/// Replays the committed sample of every language (see [`super::corpus::from_fixtures`]);
/// returns how many languages it has.
pub fn replay_fixtures(
    headless: &Headless,
    root: &Path,
    dump: Option<&Path>,
    tallies: &mut Tallies,
    failures: &mut Vec<Failure>,
) -> usize {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join("slip_replay");
    let mut languages = 0;
    for (language, _) in super::corpus::LANGUAGES {
        let pairs = super::corpus::from_fixtures(&fixtures, language);
        languages += usize::from(!pairs.is_empty());
        replay(headless, root, language, &pairs, dump, tallies, failures);
    }
    languages
}

/// Replays `pairs` of `language` in `root` (the headless front-end's folder), adding
/// to `tallies` and `failures`; `dump` receives the patch cases as
/// `<language>/<dialect>/<case>-<slip>/{old,new,patch,name}`.
pub fn replay(
    headless: &Headless,
    root: &Path,
    language: &str,
    pairs: &[Pair],
    dump: Option<&Path>,
    tallies: &mut Tallies,
    failures: &mut Vec<Failure>,
) {
    let mut random = Random(0x2026_1207_0043_0001);
    for (index, pair) in pairs.iter().enumerate() {
        let hunks = hunks_between(&pair.old, &pair.new);
        if hunks.is_empty() {
            continue;
        }
        let chosen = random.below(hunks.len());
        let name = format!("f{index}.{}", pair.extension);
        let path = root.join(&name);
        let path_text = path.to_string_lossy().into_owned();
        for dialect in Dialect::ALL {
            for slip in Slip::ALL {
                let Some(case) = case(dialect, slip, (&name, &path_text, &pair.old), &hunks, chosen, &mut random)
                else {
                    continue;
                };
                std::fs::write(&path, &pair.old).unwrap();
                let answer = headless.call(case.method, case.params.clone());
                let written = std::fs::read_to_string(&path).unwrap_or_default();
                let outcome = classify(answer.is_ok(), &pair.old, &case.intended, &written, case.exact_elsewhere);
                tallies.entry((language.to_owned(), dialect, slip)).or_default().add(outcome);
                if matches!(outcome, Outcome::Wrong | Outcome::Partial) {
                    let sent = case.patch.clone().unwrap_or_else(|| {
                        format!("oldStr:\n{}\nnewStr:\n{}", case.params["oldStr"], case.params["newStr"])
                    });
                    let error =
                        answer.as_ref().err().map(|error| format!("\nrefused: {}", error.message)).unwrap_or_default();
                    failures.push(Failure {
                        language: language.to_owned(),
                        dialect,
                        slip,
                        origin: pair.origin.clone(),
                        outcome,
                        detail: format!("{sent}{error}"),
                    });
                }
                if let Some(dump) = dump {
                    let dir = dump.join(language).join(dialect.name()).join(format!("{index:04}-{}", slip.name()));
                    write_case(&dir, pair, &case, &name, &answer, outcome).unwrap();
                }
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// One case as the peers' scripts read it (`patch` only for the patch dialects), with
/// Verbatim's request, answer and outcome beside it.
fn write_case(
    dir: &Path,
    pair: &Pair,
    case: &Case,
    name: &str,
    answer: &Result<serde_json::Value, ProtocolError>,
    outcome: Outcome,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("old"), &pair.old)?;
    std::fs::write(dir.join("new"), &case.intended)?;
    if let Some(patch) = &case.patch {
        std::fs::write(dir.join("patch"), patch)?;
    }
    std::fs::write(dir.join("name"), name)?;
    std::fs::write(dir.join("origin"), &pair.origin)?;
    std::fs::write(dir.join("request"), serde_json::to_string_pretty(&case.params).unwrap_or_default())?;
    let answer = match answer {
        Ok(result) => serde_json::to_string_pretty(result).unwrap_or_default(),
        Err(error) => format!("{:?}: {}", error.kind, error.message),
    };
    std::fs::write(dir.join("answer"), answer)?;
    std::fs::write(dir.join("verbatim"), format!("{outcome:?}"))?;
    std::fs::write(dir.join("exactElsewhere"), case.exact_elsewhere.to_string())
}
