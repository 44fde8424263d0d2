//! Run with: `cargo run --release -p example-mcp-load -- [--sessions N] [--calls M] [--rounds R] [--auth]`
//!
//! The MCP-over-HTTP load benchmark. Starts `oscova mcp --listen
//! 127.0.0.1:0` (the release `oscova` binary beside this one, or
//! `--oscova PATH`) and the anchor, `rmcp-anchor` (a minimal rmcp
//! streamable HTTP server exposing the same tool), and, in the same run,
//! drives each with N concurrent sessions of rmcp's client, each making M
//! calls of `acme_search__example__example_echo` one after another.
//! Sessions are opened before the clock starts. Each round runs both
//! servers, fresh processes, alternating which goes first; the report
//! gives per server the median over rounds of calls/s, p50 and p99 call
//! latency, the server's CPU time per call while the clock ran (user and
//! system, from `/proc`), its resident memory after the round (VmRSS) and
//! its peak (VmHWM), and the ratio oscova/rmcp of the medians. Client and
//! server share the machine's cores, so the CPU each server spends per
//! call is what decides its throughput here.
//!
//! With `--auth`, the two servers are both `oscova mcp --listen`, with the
//! same config: one driven with a static token, the other with an OAuth
//! access token from a real authorization server (see `auth.rs`), and the
//! ratio is oauth/static (budget: at least 0.9).

mod auth;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Barrier;

const TOOL: &str = "acme_search__example__example_echo";

struct Options {
    sessions: usize,
    calls: usize,
    rounds: usize,
    oscova: PathBuf,
    anchor: PathBuf,
    /// Static token against OAuth instead of oscova against rmcp.
    auth: bool,
}

/// One server's figures for one round.
#[derive(Clone, Copy)]
struct Figures {
    calls_per_sec: f64,
    p50: Duration,
    p99: Duration,
    /// Server CPU time (user + system) per call, in microseconds.
    cpu_us_per_call: f64,
    rss_kib: u64,
    hwm_kib: u64,
}

fn options() -> Result<Options, String> {
    let here = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = here.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut options = Options {
        sessions: 50,
        calls: 200,
        rounds: 3,
        oscova: dir.join("oscova"),
        anchor: dir.join("rmcp-anchor"),
        auth: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--auth" {
            options.auth = true;
            continue;
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--sessions" => options.sessions = number()?.max(1),
            "--calls" => options.calls = number()?.max(1),
            "--rounds" => options.rounds = number()?.max(1),
            "--oscova" => options.oscova = PathBuf::from(&value),
            "--anchor" => options.anchor = PathBuf::from(&value),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(options)
}

/// Starts a server that prints `...: serving http://ADDR/mcp` on stderr.
async fn start(program: &Path, args: &[&str]) -> Result<(Child, String), String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(at) = line.find("http://") {
            let url = line[at..].trim().to_owned();
            // Keep draining stderr so the server never blocks on it.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok((child, url));
        }
    }
    Err(format!(
        "{} did not say where it listens",
        program.display()
    ))
}

fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The CPU time `pid` has used so far (user + system), from
/// `/proc/PID/stat`, whose clock ticks are always 1/100 s on Linux.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold
    // spaces: utime and stime are the 14th and 15th fields of the line.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|n| n.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// What one round of calls measured: its wall time, the server's CPU time
/// meanwhile, and every call's latency.
struct Driven {
    elapsed: Duration,
    server_cpu: Duration,
    latencies: Vec<Duration>,
}

async fn drive(
    url: &str,
    token: Option<&str>,
    pid: u32,
    sessions: usize,
    calls: usize,
) -> Result<Driven, String> {
    // rmcp's reqwest has TLS without a provider when built with oscova-cli
    // (oscova.mcp's features unified in); `ring` is the process default.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut clients = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        clients.push(().serve(transport).await.map_err(|e| e.to_string())?);
    }
    let barrier = Arc::new(Barrier::new(sessions + 1));
    let mut tasks = Vec::with_capacity(sessions);
    for (n, client) in clients.into_iter().enumerate() {
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(calls);
            let args = json!({"text": format!("session {n}")});
            let args = args.as_object().cloned().unwrap_or_default();
            barrier.wait().await;
            for _ in 0..calls {
                let started = Instant::now();
                let result = client
                    .call_tool(CallToolRequestParams::new(TOOL).with_arguments(args.clone()))
                    .await
                    .map_err(|e| e.to_string())?;
                if result.is_error == Some(true) {
                    return Err(format!("the tool failed: {:?}", result.content));
                }
                latencies.push(started.elapsed());
            }
            let _ = client.cancel().await;
            Ok::<_, String>(latencies)
        }));
    }
    let cpu_before = cpu_time(pid);
    barrier.wait().await;
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(sessions * calls);
    for task in tasks {
        latencies.extend(task.await.map_err(|e| e.to_string())??);
    }
    Ok(Driven {
        elapsed: started.elapsed(),
        server_cpu: cpu_time(pid).saturating_sub(cpu_before),
        latencies,
    })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(rank).copied().unwrap_or_default()
}

async fn round(
    program: &Path,
    args: &[&str],
    token: Option<&str>,
    options: &Options,
) -> Result<Figures, String> {
    let (child, url) = start(program, args).await?;
    let pid = child.id().unwrap_or_default();
    let Driven {
        elapsed,
        server_cpu,
        mut latencies,
    } = drive(&url, token, pid, options.sessions, options.calls).await?;
    let (rss_kib, hwm_kib) = memory_kib(pid);
    drop(child);
    latencies.sort();
    let calls = latencies.len().max(1) as f64;
    Ok(Figures {
        calls_per_sec: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: percentile(&latencies, 0.5),
        p99: percentile(&latencies, 0.99),
        cpu_us_per_call: server_cpu.as_secs_f64() * 1e6 / calls,
        rss_kib,
        hwm_kib,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// Prints one server's medians; returns its throughput and CPU per call.
fn summary(name: &str, rounds: &[Figures]) -> (f64, f64) {
    let pick = |f: fn(&Figures) -> f64| median(rounds.iter().map(f).collect());
    let throughput = pick(|f| f.calls_per_sec);
    println!(
        "{name:<8} {throughput:>7.0} calls/s   p50 {:>6.2} ms   p99 {:>6.2} ms   CPU {:>5.0} µs/call   RSS {:>5.1} MiB   peak {:>5.1} MiB",
        pick(|f| f.p50.as_secs_f64() * 1e3),
        pick(|f| f.p99.as_secs_f64() * 1e3),
        pick(|f| f.cpu_us_per_call),
        pick(|f| f.rss_kib as f64 / 1024.0),
        pick(|f| f.hwm_kib as f64 / 1024.0),
    );
    (throughput, pick(|f| f.cpu_us_per_call))
}

/// Static tokens against OAuth access tokens, both on `oscova mcp
/// --listen` with the same config, in one run.
async fn compare_auth(options: &Options) -> Result<(), String> {
    let issuer = auth::start_issuer().await?;
    let token = auth::access_token(&issuer).await?;
    let config = auth::write_config(&issuer)?;
    let config = config
        .to_str()
        .ok_or("a temporary path that is not UTF-8")?;
    let args = ["--config", config, "mcp", "--listen", "127.0.0.1:0"];
    let (fixed, oauth) = (Some(auth::STATIC_TOKEN), Some(token.as_str()));
    let warm = Options {
        calls: 5,
        rounds: 1,
        ..options.clone_paths()
    };
    round(&options.oscova, &args, fixed, &warm).await?;
    round(&options.oscova, &args, oauth, &warm).await?;
    let (mut statics, mut oauths) = (Vec::new(), Vec::new());
    for n in 0..options.rounds {
        if n % 2 == 0 {
            statics.push(round(&options.oscova, &args, fixed, options).await?);
            oauths.push(round(&options.oscova, &args, oauth, options).await?);
        } else {
            oauths.push(round(&options.oscova, &args, oauth, options).await?);
            statics.push(round(&options.oscova, &args, fixed, options).await?);
        }
    }
    let (fixed_rate, fixed_cpu) = summary("static", &statics);
    let (oauth_rate, oauth_cpu) = summary("oauth", &oauths);
    println!(
        "server CPU per call oauth/static: {:.3}",
        oauth_cpu / fixed_cpu.max(f64::MIN_POSITIVE)
    );
    println!(
        "ratio oauth/static: {:.3} (budget: at least 0.9)",
        oauth_rate / fixed_rate
    );
    let _ = std::fs::remove_file(config);
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let options = options()?;
    let oscova_args = ["mcp", "--listen", "127.0.0.1:0"];
    let anchor_args = ["--listen", "127.0.0.1:0"];
    println!(
        "MCP over streamable HTTP: {} sessions x {} calls of {TOOL}, {} rounds (medians)",
        options.sessions, options.calls, options.rounds
    );
    if options.auth {
        return compare_auth(&options).await;
    }
    // A short warm-up of each, so neither pays for cold caches.
    let warm = Options {
        calls: 5,
        rounds: 1,
        ..options.clone_paths()
    };
    round(&options.oscova, &oscova_args, None, &warm).await?;
    round(&options.anchor, &anchor_args, None, &warm).await?;
    let (mut oscova, mut anchor) = (Vec::new(), Vec::new());
    for n in 0..options.rounds {
        if n % 2 == 0 {
            oscova.push(round(&options.oscova, &oscova_args, None, &options).await?);
            anchor.push(round(&options.anchor, &anchor_args, None, &options).await?);
        } else {
            anchor.push(round(&options.anchor, &anchor_args, None, &options).await?);
            oscova.push(round(&options.oscova, &oscova_args, None, &options).await?);
        }
    }
    let (ours, our_cpu) = summary("oscova", &oscova);
    let (theirs, their_cpu) = summary("rmcp", &anchor);
    println!(
        "server CPU per call oscova/rmcp: {:.3}",
        our_cpu / their_cpu.max(f64::MIN_POSITIVE)
    );
    println!(
        "ratio oscova/rmcp: {:.3} (budget: at least 0.95)",
        ours / theirs
    );
    Ok(())
}

impl Options {
    fn clone_paths(&self) -> Self {
        Self {
            sessions: self.sessions,
            calls: self.calls,
            rounds: self.rounds,
            oscova: self.oscova.clone(),
            anchor: self.anchor.clone(),
            auth: self.auth,
        }
    }
}
