//! Word error rate on read speech, whisper and pocketsphinx side by side:
//! the five LibriVox clips of Debian's `pocketsphinx-testdata` (24.7 s),
//! each provider warm, through the providers' API. Budget: at most 10 %
//! with whisper tiny.en (and base, when installed), at most 3 % with the
//! default model when it is base-q8_0 (base installed: quantized weights,
//! the encoder window fitted to each clip); pocketsphinx is reported, not
//! held to a budget. Run with `-- --nocapture` to see the
//! table.
//!
//! Needs `scripts/ensure-whisper-model.sh` and pocketsphinx-testdata;
//! `scripts/test.sh` installs both.

use crate::common;

use common::librivox::{Clip, clips, score};
use oscova_speech::{
    RecognitionRequest, SpeechProviderConfig, SpeechRecognitionProvider,
    providers::PocketsphinxRecognizer, providers::WhisperRecognizer,
};

/// Word errors and reference words over all clips (and the decode time,
/// printed as a real-time factor; reported, never asserted).
async fn wer(
    provider: &dyn SpeechRecognitionProvider,
    config: &SpeechProviderConfig,
    clips: &[Clip],
) -> (usize, usize) {
    let (mut errors, mut total) = (0, 0);
    let started = std::time::Instant::now();
    for clip in clips {
        let heard = provider
            .recognize(RecognitionRequest::new(config, &clip.wav))
            .await
            .unwrap();
        let (e, n) = score(&clip.reference, &heard.text);
        println!(
            "  {:>8} {e}/{n} {:?}",
            config.model.as_deref().unwrap_or(config.provider.as_str()),
            heard.text
        );
        errors += e;
        total += n;
    }
    let seconds: f64 = clips
        .iter()
        .map(|c| oscova_speech::wav::decode_wav(&c.wav).map_or(0.0, |p| p.duration().as_secs_f64()))
        .sum();
    println!(
        "  {}: {seconds:.1} s of audio in {:.1} s, RTF {:.2} (warm, this machine's load included)",
        config.model.as_deref().unwrap_or(config.provider.as_str()),
        started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64() / seconds
    );
    (errors, total)
}

#[tokio::test]
async fn whisper_stays_within_10_percent_and_beats_pocketsphinx() {
    let _cores = oscova_test_support::cores::cores().await;
    let clips = clips();
    assert_eq!(
        clips.len(),
        5,
        "pocketsphinx-testdata's five LibriVox clips"
    );
    let mut rows = Vec::new();

    let whisper = WhisperRecognizer::new();
    let default = WhisperRecognizer::installed_model();
    for model in ["tiny.en", "base", "base-q8_0"] {
        if let Err(err) = whisper.preload(Some(model)).await {
            assert_ne!(model, "tiny.en", "{err}");
            println!("whisper {model}: not installed, skipped ({err})");
            continue;
        }
        let config = SpeechProviderConfig::new("whisper").model(model);
        rows.push((
            format!("whisper {model}"),
            wer(&whisper, &config, &clips).await,
        ));
    }
    let sphinx = PocketsphinxRecognizer::new();
    sphinx.preload().await.unwrap();
    let config = SpeechProviderConfig::new("pocketsphinx");
    let sphinx_row = wer(&sphinx, &config, &clips).await;
    rows.push(("pocketsphinx".to_owned(), sphinx_row));

    println!("WER on pocketsphinx-testdata's LibriVox clips (24.7 s):");
    for (name, (errors, total)) in &rows {
        println!(
            "  {name:<16} {:5.1} % ({errors}/{total} words)",
            100.0 * *errors as f64 / *total as f64
        );
    }
    let rate = |(e, n): (usize, usize)| e as f64 / n as f64;
    if default.as_deref() == Some("base-q8_0") {
        let (_, counts) = rows
            .iter()
            .find(|(name, _)| name == "whisper base-q8_0")
            .unwrap();
        assert!(
            rate(*counts) <= 0.03,
            "the default base-q8_0: WER {:.1} % is above 3 %",
            100.0 * rate(*counts)
        );
    }
    for (name, counts) in &rows[..rows.len() - 1] {
        assert!(
            rate(*counts) <= 0.10,
            "{name}: WER {:.1} % is above 10 %",
            100.0 * rate(*counts)
        );
        assert!(
            rate(*counts) < rate(sphinx_row),
            "{name} does no better than pocketsphinx"
        );
    }
}
