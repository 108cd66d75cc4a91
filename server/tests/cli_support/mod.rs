//! Running the real `verbatim` binary as an agent would: a working directory,
//! private runtime and state directories, stdin, and the exit code, stdout and
//! stderr it ends with.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Variables that would make git use another repository than the one it is run in.
pub use verbatim::headless::git::REDIRECTING_VARIABLES as GIT_VARIABLES;

/// The identity of commits made by tests, given by environment, never by config.
pub const GIT_IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "Test"),
    ("GIT_AUTHOR_EMAIL", "test@example.com"),
    ("GIT_COMMITTER_NAME", "Test"),
    ("GIT_COMMITTER_EMAIL", "test@example.com"),
];

/// Runs git in `dir` only: no inherited repository variables, a fixed identity.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let mut command = std::process::Command::new("git");
    for variable in GIT_VARIABLES {
        command.env_remove(variable);
    }
    let output = command.envs(GIT_IDENTITY).arg("-C").arg(dir).args(args).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_verbatim"))
}

/// How one command ended.
#[derive(Debug, Clone)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|error| panic!("stdout is not JSON ({error}): {self:?}"))
    }

    /// Panics with everything it printed unless it exited with `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit code: {self:#?}");
        self
    }
}

/// The command line, in one directory, with its own runtime and state directories.
#[derive(Debug, Clone)]
pub struct Cli {
    pub cwd: PathBuf,
    pub runtime_dir: PathBuf,
    pub state_dir: PathBuf,
}

impl Cli {
    pub fn new(cwd: &Path, runtime_dir: &Path, state_dir: &Path) -> Self {
        Self { cwd: cwd.to_owned(), runtime_dir: runtime_dir.to_owned(), state_dir: state_dir.to_owned() }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new(binary());
        command
            .current_dir(&self.cwd)
            .env("VERBATIM_RUNTIME_DIR", &self.runtime_dir)
            .env("VERBATIM_STATE_DIR", &self.state_dir)
            .env_remove("VERBATIM_LOG")
            .kill_on_drop(true);
        // Tests may run under git (a hook, `rebase --exec`): never let git variables
        // point the commands they start at the repository of this project.
        for variable in GIT_VARIABLES {
            command.env_remove(variable);
        }
        // Commits made by tests carry a fixed identity, set without writing any config.
        for (name, value) in GIT_IDENTITY {
            command.env(name, value);
        }
        command
    }

    pub async fn run(&self, args: &[&str]) -> Run {
        self.run_with_stdin(args, b"").await
    }

    pub async fn run_with_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let bytes = stdin.to_vec();
        tokio::spawn(async move {
            let _ = input.write_all(&bytes).await;
        });
        let output = tokio::time::timeout(TIMEOUT, child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("verbatim {args:?} did not finish"))
            .unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs each case (arguments, stdin, exit code, error kind) twice: for people
    /// (`verbatim: <kind>: ...` on stderr) and with `--json` (`error.kind` on stdout).
    pub async fn assert_errors(&self, cases: &[(Vec<&str>, &str, i32, &str)]) {
        for (args, stdin, code, kind) in cases {
            let run = self.run_with_stdin(args, stdin.as_bytes()).await;
            run.expect_code(*code);
            assert!(run.stderr.starts_with(&format!("verbatim: {kind}: ")), "{args:?}: {run:?}");
            let mut json_args = args.clone();
            json_args.push("--json");
            let run = self.run_with_stdin(&json_args, stdin.as_bytes()).await;
            run.expect_code(*code);
            let error = &run.json()["error"];
            assert_eq!(error["kind"], *kind, "{args:?}: {run:?}");
            assert!(error["code"].as_i64().is_some_and(|code| code <= -33001), "{run:?}");
        }
    }

    /// Every journal entry under the state directory, in file then line order.
    pub fn journal(&self) -> Vec<Value> {
        let Ok(entries) = std::fs::read_dir(self.state_dir.join("journal")) else { return Vec::new() };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                let name = path.file_name().unwrap().to_string_lossy();
                name.ends_with(".jsonl") && !name.ends_with(".marks.jsonl")
            })
            .collect();
        files.sort();
        files
            .iter()
            .flat_map(|file| {
                std::fs::read_to_string(file)
                    .unwrap()
                    .lines()
                    .map(|line| serde_json::from_str(line).unwrap())
                    .collect::<Vec<Value>>()
            })
            .collect()
    }
}

/// A project with no editor: its directory, and private runtime and state directories.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub runtime: tempfile::TempDir,
    pub state: tempfile::TempDir,
    pub cli: Cli,
}

impl Project {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let cli = Cli::new(dir.path(), runtime.path(), state.path());
        Self { dir, runtime, state, cli }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).unwrap()
    }

    pub fn text(&self, name: &str) -> String {
        String::from_utf8(self.read(name)).unwrap()
    }
}
