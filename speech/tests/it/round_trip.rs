//! flite speaks five sentences, pocketsphinx hears them, both through the
//! routers with offline operation required: overall word error rate at most
//! 20 %, computed here.

use crate::common;

use common::{SENTENCES, recognition_router, synthesis_router};
use oscova_speech::{RecognitionRequest, SpeechProviderConfig, SynthesisRequest};
use oscova_test_support::text::{word_errors, words};

#[tokio::test]
async fn flite_kal16_to_pocketsphinx_word_error_rate_is_at_most_20_percent() {
    let synthesis = synthesis_router();
    let recognition = recognition_router();
    let speak = SpeechProviderConfig::new("flite").voice("kal16");
    let hear = SpeechProviderConfig::new("pocketsphinx");

    let (mut errors, mut total) = (0, 0);
    for sentence in SENTENCES {
        let audio = synthesis
            .synthesize(SynthesisRequest::new(&speak, sentence).offline(true))
            .await
            .unwrap();
        let heard = recognition
            .recognize(RecognitionRequest::new(&hear, &audio.wav).offline(true))
            .await
            .unwrap();
        let (reference, hypothesis) = (words(sentence), words(&heard.text));
        let e = word_errors(&reference, &hypothesis);
        println!(
            "{e}/{} said {sentence:?}, heard {:?}",
            reference.len(),
            heard.text
        );
        errors += e;
        total += reference.len();
    }
    let wer = errors as f64 / total as f64;
    println!("overall WER {:.1} % ({errors}/{total} words)", wer * 100.0);
    assert!(wer <= 0.20, "WER {:.1} % is above 20 %", wer * 100.0);
}

#[test]
fn word_errors_counts_edits() {
    let w = |s: &str| words(s);
    assert_eq!(word_errors(&w("a b c"), &w("a b c")), 0);
    assert_eq!(word_errors(&w("a b c"), &w("a x c")), 1);
    assert_eq!(word_errors(&w("a b c"), &w("a c")), 1);
    assert_eq!(word_errors(&w("a b c"), &w("a b c d")), 1);
    assert_eq!(word_errors(&w("a b c"), &w("")), 3);
    assert_eq!(words("Hello, World!  it's"), ["hello", "world", "it's"]);
}
