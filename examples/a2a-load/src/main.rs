//! Run with: `cargo build --release -p oscova-cli -p example-a2a-load &&
//! target/release/a2a-load [--clients N] [--messages M] [--rounds R]
//! [--oscova PATH] [--python PATH]`
//!
//! The A2A load benchmark. Starts a scripted OpenAI-compatible model in
//! process (`model.rs`: answers every request at once with a fixed text)
//! and two servers running the same agent over it:
//!
//! - `oscova serve --listen 127.0.0.1:0` (the release `oscova` beside this
//!   binary, or `--oscova PATH`) with `[a2a]` on that model: each
//!   message is a task in a new context (a session, stored in SQLite), one
//!   model call, the answer the task's artifact;
//! - the Python a2a-sdk 1.3.0 server (`scripts/a2a/load_agent.py`, run by
//!   the interpreter `scripts/ensure-python-a2a.sh` installs: `--python`,
//!   else `$OSCOVA_A2A_PYTHON`, else its default place): each message is a
//!   task, one call of the same model over HTTP, the answer the task's
//!   artifact, tasks in the SDK's in-memory store.
//!
//! "The same agent" is therefore the same work per message (one streamed
//! model call over loopback HTTP, one task that completes with the answer
//! as its artifact); oscova also keeps the session and the task in SQLite
//! (`synchronous=FULL`: every stored state is on disk before it is told),
//! which the SDK's in-memory store has no counterpart for. Per message
//! that is five writes (the task at `WORKING` and `COMPLETED`, the session
//! created, the user's message, the answer); the session store and the
//! task store share the file's one writer thread, which commits every
//! write queued meanwhile in one transaction and one sync (group commit,
//! `oscova-agent`'s `store/sqlite_file.rs`), so with 50 clients a sync
//! serves many messages and costs latency more than throughput. The
//! SQLite file is under `$TMPDIR` (`std::env::temp_dir`): on a disk,
//! oscova's figures include those syncs and follow the disk's latency (on
//! a shared machine, other processes' writes); with `TMPDIR=/dev/shm`
//! (tmpfs) they measure the server without them. Say which when quoting a
//! ratio.
//!
//! Measured with the defaults (2 cores shared with other engineers'
//! builds; the file on ext4, where one `fdatasync` of a 4 KiB append takes
//! 0.27 ms): before group commit, 1.2x to 3.4x on the disk and 6.7x on
//! tmpfs. With group commit: 7.1x on the disk, 10.6x on tmpfs (load
//! average 5 to 6). With the tools' schemas exported once per host and
//! serialized without a copy (load average 2.4 to 3): 10.5x on the disk
//! (oscova 1,611 messages/s, p50 29 ms, p99 57 ms, 565 µs of server CPU
//! per message; Python 154 messages/s, 5,490 µs) and 15.7x on tmpfs
//! (oscova 2,286 messages/s, p50 19 ms, p99 52 ms, 570 µs). The gap
//! between the two is the syncs' latency: five writes per message, each
//! waiting for a commit (the sync, and the checkpoints WAL makes). The
//! ratio moves by several points with the machine's load, which slows the
//! Python server more than oscova.

//! Each of N concurrent clients (default 50) sends M messages (default
//! 40) one after another as JSON-RPC `SendMessage`, which blocks until the
//! task completes; every answer is checked (completed, the model's text).
//! Each round starts both servers afresh and drives them one after the
//! other, alternating which goes first; after a warm-up round, the report
//! gives per server the median over rounds of messages/s, p50 and p99
//! latency, the server's CPU time per message (user and system, from
//! `/proc`), its resident memory after the round, and the ratio
//! oscova/python of the medians (budget: at least 5; goal 20). Clients,
//! model and server share the machine's cores.

mod model;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Barrier;

/// The bearer token the clients send; oscova knows it by its SHA-256
/// (`printf %s load-token | sha256sum`), the Python agent asks for none.
const TOKEN: &str = "load-token";
const TOKEN_SHA256: &str = "1ccaaab79e6619e6421c80231ea5f64764aba59997a9c66ac9c4f0788a2ac2ae";

struct Options {
    clients: usize,
    messages: usize,
    rounds: usize,
    oscova: PathBuf,
    python: PathBuf,
}

/// One server's figures for one round.
#[derive(Clone, Copy)]
struct Figures {
    per_sec: f64,
    p50: Duration,
    p99: Duration,
    /// Server CPU time (user + system) per message, in microseconds.
    cpu_us: f64,
    rss_kib: u64,
}

fn default_python() -> PathBuf {
    if let Some(path) = std::env::var_os("OSCOVA_A2A_PYTHON") {
        return PathBuf::from(path);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let cache = std::env::var_os("XDG_CACHE_HOME").map_or(home.join(".cache"), PathBuf::from);
    cache.join("oscova/python-a2a/bin/python")
}

fn options() -> Result<Options, String> {
    let here = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = here.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut options = Options {
        clients: 50,
        messages: 40,
        rounds: 3,
        oscova: dir.join("oscova"),
        python: default_python(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--clients" => options.clients = number()?.max(1),
            "--messages" => options.messages = number()?.max(1),
            "--rounds" => options.rounds = number()?.max(1),
            "--oscova" => options.oscova = PathBuf::from(&value),
            "--python" => options.python = PathBuf::from(&value),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if !options.python.is_file() {
        return Err(format!(
            "no Python a2a-sdk at {}: run scripts/ensure-python-a2a.sh",
            options.python.display()
        ));
    }
    Ok(options)
}

/// The two servers under test.
#[derive(Clone, Copy, PartialEq)]
enum Server {
    Oscova,
    Python,
}

/// Writes the `oscova serve` config: one user, the scripted model, a
/// session store in `dir`.
fn oscova_config(dir: &Path, model: &str) -> Result<PathBuf, String> {
    let config = dir.join("config.toml");
    let text = format!(
        "[[mcp.tokens]]\nuser = \"load\"\nsha256 = \"{TOKEN_SHA256}\"\n\n\
         [providers.openai]\nendpoint = \"{model}\"\nmodel = \"load\"\n\n\
         [sessions]\npath = \"{}\"\n\n\
         [a2a]\nprovider = \"openai\"\n\n\
         [serve.a2a]\nname = \"Load agent\"\nmax_tasks_per_user = 64\n",
        dir.join("sessions.db").display()
    );
    std::fs::write(&config, text).map_err(|e| format!("{}: {e}", config.display()))?;
    Ok(config)
}

/// Starts a server that prints `...: serving http://ADDR` on stderr and
/// returns it with that base URL.
async fn start(mut command: Command) -> Result<(Child, String), String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
            let url = url.trim_end_matches('/').to_owned();
            // Keep draining stderr so the server never blocks on it.
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok((child, url));
        }
    }
    Err(format!("{command:?} did not say where it listens"))
}

/// The CPU time `pid` has used so far (user + system), from
/// `/proc/PID/stat`, whose clock ticks are always 1/100 s on Linux.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|n| n.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Sends one message and checks the completed task's answer.
async fn send(http: &reqwest::Client, base: &str, id: String) -> Result<(), String> {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "SendMessage",
        "params": {"message": {
            "messageId": id, "role": "ROLE_USER", "parts": [{"text": format!("message {id}")}],
        }},
    });
    let answer: Value = http
        .post(format!("{base}/"))
        .bearer_auth(TOKEN)
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    let task = &answer["result"]["task"];
    if task["status"]["state"] != "TASK_STATE_COMPLETED"
        || task["artifacts"][0]["parts"][0]["text"] != model::ANSWER
    {
        return Err(format!("not the completed task expected: {answer}"));
    }
    Ok(())
}

/// What one round measured: its wall time, the server's CPU time
/// meanwhile, and every message's latency.
struct Driven {
    elapsed: Duration,
    server_cpu: Duration,
    latencies: Vec<Duration>,
}

async fn drive(base: &str, pid: u32, options: &Options, tag: usize) -> Result<Driven, String> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(options.clients)
        .build()
        .map_err(|e| e.to_string())?;
    let barrier = Arc::new(Barrier::new(options.clients + 1));
    let mut tasks = Vec::with_capacity(options.clients);
    for client in 0..options.clients {
        let (http, barrier, base) = (http.clone(), barrier.clone(), base.to_owned());
        let messages = options.messages;
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(messages);
            barrier.wait().await;
            for n in 0..messages {
                let started = Instant::now();
                send(&http, &base, format!("r{tag}-c{client}-m{n}")).await?;
                latencies.push(started.elapsed());
            }
            Ok::<_, String>(latencies)
        }));
    }
    let cpu_before = cpu_time(pid);
    barrier.wait().await;
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(options.clients * options.messages);
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

/// The scripted model's URL and a folder for oscova's config and store.
struct Bench {
    model: String,
    dir: PathBuf,
    options: Options,
}

impl Bench {
    async fn round(
        &self,
        server: Server,
        tag: usize,
        options: &Options,
    ) -> Result<Figures, String> {
        let command = match server {
            Server::Oscova => {
                let dir = self.dir.join(format!("round-{tag}"));
                std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
                let config = oscova_config(&dir, &self.model)?;
                let mut command = Command::new(&self.options.oscova);
                command
                    .arg("--config")
                    .arg(config)
                    .args(["serve", "--listen", "127.0.0.1:0"])
                    .env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", "sk-load");
                command
            }
            Server::Python => {
                let script = concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../scripts/a2a/load_agent.py"
                );
                let mut command = Command::new(&self.options.python);
                command.args([script, "--model", &self.model]);
                command
            }
        };
        let (child, base) = start(command).await?;
        let pid = child.id().unwrap_or_default();
        let Driven {
            elapsed,
            server_cpu,
            mut latencies,
        } = drive(&base, pid, options, tag).await?;
        let rss_kib = rss_kib(pid);
        drop(child);
        latencies.sort();
        let count = latencies.len().max(1) as f64;
        Ok(Figures {
            per_sec: latencies.len() as f64 / elapsed.as_secs_f64(),
            p50: percentile(&latencies, 0.5),
            p99: percentile(&latencies, 0.99),
            cpu_us: server_cpu.as_secs_f64() * 1e6 / count,
            rss_kib,
        })
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// Prints one server's medians; returns its throughput and CPU per message.
fn summary(name: &str, rounds: &[Figures]) -> (f64, f64) {
    let pick = |f: fn(&Figures) -> f64| median(rounds.iter().map(f).collect());
    let throughput = pick(|f| f.per_sec);
    println!(
        "{name:<7} {throughput:>7.0} messages/s   p50 {:>7.2} ms   p99 {:>7.2} ms   CPU {:>6.0} µs/message   RSS {:>5.1} MiB",
        pick(|f| f.p50.as_secs_f64() * 1e3),
        pick(|f| f.p99.as_secs_f64() * 1e3),
        pick(|f| f.cpu_us),
        pick(|f| f.rss_kib as f64 / 1024.0),
    );
    (throughput, pick(|f| f.cpu_us))
}

async fn run(bench: &Bench) -> Result<(), String> {
    let options = &bench.options;
    println!(
        "A2A JSON-RPC SendMessage: {} clients x {} messages, {} rounds (medians)",
        options.clients, options.messages, options.rounds
    );
    // A short warm-up of each, so neither pays for cold caches.
    let warm = Options {
        clients: options.clients,
        messages: 2,
        rounds: 1,
        oscova: options.oscova.clone(),
        python: options.python.clone(),
    };
    bench.round(Server::Oscova, 0, &warm).await?;
    bench.round(Server::Python, 0, &warm).await?;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for n in 1..=options.rounds {
        let order = if n % 2 == 1 {
            [Server::Oscova, Server::Python]
        } else {
            [Server::Python, Server::Oscova]
        };
        for server in order {
            let figures = bench.round(server, n, options).await?;
            match server {
                Server::Oscova => ours.push(figures),
                Server::Python => theirs.push(figures),
            }
        }
    }
    let (our_rate, our_cpu) = summary("oscova", &ours);
    let (their_rate, their_cpu) = summary("python", &theirs);
    println!(
        "server CPU per message python/oscova: {:.2}",
        their_cpu / our_cpu.max(f64::MIN_POSITIVE)
    );
    println!(
        "ratio oscova/python: {:.2} (budget: at least 5; goal 20)",
        our_rate / their_rate.max(f64::MIN_POSITIVE)
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let options = options()?;
    let model = model::start().await?;
    let dir = std::env::temp_dir().join(format!("a2a-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bench = Bench {
        model,
        dir,
        options,
    };
    let outcome = run(&bench).await;
    let _ = std::fs::remove_dir_all(&bench.dir);
    outcome
}
