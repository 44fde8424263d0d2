//! `oscova mcp` serves the config's `[prompts.NAME]` and the user's files
//! root, judged by the official MCP Python SDK client (pip package `mcp`,
//! installed by `scripts/ensure-python-mcp.sh`), which starts the real
//! binary as its stdio server: prompts listed, rendered, checked and
//! completed; files listed, read as text and blob, templated and
//! completed; a read out of the root refused; a subscribed file's change
//! reported; on the 2025 protocol (`initialize`, `resources/subscribe`)
//! and on 2026-07-28 (`server/discover`, `subscriptions/listen`).

use std::process::Command;

use serde_json::{Value, json};

use crate::support;

const CONFIG: &str = r#"
files_root = "files"

[prompts.review]
description = "Review a file"

[[prompts.review.arguments]]
name = "path"
description = "The file to review"
required = true

[[prompts.review.arguments]]
name = "tone"
choices = ["kind", "blunt", "brief"]

[[prompts.review.messages]]
text = "Review {path}; be {tone}."

[[prompts.review.messages]]
resource = "file:///{path}"
mime_type = "text/plain"
text = "The file {path}, embedded."

[[prompts.review.messages]]
role = "assistant"
text = "I will review {path}."
"#;

#[test]
fn the_python_sdk_gets_prompts_reads_files_completes_and_hears_of_changes() {
    let dir = support::temp_dir("mcp-offer");
    let config = dir.join("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let root = dir.join("files/alice");
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/todo.txt"), "milk\n").unwrap();
    std::fs::write(root.join("notes/tea.md"), "green").unwrap();
    std::fs::write(root.join("pixel.png"), [0x89, b'P', b'N', b'G']).unwrap();
    std::fs::write(dir.join("files/secret.txt"), "not alice's").unwrap();

    let python = oscova_test_support::python::mcp_python();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/mcp_offer_client.py"
    );
    let mut cmd = Command::new(&python);
    support::clean_env(&mut cmd);
    cmd.arg(script)
        .arg(root.join("notes/todo.txt"))
        .arg(support::BIN)
        .args(["mcp", "--user", "alice", "--config"])
        .arg(&config);
    let (code, stdout, stderr) = support::run(&mut cmd);
    assert_eq!(code, 0, "the Python client failed:\n{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    let r: Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("no report from the client ({e}):\n{stdout}\n{stderr}"));
    assert!(r.get("error").is_none(), "{r}\n{stderr}");

    assert!(r["capabilities"]["prompts"].is_object(), "{r}");
    assert!(r["capabilities"]["completions"].is_object(), "{r}");
    assert_eq!(r["capabilities"]["resources"]["subscribe"], true, "{r}");

    assert_eq!(r["prompts"][0]["name"], "review");
    assert_eq!(r["prompts"][0]["arguments"][0]["required"], true);
    let messages = &r["got"]["messages"];
    assert_eq!(
        messages[0]["content"]["text"],
        "Review notes/todo.txt; be blunt."
    );
    assert_eq!(
        messages[1]["content"]["resource"],
        json!({"uri": "file:///notes/todo.txt", "mimeType": "text/plain", "text": "The file notes/todo.txt, embedded."})
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(r["missing"]["code"], -32602, "{r}");
    assert!(
        r["missing"]["message"]
            .as_str()
            .unwrap()
            .contains("needs the argument `path`"),
        "{r}"
    );
    assert_eq!(r["not_a_choice"]["code"], -32602, "{r}");
    assert_eq!(r["tone_completion"], json!(["blunt", "brief"]));

    assert_eq!(
        r["resources"],
        json!([
            "file:///notes/tea.md",
            "file:///notes/todo.txt",
            "file:///pixel.png"
        ])
    );
    assert_eq!(r["text"]["text"], "milk\n");
    assert_eq!(r["blob"]["blob"], "iVBORw==");
    assert_eq!(r["blob"]["mimeType"], "image/png");
    assert_eq!(r["templates"], json!(["file:///{+path}"]));
    assert_eq!(
        r["path_completion"],
        json!(["notes/tea.md", "notes/todo.txt"])
    );
    assert_eq!(r["escape"]["code"], -32602, "{r}");
    assert!(
        !r["escape"]["message"]
            .as_str()
            .unwrap()
            .contains("not alice's"),
        "{r}"
    );
    assert_eq!(r["updated"], "file:///notes/todo.txt");

    let m = &r["modern"];
    assert!(m.get("error").is_none(), "{m}\n{stderr}");
    assert_eq!(m["protocol"], "2026-07-28", "{m}");
    assert!(m["capabilities"]["prompts"].is_object(), "{m}");
    assert_eq!(
        m["got"]["messages"][0]["content"]["text"],
        "Review notes/tea.md; be kind."
    );
    assert_eq!(m["missing"]["code"], -32602, "{m}");
    assert_eq!(m["text"]["text"], "green");
    assert_eq!(m["path_completion"], json!(["notes/tea.md"]));
    assert_eq!(m["escape"]["code"], -32602, "{m}");
    assert_eq!(m["updated"], "file:///notes/todo.txt", "{m}");
}
