//! No lost update: 16 agents × 200 edits race on one document through the scripted
//! editor, with fresh and stale revisions, unique, ambiguous and vanished quotes.
//! The final text must equal the replay of exactly the edits reported applied, in
//! the order they were applied, and every refusal must be a specific one.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use common::{Random, ScriptedEditor, offset_of};
use serde_json::{Value, json};

const AGENTS: usize = 16;
const EDITS_PER_AGENT: usize = 200;
const LINES: usize = 40;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_agents_lose_no_update() {
    let editor = ScriptedEditor::start().await;
    let initial: String = (0..LINES).map(|line| format!("item {line}: 0 🙂\n")).collect();
    let uri = editor.open("shared.txt", &initial, &initial).await;
    let mut tasks = Vec::new();
    for index in 0..AGENTS {
        let agent = editor.agent(&format!("racer-{index}")).await;
        let uri = uri.clone();
        tasks.push(tokio::spawn(async move {
            let mut random = Random(0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1));
            let mut outcomes = Vec::new();
            let mut last_rev: Option<Value> = None;
            for step in 0..EDITS_PER_AGENT {
                // Half the time read first (a fresh rev); else reuse the last one (often stale).
                if last_rev.is_none() || random.below(2) == 0 {
                    last_rev = Some(agent.read(&uri).await["rev"].clone());
                }
                let line = random.below(LINES);
                let mut params = json!({"uri": uri, "summary": format!("racer {index} step {step}")});
                match random.below(6) {
                    // Ambiguous: every line has "item ".
                    0 => {
                        params["oldStr"] = json!("item ");
                        params["newStr"] = json!("ITEM ");
                    }
                    // Possibly vanished: quotes a value that may have changed.
                    1 => {
                        params["oldStr"] = json!(format!("item {line}: 0 "));
                        params["newStr"] = json!(format!("item {line}: {index}.{step} "));
                    }
                    // Unique and still there: the line's prefix.
                    _ => {
                        params["oldStr"] = json!(format!("item {line}: "));
                        params["newStr"] = json!(format!("item {line}: {index}.{step}+"));
                    }
                }
                if random.below(3) != 0 {
                    params["baseRev"] = last_rev.clone().unwrap();
                }
                outcomes.push(agent.call("verbatim/strReplace", params).await);
            }
            outcomes
        }));
    }
    let mut applied: BTreeMap<u64, Value> = BTreeMap::new();
    let mut refusals: BTreeMap<String, usize> = BTreeMap::new();
    for task in tasks {
        for outcome in task.await.unwrap() {
            match outcome {
                Ok(result) => {
                    let version: u64 = result["rev"].as_str().unwrap().rsplit('.').next().unwrap().parse().unwrap();
                    assert!(applied.insert(version, result).is_none(), "two edits claim the same revision");
                }
                Err(error) => *refusals.entry(error.kind().to_owned()).or_default() += 1,
            }
        }
    }
    for kind in refusals.keys() {
        assert!(["stale", "ambiguous", "notFound"].contains(&kind.as_str()), "a vague refusal: {kind} ({refusals:?})");
    }
    assert_eq!(applied.len() + refusals.values().sum::<usize>(), AGENTS * EDITS_PER_AGENT);
    assert!(applied.len() > 100, "too few edits applied to mean anything: {}", applied.len());

    // Replay the applied edits in revision order; each must start from the previous one's result.
    let mut replay = initial.clone();
    let mut previous_rev = json!("e1.1");
    for result in applied.values() {
        assert_eq!(result["baseRev"], previous_rev, "an edit was planned against a revision that was not current");
        for edit in result["edits"].as_array().unwrap().iter().rev() {
            let range = &edit["range"];
            let start = offset_of(
                &replay,
                range["start"]["line"].as_u64().unwrap(),
                range["start"]["character"].as_u64().unwrap(),
                "utf-16",
            );
            let end = offset_of(
                &replay,
                range["end"]["line"].as_u64().unwrap(),
                range["end"]["character"].as_u64().unwrap(),
                "utf-16",
            );
            assert_eq!(&replay[start..end], edit["oldText"].as_str().unwrap());
            replay.replace_range(start..end, edit["newText"].as_str().unwrap());
        }
        previous_rev = result["rev"].clone();
    }
    let reader = editor.agent("reader").await;
    let server_text = reader.read(&uri).await;
    assert_eq!(server_text["rev"], previous_rev);
    assert_eq!(server_text["text"].as_str().unwrap(), replay);
    assert_eq!(editor.buffer(&uri), replay);
    eprintln!("stress: {} applied, refusals {refusals:?}", applied.len());
}
