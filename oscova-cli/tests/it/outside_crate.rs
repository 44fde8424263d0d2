//! A plugin crate made the way `docs/plugin-guide.md` says, outside the
//! repository: its manifest, `src/lib.rs`, kit test and serving binary are
//! the guide's own blocks (those after an `<!-- outside-crate: KIND -->`
//! marker), so a change to the guide that no longer builds fails here.
//!
//! The crate lives in a folder of this checkout's under the system's
//! temporary directory (the same on every run, so what cargo built for it
//! is reused), beside a link named `oscova` to this checkout, so the guide's
//! path lines (`../oscova/oscova-core`) are used as written. It gets the
//! workspace's `Cargo.lock` (cargo keeps the versions it names, so nothing
//! is fetched: `--offline`) and builds into `target/outside-crate`, shared
//! between runs. The test then runs the crate's kit test (`cargo test`),
//! runs the binary (`--version`, a tool call, an unknown tool's message),
//! and serves the plugin over MCP stdio to the official MCP Python SDK
//! (`scripts/ensure-python-mcp.sh`), checking the server's name and
//! version, the tools and two calls. The guide's git lines are resolved
//! too (`cargo metadata`, no build), with a `file://` URL of this checkout
//! in place of the repository's.
//!
//! pkg-config finds no library for the build, so the serving binary (over
//! `oscova-cli` without its default features) is shown to build without
//! the speech system libraries.
//!
//! Each step's time is printed (`--nocapture` shows it): the cost this test
//! adds, and what an author waits for.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

const GUIDE: &str = include_str!("../../../docs/plugin-guide.md");

/// The workspace root (the checkout the crate depends on).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("oscova-cli is in the workspace")
        .to_path_buf()
}

/// The fenced blocks that follow `<!-- outside-crate: KIND -->`.
fn marked(kind: &str) -> Vec<String> {
    let marker = format!("<!-- outside-crate: {kind} -->");
    let mut out = Vec::new();
    let mut lines = GUIDE.lines();
    while let Some(line) = lines.next() {
        if line.trim() != marker {
            continue;
        }
        let fence = lines.next().unwrap_or_default();
        assert!(
            fence.starts_with("```"),
            "`{marker}` is not followed by a code block"
        );
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        out.push(body.join("\n") + "\n");
    }
    assert!(!out.is_empty(), "the guide has no `{marker}` block");
    out
}

/// A Rust block as an author copies it: without rustdoc's hidden lines.
fn visible(block: &str) -> String {
    block
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t == "#" || t.starts_with("# "))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Manifest blocks merged table by table, as an author pastes them into one
/// `Cargo.toml` (each `[table]` once, `[[array]]` tables kept apart).
fn manifest(blocks: &[String]) -> String {
    let mut tables: Vec<(String, String)> = Vec::new();
    for block in blocks {
        let mut current: Option<usize> = None;
        for line in block.lines() {
            let header = line.trim();
            if header.starts_with('[') {
                let existing = (!header.starts_with("[["))
                    .then(|| tables.iter().position(|(h, _)| h == header))
                    .flatten();
                current = Some(existing.unwrap_or_else(|| {
                    tables.push((header.to_owned(), String::new()));
                    tables.len() - 1
                }));
            } else if let Some(i) = current {
                tables[i].1.push_str(line);
                tables[i].1.push('\n');
            }
        }
    }
    let mut out = String::from(
        "[package]\nname = \"acme-weather\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n",
    );
    for (header, body) in tables {
        out.push_str(&format!("{header}\n{}\n", body.trim_end()));
        out.push_str("\n\n");
    }
    out
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// `cargo` for the outside crate: none of the outer cargo's variables for
/// this package, the shared target directory, the workspace's dev profile,
/// and a pkg-config that finds no library, so a dependency that links a
/// system library (libpocketsphinx) fails the build: the guide's serving
/// binary must build on a machine without the speech libraries.
fn cargo(dir: &Path, args: &[&str]) -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    for (name, _) in std::env::vars_os() {
        let name_bytes = name.as_encoded_bytes();
        if name_bytes.starts_with(b"CARGO_") && name_bytes != b"CARGO_HOME" {
            cmd.env_remove(&name);
        }
    }
    cmd.current_dir(dir)
        .args(args)
        .args([
            "--config",
            "profile.dev.debug=\"line-tables-only\"",
            "--config",
            "profile.dev.package.\"*\".debug=false",
        ])
        .env(
            "CARGO_TARGET_DIR",
            root().join("target").join("outside-crate"),
        )
        .env("PKG_CONFIG_LIBDIR", dir.join("no-system-libraries"))
        .env_remove("PKG_CONFIG_PATH");
    cmd
}

/// Runs `cmd`, failing with its output unless it succeeds; prints the time.
fn step(what: &str, cmd: &mut Command) -> String {
    let started = Instant::now();
    let output = cmd.output().unwrap();
    eprintln!("outside crate: {what}: {:.1?}", started.elapsed());
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The MCP Python SDK's stdio client against the binary: what it saw.
const CLIENT: &str = r#"
import asyncio, json, os, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)

async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["mcp", "--user", "alice"], env=dict(os.environ))
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = dump(await session.initialize())
            tools = dump(await session.list_tools())
            forecast = dump(await session.call_tool(
                "acme_weather__weather__forecast", {"city": "Berlin", "units": "imperial"}))
            empty = dump(await session.call_tool("acme_weather__weather__forecast", {"city": " "}))
            zone = dump(await session.call_tool("acme_weather__zone__zone", {}))
    print(json.dumps({
        "server": init["serverInfo"],
        "tools": sorted(t["name"] for t in tools["tools"]),
        "forecast": forecast.get("structuredContent"),
        "empty": [empty.get("isError"), [c.get("text") for c in empty["content"]]],
        "zone": [c.get("text") for c in zone["content"]],
    }))

asyncio.run(main())
"#;

#[test]
fn a_crate_made_from_the_guide_builds_tests_and_serves_over_mcp() {
    let _cores = oscova_test_support::cores::cores_blocking();
    // One folder per checkout, the same on every run: cargo keys what it
    // built by the path of each crate, so a new path would rebuild every
    // oscova crate each time.
    let checkout = {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        root().hash(&mut hasher);
        hasher.finish()
    };
    let base = std::env::temp_dir().join(format!("oscova-outside-crate-{checkout:016x}"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    assert!(
        !base.starts_with(root()),
        "the crate must be outside the repository"
    );
    std::os::unix::fs::symlink(root(), base.join("oscova")).unwrap();

    // The crate, from the guide's blocks.
    let dir = base.join("acme-weather");
    let mut blocks = marked("manifest");
    blocks.extend(marked("serve-manifest"));
    write(&dir.join("Cargo.toml"), &manifest(&blocks));
    let lib: Vec<String> = marked("lib").iter().map(|b| visible(b)).collect();
    write(&dir.join("src/lib.rs"), &lib.join("\n"));
    write(&dir.join("src/main.rs"), &visible(&marked("main")[0]));
    write(&dir.join("tests/weather.rs"), &visible(&marked("test")[0]));
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();

    // Its kit test, with the binary built alongside.
    let tested = step(
        "cargo test --features serve (build and kit test)",
        &mut cargo(&dir, &["test", "--offline", "--features", "serve"]),
    );
    assert!(tested.contains("forecasts_and_zones ... ok"), "{tested}");
    let bin = root().join("target/outside-crate/debug/acme-weather");

    // The binary under its own name.
    let (code, stdout, _) = support::run(Command::new(&bin).arg("--version"));
    assert_eq!((code, stdout.trim()), (0, "acme-weather 0.1.0"));
    let mut call = Command::new(&bin);
    call.args([
        "--json",
        "tools",
        "call",
        "forecast",
        "--args",
        r#"{"city": "Berlin"}"#,
    ]);
    support::clean_env(&mut call);
    let (code, stdout, stderr) = support::run(&mut call);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["details"]["high"], 21.0, "{result}");
    let mut unknown = Command::new(&bin);
    unknown.args(["tools", "call", "nosuch"]);
    support::clean_env(&mut unknown);
    let (code, _, stderr) = support::run(&mut unknown);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("acme-weather: error: unknown tool `nosuch`; `acme-weather tools list`"),
        "{stderr}"
    );

    // Served over MCP stdio to the Python SDK.
    let python = oscova_test_support::python::mcp_python();
    let mut client = Command::new(python);
    client
        .args(["-c", CLIENT])
        .arg(&bin)
        .env("OSCOVA_TIME_ZONE", "Europe/Berlin");
    support::clean_env(&mut client);
    let seen: Value =
        serde_json::from_str(&step("MCP Python SDK over stdio", &mut client)).unwrap();
    assert_eq!(seen["server"]["name"], "acme-weather", "{seen}");
    assert_eq!(seen["server"]["version"], "0.1.0", "{seen}");
    assert_eq!(
        seen["tools"],
        serde_json::json!([
            "acme_weather__weather__forecast",
            "acme_weather__zone__zone"
        ])
    );
    assert_eq!(seen["forecast"]["high"], 69.8, "{seen}");
    assert_eq!(seen["empty"][0], true, "{seen}");
    assert!(
        seen["empty"][1][0]
            .as_str()
            .unwrap_or("")
            .contains("`city` is empty"),
        "{seen}"
    );
    assert_eq!(seen["zone"][0], "Europe/Berlin", "{seen}");

    // The git lines resolve against this checkout, by a `file://` URL.
    let git = base.join("acme-weather-git");
    let url = format!("file://{}", root().display());
    let lines: Vec<String> = marked("git")
        .iter()
        .map(|b| b.replace("URL-OF-THE-OSCOVA-REPOSITORY", &url))
        .collect();
    assert!(
        lines.iter().all(|b| b.contains(&url)),
        "the git lines name no URL to replace"
    );
    write(&git.join("Cargo.toml"), &manifest(&lines));
    write(&git.join("src/lib.rs"), "");
    std::fs::copy(root().join("Cargo.lock"), git.join("Cargo.lock")).unwrap();
    let metadata = step(
        "cargo metadata (git lines)",
        &mut cargo(&git, &["metadata", "--format-version", "1"]),
    );
    let metadata: Value = serde_json::from_str(&metadata).unwrap();
    let from_git: Vec<&str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["source"]
                .as_str()
                .is_some_and(|s| s.starts_with("git+file://"))
        })
        .filter_map(|p| p["name"].as_str())
        .collect();
    for name in ["oscova-core", "oscova-macros", "oscova-test-kit"] {
        assert!(
            from_git.contains(&name),
            "{name} not resolved from git: {from_git:?}"
        );
    }

    let _ = std::fs::remove_dir_all(&base);
}
