// oscova serve's voice page, its capture: an AudioWorklet on the audio
// thread, so a busy page drops nothing of the microphone. It downsamples
// to 16 kHz (a box filter over each output sample's span of input, the
// fractional position carried over) and posts about 20 ms of signed
// 16-bit samples at a time to the page, which sends them on.
'use strict';

const RATE = 16000;

class Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    // `sampleRate` is the context's, a global of the worklet scope.
    this.ratio = sampleRate / RATE;
    this.position = 0;
    this.sum = 0;
    this.count = 0;
    this.out = new Int16Array(320);
    this.n = 0;
  }

  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    for (let i = 0; i < input.length; i++) {
      this.sum += input[i];
      this.count++;
      this.position += 1;
      if (this.position >= this.ratio) {
        this.position -= this.ratio;
        const v = Math.max(-1, Math.min(1, this.sum / this.count));
        this.sum = 0;
        this.count = 0;
        this.out[this.n++] = v < 0 ? v * 32768 : v * 32767;
        if (this.n === this.out.length) {
          this.port.postMessage(this.out.buffer, [this.out.buffer]);
          this.out = new Int16Array(320);
          this.n = 0;
        }
      }
    }
    return true;
  }
}

registerProcessor('oscova-capture', Capture);
