//! Recognition of a ~3-second flite utterance by the `pocketsphinx` provider
//! with its decoder loaded (after warm-up), through the provider API: WAV
//! decoding, the blocking-pool hop and the decode.
//!
//! Run with `cargo bench -p oscova-speech --bench recognize -- --warm-up-time 2 --measurement-time 10 --sample-size 10`.
//! Budget: 0.5 s median.

use criterion::{Criterion, criterion_group, criterion_main};
use oscova_speech::{
    RecognitionRequest, SpeechProviderConfig, SpeechRecognitionProvider, SpeechSynthesisProvider,
    SynthesisRequest, providers::FliteSynthesizer, providers::PocketsphinxRecognizer,
    wav::decode_wav,
};

const SENTENCE: &str = "please open the door and turn on the light in the kitchen";

fn recognize(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let flite = SpeechProviderConfig::new("flite");
    let wav = runtime
        .block_on(FliteSynthesizer::new().synthesize(SynthesisRequest::new(&flite, SENTENCE)))
        .expect("flite synthesis")
        .wav;
    let seconds = decode_wav(&wav)
        .expect("flite WAV")
        .duration()
        .as_secs_f64();
    let recognizer = PocketsphinxRecognizer::new();
    runtime.block_on(recognizer.preload()).expect("model");
    let config = SpeechProviderConfig::new("pocketsphinx");
    let heard = runtime
        .block_on(recognizer.recognize(RecognitionRequest::new(&config, &wav)))
        .expect("recognition");
    eprintln!("audio {seconds:.2} s, heard {:?}", heard.text);

    c.bench_function("pocketsphinx_recognize_3s_utterance", |b| {
        b.to_async(&runtime).iter(|| async {
            recognizer
                .recognize(RecognitionRequest::new(&config, &wav))
                .await
                .expect("recognition")
        })
    });
}

criterion_group!(benches, recognize);
criterion_main!(benches);
