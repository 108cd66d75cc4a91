//! `(old, new)` pairs of real source files: read from a git history (any bare or
//! working repository; see BENCHMARKS.md for how the benchmark's are fetched), or
//! from the small sample committed under `tests/fixtures/slip_replay/` for the fast
//! replay in `cargo test`.

use std::path::Path;
use std::process::Command;

/// Files larger than this are left out (the replay is about slips, not size).
pub const MAX_FILE_BYTES: usize = 60_000;

/// One file as it was before and after a real commit.
#[derive(Debug, Clone)]
pub struct Pair {
    /// Where it comes from: `repository commit path`.
    pub origin: String,
    /// Its extension, without the dot.
    pub extension: String,
    pub old: String,
    pub new: String,
}

/// The languages replayed and the extensions of their files.
pub const LANGUAGES: [(&str, &[&str]); 6] = [
    ("python", &["py"]),
    ("go", &["go"]),
    ("javascript", &["js"]),
    ("typescript", &["ts"]),
    ("rust", &["rs"]),
    ("c", &["c", "h"]),
];

pub fn extensions_of(language: &str) -> Option<&'static [&'static str]> {
    LANGUAGES.iter().find(|(name, _)| *name == language).map(|(_, extensions)| *extensions)
}

fn git(git_dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let output = Command::new("git").arg("--git-dir").arg(git_dir).args(args).output().ok()?;
    output.status.success().then_some(output.stdout)
}

/// A text the replay can take: UTF-8, `\n` line breaks only, ending with one, not too large.
fn plain(bytes: Vec<u8>) -> Option<String> {
    let text = String::from_utf8(bytes).ok()?;
    (text.ends_with('\n') && !text.contains('\r') && text.len() <= MAX_FILE_BYTES).then_some(text)
}

/// Up to `max` pairs from the history of `git_dir` (from `HEAD`, merges left out):
/// the files with one of `extensions` modified by a commit, every n-th of them taken
/// so that the sample spans the history, newest first. `label` names the repository
/// in each pair's origin.
pub fn from_git(git_dir: &Path, label: &str, extensions: &[&str], max: usize) -> Vec<Pair> {
    let patterns: Vec<String> = extensions.iter().map(|extension| format!("*.{extension}")).collect();
    let mut args = vec!["log", "--no-merges", "--diff-filter=M", "--name-only", "--format=commit %H", "HEAD", "--"];
    args.extend(patterns.iter().map(String::as_str));
    let Some(log) = git(git_dir, &args) else { return Vec::new() };
    let log = String::from_utf8_lossy(&log);
    let mut changed = Vec::new();
    let mut commit = "";
    for line in log.lines() {
        if let Some(hash) = line.strip_prefix("commit ") {
            commit = hash;
        } else if !line.is_empty() && !line.contains("vendor/") && !line.contains("testdata/") {
            changed.push((commit, line));
        }
    }
    let step = (changed.len() / max.max(1)).max(1);
    let mut out = Vec::new();
    for (commit, path) in changed.into_iter().step_by(step) {
        if out.len() == max {
            break;
        }
        let blob = |revision: &str| git(git_dir, &["cat-file", "blob", &format!("{revision}:{path}")]).and_then(plain);
        let (Some(old), Some(new)) = (blob(&format!("{commit}^")), blob(commit)) else { continue };
        if old == new {
            continue;
        }
        let extension = path.rsplit('.').next().unwrap_or_default().to_owned();
        out.push(Pair { origin: format!("{label} {commit} {path}"), extension, old, new });
    }
    out
}

/// The committed sample of `language`: `<dir>/<language>/<n>/{old,new,origin}`, in order.
pub fn from_fixtures(dir: &Path, language: &str) -> Vec<Pair> {
    let Ok(entries) = std::fs::read_dir(dir.join(language)) else { return Vec::new() };
    let mut cases: Vec<_> = entries.flatten().map(|entry| entry.path()).filter(|path| path.is_dir()).collect();
    cases.sort();
    cases
        .iter()
        .filter_map(|case| {
            let read = |name: &str| std::fs::read_to_string(case.join(name)).ok();
            let origin = read("origin")?;
            let extension = origin.split_whitespace().nth(2)?.rsplit('.').next()?.to_owned();
            Some(Pair { origin: origin.trim().to_owned(), extension, old: read("old")?, new: read("new")? })
        })
        .collect()
}

/// Writes `pairs` as the sample of `language` under `dir` (what [`from_fixtures`] reads).
pub fn write_fixtures(dir: &Path, language: &str, pairs: &[Pair]) -> std::io::Result<()> {
    for (index, pair) in pairs.iter().enumerate() {
        let case = dir.join(language).join(format!("{index:02}"));
        std::fs::create_dir_all(&case)?;
        std::fs::write(case.join("old"), &pair.old)?;
        std::fs::write(case.join("new"), &pair.new)?;
        std::fs::write(case.join("origin"), format!("{}\n", pair.origin))?;
    }
    Ok(())
}
