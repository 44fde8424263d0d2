// A real OAuth 2.1 authorization server for the resource-server tests:
// oidc-provider on 127.0.0.1 (port picked by the system), issuing
// client-credentials JWT access tokens for resource indicators (RFC 8707).
//
// Run with: node server.mjs <folder holding node_modules>
// (scripts/ensure-oidc-provider.sh installs it and prints the folder).
//
// Prints one JSON line on stdout once listening:
//   {"issuer": "http://127.0.0.1:PORT", "port": PORT}
// then serves until its stdin closes (the test's child handle dropped).
//
// Clients:
//   "mcp-client" / "mcp-secret" (client_secret_post): client credentials,
//   scopes "mcp" and "other".
//   "oauth-basic" / "basic-secret" (client_secret_basic): the same grant
//   and scopes, authenticated with HTTP Basic (oscova.mcp's upstream OAuth).
//   "oauth-short" / "short-secret" (client_secret_basic): the same, but its
//   access tokens live 2 seconds (a token that expires while cached).
//   "mcp-resource" / "resource-secret" (client_secret_basic): no grant; the
//   resource server's own credentials for the introspection endpoint.
//   "oauth-user" (public, `none`, native): authorization code with PKCE and
//   refresh tokens (rotated on every use; a rotated one used again revokes
//   its grant), redirect http://127.0.0.1/callback on any port (RFC 8252).
//   "oauth-user-short": the same, but its access tokens live 2 seconds.
// Dynamic Client Registration (RFC 7591) is open at /reg; registered
// clients get what "oauth-user" has. Client ID Metadata Documents are
// advertised (`client_id_metadata_document_supported`). Revocation (RFC 7009) is at
// /token/revocation.
//
// Client ID Metadata Documents are fetched only from `https://` URLs,
// and oidc-provider's SSRF guard refuses every loopback address, so by
// default no test document is ever fetched. Opt-in, for a test serving
// its document on loopback: OSCOVA_OIDC_CIMD_ORIGIN names exactly one
// origin, `https://127.0.0.1:PORT`, whose documents are fetched without
// that guard (every other URL keeps it); the test also sets
// NODE_EXTRA_CA_CERTS to the CA that issued that server's certificate,
// whose check stays on.
//
// Consent is driven over HTTP: an authorization request is sent to
// /interaction/UID; `POST /interaction/UID/login` with the form field
// `login=ACCOUNT` logs that account in, `POST /interaction/UID/confirm`
// grants what the client asked for, and `POST /interaction/UID/abort`
// refuses it; each answers with the redirect to resume at /auth/UID
// (cookies carry the rest). `GET /interaction/UID` answers JSON
// (`{uid, prompt, client_id}`), or, to a browser (`Accept: text/html`),
// the page of that prompt: a login form (`#login`, `#submit`) or a
// consent form naming the client (`#allow`, `#deny`), posting to those
// same endpoints.
// Each resource indicator is a resource server whose tokens carry `aud` =
// the indicator and may carry the scopes "mcp" and "other"; they are JWTs
// signed RS256, except for indicators starting `urn:opaque:`, whose tokens
// are opaque (for RFC 7662 introspection at /token/introspection). The JWKS also holds an ES256 and
// an EdDSA key, which /test/sign signs with.
//
// Test-only routes (never part of a real server):
//   GET  /test/jwks-count  -> {"count": N}: how many times /jwks was fetched
//   GET  /test/token-count -> {"count": N, "last_auth": "header" | "form"}:
//                             how many token requests (POST /token)
//                             arrived, answered or refused, and whether
//                             the last one authenticated its client in an
//                             Authorization header (Basic) or not
//   POST /test/sign        -> a compact JWS of the posted JSON claims, signed
//                             by the provider's own key for ?alg= (RS256 by
//                             default): expired or foreign-issuer tokens with
//                             a genuine signature.
//   POST /test/rotate      -> adds a new RS256 key (new kid) to the JWKS and
//                             signs new tokens with it.
//   GET  /test/grants      -> {"authorization_code": N, "refresh_token": N,
//                             "refresh_errors": N, "registrations": N,
//                             "resources": [...], "clients": [...]}:
//                             successful code exchanges and refreshes,
//                             refused refreshes, client registrations,
//                             and the `resource` and client id of every
//                             one of those token requests in order
//   POST /test/revoke?account=A -> revokes every grant account A holds
//                             (its tokens, refresh tokens included).
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// stdout carries the one line above and nothing else: its reader may be
// gone after it, and oidc-provider's notices would then end the process.
console.log = console.error;
console.info = console.error;
console.warn = console.error;

const dir = process.argv[2];

// The one loopback origin whose Client ID Metadata Documents may be
// fetched (see above), or null. Anything but an https:// origin on
// 127.0.0.1 with a port, and nothing else, ends the server.
const cimdOrigin = (() => {
  const value = process.env.OSCOVA_OIDC_CIMD_ORIGIN;
  if (value === undefined || value === '') return null;
  const url = URL.parse(value);
  if (!url || url.protocol !== 'https:' || url.hostname !== '127.0.0.1' || !url.port
      || url.origin !== value) {
    console.error(`OSCOVA_OIDC_CIMD_ORIGIN must be https://127.0.0.1:PORT, not ${value}`);
    process.exit(2);
  }
  return url.origin;
})();

// oidc-provider's `fetch` hook: a request to the allowed origin goes out
// without the SSRF-guarding dispatcher oidc-provider put in `options`
// (the certificate is still checked, against NODE_EXTRA_CA_CERTS); any
// other URL keeps it.
const cimdFetch = (url, options) => {
  if (URL.parse(String(url))?.origin === cimdOrigin) {
    const { dispatcher, ...rest } = options;
    return globalThis.fetch(url, rest);
  }
  return globalThis.fetch(url, options);
};
const load = (path) => import(pathToFileURL(join(dir, 'node_modules', path)).href);
const { default: Provider } = await load('oidc-provider/lib/index.js');
const jose = await load('jose/dist/webapi/index.js');

function keyPair(alg, kid) {
  let pair;
  if (alg === 'RS256') pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  else if (alg === 'ES256') pair = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  else pair = crypto.generateKeyPairSync('ed25519');
  const jwk = pair.privateKey.export({ format: 'jwk' });
  return { ...jwk, kid, alg, use: 'sig' };
}

const keys = [keyPair('RS256', 'rs-1'), keyPair('ES256', 'es-1'), keyPair('EdDSA', 'ed-1')];
let jwksCount = 0;
let tokenCount = 0;
let lastTokenAuth = null;
const grants = {
  authorization_code: 0, refresh_token: 0, refresh_errors: 0, registrations: 0, resources: [],
  clients: [],
};
// Grant ids by account, for /test/revoke.
const grantsOf = new Map();
let provider;

const json = (res, status, value) => {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(value));
};

const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// A browser's page for the interaction's prompt: its forms post to the
// endpoints the HTTP flow uses.
function page(res, uid, prompt, clientId) {
  const base = `/interaction/${encodeURIComponent(uid)}`;
  const body =
    prompt === 'login'
      ? `<h1>Sign in</h1>
<form method="post" action="${base}/login">
<label>Account <input id="login" name="login" autocomplete="username" required></label>
<button id="submit" type="submit">Sign in</button>
</form>`
      : `<h1>Allow access?</h1>
<p id="client">${escape(clientId)} asks to act for you.</p>
<form method="post" action="${base}/confirm"><button id="allow" type="submit">Allow</button></form>
<form method="post" action="${base}/abort"><button id="deny" type="submit">Deny</button></form>`;
  res.statusCode = 200;
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${escape(prompt)}</title></head><body data-prompt="${escape(prompt)}">${body}</body></html>`);
}

async function interaction(req, res, uid, action) {
  try {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) {
      json(res, 400, { error: 'not this interaction' });
      return;
    }
    if (action === undefined) {
      if ((req.headers.accept || '').includes('text/html')) {
        page(res, uid, details.prompt.name, details.params.client_id);
        return;
      }
      json(res, 200, { uid, prompt: details.prompt.name, client_id: details.params.client_id });
      return;
    }
    let body = '';
    for await (const chunk of req) body += chunk;
    const form = new URLSearchParams(body);
    let result;
    if (action === 'login') {
      const account = form.get('login');
      if (!account) {
        json(res, 400, { error: 'login is required' });
        return;
      }
      result = { login: { accountId: account } };
    } else if (action === 'confirm') {
      const { prompt: { details: missing }, params, session } = details;
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
      const grantId = await grant.save();
      result = { consent: details.grantId ? {} : { grantId } };
    } else if (action === 'abort') {
      result = { error: 'access_denied', error_description: 'the person refused' };
    } else {
      json(res, 404, { error: 'no such action' });
      return;
    }
    await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
  } catch (e) {
    json(res, 400, { error: String(e && e.message) });
  }
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  if (url.pathname === '/jwks') jwksCount += 1;
  if (url.pathname === '/token' && req.method === 'POST') {
    tokenCount += 1;
    lastTokenAuth = req.headers.authorization ? 'header' : 'form';
  }
  if (url.pathname === '/test/token-count') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ count: tokenCount, last_auth: lastTokenAuth }));
    return;
  }
  if (url.pathname === '/test/jwks-count') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ count: jwksCount }));
    return;
  }
  if (url.pathname === '/test/sign' && req.method === 'POST') {
    let body = '';
    for await (const chunk of req) body += chunk;
    const alg = url.searchParams.get('alg') || 'RS256';
    const jwk = keys.find((k) => k.alg === alg);
    const key = await jose.importJWK(jwk, alg);
    const jws = await new jose.CompactSign(new TextEncoder().encode(body))
      .setProtectedHeader({ alg, kid: jwk.kid, typ: 'at+jwt' })
      .sign(key);
    res.end(jws);
    return;
  }
  if (url.pathname === '/test/grants') {
    json(res, 200, grants);
    return;
  }
  if (url.pathname === '/test/revoke' && req.method === 'POST') {
    const account = url.searchParams.get('account');
    const ids = [...(grantsOf.get(account) || [])];
    for (const id of ids) {
      await Promise.all([
        provider.AccessToken.revokeByGrantId(id),
        provider.RefreshToken.revokeByGrantId(id),
        provider.AuthorizationCode.revokeByGrantId(id),
      ]);
      const grant = await provider.Grant.find(id);
      if (grant) await grant.destroy();
    }
    grantsOf.delete(account);
    json(res, 200, { revoked: ids.length });
    return;
  }
  const step = url.pathname.match(/^\/interaction\/([^/]+)(?:\/(login|confirm|abort))?$/);
  if (step && (step[2] === undefined ? req.method === 'GET' : req.method === 'POST')) {
    await interaction(req, res, step[1], step[2]);
    return;
  }
  if (url.pathname === '/test/rotate' && req.method === 'POST') {
    const kid = `rs-${keys.length + 1}`;
    // Newest first: oidc-provider signs with the first key of an alg.
    keys.unshift(keyPair('RS256', kid));
    provider = makeProvider(issuer);
    res.end(JSON.stringify({ kid }));
    return;
  }
  provider.callback()(req, res);
});

function makeProvider(issuer) {
  const made = new Provider(issuer, {
    clients: [{
      client_id: 'mcp-client',
      client_secret: 'mcp-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'mcp other',
    }, {
      client_id: 'oauth-basic',
      client_secret: 'basic-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'mcp other',
    }, {
      client_id: 'oauth-short',
      client_secret: 'short-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'mcp other',
    }, {
      client_id: 'oauth-user',
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: ['http://127.0.0.1/callback'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'mcp other',
    }, {
      client_id: 'oauth-user-short',
      application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: ['http://127.0.0.1/callback'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'mcp other',
    }, {
      client_id: 'mcp-resource',
      client_secret: 'resource-secret',
      grant_types: [],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    jwks: { keys },
    ...(cimdOrigin ? { fetch: cimdFetch } : {}),
    scopes: ['mcp', 'other'],
    // Refresh tokens for every client allowed the grant (no
    // `offline_access` needed), rotated on every use, outliving the
    // login session.
    issueRefreshToken: (ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    expiresWithSession: () => false,
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      // Advertised, so a client with a Client ID Metadata Document uses
      // its URL as client id; the provider fetches only https:// and
      // never loopback, so no test document is fetched unless
      // OSCOVA_OIDC_CIMD_ORIGIN allows one origin (above).
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => {
          const short = client && ['oauth-short', 'oauth-user-short'].includes(client.clientId);
          const accessTokenTTL = short ? 2 : 300;
          if (resource.startsWith('urn:opaque:')) {
            return {
              scope: 'mcp other', audience: resource, accessTokenTTL, accessTokenFormat: 'opaque',
            };
          }
          return {
            scope: 'mcp other',
            audience: resource,
            accessTokenTTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  });
  made.on('grant.success', (ctx) => {
    const kind = ctx.oidc.params.grant_type;
    if (kind in grants) grants[kind] += 1;
    if (kind !== 'client_credentials') {
      grants.resources.push(ctx.oidc.params.resource ?? null);
      grants.clients.push(ctx.oidc.client?.clientId ?? null);
    }
  });
  made.on('grant.error', (ctx) => {
    if (ctx.oidc && ctx.oidc.params && ctx.oidc.params.grant_type === 'refresh_token') {
      grants.refresh_errors += 1;
    }
  });
  made.on('registration_create.success', () => { grants.registrations += 1; });
  made.on('grant.saved', (grant) => {
    if (grant.accountId && grant.jti) {
      if (!grantsOf.has(grant.accountId)) grantsOf.set(grant.accountId, new Set());
      grantsOf.get(grant.accountId).add(grant.jti);
    }
  });
  return made;
}

let issuer;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  issuer = `http://127.0.0.1:${port}`;
  provider = makeProvider(issuer);
  process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);
});

process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
