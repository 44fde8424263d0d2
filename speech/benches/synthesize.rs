//! Synthesis by `kokoro` (Kokoro-82M int8, voice af_heart, 2 threads),
//! `piper` (en_US-joe-medium on onnxruntime 1.32.0, 2 threads,
//! deterministic) and `flite` (kal16) side by side in one run: load time
//! (piper: onnxruntime plus the voice on first use, then the voice alone;
//! flite: a one-word synthesis, since every flite call starts the program
//! and its voice afresh), and warm synthesis of one sentence, reported as
//! a real-time factor (synthesis time / audio duration, medians of the same
//! run) and as criterion timings.
//!
//! Run with `scripts/ensure-piper.sh && scripts/ensure-kokoro.sh && cargo bench -p oscova-speech --features piper --bench synthesize -- --warm-up-time 2 --measurement-time 10 --sample-size 10`.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use oscova_speech::{
    SpeechProviderConfig, SpeechSynthesisProvider, SynthesisRequest, providers::FliteSynthesizer,
    providers::KokoroSynthesizer, providers::PiperSynthesizer, wav::decode_wav,
};

const SENTENCE: &str =
    "Please open the door and turn on the light in the kitchen, then close the window.";

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// CPU seconds used so far by this process (all its threads) and by its
/// waited-for children, from `/proc/self/stat` (Linux clock ticks, 100 per
/// second). Wall time on a busy machine measures the queue; CPU time
/// measures the work.
fn cpu_seconds() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<f64> = after
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    let tick = |i: usize| fields.get(i).copied().unwrap_or(0.0) / 100.0;
    // After the `)`: state is field 0, utime 11, stime 12, cutime 13, cstime 14.
    (tick(11) + tick(12), tick(13) + tick(14))
}

fn seconds_of(wav: &[u8]) -> f64 {
    decode_wav(wav).expect("WAV").duration().as_secs_f64()
}

fn synthesize(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut piper_config = SpeechProviderConfig::new("piper");
    piper_config
        .options
        .insert("deterministic".into(), serde_json::Value::Bool(true));
    piper_config
        .options
        .insert("threads".into(), serde_json::Value::from(2));
    let flite_config = SpeechProviderConfig::new("flite").voice("kal16");
    let mut kokoro_config = SpeechProviderConfig::new("kokoro").voice("af_heart");
    kokoro_config
        .options
        .insert("threads".into(), serde_json::Value::from(2));

    // Load times.
    let started = Instant::now();
    let piper = PiperSynthesizer::new();
    runtime
        .block_on(piper.preload(&piper_config))
        .expect("piper voice; run scripts/ensure-piper.sh");
    let first_load = started.elapsed().as_secs_f64();
    let voice_loads: Vec<f64> = (0..5)
        .map(|_| {
            let fresh = PiperSynthesizer::new();
            let started = Instant::now();
            runtime
                .block_on(fresh.preload(&piper_config))
                .expect("load");
            started.elapsed().as_secs_f64()
        })
        .collect();
    let started = Instant::now();
    let kokoro = KokoroSynthesizer::new();
    runtime
        .block_on(kokoro.preload(&kokoro_config))
        .expect("kokoro; run scripts/ensure-kokoro.sh");
    let kokoro_load = started.elapsed().as_secs_f64();
    let flite = FliteSynthesizer::new();
    let flite_cold: Vec<f64> = (0..5)
        .map(|_| {
            let started = Instant::now();
            runtime
                .block_on(flite.synthesize(SynthesisRequest::new(&flite_config, "hi")))
                .expect("flite");
            started.elapsed().as_secs_f64()
        })
        .collect();

    // Warm real-time factors, same run.
    // Median wall time, audio seconds, and CPU seconds per synthesis (this
    // process and its children: piper's inference threads and espeak-ng,
    // or flite).
    let rtf = |provider: &dyn SpeechSynthesisProvider, config: &SpeechProviderConfig| {
        let mut audio = 0.0;
        let runs = 7;
        let (own, children) = cpu_seconds();
        let times: Vec<f64> = (0..runs)
            .map(|_| {
                let started = Instant::now();
                let out = runtime
                    .block_on(provider.synthesize(SynthesisRequest::new(config, SENTENCE)))
                    .expect("synthesis");
                let took = started.elapsed().as_secs_f64();
                audio = seconds_of(&out.wav);
                took
            })
            .collect();
        let (own_after, children_after) = cpu_seconds();
        let cpu = (own_after - own + children_after - children) / f64::from(runs);
        eprintln!(
            "  {}: wall median {:.3} s, CPU {cpu:.3} s per synthesis of {audio:.2} s of audio: \
             wall RTF {:.3}, CPU RTF {:.3}",
            config.provider,
            median(times.clone()),
            median(times.clone()) / audio,
            cpu / audio
        );
        (median(times), audio)
    };
    let mut one_thread = piper_config.clone();
    one_thread
        .options
        .insert("threads".into(), serde_json::Value::from(1));
    let (piper1_time, piper1_audio) = rtf(&piper, &one_thread);
    eprintln!(
        "warm sentence, piper on 1 thread: {piper1_time:.3} s for {piper1_audio:.2} s of audio, RTF {:.3}",
        piper1_time / piper1_audio
    );
    let (piper_time, piper_audio) = rtf(&piper, &piper_config);
    let (flite_time, flite_audio) = rtf(&flite, &flite_config);
    let (kokoro_time, kokoro_audio) = rtf(&kokoro, &kokoro_config);
    eprintln!(
        "warm sentence, kokoro af_heart (2 threads): {kokoro_time:.3} s for {kokoro_audio:.2} s \
         of audio, RTF {:.3}; kokoro/piper time ratio {:.2}; load (model, after onnxruntime) \
         {kokoro_load:.3} s",
        kokoro_time / kokoro_audio,
        kokoro_time / piper_time,
    );
    eprintln!(
        "load: piper first {first_load:.3} s (onnxruntime + voice), voice alone median {:.3} s; \
         flite one-word synthesis median {:.3} s",
        median(voice_loads),
        median(flite_cold),
    );
    eprintln!(
        "warm sentence: piper (2 threads) {piper_time:.3} s for {piper_audio:.2} s of audio, RTF {:.3}; \
         flite {flite_time:.3} s for {flite_audio:.2} s, RTF {:.3}; piper/flite time ratio {:.2}",
        piper_time / piper_audio,
        flite_time / flite_audio,
        piper_time / flite_time,
    );

    let mut group = c.benchmark_group("synthesize_sentence");
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("piper_joe_medium", |b| {
        b.to_async(&runtime).iter(|| async {
            piper
                .synthesize(SynthesisRequest::new(&piper_config, SENTENCE))
                .await
                .expect("piper")
        })
    });
    group.bench_function("kokoro_af_heart", |b| {
        b.to_async(&runtime).iter(|| async {
            kokoro
                .synthesize(SynthesisRequest::new(&kokoro_config, SENTENCE))
                .await
                .expect("kokoro")
        })
    });
    group.bench_function("flite_kal16", |b| {
        b.to_async(&runtime).iter(|| async {
            flite
                .synthesize(SynthesisRequest::new(&flite_config, SENTENCE))
                .await
                .expect("flite")
        })
    });
    group.finish();
}

criterion_group!(benches, synthesize);
criterion_main!(benches);
