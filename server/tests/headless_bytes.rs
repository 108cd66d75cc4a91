//! Headless byte-exactness: a table of files in every encoding and line-ending style,
//! each edited through the real command line and compared byte for byte with the
//! file expected. Everything the edit does not touch must survive exactly; new text
//! adopts the line ending around it; nothing gains or loses a final newline.
#![allow(clippy::unwrap_used)]

mod cli_support;

use std::os::unix::fs::PermissionsExt;

use cli_support::Project;

fn utf16le(text: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xFE];
    out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    out
}

fn utf16be(text: &str) -> Vec<u8> {
    let mut out = vec![0xFE, 0xFF];
    out.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
    out
}

fn bom(text: &str) -> Vec<u8> {
    [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat()
}

/// One row: a file, a command, and the file expected after it.
struct Case {
    name: &'static str,
    before: Vec<u8>,
    edit: Edit,
    after: Vec<u8>,
}

enum Edit {
    /// `verbatim edit --old-file --new-file` (exact bytes, no shell in between).
    Replace { old: &'static str, new: &'static str, occurrence: Option<u32> },
    /// `verbatim replace-range`.
    Range { from: &'static str, to: &'static str, new: &'static str },
    /// `verbatim write` with the rev of a read.
    Write { text: &'static str },
}

async fn check(project: &Project, case: Case) {
    let file = format!("{}.txt", case.name);
    project.write(&file, &case.before);
    let quote = |name: &str, text: &str| {
        let path = project.write(&format!("quotes/{}-{name}", case.name), text);
        path.display().to_string()
    };
    let run = match case.edit {
        Edit::Replace { old, new, occurrence } => {
            let (old, new) = (quote("old", old), quote("new", new));
            let occurrence = occurrence.map(|n| n.to_string());
            let mut args = vec!["edit", &file, "--old-file", &old, "--new-file", &new, "-m", case.name];
            if let Some(occurrence) = &occurrence {
                args.extend(["--occurrence", occurrence.as_str()]);
            }
            project.cli.run(&args).await
        }
        Edit::Range { from, to, new } => {
            let (from, to, new) = (quote("from", from), quote("to", to), quote("new", new));
            project
                .cli
                .run(&[
                    "replace-range",
                    &file,
                    "--from-file",
                    &from,
                    "--to-file",
                    &to,
                    "--new-file",
                    &new,
                    "-m",
                    case.name,
                ])
                .await
        }
        Edit::Write { text } => {
            let rev = project.cli.run(&["read", &file, "--json"]).await.json()["rev"].as_str().unwrap().to_owned();
            project.cli.run_with_stdin(&["write", &file, "--base-rev", &rev, "-m", case.name], text.as_bytes()).await
        }
    };
    assert_eq!(run.code, 0, "{}: {run:#?}", case.name);
    let got = project.read(&file);
    assert!(
        got == case.after,
        "{}: expected {:?}\n     got {:?}",
        case.name,
        String::from_utf8_lossy(&case.after),
        String::from_utf8_lossy(&got)
    );
    // The rev reported is the rev of the bytes now on disk.
    let reread = project.cli.run(&["read", &file, "--json"]).await.json();
    assert!(run.stdout.contains(reread["rev"].as_str().unwrap()), "{}: {run:?}", case.name);
}

#[tokio::test]
async fn every_encoding_and_line_ending_survives_an_edit_byte_for_byte() {
    let long_line = "x".repeat(2 * 1024 * 1024);
    let long_before = format!("{long_line}MARK{long_line}\nshort\n");
    let long_after = format!("{long_line}SIGN{long_line}\nshort\n");
    let cases = vec![
        Case {
            name: "utf8-lf",
            before: b"a\nb\nc\n".to_vec(),
            edit: Edit::Replace { old: "b", new: "B", occurrence: None },
            after: b"a\nB\nc\n".to_vec(),
        },
        Case {
            name: "utf8-bom-crlf",
            before: bom("one\r\ntwo\r\n"),
            edit: Edit::Replace { old: "two", new: "2\nthree", occurrence: None },
            after: bom("one\r\n2\r\nthree\r\n"),
        },
        Case {
            name: "utf16le-crlf",
            before: utf16le("héllo\r\nwörld 😀\r\n"),
            edit: Edit::Replace { old: "wörld 😀", new: "welt 🎉\nzwei", occurrence: None },
            after: utf16le("héllo\r\nwelt 🎉\r\nzwei\r\n"),
        },
        Case {
            name: "utf16be-lf",
            before: utf16be("a😀b\nsecond\n"),
            edit: Edit::Replace { old: "😀", new: "🎉", occurrence: None },
            after: utf16be("a🎉b\nsecond\n"),
        },
        Case {
            name: "utf16le-no-final-newline",
            before: utf16le("first\r\nlast"),
            edit: Edit::Replace { old: "last", new: "last\nmore", occurrence: None },
            after: utf16le("first\r\nlast\r\nmore"),
        },
        Case {
            name: "crlf-quote-with-breaks",
            before: b"x\r\ny\r\nz\r\n".to_vec(),
            edit: Edit::Replace { old: "x\r\ny", new: "x\ny\nw", occurrence: None },
            after: b"x\r\ny\r\nw\r\nz\r\n".to_vec(),
        },
        Case {
            name: "mixed-lf-region",
            before: b"alpha\nbeta\ngamma\r\ndelta\r\n".to_vec(),
            edit: Edit::Replace { old: "beta", new: "beta\r\nbeta2", occurrence: None },
            after: b"alpha\nbeta\nbeta2\ngamma\r\ndelta\r\n".to_vec(),
        },
        Case {
            name: "mixed-crlf-region",
            before: b"alpha\nbeta\ngamma\r\ndelta\r\n".to_vec(),
            edit: Edit::Replace { old: "gamma", new: "gamma\ngamma2", occurrence: None },
            after: b"alpha\nbeta\ngamma\r\ngamma2\r\ndelta\r\n".to_vec(),
        },
        Case {
            name: "cr-only",
            before: b"a\rb\rc".to_vec(),
            edit: Edit::Replace { old: "b", new: "b\nb2", occurrence: None },
            after: b"a\rb\rb2\rc".to_vec(),
        },
        Case {
            name: "no-final-newline",
            before: b"first\nlast line".to_vec(),
            edit: Edit::Replace { old: "line", new: "row", occurrence: None },
            after: b"first\nlast row".to_vec(),
        },
        Case {
            name: "final-newline-kept",
            before: b"a\n\n\n".to_vec(),
            edit: Edit::Replace { old: "a", new: "b", occurrence: None },
            after: b"b\n\n\n".to_vec(),
        },
        Case {
            name: "occurrence-in-crlf",
            before: b"x = 1;\r\nx = 1;\r\n".to_vec(),
            edit: Edit::Replace { old: "x = 1;", new: "x = 2;", occurrence: Some(2) },
            after: b"x = 1;\r\nx = 2;\r\n".to_vec(),
        },
        Case {
            name: "very-long-lines",
            before: long_before.into_bytes(),
            edit: Edit::Replace { old: "MARK", new: "SIGN", occurrence: None },
            after: long_after.into_bytes(),
        },
        Case {
            name: "range-in-crlf",
            before: b"keep\r\nfn old() {\r\n  body\r\n}\r\nkeep too\r\n".to_vec(),
            edit: Edit::Range { from: "fn old", to: "}\r\n", new: "fn new() {\n  done\n}\n" },
            after: b"keep\r\nfn new() {\r\n  done\r\n}\r\nkeep too\r\n".to_vec(),
        },
        Case {
            name: "write-crlf-bom",
            before: bom("old\r\ntext\r\n"),
            edit: Edit::Write { text: "new\ntext\nhere\n" },
            after: bom("new\r\ntext\r\nhere\r\n"),
        },
        Case {
            name: "write-utf16be",
            before: utf16be("old\n"),
            edit: Edit::Write { text: "néw\n" },
            after: utf16be("néw\n"),
        },
    ];
    let project = Project::new();
    for case in cases {
        check(&project, case).await;
    }
}

#[tokio::test]
async fn an_edit_that_only_changes_line_endings_is_no_change() {
    let project = Project::new();
    project.write("crlf.txt", "a\r\nb\r\n");
    let run = project.cli.run(&["edit", "crlf.txt", "--old", "a\r\nb", "--new", "a\nb", "-m", "to LF"]).await;
    run.expect_code(7);
    assert_eq!(project.read("crlf.txt"), b"a\r\nb\r\n");
}

#[tokio::test]
async fn what_is_not_text_is_refused_and_left_alone() {
    let project = Project::new();
    let files: [(&str, Vec<u8>); 5] = [
        ("nul.bin", b"text\0more".to_vec()),
        ("latin1.txt", b"caf\xe9 text".to_vec()),
        ("odd-utf16.txt", b"\xFF\xFEt\x00e".to_vec()),
        ("surrogate.txt", b"\xFF\xFE\x3D\xD8t\x00".to_vec()),
        ("utf32.txt", b"\xFF\xFE\x00\x00t\x00\x00\x00".to_vec()),
    ];
    for (name, bytes) in &files {
        project.write(name, bytes);
        let run = project.cli.run(&["edit", name, "--old", "t", "--new", "T", "-m", "s"]).await;
        run.expect_code(16);
        assert!(run.stderr.contains("is not a text file"), "{run:?}");
        assert_eq!(&project.read(name), bytes, "{name} was touched");
    }
}

#[tokio::test]
async fn permissions_and_symlinks_are_kept() {
    let project = Project::new();
    let script = project.write("run.sh", "#!/bin/sh\necho old\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o754)).unwrap();
    project.cli.run(&["edit", "run.sh", "--old", "old", "--new", "new", "-m", "s"]).await.expect_code(0);
    assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777, 0o754);
    assert_eq!(project.text("run.sh"), "#!/bin/sh\necho new\n");

    project.write("real/target.txt", "through a link\n");
    std::os::unix::fs::symlink(project.path("real/target.txt"), project.path("link.txt")).unwrap();
    project.cli.run(&["edit", "link.txt", "--old", "link", "--new", "symlink", "-m", "s"]).await.expect_code(0);
    assert!(
        std::fs::symlink_metadata(project.path("link.txt")).unwrap().file_type().is_symlink(),
        "the link was replaced by a file"
    );
    assert_eq!(project.text("real/target.txt"), "through a symlink\n");
}
