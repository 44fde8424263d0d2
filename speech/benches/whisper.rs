//! Warm recognition by the `whisper` provider: a 7.1-second LibriVox clip
//! (pocketsphinx-testdata's `…-0870`) through the provider API (WAV
//! decoding, the blocking-pool hop and whisper.cpp's decode), for tiny.en
//! and for base where it is installed, each after a warm-up call that
//! loads the model. Besides criterion's figures it prints the real-time
//! factor (decode time / audio time) of the median of 5 warm runs per
//! model. Run as a test (`cargo test --all-targets`, no `--bench`), it
//! only checks that tiny.en loads and decodes once.
//!
//! Run with `cargo bench -p oscova-speech --features whisper --bench whisper -- --warm-up-time 2 --measurement-time 20 --sample-size 10`.
//! Budget: warm RTF at most 0.3 with tiny.en on 2 cores (reported, not asserted).

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use oscova_speech::{
    RecognitionRequest, SpeechProviderConfig, SpeechRecognitionProvider, WhisperRecognizer,
    decode_wav,
};

const CLIP: &str =
    "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav";

fn whisper(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let wav = std::fs::read(CLIP).expect("pocketsphinx-testdata's LibriVox clip");
    let seconds = decode_wav(&wav).expect("WAV").duration().as_secs_f64();
    let recognizer = WhisperRecognizer::new();
    // Measuring takes minutes; a test run only checks the path works.
    let measuring = std::env::args().any(|a| a == "--bench");
    let models: &[&str] = if measuring {
        &["tiny.en", "base"]
    } else {
        &["tiny.en"]
    };
    for &model in models {
        let loaded = Instant::now();
        if let Err(err) = runtime.block_on(recognizer.preload(Some(model))) {
            assert_ne!(model, "tiny.en", "{err}");
            eprintln!("{model}: not installed, skipped");
            continue;
        }
        eprintln!(
            "{model}: loaded (converted) in {:.2} s",
            loaded.elapsed().as_secs_f64()
        );
        let config = SpeechProviderConfig::new("whisper").model(model);
        let recognize = || {
            runtime
                .block_on(recognizer.recognize(RecognitionRequest::new(&config, &wav)))
                .expect("recognition")
        };
        eprintln!("{model}: heard {:?}", recognize().text);
        if !measuring {
            continue;
        }
        let mut runs: Vec<f64> = (0..5)
            .map(|_| {
                let started = Instant::now();
                recognize();
                started.elapsed().as_secs_f64()
            })
            .collect();
        runs.sort_by(f64::total_cmp);
        eprintln!(
            "{model}: audio {seconds:.2} s, median warm decode {:.3} s, RTF {:.3}",
            runs[2],
            runs[2] / seconds
        );
        c.bench_function(&format!("whisper_{model}_recognize_7s_clip"), |b| {
            b.to_async(&runtime).iter(|| async {
                recognizer
                    .recognize(RecognitionRequest::new(&config, &wav))
                    .await
                    .expect("recognition")
            })
        });
    }
}

criterion_group!(benches, whisper);
criterion_main!(benches);
