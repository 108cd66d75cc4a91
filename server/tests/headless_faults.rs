//! Faults on disk in headless mode: the disk fills up, permission is denied, the file
//! is replaced or deleted between the agent's read and its write. Each ends in a
//! clear error with its exit code, the file as it was, and no temporary file left.
#![allow(clippy::unwrap_used)]

mod cli_support;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use cli_support::{Project, Run, binary};

/// Long enough that writing it exceeds a 1-block file size limit.
fn big_text() -> String {
    (0..400).map(|i| format!("line {i} of a file that is longer than one block\n")).collect()
}

fn entries(project: &Project, dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(project.path(dir))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

async fn run_wrapped(project: &Project, shell_prefix: &str, args: &[&str]) -> Run {
    // `exec` keeps the limits and the ignored signal for the verbatim process itself.
    let script = format!("{shell_prefix}; exec \"$0\" \"$@\"");
    let mut command = tokio::process::Command::new("bash");
    command
        .arg("-c")
        .arg(script)
        .arg(binary())
        .args(args)
        .current_dir(&project.cli.cwd)
        .env("VERBATIM_RUNTIME_DIR", &project.cli.runtime_dir)
        .env("VERBATIM_STATE_DIR", &project.cli.state_dir)
        .stdin(Stdio::null());
    let output = command.output().await.unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[tokio::test]
async fn a_full_disk_leaves_the_file_whole_and_says_so() {
    let project = Project::new();
    let text = big_text();
    project.write("src/big.txt", &text);
    let before = entries(&project, "src");
    // RLIMIT_FSIZE makes every write past one block fail, as a full disk does (EFBIG
    // instead of ENOSPC); SIGXFSZ is ignored so that the write returns the error.
    let run = run_wrapped(
        &project,
        "trap '' XFSZ; ulimit -f 1",
        &["edit", "src/big.txt", "--old", "line 399 of", "--new", "LINE 399 of", "-m", "s"],
    )
    .await;
    assert_eq!(run.code, 17, "expected the io exit code: {run:?}");
    assert!(run.stderr.contains("io"), "{run:?}");
    assert_eq!(project.text("src/big.txt"), text, "the file must be untouched");
    assert_eq!(entries(&project, "src"), before, "no temporary file may be left behind");
}

#[tokio::test]
async fn permission_denied_leaves_the_file_whole_and_says_so() {
    let project = Project::new();
    project.write("src/a.txt", "alpha\n");
    let before = entries(&project, "src");
    let run = if is_root() {
        // Root ignores file modes: run the command as `nobody` against files root owns.
        for dir in [project.dir.path(), &project.path("src")] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // nobody gets runtime and state directories of its own.
        let own = tempfile::tempdir().unwrap();
        std::fs::set_permissions(own.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let (runtime, state) = (own.path().join("runtime"), own.path().join("state"));
        for dir in [&runtime, &state] {
            std::fs::create_dir(dir).unwrap();
            std::os::unix::fs::chown(dir, Some(65534), Some(65534)).unwrap();
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let mut command = tokio::process::Command::new("setpriv");
        command
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(binary())
            .args(["edit", "src/a.txt", "--old", "alpha", "--new", "beta", "-m", "s"])
            .current_dir(&project.cli.cwd)
            .env("VERBATIM_RUNTIME_DIR", &runtime)
            .env("VERBATIM_STATE_DIR", &state)
            .env("HOME", "/nonexistent");
        let output = command.output().await.unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    } else {
        std::fs::set_permissions(project.path("src"), std::fs::Permissions::from_mode(0o555)).unwrap();
        let run = project.cli.run(&["edit", "src/a.txt", "--old", "alpha", "--new", "beta", "-m", "s"]).await;
        std::fs::set_permissions(project.path("src"), std::fs::Permissions::from_mode(0o755)).unwrap();
        run
    };
    assert_eq!(run.code, 17, "expected the io exit code: {run:?}");
    assert!(run.stderr.to_lowercase().contains("permission denied"), "{run:?}");
    assert_eq!(project.text("src/a.txt"), "alpha\n");
    assert_eq!(entries(&project, "src"), before, "no temporary file may be left behind");
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
        .unwrap_or(false)
}

#[tokio::test]
async fn a_file_replaced_or_deleted_after_the_read_is_not_overwritten() {
    let project = Project::new();
    project.write("a.txt", "alpha\nbeta\n");
    let cli = &project.cli;
    let rev = cli.run(&["read", "a.txt", "--json"]).await.json()["rev"].as_str().unwrap().to_owned();
    // Replaced by someone else: the agent's rev is stale, and the new content stays.
    project.write("a.txt", "alpha\nbeta\ngamma (someone else)\n");
    let stale = cli.run(&["edit", "a.txt", "--old", "beta", "--new", "BETA", "--base-rev", &rev, "-m", "s"]).await;
    stale.expect_code(5);
    assert_eq!(project.text("a.txt"), "alpha\nbeta\ngamma (someone else)\n");
    // Deleted: the edit is refused and nothing is recreated.
    std::fs::remove_file(project.path("a.txt")).unwrap();
    let gone = cli.run(&["edit", "a.txt", "--old", "beta", "--new", "BETA", "--base-rev", &rev, "-m", "s"]).await;
    gone.expect_code(12);
    assert!(!project.path("a.txt").exists(), "a deleted file must not come back");
}
