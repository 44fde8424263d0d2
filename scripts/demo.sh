#!/usr/bin/env bash
# The main job on embedded defaults: no API keys, no network. Lists the
# linked plugins and the published catalog, calls a tool, runs offline
# speech round trips (the default synthesizer, kokoro, to whisper, then a
# Piper neural voice to the default recognizer), an agent turn on the
# embedded model (llamacpp, Qwen2.5-Coder-0.5B-Instruct) that calls the
# time tool and answers from its result, and ends with a spoken exchange:
# a recorded question played into `oscova voice`, heard by whisper and
# answered aloud by the embedded model, all offline. Installs the system
# packages the local speech providers and llama.cpp need, the Whisper
# model, piper's onnxruntime and test voice, Kokoro-82M, the voice models
# and the embedded model when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-system-packages.sh
# onnxruntime and the test voice for the piper section below.
scripts/ensure-piper.sh
# Kokoro-82M: with it installed, the default voice of `oscova speech say`.
scripts/ensure-kokoro.sh
# Silero VAD and Smart Turn: turn-taking for the spoken exchange at the end.
scripts/ensure-voice-models.sh
scripts/ensure-whisper-model.sh tiny.en
# The embedded model: with it installed, the default model of `oscova chat`.
scripts/ensure-llamacpp-model.sh

oscova() {
    cargo run --quiet --release --locked -p oscova-cli -- "$@"
}

echo "== plugins"
oscova plugins
echo
echo "== tools"
oscova tools list
echo
echo "== a tool call"
oscova tools call acme_search__example__example_echo --args '{"text": "Hello from Oscova"}'
echo
echo "== offline speech round trip (the default synthesizer, kokoro af_heart, to whisper, no network)"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
sentence="open the door and turn on the light"
echo "said:  $sentence"
# No --provider: the default synthesizer, kokoro now that it is installed.
spoken="$(oscova --json speech say "$sentence" -o "$dir/hello.wav" --offline)"
echo "spoken: $spoken"
case "$spoken" in
    *'"provider":"kokoro"'* | *'"provider": "kokoro"'*) ;;
    *)
        echo "the default synthesizer was not kokoro" >&2
        exit 1
        ;;
esac
# No --provider: the default recognizer, whisper now that its model is in.
heard="$(oscova --json speech hear "$dir/hello.wav" --offline)" # an assignment, so set -e sees a failure
echo "heard: $heard"
case "$heard" in
    *'"provider":"whisper"'* | *'"provider": "whisper"'*) ;;
    *)
        echo "the round trip was not transcribed by whisper" >&2
        exit 1
        ;;
esac
echo
echo "== offline neural speech (piper, voice en_US-joe-medium, to the default recognizer)"
sentence="please open the window in the kitchen"
echo "said:  $sentence"
oscova speech say "$sentence" -o "$dir/piper.wav" --provider piper --offline
heard="$(oscova speech hear "$dir/piper.wav" --offline)"
echo "heard: $heard"
echo
echo "== an agent turn on the embedded model (llamacpp, no config, no network)"
question="What time is it in Tokyo?"
echo "asked: $question"
# No --provider, no --model: the embedded model; --offline: nothing leaves
# the machine; --yes: the time tool needs no approval, but nothing waits.
answer="$(oscova --json chat --offline --yes -m "$question")"
echo "answer: $answer"
case "$answer" in
    *'"name":"oscova_time__time__now"'* | *'"name": "oscova_time__time__now"'*) ;;
    *)
        echo "the embedded model did not call the time tool" >&2
        exit 1
        ;;
esac
echo
echo "== a spoken exchange (a recorded question, the embedded model answering aloud, offline)"
question="What time is it in Tokyo?"
# The recording: kokoro reads the question into a WAV file.
oscova speech say "$question" -o "$dir/question.wav" --offline >/dev/null
echo "played in: $question ($dir/question.wav, at the pace it was spoken)"
if ! oscova voice --session "demo-voice-$$" -i "$dir/question.wav" -o "$dir/answer.wav" --offline --yes 2>"$dir/voice.log"; then
    cat "$dir/voice.log" >&2
    exit 1
fi
cat "$dir/voice.log"
grep -q "you: " "$dir/voice.log" || { echo "the question was not heard" >&2; exit 1; }
grep -q "agent: " "$dir/voice.log" || { echo "the agent did not answer aloud" >&2; exit 1; }
echo "the agent's voice: $(oscova --json speech hear "$dir/answer.wav" --offline)"
