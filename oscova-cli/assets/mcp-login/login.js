// oscova serve's start page of an MCP server's login by link: the
// person's token (from the fragment, never sent anywhere, or typed) goes
// with the login's id to POST /oauth/mcp/login?id=ID as
// `Authorization: Bearer`; serve answers the authorization URL (and sets
// this browser's login cookie) only when the login is that person's, and
// the page goes there. `window.oscovaLogin` holds what happened.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const fragment = new URLSearchParams(location.hash.slice(1));
  const state = (window.oscovaLogin = { status: 'idle', error: null });
  const id = params.get('id');

  const setStatus = (text, kind) => {
    state.status = kind || 'idle';
    $('status').textContent = text;
    $('status').className = kind === 'failed' ? 'failed' : '';
  };

  // The token: from the fragment, then taken out of the address bar.
  const token = fragment.get('token');
  if (token) {
    $('token').value = token;
    fragment.delete('token');
    const hash = fragment.toString();
    history.replaceState(null, '', location.pathname + location.search + (hash ? '#' + hash : ''));
  }

  const go = async () => {
    if (!id) {
      setStatus('This address names no login (it needs ?id=...). Call the tool again for a new link.', 'failed');
      return;
    }
    $('go').disabled = true;
    setStatus('Checking that this login is yours...', 'checking');
    const headers = {};
    if ($('token').value) headers.Authorization = 'Bearer ' + $('token').value;
    try {
      const answer = await fetch(location.pathname + '?id=' + encodeURIComponent(id), {
        method: 'POST',
        headers,
        credentials: 'same-origin',
        cache: 'no-store',
      });
      if (!answer.ok) {
        const text = await answer.text();
        state.error = text;
        setStatus(text || 'Refused (HTTP ' + answer.status + ').', 'failed');
        $('go').disabled = false;
        return;
      }
      const body = await answer.json();
      setStatus('Going on to log in to MCP server ' + body.server + '...', 'going');
      location.assign(body.url);
    } catch (error) {
      state.error = String(error);
      setStatus('The server could not be reached: ' + error, 'failed');
      $('go').disabled = false;
    }
  };

  $('form').addEventListener('submit', (event) => {
    event.preventDefault();
    go();
  });
  if (token) go();
})();
