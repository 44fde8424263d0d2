//! Turn-taking on real speech: Silero VAD and Smart Turn
//! (`oscova_speech::voice`) over the LibriVox clips with silence around
//! them, fed as a live stream in 20 ms pieces. Needs the models of
//! `scripts/ensure-voice-models.sh` and the clips of
//! `scripts/ensure-system-packages.sh`.

use std::time::Duration;

use oscova_core::provider::speech::SpeechError;
use oscova_speech::voice::{TurnEnd, TurnOptions, VoiceActivity, VoiceModels};

use crate::common::librivox::clips;

fn models() -> VoiceModels {
    VoiceModels::load().unwrap_or_else(|e| {
        panic!("the voice models are needed: {e} (run scripts/ensure-voice-models.sh)")
    })
}

/// A clip's samples in [-1, 1].
fn samples(wav: &[u8]) -> Vec<f32> {
    let reader = hound::WavReader::new(wav).unwrap();
    assert_eq!(reader.spec().sample_rate, 16_000);
    reader
        .into_samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect()
}

fn silence(seconds: f32) -> Vec<f32> {
    vec![0.0; (seconds * 16_000.0) as usize]
}

fn seconds(samples: usize) -> Duration {
    Duration::from_secs_f64(samples as f64 / 16_000.0)
}

/// Each event with how much audio had been fed when it came.
fn stream(
    models: &VoiceModels,
    options: TurnOptions,
    audio: &[f32],
) -> Vec<(Duration, VoiceActivity)> {
    let mut detector = models.detector(options).unwrap();
    let mut events = Vec::new();
    for piece in audio.chunks(320) {
        for event in detector.push(piece).unwrap() {
            events.push((detector.position(), event));
        }
    }
    for event in detector.finish() {
        events.push((detector.position(), event));
    }
    events
}

/// The events' kinds, in order: `started`, `stopped`, `ended` (the hints
/// `Quiet` and `Resumed` left out; `quiet_comes_before_each_pause` checks
/// them).
fn kinds(events: &[(Duration, VoiceActivity)]) -> Vec<&'static str> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            VoiceActivity::SpeechStarted { .. } => Some("started"),
            VoiceActivity::SpeechStopped { .. } => Some("stopped"),
            VoiceActivity::TurnEnded { .. } => Some("ended"),
            VoiceActivity::Quiet { .. } | VoiceActivity::Resumed { .. } => None,
            _ => Some("other"),
        })
        .collect()
}

/// The turn that ended: (heard at, speech ended at, audio, Smart Turn's
/// verdict).
fn ended(events: &[(Duration, VoiceActivity)]) -> (Duration, Duration, &[f32], Option<f32>) {
    events
        .iter()
        .find_map(|(heard, e)| match e {
            VoiceActivity::TurnEnded {
                at,
                audio,
                complete,
            } => Some((*heard, *at, audio.as_slice(), *complete)),
            _ => None,
        })
        .expect("a turn ended")
}

#[test]
fn each_sentence_is_one_turn_found_where_it_is_spoken() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let models = models();
    for clip in clips() {
        let speech = samples(&clip.wav);
        let mut audio = silence(1.0);
        audio.extend(&speech);
        audio.extend(silence(3.0));
        let events = stream(&models, TurnOptions::default(), &audio);
        assert_eq!(
            kinds(&events),
            ["started", "stopped", "ended"],
            "{}",
            clip.id
        );
        let VoiceActivity::SpeechStarted { at: start } = events[0].1 else {
            unreachable!()
        };
        // The clips begin with a breath of silence of their own.
        assert!(
            (Duration::from_millis(1000)..Duration::from_millis(1600)).contains(&start),
            "{}: speech started at {start:?}",
            clip.id
        );
        let (_, end, turn, _) = ended(&events);
        let spoken_until = Duration::from_secs(1) + seconds(speech.len());
        assert!(
            end <= spoken_until && end >= spoken_until - Duration::from_millis(900),
            "{}: speech ended at {end:?}, the clip at {spoken_until:?}",
            clip.id
        );
        // The turn's audio holds the speech and the pre-roll before it.
        let held = seconds(turn.len());
        assert!(
            held >= end - start && held <= end - start + Duration::from_millis(400),
            "{}: {held:?} of audio for {:?} of speech",
            clip.id,
            end - start
        );
    }
}

#[test]
fn smart_turn_hears_a_sentence_cut_short_as_unfinished() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let models = models();
    let mut complete = 0;
    for clip in clips() {
        let speech = samples(&clip.wav);
        let whole = models.smart_turn().probability(&speech).unwrap();
        let cut = models
            .smart_turn()
            .probability(&speech[..speech.len() * 45 / 100])
            .unwrap();
        assert!(cut < 0.2, "{}: cut mid-sentence, {cut} complete", clip.id);
        assert!(whole > cut, "{}: whole {whole}, cut {cut}", clip.id);
        if whole > 0.5 {
            complete += 1;
        }
    }
    // Two of the five are short clauses read flatly, which Smart Turn
    // calls unfinished; the silence rule ends those.
    assert!(
        complete >= 3,
        "{complete} of 5 whole sentences judged complete"
    );
}

#[test]
fn a_complete_turn_ends_at_the_pause_and_an_unfinished_one_waits() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let models = models();
    let options = TurnOptions::default().with_end(TurnEnd::SmartTurn {
        max_silence: Duration::from_secs(2),
    });
    let clip = &clips()[0];
    let speech = samples(&clip.wav);

    let mut audio = silence(1.0);
    audio.extend(&speech);
    audio.extend(silence(3.0));
    let (heard, end, _, verdict) = ended(&stream(&models, options, &audio));
    assert!(verdict.is_some_and(|p| p > 0.5), "{verdict:?}");
    assert!(
        heard - end < Duration::from_millis(500),
        "a complete turn ended {:?} after its speech",
        heard - end
    );

    let mut audio = silence(1.0);
    audio.extend(&speech[..speech.len() * 45 / 100]);
    audio.extend(silence(3.0));
    let (heard, end, _, verdict) = ended(&stream(&models, options, &audio));
    assert_eq!(verdict, None, "the silence ended it, not Smart Turn");
    assert!(
        heard - end >= Duration::from_secs(2),
        "an unfinished turn ended {:?} after its speech",
        heard - end
    );
}

#[test]
fn a_fixed_silence_ends_the_turn_and_a_shorter_pause_continues_it() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let models = models();
    let options = TurnOptions::default().with_end(TurnEnd::Silence(Duration::from_millis(1000)));
    let all = clips();
    let (first, second) = (samples(&all[1].wav), samples(&all[4].wav));
    let mut audio = silence(0.5);
    audio.extend(&first);
    audio.extend(silence(0.6));
    audio.extend(&second);
    audio.extend(silence(2.0));
    let events = stream(&models, options, &audio);
    assert_eq!(
        kinds(&events),
        ["started", "stopped", "started", "stopped", "ended"],
        "{events:?}"
    );
    let (heard, end, turn, verdict) = ended(&events);
    assert_eq!(verdict, None);
    let after = heard - end;
    assert!(
        (Duration::from_millis(1000)..Duration::from_millis(1100)).contains(&after),
        "ended {after:?} after the speech"
    );
    assert!(seconds(turn.len()) > seconds(first.len() + second.len()) - Duration::from_secs(1));
}

/// Every pause is announced as `Quiet` first, with the same end of
/// speech, `quiet` into the silence; a `Quiet` that did not become a
/// pause is followed by `Resumed` before anything else.
#[test]
fn quiet_comes_before_each_pause() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let models = models();
    let options = TurnOptions::default().with_end(TurnEnd::Silence(Duration::from_millis(1000)));
    let all = clips();
    let mut audio = silence(0.5);
    audio.extend(samples(&all[1].wav));
    audio.extend(silence(0.6));
    audio.extend(samples(&all[4].wav));
    audio.extend(silence(2.0));
    let events = stream(&models, options, &audio);
    let (mut quiet, mut resumed, mut stopped) = (0, 0, 0);
    for (i, (heard, event)) in events.iter().enumerate() {
        match event {
            VoiceActivity::Quiet { at } => {
                quiet += 1;
                let after = *heard - *at;
                assert!(
                    after >= options.quiet && after < options.quiet + Duration::from_millis(64),
                    "Quiet announced {after:?} after the speech"
                );
                match events.get(i + 1).map(|(_, e)| e) {
                    Some(VoiceActivity::SpeechStopped { at: stop }) => assert_eq!(stop, at),
                    Some(VoiceActivity::Resumed { at: again }) => {
                        resumed += 1;
                        assert!(again > at);
                    }
                    other => panic!("after Quiet came {other:?}"),
                }
            }
            VoiceActivity::SpeechStopped { .. } => {
                stopped += 1;
                assert!(
                    i > 0 && matches!(events[i - 1].1, VoiceActivity::Quiet { .. }),
                    "a pause with no Quiet before it: {events:?}"
                );
            }
            _ => {}
        }
    }
    assert_eq!(stopped, 2, "{events:?}");
    assert_eq!(quiet, stopped + resumed);
    // Read speech has short silences between phrases that are no pauses.
    assert!(
        resumed >= 1,
        "no Quiet that speech went on after: {events:?}"
    );
}

/// Smart Turn's verdict is asked in the silence before the pause (one
/// frame after `Quiet`) and kept for it: whatever the turn, the verdict
/// that ends it (or let the silence end it) is Smart Turn's on the turn's
/// whole audio, also when the person went on after a silence long
/// enough to have been judged.
#[test]
fn smart_turns_verdict_is_on_the_whole_turn() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let models = models();
    let options = TurnOptions::default();
    let all = clips();
    let mut audio = silence(0.5);
    // Half a sentence, a silence Smart Turn is asked in (160 ms: past the
    // Quiet, short of the pause), the other half; then whole sentences.
    let first = samples(&all[0].wav);
    audio.extend(&first[..first.len() / 2]);
    audio.extend(silence(0.16));
    audio.extend(&first[first.len() / 2..]);
    audio.extend(silence(2.5));
    for clip in &all[1..3] {
        audio.extend(samples(&clip.wav));
        audio.extend(silence(2.5));
    }
    let events = stream(&models, options, &audio);
    assert!(
        events
            .iter()
            .any(|(_, e)| matches!(e, VoiceActivity::Resumed { .. })),
        "the first turn went on after a Quiet: {events:?}"
    );
    let mut turns = 0;
    for (_, event) in &events {
        if let VoiceActivity::TurnEnded {
            audio, complete, ..
        } = event
        {
            turns += 1;
            let p = models.smart_turn().probability(audio).unwrap();
            match complete {
                Some(verdict) => assert_eq!(*verdict, p, "turn {turns}"),
                None => assert!(
                    p <= 0.5,
                    "turn {turns}: complete ({p}) yet ended by the silence"
                ),
            }
        }
    }
    assert_eq!(turns, 3, "{:?}", kinds(&events));
}

#[test]
fn a_burst_shorter_than_the_minimum_starts_nothing() {
    let _cores = oscova_test_support::cores::cores_blocking();
    let models = models();
    let speech = samples(&clips()[0].wav);
    // 150 ms from the middle of a word: a cough, a click, an "mm".
    let middle = speech.len() / 2;
    let burst = &speech[middle..middle + 2_400];
    let mut audio = silence(1.0);
    audio.extend(burst);
    audio.extend(silence(1.5));
    let options = TurnOptions::default().with_min_speech(Duration::from_millis(300));
    assert!(stream(&models, options, &audio).is_empty());
    // Tuned down, the same burst is speech.
    let options = options
        .with_min_speech(Duration::from_millis(60))
        .with_end(TurnEnd::Silence(Duration::from_millis(500)));
    assert_eq!(
        kinds(&stream(&models, options, &audio)),
        ["started", "stopped", "ended"]
    );
}

#[test]
fn missing_models_name_the_script_that_installs_them() {
    let dir = tempfile::tempdir().unwrap();
    let library = std::env::var_os("ORT_DYLIB_PATH")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap())
                .join(".cache/oscova/onnxruntime/1.32.0/libonnxruntime.so.1.32.0")
        });
    let err = VoiceModels::load_from(dir.path(), &library).unwrap_err();
    assert!(
        matches!(&err, SpeechError::NotInstalled { install, missing, .. }
            if install == "scripts/ensure-voice-models.sh" && missing.contains("silero_vad.onnx")),
        "{err}"
    );
}
