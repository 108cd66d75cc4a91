//! End to end: the `verbatim` command line with no editor running (headless mode):
//! every error kind that can happen on disk with its exit code, git commits, the
//! journal, and writers racing on one file.
#![allow(clippy::unwrap_used)]

mod cli_support;

use cli_support::{Project, Run, git};
use serde_json::{Value, json};

const MAIN: &str = "fn main() {\n    let x = 1;\n    run(x);\n}\n\nfn other() {\n    let x = 1;\n}\n";

#[tokio::test]
async fn read_and_edit_work_on_disk_without_an_editor() {
    let project = Project::new();
    project.write("src/main.rs", MAIN);
    let cli = &project.cli;
    let read = cli.run(&["read", "src/main.rs"]).await;
    read.expect_code(0);
    assert_eq!(read.stdout, MAIN);
    assert!(read.stderr.contains("src/main.rs · rev d"), "{read:?}");
    assert!(read.stderr.contains("no editor serves it"), "{read:?}");
    let read = cli.run(&["read", "src/main.rs", "--json"]).await.json();
    assert_eq!((read["source"].as_str(), read["via"].as_str()), (Some("headless"), Some("headless")));
    let rev = read["rev"].as_str().unwrap().to_owned();

    let edit = cli
        .run(&["edit", "src/main.rs", "--old", "run(x);", "--new", "run(x + 1);", "--base-rev", &rev, "-m", "Offset"])
        .await;
    edit.expect_code(0);
    assert!(edit.stdout.starts_with(&format!("src/main.rs: applied on disk (rev {rev} → d")), "{edit:?}");
    assert_eq!(project.text("src/main.rs"), MAIN.replace("run(x);", "run(x + 1);"));
    // The old rev is now stale.
    let stale =
        cli.run(&["edit", "src/main.rs", "--old", "fn other", "--new", "fn x", "--base-rev", &rev, "-m", "s"]).await;
    stale.expect_code(5);
    assert!(stale.stderr.contains("current rev: d"), "{stale:?}");

    let preview = cli
        .run(&[
            "edit",
            "src/main.rs",
            "--old",
            "fn other",
            "--new",
            "fn another",
            "--dry-run",
            "-m",
            "Rename",
            "--json",
        ])
        .await;
    preview.expect_code(0);
    assert_eq!((preview.json()["applied"].as_bool(), preview.json()["dryRun"].as_bool()), (Some(false), Some(true)));
    assert!(project.text("src/main.rs").contains("fn other"));

    let created = cli.run_with_stdin(&["write", "docs/new.md", "-m", "Add notes"], b"# Notes\n").await;
    created.expect_code(0);
    assert_eq!(project.text("docs/new.md"), "# Notes\n");
    let read = cli.run(&["read", "docs/new.md", "--json"]).await.json();
    let rev = read["rev"].as_str().unwrap().to_owned();
    cli.run_with_stdin(&["write", "docs/new.md", "--base-rev", &rev, "-m", "More notes"], b"# Notes\n\nMore.\n")
        .await
        .expect_code(0);
    assert_eq!(project.text("docs/new.md"), "# Notes\n\nMore.\n");
    assert_eq!(cli.run(&["documents", "--json"]).await.json(), json!([]));
}

#[tokio::test]
async fn every_error_kind_of_the_disk_path_has_its_exit_code() {
    let project = Project::new();
    project.write("main.rs", MAIN);
    project.write("blob.bin", b"\x00\x01binary");
    project.write(".env", "SECRET=1\n");
    project.write(".git/config", "[core]\n");
    let other_root = tempfile::tempdir().unwrap();
    let other_root = other_root.path().display().to_string();
    let cli = &project.cli;
    let overlapping = json!({"summary": "s", "edits": [
        {"uri": "main.rs", "oldStr": "fn main() {", "newStr": "fn main() -> () {"},
        {"uri": "main.rs", "oldStr": "main()", "newStr": "start()"},
    ]})
    .to_string();
    let cases: Vec<(Vec<&str>, &str, i32, &str)> = vec![
        (vec!["edit", "main.rs", "--old", "nowhere", "--new", "x", "-m", "s"], "", 3, "notFound"),
        (vec!["edit", "main.rs", "--old", "let x = 1;", "--new", "x", "-m", "s"], "", 4, "ambiguous"),
        (
            vec!["edit", "main.rs", "--old", "fn other", "--new", "x", "--base-rev", "d0000000000000000", "-m", "s"],
            "",
            5,
            "stale",
        ),
        (vec!["edit", "main.rs", "--old", "", "--new", "x", "-m", "s"], "", 6, "emptyQuote"),
        (vec!["edit", "main.rs", "--old", "fn main", "--new", "fn main", "-m", "s"], "", 7, "noChange"),
        (
            vec!["replace-range", "main.rs", "--from", "run(x)", "--to", "fn main", "--new", "", "-m", "s"],
            "",
            8,
            "rangeOrder",
        ),
        (vec!["batch"], &overlapping, 9, "overlap"),
        (
            vec!["edit", "main.rs", "--old", "a", "--new", "b", "-m", "s", "--socket", "/nonexistent/verbatim.sock"],
            "",
            11,
            "editorUnavailable",
        ),
        (vec!["edit", "missing.rs", "--old", "a", "--new", "b", "-m", "s"], "", 12, "unknownDocument"),
        (
            vec!["edit", "main.rs", "--old", "fn other", "--new", "fn x", "-m", "s", "--root", &other_root],
            "",
            13,
            "outsideWorkspace",
        ),
        (vec!["write", "main.rs", "-m", "s"], "fn main() {}\n", 14, "invalidParams"),
        (vec!["edit", "main.rs", "--old", "fn other", "--new", "fn x", "-m", " "], "", 14, "invalidParams"),
        (
            vec!["edit", "main.rs", "--old", "fn other", "--new", "fn x", "--base-rev", "17", "-m", "s"],
            "",
            14,
            "invalidParams",
        ),
        (vec!["read", "blob.bin"], "", 16, "notText"),
        (vec!["edit", "blob.bin", "--old", "binary", "--new", "text", "-m", "s"], "", 16, "notText"),
        (vec!["read", "main.rs/inside-a-file"], "", 17, "io"),
        (vec!["read", ".env"], "", 19, "permissionDenied"),
        (vec!["edit", ".git/config", "--old", "a", "--new", "b", "-m", "s"], "", 19, "permissionDenied"),
    ];
    cli.assert_errors(&cases).await;
    assert_eq!(project.text("main.rs"), MAIN, "a refused edit changed the file");
    assert_eq!(project.read("blob.bin"), b"\x00\x01binary");
    // Wrong arguments are usage errors, before anything is read.
    let usage = cli.run(&["edit", "main.rs", "--old", "fn other", "--new", "x"]).await;
    usage.expect_code(2);
    assert!(usage.stderr.contains("--summary"), "{usage:?}");
    let both = cli.run(&["edit", "main.rs", "--old", "a", "--old-file", "f", "--new", "x", "-m", "s"]).await;
    both.expect_code(2);
    // Refused writes are not journaled: they never reached the disk.
    assert!(cli.journal().is_empty());
}

#[tokio::test]
async fn help_lists_the_exit_codes() {
    let project = Project::new();
    let help = project.cli.run(&["edit", "--help"]).await;
    help.expect_code(0);
    assert!(help.stdout.contains("Exit codes:"), "{help:?}");
    assert!(help.stdout.contains(" 4  ambiguous (a quote matches twice)"), "{help:?}");
    assert!(help.stdout.contains("--old-file <FILE>"), "{help:?}");
}

#[tokio::test]
async fn git_commit_makes_one_commit_per_write_and_the_journal_keeps_it() {
    let project = Project::new();
    let dir = project.dir.path();
    git(dir, &["init", "--quiet"]);
    project.write("main.rs", MAIN);
    project.write("staged-elsewhere.txt", "staged\n");
    git(dir, &["add", "main.rs"]);
    git(dir, &["commit", "--quiet", "-m", "start"]);
    git(dir, &["add", "staged-elsewhere.txt"]);

    let cli = &project.cli;
    let run = cli
        .run(&[
            "edit",
            "main.rs",
            "--old",
            "fn other",
            "--new",
            "fn another",
            "-m",
            "Rename other",
            "--git-commit",
            "--agent",
            "ci-bot",
        ])
        .await;
    run.expect_code(0);
    assert!(run.stderr.contains("committed to git: "), "{run:?}");
    assert_eq!(git(dir, &["log", "-1", "--format=%s"]), "Rename other");
    assert_eq!(
        git(dir, &["show", "--name-only", "--format=", "HEAD"]),
        "main.rs",
        "only the written file is committed"
    );
    assert_eq!(
        git(dir, &["diff", "--cached", "--name-only"]),
        "staged-elsewhere.txt",
        "what else was staged stays staged"
    );
    let head = git(dir, &["rev-parse", "HEAD"]);

    let created = cli
        .run_with_stdin(&["write", "src/new.rs", "-m", "Add new", "--git-commit", "--json"], b"pub fn new() {}\n")
        .await;
    created.expect_code(0);
    assert_eq!(created.json()["commit"], git(dir, &["rev-parse", "HEAD"]));
    assert_eq!(git(dir, &["log", "-1", "--format=%s"]), "Add new");

    // A GIT_DIR inherited from a hook or `git rebase --exec` must not send the commit elsewhere.
    let decoy = tempfile::tempdir().unwrap();
    git(decoy.path(), &["init", "--quiet"]);
    let output = cli
        .command()
        .args(["edit", "main.rs", "--old", "fn another", "--new", "fn other", "-m", "Rename back", "--git-commit"])
        .env("GIT_DIR", decoy.path().join(".git"))
        .env("GIT_WORK_TREE", decoy.path())
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(git(dir, &["log", "-1", "--format=%s"]), "Rename back");
    assert!(git(decoy.path(), &["status", "--porcelain"]).is_empty(), "the decoy repository was touched");
    assert_eq!(git(decoy.path(), &["rev-list", "--all"]), "");

    let journal = cli.journal();
    assert_eq!(journal.len(), 3);
    assert_eq!((journal[0]["source"].as_str(), journal[0]["agent"].as_str()), (Some("headless"), Some("ci-bot")));
    assert_eq!(journal[0]["commit"], head);
    assert_eq!(journal[0]["workspace"], dir.display().to_string());

    // Outside a work tree, --git-commit refuses before writing anything.
    let plain = Project::new();
    plain.write("a.txt", "a\n");
    let refused = plain.cli.run(&["edit", "a.txt", "--old", "a", "--new", "b", "-m", "s", "--git-commit"]).await;
    refused.expect_code(14);
    assert_eq!(plain.text("a.txt"), "a\n");
}

#[tokio::test]
async fn the_log_shows_the_workspace_journal_newest_first_with_filters() {
    let project = Project::new();
    project.write("a.txt", "one\n");
    project.write("b.txt", "two\n");
    let cli = &project.cli;
    cli.run(&["edit", "a.txt", "--old", "one", "--new", "ONE", "-m", "First", "--agent", "alice"]).await.expect_code(0);
    cli.run(&["edit", "b.txt", "--old", "two", "--new", "TWO", "-m", "Second", "--agent", "bob"]).await.expect_code(0);
    cli.run(&["edit", "a.txt", "--old", "ONE", "--new", "One", "-m", "Third", "--agent", "alice"]).await.expect_code(0);

    let log = cli.run(&["log"]).await;
    log.expect_code(0);
    // Each run is a session of its own: a header line, then its entries, indented.
    let entries =
        |text: &str| -> Vec<String> { text.lines().filter(|line| line.starts_with("  ")).map(str::to_owned).collect() };
    let summaries: Vec<String> =
        entries(&log.stdout).iter().map(|line| line.rsplit('"').nth(1).unwrap().to_owned()).collect();
    assert_eq!(summaries, ["Third", "Second", "First"]);
    assert_eq!(log.stdout.lines().filter(|line| line.starts_with("session ")).count(), 3, "{log:?}");
    let limited = cli.run(&["log", "--limit", "1", "--json"]).await;
    let json: Vec<Value> = limited.stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(json.len(), 1);
    assert_eq!(json[0]["summary"], "Third");
    assert_eq!(json[0]["outcome"], "applied");
    for field in ["id", "session", "turn"] {
        assert!(json[0][field].is_string(), "--json gives each entry's {field}: {}", json[0]);
    }
    let by_path = cli.run(&["log", "--path", "a.txt"]).await;
    assert_eq!(entries(&by_path.stdout).len(), 2, "{by_path:?}");
    let by_agent = cli.run(&["log", "--agent", "bob", "--diff"]).await;
    assert!(by_agent.stdout.contains("\"Second\"\n--- a/b.txt\n+++ b/b.txt\n"), "{by_agent:?}");
    // From a subdirectory, the workspace's journal is still found.
    std::fs::create_dir(project.path("sub")).unwrap();
    let mut sub = project.cli.clone();
    sub.cwd = project.path("sub");
    assert_eq!(entries(&sub.run(&["log"]).await.stdout).len(), 3);
    // Elsewhere there is none, and --all shows every workspace.
    let elsewhere = tempfile::tempdir().unwrap();
    let mut away = project.cli.clone();
    away.cwd = elsewhere.path().to_owned();
    let none = away.run(&["log"]).await;
    none.expect_code(0);
    assert!(none.stderr.starts_with("No journal for"), "{none:?}");
    assert_eq!(entries(&away.run(&["log", "--all"]).await.stdout).len(), 3);
}

/// Two processes each make `edits` edits, one after another, to their own lines of one file.
async fn race(project: &Project, edits: usize) -> Vec<Run> {
    let mut tasks = Vec::new();
    for writer in 0..2 {
        let cli = project.cli.clone();
        tasks.push(tokio::spawn(async move {
            let mut runs = Vec::new();
            for i in (writer..edits * 2).step_by(2) {
                let old = format!("line {i}\n");
                let new = format!("LINE {i}\n");
                runs.push(
                    cli.run(&[
                        "edit",
                        "race.txt",
                        "--old",
                        &old,
                        "--new",
                        &new,
                        "-m",
                        "upper",
                        "--agent",
                        &format!("writer-{writer}"),
                    ])
                    .await,
                );
            }
            runs
        }));
    }
    let mut runs = Vec::new();
    for task in tasks {
        runs.extend(task.await.unwrap());
    }
    runs
}

#[tokio::test]
async fn two_headless_writers_racing_on_one_file_lose_no_update() {
    let project = Project::new();
    let edits = 12;
    let text: String = (0..edits * 2).map(|i| format!("line {i}\n")).collect();
    project.write("race.txt", &text);
    let runs = race(&project, edits).await;
    for run in &runs {
        run.expect_code(0);
    }
    let expected: String = (0..edits * 2).map(|i| format!("LINE {i}\n")).collect();
    assert_eq!(project.text("race.txt"), expected);
    let leftovers: Vec<_> =
        std::fs::read_dir(project.dir.path()).unwrap().flatten().map(|entry| entry.file_name()).collect();
    assert_eq!(leftovers.len(), 1, "temporary files were left: {leftovers:?}");
    assert_eq!(project.cli.journal().len(), edits * 2);
}

#[tokio::test]
async fn patches_racing_on_two_files_lose_no_update_and_leave_no_half_patch() {
    let project = Project::new();
    let lines = 8;
    let text: String = (0..lines).map(|i| format!("line {i}\n")).collect();
    project.write("a.txt", &text);
    project.write("b.txt", &text);
    // Each patch changes line i of both files: all of it applies, or none does.
    let mut tasks = Vec::new();
    for i in 0..lines {
        let cli = project.cli.clone();
        tasks.push(tokio::spawn(async move {
            let patch = format!(
                "*** Begin Patch\n*** Update File: a.txt\n@@\n-line {i}\n+LINE {i}\n\
                 *** Update File: b.txt\n@@\n-line {i}\n+LINE {i}\n*** End Patch\n"
            );
            cli.run_with_stdin(&["patch", "-m", "upper", "--agent", &format!("patcher-{i}")], patch.as_bytes()).await
        }));
    }
    for task in tasks {
        task.await.unwrap().expect_code(0);
    }
    let expected: String = (0..lines).map(|i| format!("LINE {i}\n")).collect();
    assert_eq!(project.text("a.txt"), expected);
    assert_eq!(project.text("b.txt"), expected);
    let leftovers: Vec<_> =
        std::fs::read_dir(project.dir.path()).unwrap().flatten().map(|entry| entry.file_name()).collect();
    assert_eq!(leftovers.len(), 2, "temporary files were left: {leftovers:?}");
}

#[tokio::test]
async fn racers_with_the_same_base_rev_are_refused_not_merged() {
    let project = Project::new();
    project.write("r.txt", "a\nb\n");
    let rev = project.cli.run(&["read", "r.txt", "--json"]).await.json()["rev"].as_str().unwrap().to_owned();
    let first = ["edit", "r.txt", "--old", "a\n", "--new", "A\n", "--base-rev", &rev, "-m", "s"];
    let second = ["edit", "r.txt", "--old", "b\n", "--new", "B\n", "--base-rev", &rev, "-m", "s"];
    let (one, two) = tokio::join!(project.cli.run(&first), project.cli.run(&second));
    let mut codes = [one.code, two.code];
    codes.sort_unstable();
    assert_eq!(codes, [0, 5], "{one:?} {two:?}");
    let text = project.text("r.txt");
    assert!(text == "A\nb\n" || text == "a\nB\n", "{text}");
}

#[tokio::test]
async fn a_patch_without_an_editor_adds_updates_moves_and_deletes_on_disk() {
    let project = Project::new();
    project.write("a.txt", "one\ntwo\nthree\n");
    project.write("old/name.txt", "keep\nme\n");
    project.write("gone.txt", "bye\n");
    let patch = "*** Begin Patch\n\
                 *** Add File: new/added.txt\n+fresh\n+file\n\
                 *** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n\
                 *** Update File: old/name.txt\n*** Move to: moved/name.txt\n@@\n keep\n-me\n+you\n\
                 *** Delete File: gone.txt\n\
                 *** End Patch\n";
    let preview =
        project.cli.run_with_stdin(&["patch", "-m", "All four", "--dry-run", "--json"], patch.as_bytes()).await;
    preview.expect_code(0);
    assert_eq!(preview.json()["applied"], false);
    assert_eq!(project.text("a.txt"), "one\ntwo\nthree\n", "a dry run writes nothing");

    let run = project.cli.run_with_stdin(&["patch", "-m", "All four", "--json"], patch.as_bytes()).await;
    run.expect_code(0);
    let result = run.json();
    assert_eq!((result["applied"].as_bool(), result["format"].as_str()), (Some(true), Some("applyPatch")));
    assert_eq!(project.text("new/added.txt"), "fresh\nfile\n");
    assert_eq!(project.text("a.txt"), "one\nTWO\nthree\n");
    assert_eq!(project.text("moved/name.txt"), "keep\nyou\n");
    assert!(!project.path("old/name.txt").exists());
    assert!(!project.path("gone.txt").exists());
    let operations: Vec<_> =
        result["documents"].as_array().unwrap().iter().map(|doc| doc["operation"].clone()).collect();
    assert_eq!(operations, vec![json!("create"), Value::Null, json!("move"), json!("delete")]);
    let journal = project.cli.journal();
    assert_eq!(journal.len(), 4, "{journal:?}");
    assert!(journal.iter().all(|entry| entry["source"] == "headless" && entry["outcome"] == "applied"));

    // SEARCH/REPLACE blocks too.
    let blocks = "a.txt\n<<<<<<< SEARCH\nTWO\n=======\n2\n>>>>>>> REPLACE\n";
    project.cli.run_with_stdin(&["patch", "-m", "Blocks"], blocks.as_bytes()).await.expect_code(0);
    assert_eq!(project.text("a.txt"), "one\n2\nthree\n");
}

#[tokio::test]
async fn a_patch_whose_third_hunk_fails_leaves_every_file_byte_identical() {
    let project = Project::new();
    let files = [("a.txt", "alpha\r\nbeta\r\n"), ("b.txt", "gamma\ndelta"), ("c.txt", "epsilon\n")];
    for (name, text) in files {
        project.write(name, text);
    }
    let patch = "*** Begin Patch\n\
                 *** Update File: a.txt\n@@\n-alpha\n+ALPHA\n\
                 *** Update File: b.txt\n@@\n-gamma\n+GAMMA\n\
                 *** Update File: c.txt\n@@\n-not there\n+x\n\
                 *** End Patch\n";
    let run = project.cli.run_with_stdin(&["patch", "-m", "Three"], patch.as_bytes()).await;
    run.expect_code(3);
    assert!(run.stderr.contains("c.txt"), "{run:?}");
    for (name, text) in files {
        assert_eq!(project.read(name), text.as_bytes(), "{name} changed");
    }
    assert!(project.cli.journal().is_empty(), "a refused plan is not journaled");
}

#[tokio::test]
async fn a_headless_patch_keeps_encodings_and_line_endings_and_honours_the_deny_list() {
    let project = Project::new();
    let utf16 = |text: &str| -> Vec<u8> {
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        bytes
    };
    project.write("wide.txt", utf16("héllo\r\nwörld\r\n"));
    project.write("crlf.txt", "one\r\ntwo\r\n");
    project.write("last.txt", "no final newline");
    let patch = "*** Begin Patch\n\
                 *** Update File: wide.txt\n@@\n-wörld\n+welt\n\
                 *** Update File: crlf.txt\n@@\n-two\n+TWO\n\
                 *** Update File: last.txt\n@@\n-no final newline\n+still no final newline\n\
                 *** End Patch\n";
    project.cli.run_with_stdin(&["patch", "-m", "Bytes"], patch.as_bytes()).await.expect_code(0);
    assert_eq!(project.read("wide.txt"), utf16("héllo\r\nwelt\r\n"));
    assert_eq!(project.read("crlf.txt"), b"one\r\nTWO\r\n");
    assert_eq!(project.read("last.txt"), b"still no final newline");

    project.write(".env", "SECRET=1\n");
    let denied = "*** Begin Patch\n*** Update File: .env\n@@\n-SECRET=1\n+SECRET=2\n*** End Patch\n";
    let run = project.cli.run_with_stdin(&["patch", "-m", "s"], denied.as_bytes()).await;
    run.expect_code(19);
    assert_eq!(project.text(".env"), "SECRET=1\n");
}

#[tokio::test]
async fn a_headless_patch_is_one_git_commit() {
    let project = Project::new();
    let dir = project.dir.path();
    git(dir, &["init", "--quiet"]);
    project.write("a.txt", "one\n");
    project.write("b.txt", "two\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "start"]);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** Delete File: b.txt\n*** Add File: c.txt\n+three\n*** End Patch\n";
    let run =
        project.cli.run_with_stdin(&["patch", "-m", "One commit", "--git-commit", "--json"], patch.as_bytes()).await;
    run.expect_code(0);
    assert_eq!(run.json()["commit"], git(dir, &["rev-parse", "HEAD"]));
    assert_eq!(git(dir, &["log", "-1", "--format=%s"]), "One commit");
    assert_eq!(git(dir, &["show", "--name-status", "--format=", "HEAD"]), "M\ta.txt\nD\tb.txt\nA\tc.txt");
}

#[tokio::test]
async fn a_quote_with_a_typo_prints_the_real_lines_so_the_next_call_needs_no_read() {
    let project = Project::new();
    project.write("t.py", "def f():\n    return compute(alpha, beta)\n");
    let cli = &project.cli;
    let typo =
        cli.run(&["edit", "t.py", "--old", "return compute(alpha, betta)", "--new", "return 0", "-m", "s"]).await;
    typo.expect_code(3);
    assert!(typo.stderr.contains("The closest text is t.py lines 2-2"), "{typo:?}");
    assert!(typo.stderr.contains("\n     2 |     return compute(alpha, beta)"), "{typo:?}");
    assert!(typo.stderr.contains("The closest text is t.py lines 2-2 (96% alike; it follows, with a diff"), "{typo:?}");
    assert!(typo.stderr.contains("-return compute(alpha, betta)\n+    return compute(alpha, beta)"), "{typo:?}");
    assert_eq!(project.text("t.py"), "def f():\n    return compute(alpha, beta)\n");

    // A patch with a typo in each of two files shows both closest texts.
    project.write("u.py", "def g():\n    return measure(gamma, delta)\n");
    let patch = "*** Begin Patch\n*** Update File: t.py\n@@\n-    return compute(alpha, betta)\n+    return 1\n\
                 *** Update File: u.py\n@@\n-    return measure(gama, delta)\n+    return 2\n*** End Patch\n";
    let run = cli.run_with_stdin(&["patch", "-m", "Two typos"], patch.as_bytes()).await;
    run.expect_code(3);
    assert!(run.stderr.contains("2 parts of the patch failed"), "{run:?}");
    assert!(run.stderr.contains("\n     2 |     return compute(alpha, beta)"), "{run:?}");
    assert!(run.stderr.contains("For patch line 7 (u.py):"), "{run:?}");
    assert!(run.stderr.contains("\n     2 |     return measure(gamma, delta)"), "{run:?}");
    assert!(!run.stderr.contains("data.closest"), "{run:?}");
    assert_eq!(project.text("u.py"), "def g():\n    return measure(gamma, delta)\n");
}

#[tokio::test]
async fn a_slip_in_a_batch_entry_or_a_search_block_shows_the_real_line_and_two_alike_regions_show_both() {
    let project = Project::new();
    let go = "package cobra\n\nfunc (c *Command) initCompleteCmd(args []string) {\n\tc.check()\n}\n\n\
              func (c *Command) initDefaultCompletionCmd() {\n\tc.check()\n}\n";
    project.write("command.go", go);
    let cli = &project.cli;
    // The second entry of a batch: one letter off the rarest word.
    let batch = json!({"summary": "s", "edits": [
        {"uri": "command.go", "oldStr": "package cobra", "newStr": "package cobra2"},
        {"uri": "command.go", "oldStr": "func (c *Command) initDexaultCompletionCmd() {", "newStr": "x"},
    ]})
    .to_string();
    let run = cli.run_with_stdin(&["batch"], batch.as_bytes()).await;
    run.expect_code(3);
    assert!(run.stderr.contains("The closest text is command.go lines 7-7"), "{run:?}");
    assert!(run.stderr.contains("\n     7 | func (c *Command) initDefaultCompletionCmd() {"), "{run:?}");
    assert!(!run.stderr.contains("initCompleteCmd(args"), "the less alike line is not shown: {run:?}");
    // A SEARCH block whose words are all common.
    let blocks = "command.go\n<<<<<<< SEARCH\n\tc.chek()\n}\n=======\n\tc.run()\n}\n>>>>>>> REPLACE\n";
    let run = cli.run_with_stdin(&["patch", "-m", "Blocks"], blocks.as_bytes()).await;
    run.expect_code(3);
    // Both `c.check()` blocks are as alike: both are shown, with the advice to narrow.
    assert!(
        run.stderr.contains("The closest text is command.go lines 4-5 (94% alike), and command.go lines 8-9"),
        "{run:?}"
    );
    assert!(run.stderr.contains("both follow, with diffs from your quote"), "{run:?}");
    assert!(run.stderr.contains("The closest text (line 4 on):\n     4 | \tc.check()"), "{run:?}");
    assert!(run.stderr.contains("Nearly as close (line 8 on):\n     8 | \tc.check()"), "{run:?}");
    let json = cli.run_with_stdin(&["patch", "-m", "Blocks", "--json"], blocks.as_bytes()).await;
    let error = json.json();
    assert_eq!(error["error"]["data"]["closest"]["startLine"], 4, "{json:?}");
    assert_eq!(error["error"]["data"]["alsoClose"][0]["startLine"], 8, "{json:?}");
    assert_eq!(project.text("command.go"), go);
}

/// Issue 34: a quote that lost its indentation, with new text written for the file,
/// the same with new text that lost it too, and new text that could be read both
/// ways: kept, moved, refused (nothing written, the real lines shown).
#[tokio::test]
async fn a_shifted_quote_keeps_or_moves_its_new_text_by_evidence_or_refuses() {
    let project = Project::new();
    let cli = &project.cli;
    let before = "def f():\n    x = 1\n    y = 2\n";
    let after = "def f():\n    x = 10\n    y = 2\n";
    for (new, note) in [
        ("    x = 10\n    y = 2", "(new text kept as written"),
        ("x = 10\ny = 2", "(new text re-indented by the quote's shift"),
    ] {
        project.write("a.py", before);
        let edit = cli.run(&["edit", "a.py", "--old", "x = 1\ny = 2", "--new", new, "-m", "t"]).await;
        edit.expect_code(0);
        assert!(edit.stdout.contains(note), "{edit:?}");
        assert_eq!(project.text("a.py"), after);
    }
    project.write("a.py", before);
    let refused = cli.run(&["edit", "a.py", "--old", "x = 1\ny = 2", "--new", "x = 1\n    y = 3", "-m", "t"]).await;
    refused.expect_code(4);
    assert!(refused.stderr.contains("    2 | ····x = 1\n    3 | ····y = 2"), "{refused:?}");
    assert_eq!(project.text("a.py"), before);
}

/// Issue 43's three reproductions, typed as a new user would: a quote one tab too
/// deep with its new text right is written as sent (the reading the note names);
/// a quote that fits two places once indentation is ignored is refused with both;
/// a tab-indented block quoted with spaces at one level is found and its new text
/// follows the quote's own mapping.
#[tokio::test]
async fn slipped_indentation_is_read_once_per_edit_and_never_guessed() {
    let project = Project::new();
    let cli = &project.cli;
    let go = "package p\n\nfunc a() {\n\tx()\n}\n\nfunc b() error {\n\ty := 1\n\tz := 2\n\treturn nil\n}\n";
    project.write("m.go", go);
    let old = "\t}\n\n\tfunc b() error {\n\t\ty := 1\n\t\tz := 2";
    let new = "}\n\nfunc b() error {\n\tif q {\n\t\treturn nil\n\t}\n\n\ty := 1\n\tz := 2";
    let edit = cli.run(&["edit", "m.go", "--headless", "-m", "t", "--old", old, "--new", new, "--json"]).await;
    edit.expect_code(0);
    assert_eq!(edit.json()["normalizations"], json!(["indentation", "newTextKept"]), "{edit:?}");
    assert_eq!(
        project.text("m.go"),
        "package p\n\nfunc a() {\n\tx()\n}\n\nfunc b() error {\n\tif q {\n\t\treturn nil\n\t}\n\n\ty := 1\n\tz := 2\n\treturn nil\n}\n"
    );

    let twice = "\tfoo(1)\n\tbar()\n    foo(1)\n    bar()\n";
    project.write("t.py", twice);
    let ambiguous = cli
        .run(&["edit", "t.py", "--headless", "-m", "t", "--old", "  foo(1)\n  bar()", "--new", "  foo(2)\n  bar()"])
        .await;
    ambiguous.expect_code(4);
    assert!(ambiguous.stderr.contains("lines 1, 3"), "{ambiguous:?}");
    assert_eq!(project.text("t.py"), twice);

    project.write("g.rs", "fn x() {\n\tlet a = 1;\n\tlet b = 2;\n}\n");
    let tabs = cli
        .run(&[
            "edit",
            "g.rs",
            "--headless",
            "-m",
            "t",
            "--old",
            "    let a = 1;\n    let b = 2;",
            "--new",
            "    let a = 10;\n    let b = 2;",
        ])
        .await;
    tabs.expect_code(0);
    assert_eq!(project.text("g.rs"), "fn x() {\n\tlet a = 10;\n\tlet b = 2;\n}\n");

    // The Go edit again as a SEARCH/REPLACE block through `verbatim patch`: SEARCH one
    // tab too deep, REPLACE right.
    project.write("m.go", go);
    let block = format!("m.go\n<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE\n");
    let patched = cli.run_with_stdin(&["patch", "--headless", "-m", "t"], block.as_bytes()).await;
    patched.expect_code(0);
    assert_eq!(
        project.text("m.go"),
        "package p\n\nfunc a() {\n\tx()\n}\n\nfunc b() error {\n\tif q {\n\t\treturn nil\n\t}\n\n\ty := 1\n\tz := 2\n\treturn nil\n}\n"
    );
}
