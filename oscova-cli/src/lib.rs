//! The reference Oscova host: the `oscova` command, as a library.
//!
//! The `oscova` binary is [`run_with`] over the plugins it links. A host
//! binary that links its own plugin crates gets the same commands the same
//! way:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     oscova_cli::run_with(oscova_core::linked_plugins![
//!         example_hello_plugin::ExampleAgentPlugin,
//!     ])
//! }
//! ```
//!
//! [`Launcher`] adds a host's own builder settings (hooks, spawn policy, an
//! exact plugin list) and approval policy. The plugins named in
//! [`run_with`] load first, in that order. The launcher wires no particular
//! plugin: every user's files root is a folder under
//! [`Config::files_root`], handed to plugins through their context, and the
//! speech plugin registers the host's speech routers as a service. With
//! `default-features = false` this library links no plugin crate, not even
//! the MCP plugin: `[mcp.servers]` (the `oscova.mcp` plugin) and `oscova mcp
//! pin` are the `mcp-servers` feature, part of `first-party`, and without
//! it a config that names MCP servers is refused with an error naming the
//! feature. Likewise `[a2a]`'s agents (A2A agents called through the
//! `oscova.a2a` plugin's tools; keys in that plugin's README) are the
//! `a2a-agents` feature, part of `first-party`; `[a2a]`'s `provider`,
//! `model` and `[[a2a.skills]]` (the agent `oscova serve` serves) are read
//! in every build.
//!
//! # Commands
//!
//! ```text
//! oscova plugins                         loaded plugins, versions, skipped ones with reasons
//! oscova tools list [--user U] [--profile raw|openai|gemini|anthropic]
//! oscova tools show NAME [--profile P]   description, approval, network scope, schema
//! oscova tools call NAME [--args JSON | --args-file PATH|-] [--user U] [--yes]
//! oscova mcp [--user U] [--allow-approval-required] [--names wire|short]   MCP server over stdio
//! oscova mcp --listen ADDR:PORT [...]    MCP over streamable HTTP at /mcp, users by token or OAuth
//! oscova chat [--provider KEY] [--model M] [--user U] [--endpoint URL] [--offline]
//!             [--max-rounds N] [--message TEXT] [--yes] [--session NAME [--fork ENTRY_ID]]
//! oscova sessions list [--user U]        the user's sessions, the most recently changed first
//! oscova sessions show NAME [--user U]   every entry: id, parent, type, text; the leaf marked
//! oscova sessions export NAME --format pi -o FILE [--user U]
//! oscova sessions import FILE --format pi [--name NAME] [--user U]
//! oscova sessions delete NAME [--user U]
//! oscova models list [--provider KEY] [--endpoint URL] [--offline] [--user U]
//! oscova models pull NAME [--provider KEY] [--endpoint URL] [--offline] [--user U]
//! oscova speech say TEXT -o FILE [--provider KEY] [--voice V] [--endpoint URL] [--offline] [--user U]
//! oscova speech hear FILE [--provider KEY] [--endpoint URL] [--offline] [--user U]
//! oscova speech providers                speech type keys, names, voices, origin
//! ```
//!
//! `--json` (anywhere on the line) prints one JSON document on stdout,
//! errors included (`{"error": {"kind", "message", "exit_code"}}`, always
//! on one line); only command-line parse errors stay clap's text on stderr
//! (exit code 2). The two commands that report as they go print JSON Lines
//! instead (one compact document per line): the `chat` REPL, one outcome
//! per message, and `models pull`, one `{"event": "progress", ...}` per
//! step and a final `{"event": "done", ...}`. `--config PATH` names the
//! config file.
//!
//! `chat --session NAME` keeps the conversation in the user's session
//! (created when missing, else resumed from its active branch; `--fork
//! ENTRY_ID` continues from an entry on a new branch), run by the session
//! agent with the session extensions given to the [`Launcher`]
//! ([`Launcher::extension`]; the `oscova` binary links the seed's
//! `HelloExtension`), each message stored as it is exchanged; `/help`,
//! `/name NEW`, `/tree` and `/compact` (not available yet, and it says so)
//! are slash commands, then the extensions' (`/hello world`). `sessions show
//! --json` prints `{"session", "leaf", "entries": [{"id", "parent_id",
//! "type", ...}]}` (pi's entry objects, `parentId` as `parent_id`);
//! another user's session is "not found" (exit 2), word for word as a
//! missing one.
//!
//! `tools list --profile P` exports every tool's input schema with
//! [`oscova_agent::profile::export_schema`] in the shape that API takes (see
//! [`Catalog`]); tools a profile cannot express are listed under
//! `unsupported` with the reason, never dropped.
//!
//! # Approval
//!
//! A tool that needs approval (`Required`, and `Default` when the config's
//! `default_approval` is `"required"`) runs when `--yes` is given, when the
//! embedding host's [`Launcher::approval_handler`] says yes, or when the
//! person at the terminal answers `y` (the question goes to stderr, the
//! answer comes from stdin if it is a terminal, else `/dev/tty`). With no
//! terminal and no `--yes`, the call is refused without running (exit 3).
//! `oscova mcp` asks the person through MCP elicitation when the client
//! declared it can; else such tools are refused unless the server was
//! started with `--allow-approval-required` (it then approves them itself)
//! or the host's handler approves. `oscova serve` asks the client too,
//! unless started with `--allow-approval-required`: MCP's through
//! elicitation when it can ask, an A2A task's through its
//! `INPUT_REQUIRED`, the wait kept in the `[sessions]` store (a yes runs
//! the tool once, on any process).
//! `oscova chat` asks like `tools call` (`--yes` approves every call); a
//! refused call does not run, and the model is told so and carries on.
//!
//! # Models
//!
//! `oscova chat` runs [`oscova_agent::chat::run_chat`] with the user's
//! scope and a model provider the host loaded (`--provider`, default
//! `ollama`; the binary links `oscova.ollama` and `oscova.openai`). With
//! `--message` it sends one message; without, it reads one message per
//! line from stdin until end of input (a REPL on a terminal, a script
//! otherwise), keeping the conversation. The answer streams to stdout as
//! it arrives; each tool call (wire name, shortened arguments) and its
//! result summary go to stderr as they happen. With `--json` it prints the
//! outcome instead: `{user, provider, model, answer, finish_reason, rounds,
//! tool_calls: [{id, name, arguments, result, refused}]}`. Ctrl-C cancels
//! the message in progress (the REPL then reads the next line; Ctrl-C
//! while it waits for a line, or a second one while a message winds down,
//! ends the chat with 130); at most `--max-rounds` model calls (default 8)
//! are made per message. In the REPL a failed message is reported (an
//! error line with `--json`) and the next line is read; the exit status is
//! the last failure's, 0 if none.
//!
//! `oscova models list` shows what the provider has (for `ollama` the
//! installed models, plus the names in its `catalog` option; for `openai`
//! the server's `GET /v1/models`). `oscova models pull NAME` downloads
//! through a provider that manages models (`ollama`): an indicatif bar with
//! bytes, rate and time left on a terminal, a plain line per step
//! otherwise, JSON lines with `--json`; Ctrl-C drops the connection and
//! exits 130.
//!
//! With `--offline` (every model command) an endpoint that is not on this
//! machine (see [`oscova_core::locality::is_local_endpoint`], and a saved
//! `endpoint_scope`) is refused before any connection, with exit code 3;
//! so is one whose name looks local but resolves to another machine.
//! The API key is the user's credential `<provider>.api_key`
//! (`OSCOVA_CREDENTIAL_OPENAI_API_KEY` for `openai`), sent only to the
//! provider and never printed.
//!
//! # Speech
//!
//! `oscova speech say` and `hear` go through the speech routers built from
//! the host (`oscova_speech::SpeechRouters::from_host`: the built-in
//! `flite`, `pocketsphinx`, `kokoro` and `piper` (feature `piper`),
//! `whisper` (feature `whisper`; both on by default) and `openai` providers
//! plus any a linked plugin registers; collisions are reported on stderr).
//! Without `--provider` they use the config's `[speech.say]` /
//! `[speech.hear]` provider, else kokoro (voice `af_heart`) when
//! `scripts/ensure-kokoro.sh` installed it, else flite (voice `kal16`),
//! and whisper when its model is installed
//! (`scripts/ensure-whisper-model.sh`), else pocketsphinx with a line on
//! stderr saying how to install the model; all run on this machine with no
//! key and no network. `say` writes the WAV file once the provider has
//! answered and prints its duration (`--json`: `{provider, file, bytes,
//! duration_seconds}`); `hear` prints the words (`--json`: `{provider,
//! text}`, plus `segments` with `start_seconds`, `end_seconds` and `text`
//! from providers that time them, as whisper does, audio over 30 s
//! included). Whisper's text is kept as Whisper writes it: capitals,
//! punctuation, numbers as digits, "Mr." for "mister". On audio over 30 s
//! `hear` shows the provider's progress on stderr (`[24.9/40.1] seconds of
//! audio heard`: one line redrawn at a terminal, else a line per update;
//! whisper reports before each window and at the end), so stdout holds the
//! transcript alone. The input must be a WAV file (checked before any provider
//! runs); `oscova speech providers` lists the routable keys with their
//! display names, voices, origin and which is the default. With
//! `--offline` (or `[speech] offline = true`) an endpoint not on this
//! machine, or a remote provider with no endpoint, is refused before any
//! file is read or connection made (exit 3). The API key of a remote
//! provider is the credential `<provider>.api_key`, as for models. Ctrl-C
//! cancels (130). `[speech]` configures these commands only: the
//! `oscova.speech` tools keep the plugin's per-user defaults (the same
//! installed-first choice: kokoro else flite, whisper else pocketsphinx;
//! offline required).
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the tool returned an error result, or failed (panicked, unavailable for this user); a model call failed (server unreachable, with the URL; key refused; unknown model, with the server's names; malformed answer; a pull the server failed; the bound on rounds reached); a speech provider failed (flite missing, server unreachable or refusing), or `say` could not write its file; the session store failed |
//! | 2 | usage or configuration error: bad flags, **unknown tool**, a missing session (or another user's), a session name taken, an unknown `--fork` entry, a file that is not a pi session, a slash command that cannot run, `--args` not a JSON object or not fitting the tool, an unreadable or invalid config file, an unknown model or speech provider, no model to chat with, `pull` on a provider that cannot download, an unknown voice, empty text, an audio file that is missing, too large or not WAV, a `say -o` folder that does not exist; nothing ran |
//! | 3 | refused by the host: approval denied or impossible to ask for, or a host hook blocked the call (the tool did not run); or `--offline` and the model or speech endpoint is not on this machine (no connection was made) |
//! | 130 | interrupted with Ctrl-C; the call, chat, download or speech operation was cancelled |
//!
//! An unknown tool is a usage error (2) like an unknown subcommand: the
//! caller named something that does not exist, and `oscova tools list`
//! says what does.
//!
//! # Configuration
//!
//! A user's id, time zone and credentials come from a TOML file and from
//! environment variables. The file is `--config PATH`, else
//! `OSCOVA_CONFIG`, else `config.toml` in the platform config directory
//! (`~/.config/oscova/config.toml` on Linux, honouring
//! `XDG_CONFIG_HOME`); a missing default file is fine, a missing named
//! file is an error. The file is refused (exit 2) unless nobody but its
//! owner and root could have written it, ssh's rule, on the file and every
//! directory on its way (`oscova_core::fs::read_trusted`); every number
//! in it has a range, and a value outside it is an error naming the key
//! and the range (the README lists them). Every key is optional and
//! unknown keys are errors:
//!
//! ```toml
//! # The user when neither --user nor OSCOVA_USER is given (else "local").
//! default_user = "alice"
//! # What ToolApprovalMode::Default means: "not_required" (the default) or "required".
//! default_approval = "not_required"
//! # Where the files plugin keeps each user's files (<files_root>/<user>/): absolute, or
//! # relative to this file. Default: files in the platform data directory
//! # (~/.local/share/oscova/files on Linux); never the working directory.
//! files_root = "/srv/oscova/files"
//!
//! # Credentials for every user, by the key plugins ask for.
//! [credentials]
//! "acme.api_key" = "shared-key"
//!
//! # One table per user.
//! [users.alice]
//! time_zone = "Europe/Berlin"   # IANA name, handed to tools and child processes
//!
//! [users.alice.credentials]
//! "acme.api_key" = "alice-key"  # wins over [credentials]
//! "openai.api_key" = "sk-..."   # a model provider's key: "<provider>.api_key"
//!
//! # One table per model provider, by type key; the flags win over it.
//! [providers.ollama]
//! endpoint = "http://127.0.0.1:11434"  # default: the provider's own
//! model = "llama3.2"                   # what `oscova chat` uses without --model
//! endpoint_scope = "local"             # or "remote": a saved choice, wins over the provider's default
//! options = { keep_alive = "5m", catalog = ["qwen3:8b"] }  # provider-specific, passed on
//!
//! [providers.openai]
//! endpoint = "https://api.openai.com"
//! model = "gpt-4o-mini"
//!
//! # Internal destinations `Internet` tools (the web fetch) may reach; without
//! # this they reach the public Internet only. `host` or `host:port`, an IP
//! # address or a DNS name, matched as the URL writes it.
//! [network]
//! allow = ["10.0.0.5:8080", "intranet.example"]
//!
//! # `oscova speech`: all optional; without it, kokoro (when installed, else
//! # flite) and whisper (when its model is installed, else pocketsphinx).
//! [speech]
//! offline = false                      # true: always as if --offline were given
//!
//! [speech.say]                         # the provider `say` uses without --provider
//! provider = "openai"                  # default "kokoro" when installed, else "flite"
//! endpoint = "http://127.0.0.1:8000"   # an OpenAI-compatible server
//! model = "tts-1"
//! voice = "nova"
//!
//! [speech.hear]                        # the provider `hear` uses without --provider
//! provider = "whisper"                 # or "pocketsphinx"; also: endpoint, options
//! model = "tiny.en"                    # whisper: "tiny.en", "base" or a path
//! threads = 2                          # CPU threads for the decode
//! language = "en"                      # whisper base: any Whisper language
//! ```
//!
//! A `[speech.say]` or `[speech.hear]` table applies only to its own
//! provider: `--provider` naming another one gets that provider's
//! defaults. Keys are credentials (`"openai.api_key"`), never in these
//! tables.
//!
//! ```toml
//! # Where `chat --session` and `oscova sessions` keep sessions: "sqlite" (the
//! # default; `path`, relative to this file, else
//! # ${XDG_DATA_HOME:-~/.local/share}/oscova/sessions.db) or "postgres"
//! # (feature `sessions-postgres`, part of `first-party`).
//! [sessions]
//! store = "postgres"
//! url = "postgres://oscova@db.internal:5432/oscova"   # never a password: PGPASSWORD
//! ```
//!
//! A `[sessions] url` with a password is refused when the file is loaded,
//! naming `PGPASSWORD`, which holds it instead (read once, redacted, kept
//! out of tools' processes); `store = "postgres"` in a build without the
//! feature is refused the same way, naming the feature.
//!
//! `[network] allow` is the only way past the `Internet` scope's rule: an
//! `Internet` tool is refused, before connecting, any destination whose
//! address is loopback, private, shared, link-local, unique-local,
//! multicast, reserved, a documentation range or a cloud metadata address,
//! in any spelling, after a redirect or behind a name that resolves there.
//! A listed entry lifts that for exactly the host (and port) it names.
//! `Local` tools stay on this machine whatever is listed.
//!
//! `endpoint_scope` is how `--offline` judges the endpoint, and a saved
//! choice wins: `"remote"` makes even a loopback endpoint (a tunnel)
//! non-local, and `"local"` makes an endpoint on your own network
//! (`http://10.0.0.5:11434`) count as local, with a warning on stderr that
//! names it each time it is used; the model requests then reach that host
//! and port only (a redirect elsewhere is refused). Without a saved scope
//! the endpoint's text decides, and a local-looking name
//! (`evil.localhost`, `localhost.`) must also resolve to this machine, or
//! the request is refused before connecting (exit code 3). The saved scope
//! stays in force when `--endpoint` replaces the endpoint.
//!
//! | variable | meaning |
//! |---|---|
//! | `OSCOVA_CONFIG` | the config file, when `--config` is not given |
//! | `OSCOVA_USER` | the user, when `--user` is not given (wins over `default_user`) |
//! | `OSCOVA_TIME_ZONE` | the user's time zone (wins over the file) |
//! | `OSCOVA_FILES_ROOT` | the files plugin's base directory (wins over `files_root`) |
//! | `PGPASSWORD` | the password of `[sessions] url` (Postgres), which never holds one |
//! | `OSCOVA_CREDENTIAL_<KEY>` | credential `<key>`: upper case, every character outside `A-Z0-9` as `_` (`acme.api_key` → `OSCOVA_CREDENTIAL_ACME_API_KEY`, `openai.api_key` → `OSCOVA_CREDENTIAL_OPENAI_API_KEY`); wins over the file, for whichever user the command runs as |
//!
//! Credentials reach plugins only through [`ConfigCredentials`] (a
//! [`CredentialResolver`](oscova_core::context::CredentialResolver); the
//! host's own, for a shared `[mcp.servers]` entry's `oauth` client and the
//! listing at start, through [`ConfigCredentials::host`]: the variable,
//! then `[credentials]`, never a user's table); every
//! configured value, and every value a tool resolves, is redacted from
//! everything the CLI prints or answers (tool results, progress, errors,
//! chat answers as they stream, `--json` documents, MCP errors), also in
//! the forms the host derives from it (percent-encoded, lower-cased in a
//! host name). A config file that does not parse is reported by line,
//! table and key, never by quoting the line. The `OSCOVA_CREDENTIAL_*`
//! variables are kept out of processes tools start.
//!
//! # MCP
//!
//! `oscova mcp` serves the user's tools over stdio with the official Rust
//! SDK (`rmcp`): `tools/list` gives wire names, descriptions, raw input
//! schemas and `openWorldHint` (true for `NetworkScope::Internet`);
//! `tools/call` runs through the user's scope; tool errors and refusals
//! come back as `isError` results (an unknown tool as an invalid-params
//! error); progress becomes `notifications/progress` when the client sent
//! a progress token; `notifications/cancelled` cancels the call. Protocol
//! errors are answered and the server serves on: an unparsable or
//! oversized line is -32700 with `"id": null`, ill-fitting `params` -32602,
//! and calls past the bound of 64 in flight a busy error at once. The
//! server is `oscova_mcp::McpServer` (crate `oscova-mcp`), which serves a scope on stdio, any byte stream or any `rmcp`
//! transport in a few lines.
//!
//! `oscova mcp --listen ADDR:PORT` serves streamable HTTP at `/mcp` with
//! `oscova_mcp::http::McpHttpServer` (`oscova-mcp`'s feature `http`) to the
//! users of the config's `[[auth.tokens]]` and `[[mcp.tokens]]` (`user`,
//! `sha256` of the bearer token) and, with `[auth.oauth]`, to OAuth access
//! tokens from that issuer (RFC 9728 metadata at
//! `/.well-known/oauth-protected-resource/mcp`), each user from their own
//! scope; without either only a loopback address is served (as `--user`),
//! any other refused with exit code 2.
//! `[mcp]` sets `allowed_origins` and the limits (`max_body_bytes`,
//! `max_in_flight`, `max_in_flight_total`, `max_in_flight_per_user`,
//! `max_parked_per_user`, `max_sessions_per_user`, `max_sessions`,
//! `max_connections`, `max_connections_per_peer`, `body_timeout_secs`,
//! `idle_timeout_secs`, `shutdown_grace_secs`, `task_after_ms`,
//! `scope_cache`), each
//! within the range
//! `oscova_mcp::http` exports for it (exit code 2 outside it, when the
//! file is loaded); SIGTERM or Ctrl-C shuts it down gracefully. `--names short` serves tools under their tool segment
//! alone, and refuses to start when two share one. A 2026-07-28 call
//! waiting for the person between rounds is kept in the `[sessions]`
//! store (`[mcp] waits = "sessions"`, the default; `"memory"` keeps it in
//! the process), so the retry carrying the answer may reach any process on
//! that store: another instance, or the next one after a restart.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod approval;
mod catalog;
mod cli;
mod commands;
mod config;
mod error;
mod interact;
mod launcher;
mod output;
mod panic;
#[cfg(feature = "otel")]
mod telemetry;
mod term;

pub use catalog::{Catalog, UnsupportedTool, export_catalog, export_tool};
pub use config::{
    CONFIG_ENV, CREDENTIAL_ENV_PREFIX, Config, ConfigCredentials, DEFAULT_USER, FILES_ROOT_ENV,
    OAUTH_SECRET_ENV, SESSIONS_PASSWORD_ENV, TIME_ZONE_ENV, USER_ENV, credential_env_var,
    default_recognizer, default_synthesis,
};
pub use error::{CliError, ExitStatus};
pub use launcher::{Launcher, run, run_with};

// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}
