//! `oscova chat`: a tool-calling chat with one model provider, for one
//! user.
//!
//! Rules: the provider, its configuration, its key and the offline check
//! come from `provider::select` before any input is read or any request
//! made, and a missing model is a usage error at the same point. Every
//! message runs through [`run_chat`] over the user's scope, so approval
//! (the CLI's: `--yes`, else the terminal, else refused), hooks, argument
//! checks and redaction are the host's; the conversation carries over from
//! one message to the next. What is shown while it runs is `view`'s
//! business. With `--message` the exit status is that message's; without
//! it, the REPL reads one message per line until end of input, reports a
//! failed message and goes on, and ends with the status of the last
//! failure (0 if none; a message cancelled with Ctrl-C is not a failure).
//! Ctrl-C cancels the message in progress, and the conversation stays
//! valid; a second Ctrl-C, or one while waiting for input, ends the chat
//! (130). `--json` prints one outcome document for `--message`, and one
//! compact document per line in the REPL (failures as `{"error": ...}`).
//!
//! With `--session NAME` the conversation is the user's session in the
//! `[sessions]` store: created when missing, else resumed, the model's
//! context built from the active branch (or, with `--fork ENTRY_ID`, from
//! that entry, where the next message starts a new branch), run by the
//! session agent (`oscova_agent::session::agent`) with the session
//! extensions the launcher was given (the `oscova` binary: the seed's
//! `HelloExtension`): every message (the user's, answers, tool calls,
//! tool results) is stored as soon as it is final, so what was exchanged
//! is durable even when a message fails or is cancelled; the user's
//! message is stored before the model is asked, so a process killed
//! mid-answer loses only the answer in flight. A tool call is marked
//! started in the session before its tool runs; when a process was killed
//! mid-call, the next message settles that batch first
//! (`AgentSession::recover`'s rules): a started call is not run again and
//! is answered as interrupted, which the model reads and the person sees
//! as the call's line on stderr (with `--json`, among `tool_calls`, its
//! `details.error` `interrupted`), unless its tool is idempotent; a call
//! that had not started runs, its approval asked again. One process at
//! a time runs a session: the chat holds the session's lease in the store
//! (`oscova_agent::session::SessionLease`, renewed while it runs), so a
//! second `chat --session` on it, here or on another machine on the same
//! Postgres, is refused (exit 1, `session_in_use`) until the first ends;
//! a killed chat's lease is taken over at once by the next chat on the
//! same machine, and lapses within 15 s elsewhere. A line starting
//! with `/` is a slash command (`slash`), never sent to the model: the
//! built-in ones first (`/compact` in `compact`, `/retry` in `retry`),
//! then the extensions' (`/hello world`), which may start a run of their
//! own. When `[sessions]
//! context_window` is set, a context past the window minus the reserve is
//! compacted after the message (`compact`); the outcome document then has
//! a `compaction` field.

mod compact;
mod retry;
mod slash;
mod view;

use std::future::IntoFuture as _;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use oscova_agent::chat::{ChatError, ChatEvent, ChatLoopOptions, run_chat};
use oscova_agent::session::agent::{
    AgentEvent, AgentHost, AgentSession, AgentSessionOptions, RunOutcome,
};
use oscova_agent::session::{EntryId, LEASE_TTL, Session, SessionLease};
use oscova_core::provider::model::{ChatMessage, ModelProvider, ModelProviderConfig};
use oscova_core::{CancellationToken, SecretString, UserScope};
use serde_json::{Value, json};

use super::provider::select_with_model;
use super::{Env, cancellable, interrupted};
use crate::cli::ChatArgs;
use crate::error::{CliError, ExitStatus};
use crate::interact::TerminalInteraction;
use crate::output::{print_error, print_json, print_json_line, print_text};
use view::View;

pub(super) async fn run(env: &Env, args: ChatArgs) -> Result<ExitStatus, CliError> {
    let selected = select_with_model(
        env,
        &args.provider,
        args.user.user.as_deref(),
        args.model.as_deref(),
    )?;
    let config = selected.config;
    let session = match args.session.as_deref() {
        Some(name) => {
            let store = store_of(env).await?;
            let user = selected.user.clone();
            // A fork continues a session that exists; otherwise a missing
            // one is created.
            let session = match args.fork.as_deref() {
                Some(entry) => {
                    let mut session = Session::open(store.clone(), user.clone(), name).await?;
                    session.fork(Some(&EntryId::new(entry))).await?;
                    session
                }
                None => Session::open_or_create(store.clone(), user.clone(), name).await?,
            };
            // One process runs a session at a time: another chat on it is
            // refused until this one ends (or, killed, its lease lapses).
            let lease = SessionLease::take(store, &user, &session.info().id, LEASE_TTL).await?;
            Some((session, lease))
        }
        None => None,
    };
    let scope = env.host.user_scope(selected.user);
    crate::output::redact_with(scope.redactor());
    let views = Views::default();
    let mut following = None;
    let (session, lease) = session.unzip();
    let agent = match session {
        Some(session) => {
            let mut agents = AgentHost::builder(env.host.clone(), store_of(env).await?)
                .model_with_key(config.clone(), selected.api_key.clone())
                .offline(selected.offline)
                .max_turns(args.max_rounds)
                .compaction(env.config.compaction().automatic());
            for extension in &env.extensions {
                agents = agents.add_extension_factory(extension.clone());
            }
            let sink = views.clone();
            let mut options = AgentSessionOptions::new()
                .model(config.provider.to_string(), config.model.clone())
                .on_event(move |e| sink.on_event(e));
            if std::io::stdin().is_terminal() {
                options = options.interaction_handler(TerminalInteraction { yes: args.yes });
            }
            let agents = agents.build()?;
            // Results of long A2A tasks come back into this session.
            following = super::follow::start(env, &agents);
            Some(agents.start(session, options).await?)
        }
        None => None,
    };
    let mut chat = Chat {
        env,
        scope,
        provider: selected.provider,
        config,
        api_key: selected.api_key,
        offline: selected.offline,
        max_rounds: args.max_rounds,
        messages: Vec::new(),
        agent,
        views,
        _following: following,
        _lease: lease,
    };
    match args.message {
        Some(text) if text.trim_start().starts_with('/') => {
            chat.command(text.trim()).await?;
            Ok(ExitStatus::Success)
        }
        Some(text) => match chat.turn(text).await? {
            Turn::Answered(outcome) => {
                if env.json {
                    print_json(&outcome)?;
                }
                Ok(ExitStatus::Success)
            }
            Turn::Abandoned => Err(ChatError::Cancelled.into()),
        },
        None => chat.repl().await,
    }
}

/// How one message ended, when it did not fail.
enum Turn {
    /// The model answered; the outcome document.
    Answered(Value),
    /// A second Ctrl-C stopped waiting for the cancelled message.
    Abandoned,
}

struct Chat<'a> {
    env: &'a Env,
    scope: UserScope,
    provider: Arc<dyn ModelProvider>,
    config: ModelProviderConfig,
    api_key: Option<SecretString>,
    offline: bool,
    max_rounds: usize,
    /// The conversation without `--session`.
    messages: Vec<ChatMessage>,
    /// The session agent (`--session`).
    agent: Option<AgentSession>,
    /// Where the agent's events go: the view of the message running.
    views: Views,
    /// The A2A follower delivering into the session (`follow.rs`).
    _following: Option<super::follow::Following>,
    /// The session's lease, held while the chat runs.
    _lease: Option<SessionLease>,
}

impl Chat<'_> {
    /// Sends one message and runs the chat loop until the model answers.
    async fn turn(&mut self, text: String) -> Result<Turn, CliError> {
        if self.agent.is_some() {
            return self.agent_run(Some(text)).await;
        }
        self.messages.push(ChatMessage::user(text));
        let cancel = CancellationToken::new();
        let view = Arc::new(View::new(self.env.json));
        let sink = view.clone();
        let options = ChatLoopOptions::new()
            .max_rounds(self.max_rounds)
            .offline(self.offline)
            .cancellation(cancel.clone())
            .on_event(move |event| sink.on_event(event));
        let chat = run_chat(
            &self.scope,
            &*self.provider,
            &self.config,
            &mut self.messages,
        )
        .api_key(self.api_key.as_ref())
        .options(options);
        let outcome = cancellable(chat.into_future(), &cancel).await;
        view.finish();
        let outcome = match outcome {
            Some(Ok(outcome)) => outcome,
            Some(Err(error)) => return Err(self.redacted(error.into())),
            None => return Ok(Turn::Abandoned),
        };
        Ok(Turn::Answered(json!({
            "user": self.scope.user().id(),
            "provider": self.config.provider,
            "model": self.config.model,
            "answer": outcome.message.content,
            "finish_reason": outcome.finish_reason,
            "rounds": outcome.rounds,
            "tool_calls": view.calls(),
        })))
    }

    /// A run of the session agent: `text` as the person's prompt, or
    /// (`None`) what waits for a turn, a follow-up that arrived.
    async fn agent_run(&mut self, text: Option<String>) -> Result<Turn, CliError> {
        let cancel = CancellationToken::new();
        let view = self.views.start(self.env.json);
        let agent = self.agent.as_mut().ok_or(ChatError::Cancelled)?;
        agent.cancellation(cancel.clone());
        let outcome = match text {
            Some(text) => cancellable(agent.prompt(text), &cancel).await,
            None => cancellable(agent.run_pending(), &cancel)
                .await
                .map(|run| run.map(Option::unwrap_or_default)),
        };
        self.views.finish(&view);
        match outcome {
            Some(outcome) => self.answered(outcome.map_err(CliError::from), &view).await,
            None => Ok(Turn::Abandoned),
        }
    }

    fn redacted(&self, error: CliError) -> CliError {
        let redactors = [self.scope.redactor(), self.env.host.redactor()];
        error.redacted(&redactors)
    }

    /// The outcome document of an agent's run.
    async fn answered(
        &self,
        outcome: Result<RunOutcome, CliError>,
        view: &View,
    ) -> Result<Turn, CliError> {
        let outcome = outcome.map_err(|e| self.redacted(e))?;
        let mut document = json!({
            "user": self.scope.user().id(),
            "provider": self.config.provider,
            "model": self.config.model,
            "answer": outcome.text,
            "finish_reason": null,
            "rounds": outcome.turns,
            "tool_calls": view.calls(),
        });
        if let Some(done) = &outcome.compaction {
            let done = compact::document(done, json!({"automatic": true}));
            if !self.env.json {
                note(&format!("automatic {}", compact::describe(&done)));
            }
            document["compaction"] = done;
        }
        if let Some(message) = &outcome.compaction_error {
            // The message succeeded and the session is whole: say why the
            // context stays long, and go on.
            let error = CliError::Extension {
                kind: "compaction",
                message: message.clone(),
            };
            print_error(&error, self.env.json);
        }
        if let Some(agent) = &self.agent {
            let session = agent.session().await;
            document["session"] = json!(session.info().name);
            document["leaf"] = json!(session.leaf().map(|l| l.as_str()));
        }
        Ok(Turn::Answered(document))
    }

    /// Runs a slash command and prints its answer: a built-in one, else
    /// an extension's (which may start a run).
    async fn command(&mut self, line: &str) -> Result<(), CliError> {
        let name = line.split_whitespace().next().unwrap_or(line);
        let answer = match self.agent.as_mut() {
            _ if name == "/retry" => return self.retry_command().await,
            _ if name == "/compact" => {
                let focus = line.strip_prefix("/compact").unwrap_or_default();
                self.compact_command(focus.trim()).await?
            }
            None => slash::run(line, None, &[]).await?,
            Some(agent) if slash::is_builtin(name) => {
                let extensions = agent.commands();
                let mut session = agent.session().await;
                slash::run(line, Some(&mut *session), &extensions).await?
            }
            Some(agent) => {
                let cancel = CancellationToken::new();
                agent.cancellation(cancel.clone());
                let view = self.views.start(self.env.json);
                let agent = self.agent.as_mut().ok_or(ChatError::Cancelled)?;
                let outcome = cancellable(agent.run_command(line), &cancel).await;
                self.views.finish(&view);
                let ran = match outcome {
                    Some(Ok(ran)) => ran,
                    Some(Err(error)) => return Err(self.redacted(error.into())),
                    None => return Err(ChatError::Cancelled.into()),
                };
                let Some(run) = ran else {
                    if self.env.json {
                        print_json_line(&json!({"command": name.trim_start_matches('/')}))?;
                    }
                    return Ok(());
                };
                if let Turn::Answered(document) = self.answered(Ok(run), &view).await?
                    && self.env.json
                {
                    print_json_line(&document)?;
                }
                return Ok(());
            }
        };
        if self.env.json {
            print_json_line(&answer.json)
        } else {
            print_text(&answer.text)
        }
    }

    /// One message per line of stdin until end of input.
    async fn repl(&mut self) -> Result<ExitStatus, CliError> {
        let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        if interactive {
            note(&format!(
                "chatting with {} through `{}` as {}; one message per line, Ctrl-D to end",
                self.config.model.as_deref().unwrap_or_default(),
                self.config.provider,
                self.scope.user().id(),
            ));
            if let Some(agent) = &self.agent
                && !agent.commands().is_empty()
            {
                note("/help lists the commands, the extensions' too");
            }
        }
        let mut status = ExitStatus::Success;
        // The line being read survives a follow-up's turn: a read is
        // started once and awaited until it gives its line.
        let mut reading = None;
        loop {
            let read = reading.get_or_insert_with(|| {
                if interactive {
                    prompt();
                }
                Box::pin(read_line())
            });
            let next = tokio::select! {
                line = read => Next::Line(line),
                () = interrupted() => Next::Interrupted,
                () = follow_up(self.agent.as_ref()) => Next::FollowUp,
            };
            let line = match next {
                Next::Line(line) => {
                    reading = None;
                    line?
                }
                Next::Interrupted => {
                    if interactive {
                        note("");
                    }
                    return Ok(ExitStatus::Interrupted);
                }
                Next::FollowUp => {
                    if interactive {
                        note("");
                    }
                    match self.agent_run(None).await {
                        Ok(Turn::Answered(outcome)) if self.env.json => print_json_line(&outcome)?,
                        Ok(Turn::Answered(_)) => {}
                        Ok(Turn::Abandoned) => return Ok(ExitStatus::Interrupted),
                        Err(error) => print_error(&error, self.env.json),
                    }
                    if interactive {
                        prompt();
                    }
                    continue;
                }
            };
            let Some(line) = line else {
                return Ok(status);
            };
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            if text.starts_with('/') {
                if let Err(error) = self.command(text).await {
                    print_error(&error, self.env.json);
                    status = error.exit_status();
                }
                continue;
            }
            match self.turn(text.to_owned()).await {
                Ok(Turn::Answered(outcome)) => {
                    if self.env.json {
                        print_json_line(&outcome)?;
                    }
                }
                Ok(Turn::Abandoned) => return Ok(ExitStatus::Interrupted),
                Err(error) => {
                    print_error(&error, self.env.json);
                    if error.exit_status() != ExitStatus::Interrupted {
                        status = error.exit_status();
                    }
                }
            }
        }
    }
}

/// What the interactive loop woke up for.
enum Next {
    Line(Result<Option<String>, CliError>),
    Interrupted,
    FollowUp,
}

/// Returns when the session agent has a turn waiting (a follow-up that
/// arrived); never without an agent.
async fn follow_up(agent: Option<&AgentSession>) {
    match agent {
        Some(agent) => agent.pending().await,
        None => std::future::pending().await,
    }
}

/// The session store of the config.
pub(super) async fn store_of(
    env: &Env,
) -> Result<Arc<dyn oscova_agent::session::SessionStore>, CliError> {
    super::sessions::open_store(&env.config).await
}

/// Sends the agent's events to the view of the message running; an
/// extension's failure is a note on stderr (redacted, one line).
#[derive(Clone, Default)]
struct Views(Arc<std::sync::Mutex<Option<Arc<View>>>>);

impl Views {
    fn start(&self, json: bool) -> Arc<View> {
        let view = Arc::new(View::new(json));
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(view.clone());
        view
    }

    fn finish(&self, view: &View) {
        view.finish();
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn on_event(&self, event: &AgentEvent) {
        let chat = match event {
            AgentEvent::Text(text) => ChatEvent::Text(text.clone()),
            AgentEvent::ToolRunning(call) => ChatEvent::ToolCallRunning(call.clone()),
            AgentEvent::ToolFinished { id, name, result } => {
                let refused = matches!(
                    result.details.get("error").and_then(Value::as_str),
                    Some("blocked" | "not_approved" | "inactive_tool" | "expired")
                );
                ChatEvent::ToolCallFinished {
                    id: id.clone(),
                    name: name.clone(),
                    result: result.clone(),
                    refused,
                }
            }
            AgentEvent::ToolInterrupted { call, result } => {
                // A call a stopped process had started: shown as a call
                // that ended with the agent's word for it.
                self.show(&ChatEvent::ToolCallRunning(call.clone()));
                ChatEvent::ToolCallFinished {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    result: result.clone(),
                    refused: false,
                }
            }
            AgentEvent::WaitExpired { call, result } => {
                // Nobody approved it in time: refused, as a denial is.
                self.show(&ChatEvent::ToolCallRunning(call.clone()));
                ChatEvent::ToolCallFinished {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    result: result.clone(),
                    refused: true,
                }
            }
            AgentEvent::ExtensionError(report) => {
                let text = format!(
                    "extension `{}` failed ({}): {}",
                    report.extension, report.event, report.message
                );
                note(&crate::term::one_line(&crate::output::redacted(&text)));
                return;
            }
            _ => return,
        };
        self.show(&chat);
    }

    fn show(&self, event: &ChatEvent) {
        let view = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(view) = view {
            view.on_event(event);
        }
    }
}

/// The next line of stdin, without its line end; `None` at end of input.
/// The read blocks a thread of its own; an abandoned one ends with the
/// process.
async fn read_line() -> Result<Option<String>, CliError> {
    let read = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map(|n| (n > 0).then_some(line))
    })
    .await;
    match read {
        Ok(line) => line.map_err(CliError::Input),
        Err(e) => Err(CliError::Input(std::io::Error::other(e))),
    }
}

fn prompt() {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "> ");
    let _ = err.flush();
}

fn note(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}
