//! `oscova mcp` serves the prompt forms of the session extensions the
//! binary links (`HelloExtension`'s `/hello` as the prompt `hello`),
//! judged by the official MCP Python SDK client (pip package `mcp`,
//! installed by `scripts/ensure-python-mcp.sh`): listed with its
//! argument, rendered with `name`, a missing or undeclared argument
//! invalid params naming it. Over stdio alone; over `--listen` beside a
//! config prompt of the same name, which keeps `hello` (the extension's
//! is `hello:2`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support;

const CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/python/mcp_ext_prompts_client.py"
);

fn report(cmd: &mut Command) -> Value {
    let (code, stdout, stderr) = support::run(cmd);
    assert_eq!(code, 0, "the Python client failed:\n{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    let r: Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("no report from the client ({e}):\n{stdout}\n{stderr}"));
    assert!(r.get("error").is_none(), "{r}\n{stderr}");
    r
}

/// Checks what the client saw of the extension's prompt `name`.
fn judge(r: &Value, name: &str) {
    let listed = r["prompts"].as_array().unwrap();
    let hello = listed
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no prompt `{name}`: {r}"));
    assert_eq!(
        hello["description"], "Greet someone with the hello tool",
        "{r}"
    );
    assert_eq!(
        hello["arguments"],
        json!([{"name": "name", "description": "Who to greet", "required": true}]),
        "{r}"
    );
    assert_eq!(
        r["got"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Please greet Ada using the hello tool."}}]),
        "{r}"
    );
    assert_eq!(r["missing"]["code"], -32602, "{r}");
    let missing = r["missing"]["message"].as_str().unwrap();
    assert!(missing.contains("needs the argument `name`"), "{r}");
    assert_eq!(r["undeclared"]["code"], -32602, "{r}");
    let undeclared = r["undeclared"]["message"].as_str().unwrap();
    assert!(undeclared.contains("no argument `tone`"), "{r}");
}

#[test]
fn over_stdio_the_hello_extension_s_prompt_is_listed_and_rendered() {
    let mut cmd = Command::new(oscova_test_support::python::mcp_python());
    support::clean_env(&mut cmd);
    cmd.arg(CLIENT)
        .args(["hello", "stdio", support::BIN, "mcp", "--user", "alice"]);
    let r = report(&mut cmd);
    assert!(r["capabilities"]["prompts"].is_object(), "{r}");
    judge(&r, "hello");
}

#[test]
fn over_http_a_config_prompt_of_the_same_name_keeps_it_and_the_form_is_hello_2() {
    let dir = support::temp_dir("mcp-ext-prompts");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[prompts.hello]\ndescription = \"The config's hello\"\n\n\
         [[prompts.hello.messages]]\ntext = \"Hello from the config.\"\n",
    )
    .unwrap();
    let mut server = support::oscova(&["--config", config.to_str().unwrap()]);
    let mut child = server
        .args(["mcp", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(at) = line.find("http://") {
                    break line[at..].trim().to_owned();
                }
            }
            _ => panic!("the server exited before saying where it listens"),
        }
    };
    std::thread::spawn(move || lines.for_each(drop));

    let mut cmd = Command::new(oscova_test_support::python::mcp_python());
    support::clean_env(&mut cmd);
    cmd.arg(CLIENT).args(["hello:2", "http", &url]);
    let r = report(&mut cmd);
    let _ = child.kill();
    let _ = child.wait();

    let names: Vec<&str> = r["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["hello", "hello:2"], "{r}");
    assert_eq!(r["prompts"][0]["description"], "The config's hello", "{r}");
    judge(&r, "hello:2");
}
