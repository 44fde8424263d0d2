//! Session benchmarks, a harness of their own (percentiles and peak memory
//! are what matter here, not criterion's means):
//!
//! - **append**: p50 and p99 of one-message appends through `Session`
//!   (the leaf check and the durable commit included), on SQLite and, with
//!   feature `postgres`, on a throwaway Postgres cluster;
//! - **resume**: a 10,000-entry session read and its context built, our
//!   way (from SQLite, and from the exported JSONL) against the real pi
//!   package's `parseSessionEntries` + `buildSessionContext` on the same
//!   session exported as JSONL, in the same run; time (median of runs) and
//!   peak memory (the growth of peak RSS over the process's baseline).
//!   Ours is also measured to the model's messages
//!   (`Session::chat_messages`, the session agent's first turn), which
//!   does more than pi's figure (its `convertToLlm` is not timed).
//!   Ours runs in a fresh process each time (nothing warm but the page
//!   cache), and then, like pi's loop, ten times in one process (`one
//!   process`: pi's runs share a compiled JIT and a grown heap); the
//!   clock stops once the context is built, before the session is freed
//!   and the store closed, as pi's stops before its garbage is collected.
//!
//! Run with: `scripts/ensure-pi.sh && cargo bench -p oscova-agent --features postgres --bench sessions`
//!
//! To profile one resume, write the session's files with
//! `--write-resume-files DIR`, then run the bench binary under a profiler
//! with `--resume-child sqlite DIR/resume.db` (or `jsonl DIR/resume.jsonl`);
//! `OSCOVA_BENCH_PHASES=1` prints the SQLite resume's phases on stderr.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_agent::session::{ModelView, Session, SessionStore, SqliteStore, pi};
use oscova_core::UserInfo;
use oscova_core::provider::model::{ChatMessage, ToolCallRequest};
use serde_json::json;

const APPENDS: usize = 1000;
const RESUME_ENTRIES: usize = 10_000;
const RESUME_RUNS: usize = 10;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn appends(label: &str, store: Arc<dyn SessionStore>) {
    let mut session = Session::create(store, UserInfo::new("bench"), "appends")
        .await
        .unwrap();
    let mut times = Vec::with_capacity(APPENDS);
    for i in 0..APPENDS {
        let message = ChatMessage::user(format!("message {i}: {}", "lorem ipsum ".repeat(20)));
        let start = Instant::now();
        session.append_chat(&[message]).await.unwrap();
        times.push(start.elapsed());
    }
    times.sort();
    println!(
        "append {label:<9} n={APPENDS}  p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms",
        ms(percentile(&times, 0.50)),
        ms(percentile(&times, 0.99)),
        ms(times[times.len() - 1])
    );
}

/// A realistic 10,000-entry chat: rounds of a question, a tool call, its
/// result and an answer, with some extension state between.
async fn big_session(store: Arc<dyn SessionStore>) -> Session {
    let mut session = Session::create(store, UserInfo::new("bench"), "big")
        .await
        .unwrap();
    let mut batch = Vec::new();
    let mut round = 0;
    while session.entries().len() + batch.len() < RESUME_ENTRIES {
        let call = ToolCallRequest {
            id: format!("call-{round}"),
            name: "files__fs__read".into(),
            arguments: json!({"path": format!("src/file_{round}.rs")}),
        };
        batch.extend([
            ChatMessage::user(format!(
                "Question {round}: {}",
                "what does this code do? ".repeat(6)
            )),
            ChatMessage::assistant("Let me read it.", vec![call]),
            ChatMessage::tool(
                format!("call-{round}"),
                "fn main() { println!(\"hi\"); }\n".repeat(8),
            ),
            ChatMessage::assistant(
                format!("Answer {round}: {}", "it prints a greeting. ".repeat(8)),
                vec![],
            ),
        ]);
        round += 1;
        if batch.len() >= 400 {
            let room = RESUME_ENTRIES - session.entries().len();
            batch.truncate(room);
            session.append_chat(&batch).await.unwrap();
            batch.clear();
        }
    }
    if !batch.is_empty() {
        session.append_chat(&batch).await.unwrap();
    }
    assert_eq!(session.entries().len(), RESUME_ENTRIES);
    session
}

/// Peak and current resident memory of this process, in KiB
/// (`VmHWM`, `VmRSS`).
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// One resume in a fresh process (this binary, run again), so its peak
/// memory is its own: prints `time_ms peak_growth_kib messages`.
fn resume_child(kind: &str, path: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_, before) = memory_kib();
    let start = Instant::now();
    // The resumed session is dropped (and the store closed) after the
    // clock stops: freeing it is not part of resuming.
    let (messages, elapsed, kept) = match kind {
        "sqlite" => runtime.block_on(async {
            let store = Arc::new(SqliteStore::open(path).await.unwrap());
            let t1 = start.elapsed();
            let session = Session::open(store, UserInfo::new("bench"), "big")
                .await
                .unwrap();
            let t2 = start.elapsed();
            let context = session.context();
            let t3 = start.elapsed();
            if std::env::var_os("OSCOVA_BENCH_PHASES").is_some() {
                eprintln!("open {t1:?}, load {:?}, context {:?}", t2 - t1, t3 - t2);
            }
            let messages = context.messages.len();
            (
                messages,
                start.elapsed(),
                Box::new((session, context)) as Box<dyn std::any::Any>,
            )
        }),
        // What the session agent does on its first turn after a resume:
        // the model's messages, straight from the stored ones.
        "sqlite-chat" => runtime.block_on(async {
            let store = Arc::new(SqliteStore::open(path).await.unwrap());
            let session = Session::open(store, UserInfo::new("bench"), "big")
                .await
                .unwrap();
            let chat = session.chat_messages();
            (
                chat.len(),
                start.elapsed(),
                Box::new((session, chat)) as Box<dyn std::any::Any>,
            )
        }),
        _ => {
            let text = std::fs::read_to_string(path).unwrap();
            let file = pi::parse(&text).unwrap();
            let context = ModelView::build(&file.entries, file.leaf());
            let messages = context.messages.len();
            (
                messages,
                start.elapsed(),
                Box::new((file, context)) as Box<dyn std::any::Any>,
            )
        }
    };
    let (peak, _) = memory_kib();
    drop(kept);
    println!("{} {} {messages}", ms(elapsed), peak.saturating_sub(before));
}

fn run_child(kind: &str, path: &Path) -> (f64, u64, usize) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--resume-child", kind, path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut parts = text.split_whitespace();
    (
        parts.next().unwrap().parse().unwrap(),
        parts.next().unwrap().parse().unwrap(),
        parts.next().unwrap().parse().unwrap(),
    )
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// Writes the 10,000-entry session into `dir` as `resume.db` and
/// `resume.jsonl`; their paths.
async fn resume_files(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let db = dir.join("resume.db");
    let session = big_session(Arc::new(SqliteStore::open(&db).await.unwrap())).await;
    let jsonl = dir.join("resume.jsonl");
    std::fs::write(&jsonl, pi::export(&session, "/bench").unwrap()).unwrap();
    (db, jsonl)
}

async fn resume(dir: &Path) {
    let (db, jsonl) = resume_files(dir).await;
    let size = std::fs::metadata(&jsonl).unwrap().len();
    println!(
        "resume: {RESUME_ENTRIES} entries, {} KiB as JSONL",
        size / 1024
    );

    for (label, kind, path) in [
        ("ours, SQLite", "sqlite", &db),
        ("ours, SQLite, model messages", "sqlite-chat", &db),
        ("ours, JSONL", "jsonl", &jsonl),
    ] {
        let runs: Vec<(f64, u64, usize)> =
            (0..RESUME_RUNS).map(|_| run_child(kind, path)).collect();
        let time = median(runs.iter().map(|r| r.0).collect());
        let peak = runs.iter().map(|r| r.1).max().unwrap_or(0);
        println!(
            "resume {label:<28} median {time:.2} ms  peak memory growth {:.1} MiB  ({} messages)",
            peak as f64 / 1024.0,
            runs[0].2
        );
    }
    // Warm, as pi's figure is: its runs share one process (JIT compiled,
    // heap grown after the first), so ours are measured that way too, the
    // store opened anew each time, the session freed after the clock.
    let mut warm = Vec::with_capacity(RESUME_RUNS);
    for _ in 0..RESUME_RUNS {
        let start = Instant::now();
        let store = Arc::new(SqliteStore::open(&db).await.unwrap());
        let session = Session::open(store, UserInfo::new("bench"), "big")
            .await
            .unwrap();
        let context = session.context();
        warm.push(ms(start.elapsed()));
        assert_eq!(context.messages.len(), RESUME_ENTRIES);
    }
    println!(
        "resume {:<28} median {:.2} ms  (first run {:.2} ms)",
        "ours, SQLite, one process",
        median(warm.clone()),
        warm[0]
    );
    let theirs = oscova_test_support::pi::context(&jsonl, RESUME_RUNS);
    let times: Vec<f64> = theirs["times_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    let growth = theirs["max_rss_kib"]
        .as_u64()
        .unwrap_or(0)
        .saturating_sub(theirs["rss_before_kib"].as_u64().unwrap_or(0));
    println!(
        "resume {:<28} median {:.2} ms  peak memory growth {:.1} MiB  ({} messages; first run {:.2} ms)",
        "pi (node 22)",
        median(times.clone()),
        growth as f64 / 1024.0,
        theirs["context"]["messages"].as_array().map_or(0, Vec::len),
        times[0]
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--resume-child") {
        resume_child(&args[at + 1], &args[at + 2]);
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // For profiling one resume (`perf record ... --resume-child sqlite
    // DIR/resume.db`): writes the session's files into DIR and stops.
    if let Some(at) = args.iter().position(|a| a == "--write-resume-files") {
        let dir = Path::new(&args[at + 1]);
        std::fs::create_dir_all(dir).unwrap();
        runtime.block_on(resume_files(dir));
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` does not.
    if !args.iter().any(|a| a == "--bench") {
        return;
    }
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(
            SqliteStore::open(dir.path().join("appends.db"))
                .await
                .unwrap(),
        );
        appends("sqlite", store).await;
        #[cfg(feature = "postgres")]
        {
            let cluster = oscova_test_support::postgres::Cluster::start();
            let config = cluster.create_database("bench");
            let store = oscova_agent::session::PostgresStore::connect(&config)
                .await
                .unwrap();
            appends("postgres", Arc::new(store)).await;
        }
        resume(dir.path()).await;
    });
}
