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
//! that entry, where the next message starts a new branch). Each user
//! message is appended before the model is called, and the messages the
//! chat loop produced (answers, tool calls, tool results) after each
//! message, even a failed or cancelled one, so what was exchanged is
//! durable once the message ends. A line starting with `/` is a slash
//! command (`slash`; `/compact` in `compact`), never sent to the model.
//! When `[sessions] context_window` is set, a context past the window
//! minus the reserve is compacted after the message (`compact`); the
//! outcome document then has a `compaction` field.

mod compact;
mod slash;
mod view;

use std::future::IntoFuture as _;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use oscova_agent::chat::{ChatError, ChatLoopOptions, run_chat};
use oscova_agent::session::{EntryId, Session};
use oscova_core::provider::model::{ChatMessage, ModelProvider, ModelProviderConfig};
use oscova_core::{CancellationToken, SecretString, UserScope};
use serde_json::{Value, json};

use super::provider::select;
use super::{Env, cancellable, interrupted};
use crate::cli::ChatArgs;
use crate::error::{CliError, ExitStatus};
use crate::output::{print_error, print_json, print_json_line, print_text};
use view::View;

pub(super) async fn run(env: &Env, args: ChatArgs) -> Result<ExitStatus, CliError> {
    let selected = select(env, &args.provider, args.user.user.as_deref())?;
    let mut config = selected.config;
    if let Some(model) = args.model.as_deref().map(str::trim) {
        config.model = Some(model.to_owned()).filter(|m| !m.is_empty());
    }
    if config.model.is_none() {
        return Err(CliError::NoModel {
            provider: config.provider.to_string(),
        });
    }
    let session = match args.session.as_deref() {
        Some(name) => {
            let store = super::sessions::open_store(&env.config).await?;
            let user = selected.user.clone();
            // A fork continues a session that exists; otherwise a missing
            // one is created.
            let session = match args.fork.as_deref() {
                Some(entry) => {
                    let mut session = Session::open(store, user, name).await?;
                    session.fork(Some(&EntryId::new(entry))).await?;
                    session
                }
                None => Session::open_or_create(store, user, name).await?,
            };
            Some(session)
        }
        None => None,
    };
    let messages = session
        .as_ref()
        .map(|s| s.context().chat_messages())
        .unwrap_or_default();
    let scope = env.host.user_scope(selected.user);
    crate::output::redact_with(scope.redactor());
    let mut chat = Chat {
        env,
        scope,
        provider: selected.provider,
        config,
        api_key: selected.api_key,
        offline: selected.offline,
        max_rounds: args.max_rounds,
        stored: messages.len(),
        messages,
        session,
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
    messages: Vec<ChatMessage>,
    /// The session the conversation is kept in (`--session`).
    session: Option<Session>,
    /// How many of `messages` the session holds.
    stored: usize,
}

impl Chat<'_> {
    /// Sends one message and runs the chat loop until the model answers.
    async fn turn(&mut self, text: String) -> Result<Turn, CliError> {
        self.messages.push(ChatMessage::user(text));
        self.store().await?;
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
        // What the loop produced is kept whatever the outcome.
        self.store().await?;
        let outcome = match outcome {
            Some(Ok(outcome)) => outcome,
            Some(Err(error)) => {
                let redactors = [self.scope.redactor(), self.env.host.redactor()];
                return Err(CliError::from(error).redacted(&redactors));
            }
            None => return Ok(Turn::Abandoned),
        };
        let mut outcome = json!({
            "user": self.scope.user().id(),
            "provider": self.config.provider,
            "model": self.config.model,
            "answer": outcome.message.content,
            "finish_reason": outcome.finish_reason,
            "rounds": outcome.rounds,
            "tool_calls": view.calls(),
        });
        match self.compact_if_needed().await {
            Ok(Some(done)) => {
                if !self.env.json {
                    note(&format!("automatic {}", compact::describe(&done)));
                }
                outcome["compaction"] = done;
            }
            Ok(None) => {}
            // The message succeeded and the session is whole: say why the
            // context stays long, and go on.
            Err(error) => print_error(&error, self.env.json),
        }
        if let Some(session) = &self.session {
            outcome["session"] = json!(session.info().name);
            outcome["leaf"] = json!(session.leaf().map(|l| l.as_str()));
        }
        Ok(Turn::Answered(outcome))
    }

    /// Appends the messages the session does not hold yet, as one batch.
    async fn store(&mut self) -> Result<(), CliError> {
        let Some(session) = self.session.as_mut() else {
            return Ok(());
        };
        let new = &self.messages[self.stored.min(self.messages.len())..];
        if !new.is_empty() {
            session.append_chat(new).await?;
            self.stored = self.messages.len();
        }
        Ok(())
    }

    /// Runs a slash command and prints its answer.
    async fn command(&mut self, line: &str) -> Result<(), CliError> {
        let answer = match line.strip_prefix("/compact") {
            Some(focus) if focus.is_empty() || focus.starts_with(char::is_whitespace) => {
                self.compact_command(focus.trim()).await?
            }
            _ => slash::run(line, self.session.as_mut()).await?,
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
        }
        let mut status = ExitStatus::Success;
        loop {
            if interactive {
                prompt();
            }
            let line = tokio::select! {
                line = read_line() => line?,
                () = interrupted() => {
                    if interactive {
                        note("");
                    }
                    return Ok(ExitStatus::Interrupted);
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
