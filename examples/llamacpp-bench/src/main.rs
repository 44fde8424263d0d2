//! Run with: `scripts/llamacpp-bench.sh [--model NAME] [--threads N]`
//! (it builds llama.cpp's `llama-bench` from the same vendored source and
//! this program in release, then runs both), or
//! `cargo run --release -p example-llamacpp-bench -- [--model NAME]
//! [--threads N] [--llama-bench PATH] [--reps N] [--only speed|resume|tools]`.
//!
//! Benchmarks of the embedded `llamacpp` provider, each side by side in
//! one run:
//!
//! - **speed**: prompt reading (512 tokens in one batch into an empty
//!   context) and generation (128 tokens one at a time) through the
//!   provider's engine, and llama.cpp's own `llama-bench -p 512 -n 128`
//!   for the same model file and threads; tokens/s medians and the ratio.
//! - **resume**: a session of about 400 tokens of context whose next turn
//!   is asked twice: with its prefix in the KV cache (the session's last
//!   turn was the engine's last work, or another conversation came in
//!   between and the saved cache is restored), and with no cache at all
//!   (`cache_mib = 0` and another conversation in between); time from the
//!   request to the first streamed text, medians.
//! - **tools**: a fixed set of 36 prompts over the first-party tools
//!   (time, files, web, the seed plugin's): each prompt's first model
//!   answer, with every offered tool's schema; a call is *valid* when its
//!   arguments satisfy the tool's schema, *right* when it names the
//!   expected tool with the expected key arguments. Then 6 prompts that
//!   need no tool, with the same tools offered: right is no call.
//! - **memory**: the process's peak resident set (`VmHWM`) at the end.
//!
//! Figures go to stdout as a table; nothing is asserted (a benchmark, not
//! a test).

mod prompts;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use oscova_agent::chat::tool_specs;
use oscova_agent::profile::SchemaProfile;
use oscova_core::CancellationToken;
use oscova_core::prelude::*;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatStreamEvent, ModelProvider, ModelProviderConfig,
    ToolSpec,
};
use oscova_plugin_llamacpp::{LlamaCppPlugin, LlamaCppProvider};
use serde_json::{Value, json};

struct Args {
    model: String,
    threads: u32,
    llama_bench: Option<String>,
    reps: usize,
    only: Option<String>,
}

fn args() -> Args {
    let mut args = Args {
        model: oscova_plugin_llamacpp::DEFAULT_MODEL.to_owned(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        llama_bench: std::env::var("LLAMA_BENCH").ok(),
        reps: 5,
        only: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} takes a value"));
        match flag.as_str() {
            "--model" => args.model = value(),
            "--threads" => args.threads = value().parse().expect("--threads N"),
            "--llama-bench" => args.llama_bench = Some(value()),
            "--reps" => args.reps = value().parse().expect("--reps N"),
            "--only" => args.only = Some(value()),
            other => panic!("unknown flag {other}"),
        }
    }
    args
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn config(args: &Args) -> ModelProviderConfig {
    let mut config = ModelProviderConfig::new("llamacpp");
    config.model = Some(args.model.clone());
    config.options.insert("threads".into(), json!(args.threads));
    config
}

#[tokio::main]
async fn main() {
    let args = args();
    let provider = LlamaCppProvider::default();
    let config = config(&args);
    println!(
        "# llamacpp benchmarks: model {}, {} threads",
        args.model, args.threads
    );
    let run = |part: &str| args.only.as_deref().is_none_or(|o| o == part);
    if run("speed") {
        speed(&args, &provider, &config).await;
    }
    if run("resume") {
        resume(&provider, &config, args.reps).await;
    }
    if run("tools") {
        tools(&provider, &config).await;
    }
    println!("\npeak resident memory (VmHWM): {}", peak_memory());
}

async fn speed(args: &Args, provider: &LlamaCppProvider, config: &ModelProviderConfig) {
    // A warm-up loads the model.
    provider.measure(config, 16, 4).await.expect("warm-up");
    let mut pp = Vec::new();
    let mut tg = Vec::new();
    for _ in 0..args.reps {
        let (prompt_ms, _) = provider.measure(config, 512, 0).await.expect("pp");
        pp.push(512.0 / (prompt_ms / 1000.0));
        let (_, generate_ms) = provider.measure(config, 0, 128).await.expect("tg");
        tg.push(128.0 / (generate_ms / 1000.0));
    }
    let (ours_pp, ours_tg) = (median(pp), median(tg));
    println!("\n## speed (tokens/s, median of {})\n", args.reps);
    println!("| test | llamacpp provider | llama-bench | ratio |");
    println!("|---|---|---|---|");
    let theirs = args
        .llama_bench
        .as_deref()
        .map(|bin| llama_bench(bin, config, args))
        .unwrap_or_default();
    for (test, ours) in [("pp512", ours_pp), ("tg128", ours_tg)] {
        let theirs = theirs.iter().find(|(t, _)| t == test).map(|(_, v)| *v);
        match theirs {
            Some(v) => println!("| {test} | {ours:.1} | {v:.1} | {:.3} |", ours / v),
            None => println!("| {test} | {ours:.1} | (no llama-bench) | - |"),
        }
    }
}

/// `llama-bench`'s median tokens/s for pp512 and tg128.
fn llama_bench(bin: &str, config: &ModelProviderConfig, args: &Args) -> Vec<(String, f64)> {
    let dir = oscova_plugin_llamacpp::models_dir(config).expect("models dir");
    let model = dir.join(&args.model).join("model.gguf");
    let output = std::process::Command::new(bin)
        .arg("-m")
        .arg(&model)
        .args(["-t", &args.threads.to_string(), "-p", "512", "-n", "128"])
        .args(["-r", &args.reps.to_string(), "-o", "json"])
        .output()
        .expect("llama-bench runs");
    let runs: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "llama-bench's output is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    runs.as_array()
        .into_iter()
        .flatten()
        .filter_map(|run| {
            let samples: Vec<f64> = run["samples_ts"]
                .as_array()?
                .iter()
                .filter_map(Value::as_f64)
                .collect();
            let test = match (run["n_prompt"].as_u64()?, run["n_gen"].as_u64()?) {
                (p, 0) => format!("pp{p}"),
                (0, g) => format!("tg{g}"),
                _ => return None,
            };
            Some((test, median(samples)))
        })
        .collect()
}

/// Milliseconds from the request to the first streamed text.
async fn first_token(
    provider: &dyn ModelProvider,
    config: &ModelProviderConfig,
    messages: &[ChatMessage],
) -> (f64, u64, u64) {
    let first: Mutex<Option<Duration>> = Mutex::new(None);
    let start = Instant::now();
    let sink = |e: ChatStreamEvent| {
        if let ChatStreamEvent::Text(_) = e {
            first.lock().unwrap().get_or_insert(start.elapsed());
        }
    };
    let response = provider
        .chat(ChatRequest {
            config,
            api_key: None,
            model: config.model.as_deref().unwrap_or_default(),
            messages,
            tools: &[],
            stream: Some(&sink),
            cancel: CancellationToken::new(),
        })
        .await
        .expect("answered");
    let usage = response.usage.unwrap_or_default();
    let ms = first
        .lock()
        .unwrap()
        .unwrap_or_else(|| start.elapsed())
        .as_secs_f64()
        * 1000.0;
    (
        ms,
        usage.input_tokens.unwrap_or(0),
        usage.cached_input_tokens.unwrap_or(0),
    )
}

async fn resume(provider: &LlamaCppProvider, config: &ModelProviderConfig, reps: usize) {
    let mut config = config.clone();
    config.options.insert("max_tokens".into(), json!(8));
    let session = prompts::session();
    let other = [ChatMessage::user("Name three colours.")];
    let mut hot = Vec::new();
    let mut restored = Vec::new();
    let mut cold = Vec::new();
    let mut context = 0;
    let mut cached = (0, 0);
    for _ in 0..reps {
        // The session's history read once, then its next turn: the prefix
        // is the context's own.
        first_token(provider, &config, &session[..session.len() - 1]).await;
        let (ms, tokens, hit) = first_token(provider, &config, &session).await;
        hot.push(ms);
        context = tokens;
        cached.0 = hit;
        // Another conversation in between: the session's cache is saved,
        // then restored.
        first_token(provider, &config, &session[..session.len() - 1]).await;
        first_token(provider, &config, &other).await;
        let (ms, _, hit) = first_token(provider, &config, &session).await;
        restored.push(ms);
        cached.1 = hit;
    }
    let mut uncached = config.clone();
    uncached.options.insert("cache_mib".into(), json!(0));
    for _ in 0..reps {
        first_token(provider, &uncached, &other).await;
        let (ms, _, _) = first_token(provider, &uncached, &session).await;
        cold.push(ms);
    }
    println!("\n## resumed session: first token (ms, median of {reps}), {context}-token context\n");
    println!("| next turn | first token | prompt tokens cached |");
    println!("|---|---|---|");
    println!(
        "| prefix in the context | {:.1} | {} |",
        median(hot),
        cached.0
    );
    println!(
        "| prefix restored from the saved cache | {:.1} | {} |",
        median(restored),
        cached.1
    );
    println!(
        "| no cache (whole context read) | {:.1} | 0 |",
        median(cold)
    );
}

async fn tools(provider: &LlamaCppProvider, config: &ModelProviderConfig) {
    let root = tempfile::tempdir().expect("temp dir");
    let clock: oscova_plugin_time::Clock =
        Arc::new(|| SystemTime::UNIX_EPOCH + Duration::from_secs(1_773_458_100));
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![
            LlamaCppPlugin,
            oscova_plugin_web::WebPlugin,
            example_hello_plugin::ExampleAgentPlugin
        ])
        .plugin_instance(oscova_plugin_time::TimePlugin::with_clock(clock))
        .plugin_instance(oscova_plugin_files::FilesPlugin::per_user(root.path()))
        .build()
        .expect("host");
    let scope = host.user_scope(UserInfo::new("bench"));
    let specs = tool_specs(&scope, SchemaProfile::OpenAi);
    let mut config = config.clone();
    config.options.insert("max_tokens".into(), json!(160));
    let cases = prompts::tool_prompts();
    let (mut valid, mut right, mut calls, mut no_call) = (0, 0, 0, 0);
    let mut misses = Vec::new();
    let started = Instant::now();
    for case in &cases {
        let response = first_answer(provider, &config, &specs, case.prompt).await;
        let Some(call) = response.message.tool_calls.first() else {
            no_call += 1;
            misses.push(format!(
                "{}: no call ({:?})",
                case.prompt, response.message.content
            ));
            continue;
        };
        calls += 1;
        if is_valid(&specs, &call.name, &call.arguments) {
            valid += 1;
        }
        if call.name.ends_with(case.tool) && (case.check)(&call.arguments) {
            right += 1;
        } else {
            misses.push(format!("{}: {} {}", case.prompt, call.name, call.arguments));
        }
    }
    let mut unneeded = Vec::new();
    for prompt in prompts::no_tool_prompts() {
        let response = first_answer(provider, &config, &specs, prompt).await;
        if let Some(call) = response.message.tool_calls.first() {
            unneeded.push(format!("{prompt}: {} {}", call.name, call.arguments));
        }
    }
    let n = cases.len();
    println!(
        "\n## tool calls: {n} prompts, {} tools offered ({:.0} s)\n",
        specs.len(),
        started.elapsed().as_secs_f64()
    );
    println!("| calls made | schema-valid | right tool and arguments | no call |");
    println!("|---|---|---|---|");
    println!(
        "| {calls}/{n} | {valid}/{calls} ({:.0}%) | {right}/{n} ({:.0}%) | {no_call} |",
        100.0 * valid as f64 / calls.max(1) as f64,
        100.0 * right as f64 / n as f64
    );
    for miss in misses {
        println!("- miss: {miss}");
    }
    let asked = prompts::no_tool_prompts().len();
    println!(
        "\nprompts that need no tool: {}/{asked} answered without a call",
        asked - unneeded.len()
    );
    for call in unneeded {
        println!("- unneeded call: {call}");
    }
}

/// The model's first answer to `prompt` with `specs` offered.
async fn first_answer(
    provider: &LlamaCppProvider,
    config: &ModelProviderConfig,
    specs: &[ToolSpec],
    prompt: &str,
) -> ChatResponse {
    let messages = [ChatMessage::user(prompt)];
    provider
        .chat(ChatRequest {
            config,
            api_key: None,
            model: config.model.as_deref().unwrap_or_default(),
            messages: &messages,
            tools: specs,
            stream: None,
            cancel: CancellationToken::new(),
        })
        .await
        .expect("answered")
}

fn is_valid(specs: &[ToolSpec], name: &str, arguments: &Value) -> bool {
    specs
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| jsonschema::validator_for(&s.parameters).ok())
        .is_some_and(|v| v.is_valid(arguments))
}

fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}
