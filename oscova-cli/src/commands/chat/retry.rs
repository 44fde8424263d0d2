//! `/retry` in `oscova chat --session`: asks the model again after a
//! message whose model call failed.
//!
//! Rules: the session keeps the message and everything before the failed
//! call (the agent's `AgentError::ModelCall`, whose message names
//! `/retry`), so a retry sends nothing new: `AgentSession::retry` runs the
//! model on the branch as it is, and the answer is shown as a message's
//! is. With nothing waiting for the model (the last message is an answer)
//! it is a usage error; without `--session` too. Ctrl-C cancels it as it
//! cancels a message.

use oscova_agent::chat::ChatError;
use oscova_core::CancellationToken;

use super::{Chat, Turn, cancellable};
use crate::error::CliError;
use crate::output::print_json_line;

impl Chat<'_> {
    /// `/retry`.
    pub(super) async fn retry_command(&mut self) -> Result<(), CliError> {
        let Some(agent) = self.agent.as_mut() else {
            return Err(CliError::SlashCommand {
                message: "/retry works on a session: start the chat with --session NAME".into(),
            });
        };
        let cancel = CancellationToken::new();
        agent.cancellation(cancel.clone());
        let view = self.views.start(self.env.json);
        let agent = self.agent.as_mut().ok_or(ChatError::Cancelled)?;
        let outcome = cancellable(agent.retry(), &cancel).await;
        self.views.finish(&view);
        let Some(outcome) = outcome else {
            return Err(ChatError::Cancelled.into());
        };
        if let Turn::Answered(document) = self
            .answered(outcome.map_err(CliError::from), &view)
            .await?
            && self.env.json
        {
            print_json_line(&document)?;
        }
        Ok(())
    }
}
