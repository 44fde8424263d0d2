// oscova serve's voice page: the microphone, downsampled to 16 kHz mono
// signed 16-bit PCM, to the WebSocket at /voice; the agent's voice (the
// same format) played as it comes; what was said shown. Playback stops at
// once on an `interrupted` event. `window.oscovaVoice` holds what happened
// (events, audio counts), for a person debugging and for the browser test.
'use strict';
(() => {
  const RATE = 16000;
  const params = new URLSearchParams(location.search);
  const fragment = new URLSearchParams(location.hash.slice(1));
  const $ = (id) => document.getElementById(id);
  const state = (window.oscovaVoice = {
    status: 'idle',
    events: [],
    framesIn: 0,
    framesOut: 0,
    // When (performance.now(), ms) the agent's voice started after a
    // silence: one entry per stretch of speech.
    voiceStarts: [],
    stoppedAtInterruption: [],
    error: null,
  });

  // The token: from the fragment (never sent anywhere) or the query, then
  // taken out of the address bar.
  const token = fragment.get('token') || params.get('token');
  if (token) {
    $('token').value = token;
    params.delete('token');
    fragment.delete('token');
    const query = params.toString();
    const hash = fragment.toString();
    history.replaceState(null, '', location.pathname + (query ? '?' + query : '') + (hash ? '#' + hash : ''));
  }
  if (params.get('session')) $('session').value = params.get('session');

  let socket = null;
  let context = null;
  let microphone = null;
  let processor = null;
  let sources = new Set();
  let playAt = 0;

  function setStatus(text, name) {
    $('status').textContent = text;
    if (name) state.status = name;
  }

  function line(kind, text) {
    const p = document.createElement('p');
    p.className = kind;
    p.textContent = text;
    $('log').appendChild(p);
  }

  function base64url(text) {
    const bytes = new TextEncoder().encode(text);
    let binary = '';
    for (const b of bytes) binary += String.fromCharCode(b);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function play(buffer) {
    const samples = new Int16Array(buffer);
    if (!context || samples.length === 0) return;
    const audio = context.createBuffer(1, samples.length, RATE);
    const channel = audio.getChannelData(0);
    for (let i = 0; i < samples.length; i++) channel[i] = samples[i] / 32768;
    const source = context.createBufferSource();
    source.buffer = audio;
    source.connect(context.destination);
    // 60 ms of slack keeps frames that arrive a little late gapless.
    const now = context.currentTime;
    if (playAt < now + 0.06) playAt = now + 0.06;
    source.start(playAt);
    playAt += audio.duration;
    sources.add(source);
    source.onended = () => sources.delete(source);
  }

  function stopPlayback() {
    const stopped = sources.size;
    for (const source of sources) {
      try {
        source.stop();
      } catch (_) {
        // Already ended.
      }
    }
    sources.clear();
    playAt = 0;
    return stopped;
  }

  async function openMicrophone(send) {
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false },
    });
    // The capture runs on the audio thread (capture.js) and posts 20 ms
    // of 16 kHz PCM at a time.
    await context.audioWorklet.addModule('capture.js');
    microphone = context.createMediaStreamSource(stream);
    processor = new AudioWorkletNode(context, 'oscova-capture');
    processor.port.onmessage = (message) => {
      send(message.data);
      state.framesOut++;
    };
    const mute = context.createGain();
    mute.gain.value = 0;
    microphone.connect(processor);
    processor.connect(mute);
    mute.connect(context.destination);
    return stream;
  }

  let lastFrameAt = -Infinity;

  function onEvent(event) {
    event.receivedMs = Math.round(performance.now());
    state.events.push(event);
    switch (event.type) {
      case 'transcript':
        if (event.text) line('you', 'you: ' + event.text);
        break;
      case 'reply_finished':
        line('agent', 'agent: ' + event.text);
        break;
      case 'interrupted':
        state.stoppedAtInterruption.push(stopPlayback());
        line('agent', 'agent (interrupted): ' + event.heard);
        break;
      case 'speech_started':
        setStatus('Hearing you…');
        break;
      case 'partial':
        setStatus('Hearing you… ' + [event.committed, event.tentative].join(' ').trim());
        break;
      case 'turn_ended':
        setStatus('Thinking…');
        break;
      case 'recognition_failed':
      case 'speech_failed':
      case 'run_failed':
        line('note', event.type.replace('_', ' ') + ': ' + event.error);
        break;
      case 'error':
        state.error = event.message;
        line('note', 'error: ' + event.message);
        break;
    }
  }

  let stream = null;

  async function start() {
    if (socket) return;
    $('start').disabled = true;
    $('stop').disabled = false;
    context = new AudioContext();
    if (context.state === 'suspended') await context.resume().catch(() => {});
    const query = new URLSearchParams({ session: $('session').value });
    for (const name of ['silence_ms', 'min_speech_ms']) {
      if (params.get(name)) query.set(name, params.get(name));
    }
    const protocols = ['oscova.voice'];
    if ($('token').value) protocols.push('oscova.bearer.' + base64url($('token').value));
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    socket = new WebSocket(scheme + '//' + location.host + '/voice?' + query, protocols);
    socket.binaryType = 'arraybuffer';
    setStatus('Connecting…', 'connecting');
    socket.onmessage = async (message) => {
      if (typeof message.data !== 'string') {
        state.framesIn++;
        const now = performance.now();
        if (now - lastFrameAt > 300) state.voiceStarts.push(Math.round(now));
        lastFrameAt = now;
        play(message.data);
        return;
      }
      const event = JSON.parse(message.data);
      if (event.type === 'ready') {
        event.receivedMs = Math.round(performance.now());
        state.events.push(event);
        try {
          stream = await openMicrophone((pcm) => {
            if (socket && socket.readyState === WebSocket.OPEN) socket.send(pcm);
          });
          setStatus('Listening: talk to the agent.', 'listening');
        } catch (error) {
          state.error = String(error);
          setStatus('No microphone: ' + error, 'failed');
          stop();
        }
        return;
      }
      onEvent(event);
    };
    socket.onclose = (close) => {
      if (state.status !== 'failed') {
        setStatus(close.code === 1000 ? 'Ended.' : 'Disconnected (' + close.code + ').', 'closed');
      }
      stop();
    };
    socket.onerror = () => setStatus('The connection failed (is the token right?).', 'failed');
  }

  function stop() {
    if (processor) {
      processor.port.onmessage = null;
      processor.disconnect();
    }
    if (microphone) microphone.disconnect();
    if (stream) for (const track of stream.getTracks()) track.stop();
    processor = microphone = stream = null;
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000);
    socket = null;
    $('start').disabled = false;
    $('stop').disabled = true;
  }

  $('start').addEventListener('click', start);
  $('stop').addEventListener('click', () => {
    stop();
    stopPlayback();
  });
  if (params.get('autostart') === '1') start();
})();
