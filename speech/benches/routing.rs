//! Router resolution plus the offline check, the part of every speech
//! operation that runs before a provider is entered.
//!
//! Run with `cargo bench -p oscova-speech --bench routing`.
//! Budget: under 1 µs (DESIGN.md, "Performance budgets").

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use oscova_speech::{
    BoxFuture, ProviderTypeKey, RecognitionRequest, SpeechError, SpeechProviderConfig,
    SpeechRecognitionProvider, SpeechRecognitionRouter, SpeechSynthesisRouter, Transcript,
    providers::FliteSynthesizer, providers::OpenAiSpeech, providers::PocketsphinxRecognizer,
};

/// A plugin provider under a generated key, so the table is not tiny.
struct Keyed(String);

impl SpeechRecognitionProvider for Keyed {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::new(self.0.clone())
    }
    fn display_name(&self) -> &str {
        &self.0
    }
    fn recognize<'a>(
        &'a self,
        _: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        Box::pin(async { Ok(Transcript::default()) })
    }
}

fn routing(c: &mut Criterion) {
    let mut builder = SpeechRecognitionRouter::builder()
        .builtin(PocketsphinxRecognizer::new())
        .builtin(OpenAiSpeech::default());
    for i in 0..50 {
        builder = builder.plugin(
            format!("bench.plugin{i}"),
            "bench::Keyed",
            Arc::new(Keyed(format!("bench.provider{i}"))),
        );
    }
    let recognition = builder.build();
    let synthesis = SpeechSynthesisRouter::builder()
        .builtin(FliteSynthesizer::new())
        .builtin(OpenAiSpeech::default())
        .build();

    let local_openai = SpeechProviderConfig::new("openai").endpoint("http://127.0.0.1:8000/");
    let remote_openai = SpeechProviderConfig::new("openai").endpoint("https://api.openai.com");
    let plugin = SpeechProviderConfig::new("bench.provider37");
    let flite = SpeechProviderConfig::new("flite");
    let download = Some("http://localhost:9000/models/en-us.tar.gz");

    let mut group = c.benchmark_group("speech_routing");
    group.bench_function("recognition_offline_local_endpoint", |b| {
        b.iter(|| {
            recognition
                .resolve(black_box(&local_openai), black_box(true), black_box(None))
                .is_ok()
        })
    });
    group.bench_function("recognition_offline_endpoint_and_download_url", |b| {
        b.iter(|| {
            recognition
                .resolve(
                    black_box(&local_openai),
                    black_box(true),
                    black_box(download),
                )
                .is_ok()
        })
    });
    group.bench_function("recognition_plugin_key_online", |b| {
        b.iter(|| {
            recognition
                .resolve(black_box(&plugin), black_box(false), black_box(None))
                .is_ok()
        })
    });
    group.bench_function("synthesis_offline_builtin_no_endpoint", |b| {
        b.iter(|| {
            synthesis
                .resolve(black_box(&flite), black_box(true), black_box(None))
                .is_ok()
        })
    });
    group.bench_function("synthesis_offline_refused_remote_endpoint", |b| {
        b.iter(|| {
            synthesis
                .resolve(black_box(&remote_openai), black_box(true), black_box(None))
                .is_err()
        })
    });
    group.finish();
}

criterion_group!(benches, routing);
criterion_main!(benches);
