//! `tools call` with rich results and questions, in-process through
//! `Launcher` over a plugin defined here: bytes written to files beside a
//! summary (`--out-dir`, else a new temporary folder), calls by short
//! name, `--json` with base64 and MIME types, the raw
//! profile and `tools show` with title, annotations and output schema,
//! and confirmations answered by `--yes` (a path that never prompts).

use crate::support;

use std::sync::{Arc, Mutex};

use oscova_cli::{ExitStatus, Launcher};
use oscova_core::prelude::*;
use oscova_core::{ToolResult, linked_plugins};

/// A row.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Row {
    /// Its id.
    pub id: u32,
}

/// Rich results.
pub struct GalleryToolset;

#[toolset]
impl GalleryToolset {
    /// A picture and a sound after the text.
    #[tool(title = "Show the gallery", read_only)]
    pub fn show() -> ToolResult {
        ToolResult::text("two pieces")
            .with_image(vec![0x89, b'P', b'N', b'G'], "image/png")
            .with_audio(b"RIFF....".to_vec(), "audio/wav")
    }

    /// Rows.
    pub fn rows() -> Vec<Row> {
        vec![Row { id: 1 }]
    }

    /// Asks before going on.
    pub async fn tidy(invocation: &ToolInvocation) -> Result<String, String> {
        let ok = invocation
            .confirm("Tidy up?")
            .await
            .map_err(|e| e.to_string())?;
        Ok(if ok { "tidied" } else { "left" }.to_owned())
    }
}

/// The gallery plugin.
#[plugin(id = "test.gallery")]
pub struct GalleryPlugin;

impl AgentPlugin for GalleryPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| GalleryToolset);
    }
}

/// Runs `args` in-process and returns the status and every result the
/// CLI printed, as the after-hook saw it.
fn run(args: &[&str]) -> (ExitStatus, Vec<ToolResult>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let status = Launcher::new()
        .plugins(linked_plugins![GalleryPlugin])
        .host_builder(move |b| {
            b.after_tool_call(move |event| sink.lock().unwrap().push(event.result.clone()))
        })
        .run_from(args.iter().copied());
    let seen = seen.lock().unwrap().clone();
    (status, seen)
}

#[test]
fn bytes_go_to_files_beside_the_summary() {
    let dir = support::temp_dir("results-blocks");
    let out = dir.to_str().unwrap();
    let (status, _) = run(&[
        "oscova",
        "tools",
        "call",
        "test_gallery__gallery__show",
        "--out-dir",
        out,
    ]);
    assert_eq!(status, ExitStatus::Success);
    assert_eq!(
        std::fs::read(dir.join("show-1.png")).unwrap(),
        [0x89, b'P', b'N', b'G']
    );
    assert_eq!(std::fs::read(dir.join("show-2.wav")).unwrap(), b"RIFF....");

    // A second call never overwrites the first one's files.
    let (status, _) = run(&[
        "oscova",
        "tools",
        "call",
        "test_gallery__gallery__show",
        "--out-dir",
        out,
    ]);
    assert_eq!(status, ExitStatus::Success);
    assert!(dir.join("show-1-1.png").is_file());
}

#[test]
fn bytes_go_to_a_new_temporary_folder_unless_told() {
    let files = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir)
            .map(|entries| entries.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let temp = std::env::temp_dir();
    let before = files(&temp);
    let here = std::env::current_dir().unwrap();
    let (status, _) = run(&["oscova", "tools", "call", "show"]);
    assert_eq!(status, ExitStatus::Success);
    // Nothing lands in the working directory unasked.
    assert!(!here.join("show-1.png").exists() && !here.join("show-2.wav").exists());
    // One new folder of this call's, with both files in it.
    let made: Vec<_> = files(&temp)
        .into_iter()
        .filter(|p| !before.contains(p) && p.join("show-1.png").is_file())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let name = made[0].file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("oscova-show-"), "{name}");
    assert_eq!(
        std::fs::read(made[0].join("show-2.wav")).unwrap(),
        b"RIFF...."
    );
    std::fs::remove_dir_all(&made[0]).unwrap();

    // `--out` is `--out-dir`.
    let dir = support::temp_dir("results-out");
    let (status, _) = run(&[
        "oscova",
        "tools",
        "call",
        "show",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(status, ExitStatus::Success);
    assert!(dir.join("show-1.png").is_file());
}

#[test]
fn call_and_show_take_a_unique_short_name() {
    let (status, seen) = run(&["oscova", "tools", "call", "rows"]);
    assert_eq!(status, ExitStatus::Success);
    assert_eq!(seen[0].details, json!([{"id": 1}]));
    let (status, _) = run(&["oscova", "tools", "call", "gallery__tidy", "--yes"]);
    assert_eq!(status, ExitStatus::Success);
    let (status, _) = run(&["oscova", "--json", "tools", "show", "rows"]);
    assert_eq!(status, ExitStatus::Success);
    // Not the end of a segment: unknown, a usage error, and nothing ran.
    let (status, seen) = run(&["oscova", "--json", "tools", "call", "ows"]);
    assert_eq!(status, ExitStatus::Usage);
    assert!(seen.is_empty());
}

#[test]
fn json_carries_base64_and_mime_types() {
    let (status, seen) = run(&[
        "oscova",
        "--json",
        "tools",
        "call",
        "test_gallery__gallery__show",
    ]);
    assert_eq!(status, ExitStatus::Success);
    let printed = serde_json::to_value(&seen[0]).unwrap();
    assert_eq!(
        printed["blocks"],
        json!([
            {"type": "image", "data": "iVBORw==", "mime_type": "image/png"},
            {"type": "audio", "data": "UklGRi4uLi4=", "mime_type": "audio/wav"}
        ])
    );
}

#[test]
fn yes_answers_a_tools_confirmation() {
    let (status, seen) = run(&[
        "oscova",
        "tools",
        "call",
        "test_gallery__gallery__tidy",
        "--yes",
    ]);
    assert_eq!(status, ExitStatus::Success);
    assert_eq!(seen[0].content, "tidied");
}

#[test]
fn the_raw_catalog_has_titles_annotations_and_output_schemas() {
    let catalog = oscova_cli::export_catalog(
        PluginHost::builder()
            .plugins(linked_plugins![GalleryPlugin])
            .build()
            .unwrap()
            .user_scope(UserInfo::new("u"))
            .tools(),
        oscova_agent::profile::SchemaProfile::Raw,
    );
    let show = &catalog.tools[0];
    assert_eq!(show["title"], "Show the gallery");
    assert_eq!(
        show["annotations"],
        json!({"read_only": true, "open_world": false})
    );
    assert!(show.get("output_schema").is_none());
    let rows = &catalog.tools[1];
    assert_eq!(rows["output_schema"]["type"], "array");
    assert!(rows.get("title").is_none());
}
