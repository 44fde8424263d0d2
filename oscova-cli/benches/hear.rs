//! The one-shot recognition benchmark: `oscova speech hear CLIP --offline`
//! as a fresh process per file, for each of the five LibriVox clips of
//! Debian's `pocketsphinx-testdata` (`oscova_test_support::librivox`),
//! with the default recognizer and with `whisper` `tiny.en` (16-bit, full
//! window: what issue 37's budget compares against), round after round,
//! alternating which goes first. Per file it reports the median wall time
//! of each (the whole process: start-up, model load, decode, exit) and
//! the ratio default / tiny.en, and over the five clips the word error
//! rate of each and the median CPU time (user and system, of the child:
//! steadier than wall time on a machine other work shares).
//!
//! The binary is the `oscova` of the same profile (`cargo bench` builds a
//! release one), or `--oscova PATH`; `--rounds N` (default 5); `--config
//! PATH` is passed on to `hear` (e.g. `[speech.hear] threads = 1`). Run with
//! `cargo bench -p oscova-cli --bench hear -- --rounds 5` (a target
//! directory of its own keeps the release build from locking others
//! out). Run as a test (`cargo test --all-targets`, no `--bench`), it
//! hears the first clip once with each and checks the words.
//!
//! Budget (issue 37; reported, not asserted): the default at most 3 %
//! word error rate and at most 1.25x tiny.en's time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use oscova_test_support::librivox;

/// One recognizer as `hear` is told to use it.
struct Variant {
    name: &'static str,
    args: &'static [&'static str],
}

const VARIANTS: [Variant; 2] = [
    Variant {
        name: "default",
        args: &[],
    },
    Variant {
        name: "tiny.en",
        args: &["--provider", "whisper", "--model", "tiny.en"],
    },
];

/// One fresh `hear`: its transcript, wall and CPU seconds.
struct Run {
    text: String,
    wall: f64,
    cpu: f64,
}

/// CPU seconds (user and system) of this process's waited-for children:
/// `cutime` and `cstime` of Linux's `/proc/self/stat`, in clock ticks
/// (100 a second on Linux).
fn children_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis, from `state` (3).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |field: usize| {
        fields
            .get(field - 3)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(16) + ticks(17)) / 100.0
}

fn hear(oscova: &Path, config: Option<&Path>, clip: &Path, variant: &Variant) -> Run {
    let cpu_before = children_cpu();
    let started = Instant::now();
    let output = Command::new(oscova)
        .args(["speech", "hear"])
        .arg(clip)
        .arg("--offline")
        .args(variant.args)
        .args(config.iter().flat_map(|c| [Path::new("--config"), c]))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", oscova.display()));
    let wall = started.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu_before;
    assert!(
        output.status.success(),
        "oscova speech hear {} ({}): {}\n{}",
        clip.display(),
        variant.name,
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Run {
        text: String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        wall,
        cpu,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let mut oscova = PathBuf::from(env!("CARGO_BIN_EXE_oscova"));
    let mut rounds = 5;
    let mut config = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--config" => config = Some(PathBuf::from(args.next().expect("--config PATH"))),
            "--oscova" => oscova = PathBuf::from(args.next().expect("--oscova PATH")),
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--rounds N")
            }
            _ => {}
        }
    }
    let clips = librivox::clips();
    assert_eq!(
        clips.len(),
        5,
        "pocketsphinx-testdata's five LibriVox clips"
    );
    let clips = if measuring { &clips[..] } else { &clips[..1] };
    let rounds = if measuring { rounds.max(1) } else { 1 };
    let paths: Vec<PathBuf> = clips
        .iter()
        .map(|c| Path::new(librivox::DIR).join(format!("{}.wav", c.id)))
        .collect();
    // runs[variant][clip]: every round's run.
    let mut runs: Vec<Vec<Vec<Run>>> = VARIANTS
        .iter()
        .map(|_| clips.iter().map(|_| Vec::new()).collect())
        .collect();
    for round in 0..rounds {
        for (c, path) in paths.iter().enumerate() {
            // Alternate which variant goes first, round by round.
            let order: [usize; 2] = if (round + c) % 2 == 0 { [0, 1] } else { [1, 0] };
            for v in order {
                let run = hear(&oscova, config.as_deref(), path, &VARIANTS[v]);
                eprintln!(
                    "round {round} {} {}: {:.2} s wall, {:.2} s CPU: {}",
                    clips[c].id, VARIANTS[v].name, run.wall, run.cpu, run.text
                );
                runs[v][c].push(run);
            }
        }
    }
    // Word errors of each variant, scored on every round's transcript.
    let score = |v: usize| {
        let (mut errors, mut words) = (0, 0);
        for (clip, clip_runs) in clips.iter().zip(&runs[v]) {
            for run in clip_runs {
                let (e, n) = librivox::score(&clip.reference, &run.text);
                errors += e;
                words += n;
            }
        }
        (errors, words)
    };
    if !measuring {
        for (v, variant) in VARIANTS.iter().enumerate() {
            let (errors, words) = score(v);
            assert!(
                errors * 5 <= words,
                "{}: {errors} of {words} words wrong: {:?}",
                variant.name,
                runs[v][0][0].text
            );
        }
        return;
    }
    println!(
        "\n{} ({rounds} rounds, one process per file)\n",
        oscova.display()
    );
    println!("| clip | default | tiny.en | ratio |");
    println!("|---|---|---|---|");
    let (mut default_total, mut tiny_total) = (0.0, 0.0);
    for (c, clip) in clips.iter().enumerate() {
        let d = median(runs[0][c].iter().map(|r| r.wall).collect());
        let t = median(runs[1][c].iter().map(|r| r.wall).collect());
        default_total += d;
        tiny_total += t;
        println!("| {} | {d:.2} s | {t:.2} s | {:.2}x |", clip.id, d / t);
    }
    println!(
        "| all five | {default_total:.2} s | {tiny_total:.2} s | {:.2}x |",
        default_total / tiny_total
    );
    for (v, variant) in VARIANTS.iter().enumerate() {
        let (errors, words) = score(v);
        let cpu: f64 = (0..clips.len())
            .map(|c| median(runs[v][c].iter().map(|r| r.cpu).collect()))
            .sum();
        println!(
            "{}: WER {:.1} % ({errors} of {words} words, all rounds), CPU {cpu:.2} s (sum of per-file medians)",
            variant.name,
            100.0 * errors as f64 / words as f64
        );
    }
}
