//! One answer: the prompt read (from the cached prefix on), then tokens
//! sampled until the answer ends, with tool calls under the grammar.
//!
//! Rules: the prompt is the model's template rendered for the messages
//! and tools ([`crate::template`]); template text is tokenized with
//! special tokens parsed, message text never. Only the part of the prompt
//! past the longest prefix already in the context is read
//! ([`super::cache`]). Once the turn's tool results are in, the model
//! answers in words from a prompt without tools, the tool exchange given
//! as text ([`crate::fold`]), unless the `follow_up_calls` option lets it
//! call more tools first (the Qwen models then tend to call again, or
//! call something else, rather than read the result). Two things end an
//! attempt with tools early, with the same answer in words: a call that
//! repeats, name and arguments, one already answered since the person
//! last spoke, and a tool name the grammar refused far below the model's
//! own choice (it wanted a tool that is not offered). While an attempt
//! may still end so, after tool results, its text is held back rather
//! than streamed. A call repeated within one answer is kept once. Every answer
//! ends by an end-of-generation token, the decoder's stop, the token
//! limit (`length`) or the context's end (`length`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use oscova_core::provider::model::{ChatMessage, ChatRole, ToolSpec};
use serde_json::Value;

use super::bench::bench;
use super::cache::reuse_prefix;
use super::sample::Sampling;
use super::text::Utf8;
use super::{EngineError, Event, Job, Slot, Task};
use crate::decode::{Decoder, Feed, Want};
use crate::fold::fold;
use crate::grammar::call_schema;
use crate::template::{Piece, python_json, render};

/// The grammars made, by the tools' names and schemas; cleared past this.
const MAX_GRAMMARS: usize = 64;

/// What an answer came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    /// The answer text.
    pub(crate) content: String,
    /// The calls, in order.
    pub(crate) calls: Vec<(String, Value)>,
    /// `stop`, `tool_calls` or `length`.
    pub(crate) finish: &'static str,
    /// Tokens of the prompt.
    pub(crate) prompt_tokens: usize,
    /// Of them, tokens found in the cache and not read again.
    pub(crate) cached_tokens: usize,
    /// Tokens generated.
    pub(crate) output_tokens: usize,
    /// Milliseconds reading the prompt.
    pub(crate) prompt_ms: f64,
    /// Milliseconds from taking the job to the first token.
    pub(crate) first_token_ms: f64,
    /// Milliseconds generating (after the first token).
    pub(crate) generate_ms: f64,
    /// Tools whose arguments the grammar could not constrain.
    pub(crate) unconstrained: Vec<String>,
}

/// A call grammar made for a tool set (GBNF and the tools it leaves
/// unconstrained), or why none could be.
type Made = Result<(String, Vec<String>), String>;

/// What the loaded model gives every answer.
pub(crate) struct Loaded<'m> {
    pub(super) model: &'m LlamaModel,
    template: String,
    bos: String,
    eos: String,
    open_tag: Option<LlamaToken>,
    grammars: RefCell<HashMap<String, Made>>,
}

impl<'m> Loaded<'m> {
    pub(crate) fn new(model: &'m LlamaModel) -> Result<Self, EngineError> {
        let template = model
            .chat_template(None)
            .ok()
            .and_then(|t| t.to_string().ok())
            .ok_or_else(|| {
                EngineError::Other(
                    "the model file has no chat template (tokenizer.chat_template); \
                     use an instruct model's GGUF"
                        .into(),
                )
            })?;
        let vocab = model.vocab();
        let text = |t: LlamaToken| {
            String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned()
        };
        let open = vocab.tokenize(b"<tool_call>", false, true);
        Ok(Self {
            model,
            template,
            bos: text(vocab.bos()),
            eos: text(vocab.eos()),
            open_tag: (open.len() == 1).then(|| open[0]),
            grammars: RefCell::new(HashMap::new()),
        })
    }

    /// The prompt's tokens.
    fn tokenize(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolSpec],
    ) -> Result<Vec<LlamaToken>, EngineError> {
        let pieces =
            render(&self.template, messages, tools, &self.bos, &self.eos).map_err(|e| {
                EngineError::Other(format!("the model's chat template did not render: {e}"))
            })?;
        let vocab = self.model.vocab();
        let mut tokens = Vec::new();
        if vocab.should_add_bos() {
            tokens.push(vocab.bos());
        }
        for piece in &pieces {
            match piece {
                Piece::Template(text) => {
                    tokens.extend(vocab.tokenize(text.as_bytes(), false, true))
                }
                Piece::Text(text) => tokens.extend(vocab.tokenize(text.as_bytes(), false, false)),
            }
        }
        Ok(tokens)
    }

    /// The call grammar for `tools` (made once per tool set), and the
    /// tools it leaves unconstrained.
    fn grammar(&self, tools: &[ToolSpec]) -> Result<(String, Vec<String>), String> {
        let key = tools
            .iter()
            .map(|t| format!("{}\u{0}{}", t.name, t.parameters))
            .collect::<Vec<_>>()
            .join("\u{1}");
        let mut grammars = self.grammars.borrow_mut();
        if let Some(made) = grammars.get(&key) {
            return made.clone();
        }
        if grammars.len() >= MAX_GRAMMARS {
            grammars.clear();
        }
        let call = call_schema(tools, |schema| {
            llama_cpp_2::json_schema_to_grammar(&python_json(schema)).is_ok()
        });
        let made = llama_cpp_2::json_schema_to_grammar(&python_json(&call.schema))
            .map(|gbnf| (with_leading_space(&gbnf), call.unconstrained))
            .map_err(|e| format!("the tools' call grammar could not be made: {e}"));
        grammars.insert(key, made.clone());
        made
    }
}

/// The converter's grammar under a root that allows white space before
/// the call (after a tag or a fence, the model writes a newline first).
fn with_leading_space(gbnf: &str) -> String {
    let renamed: Vec<String> = gbnf
        .lines()
        .map(|line| match line.strip_prefix("root ::=") {
            Some(rest) => format!("call-root ::={rest}"),
            None => line.to_owned(),
        })
        .collect();
    format!("root ::= [ \\t\\n]* call-root\n{}\n", renamed.join("\n"))
}

/// Runs `job` on `slot`, sending its events.
pub(crate) fn run(loaded: &Loaded<'_>, slot: &mut Slot<'_>, job: Job) {
    let result = match job.task {
        Task::Answer => answer(loaded, slot, &job),
        Task::Bench { prompt, generate } => bench(loaded, slot, prompt, generate),
    };
    let _ = job.events.send(Event::Done(result));
}

fn answer(loaded: &Loaded<'_>, slot: &mut Slot<'_>, job: &Job) -> Result<Outcome, EngineError> {
    let started = Instant::now();
    let after_results = job
        .messages
        .last()
        .is_some_and(|m| m.role == ChatRole::Tool);
    if after_results && !slot.settings.follow_up_calls {
        // Results are in: the model answers from them, in words.
        let folded = fold(&job.messages);
        return Ok(generate(loaded, slot, job, &folded, &[], false, started)?.outcome);
    }
    let first = generate(
        loaded,
        slot,
        job,
        &job.messages,
        &job.tools,
        after_results,
        started,
    )?;
    if first.ended == Ended::Done {
        return Ok(first.outcome);
    }
    // The model repeated an answered call or wanted a tool that is not
    // offered: it answers in words, the tool exchange given as text.
    let folded = fold(&job.messages);
    let second = generate(loaded, slot, job, &folded, &[], false, started)?;
    Ok(second.outcome)
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// With an answer.
    Done,
    /// With a call already answered since the person last spoke.
    Repeated,
    /// The model began a tool name the grammar refused.
    NoSuchTool,
}

/// One attempt at an answer.
struct Attempt {
    outcome: Outcome,
    ended: Ended,
}

#[allow(clippy::too_many_arguments)]
fn generate(
    loaded: &Loaded<'_>,
    slot: &mut Slot<'_>,
    job: &Job,
    messages: &[ChatMessage],
    tools: &[ToolSpec],
    hold: bool,
    started: Instant,
) -> Result<Attempt, EngineError> {
    let prompt = loaded.tokenize(messages, tools)?;
    let context = slot.ctx.n_ctx() as usize;
    if prompt.len() + 1 >= context {
        return Err(EngineError::TooLong {
            tokens: prompt.len(),
            context: slot.ctx.n_ctx(),
        });
    }
    let cached = reuse_prefix(slot, &prompt);
    let read_from = Instant::now();
    let mut last = read(
        &mut slot.ctx,
        &mut slot.tokens,
        &prompt[cached..],
        slot.settings.batch,
    )?;
    let prompt_ms = ms(read_from);

    let answered = answered_calls(messages);
    let mut decoder = Decoder::new(!tools.is_empty());
    let mut sampling = Sampling::new(slot.settings.temperature, slot.settings.seed);
    let mut grammar: Option<LlamaSampler> = None;
    let mut unconstrained = Vec::new();
    let mut calls: Vec<(String, Value)> = Vec::new();
    let mut held: Vec<String> = Vec::new();
    let mut utf8 = Utf8::default();
    let mut first_token_ms = None;
    let mut generating_from = Instant::now();
    let mut finish = "stop";
    let mut ended = Ended::Done;
    let vocab = loaded.model.vocab();
    loop {
        if job.cancel.is_cancelled() || job.events.is_closed() {
            return Err(EngineError::Cancelled);
        }
        if decoder.taken() >= slot.settings.max_tokens as usize || slot.tokens.len() + 1 >= context
        {
            finish = "length";
            break;
        }
        let want = decoder.want();
        if want == Want::Call && grammar.is_none() {
            let (gbnf, free) = loaded.grammar(tools).map_err(EngineError::Other)?;
            unconstrained = free;
            grammar = Some(
                LlamaSampler::grammar(loaded.model, &gbnf, "root").map_err(|e| {
                    EngineError::Other(format!("the call grammar did not load: {e}"))
                })?,
            );
        }
        let pick = sampling
            .pick(
                &slot.ctx,
                last,
                grammar.as_mut().filter(|_| want == Want::Call),
            )
            .map_err(EngineError::Other)?;
        if pick.overridden && decoder.in_call_name() && refused_by(slot, last, pick.token) {
            ended = Ended::NoSuchTool;
            break;
        }
        let token = pick.token;
        if first_token_ms.is_none() {
            first_token_ms = Some(ms(started));
            generating_from = Instant::now();
        }
        let is_end = vocab.is_eog(token);
        let bytes = vocab.token_to_piece(token, true, None);
        let piece = utf8.push(&bytes);
        let is_tag = Some(token) == loaded.open_tag || piece == "<tool_call>";
        let feed = decoder.feed(&piece, is_tag, is_end);
        if feed == Feed::Constrain {
            utf8.unpush();
            continue;
        }
        if want == Want::Call
            && let Some(grammar) = grammar.as_mut()
            && grammar.try_accept(token).is_err()
        {
            return Err(EngineError::Other(
                "the call grammar refused its own token".into(),
            ));
        }
        match feed {
            Feed::Stop => break,
            Feed::Constrain => {}
            Feed::Text(text) => {
                if !text.is_empty() {
                    if hold {
                        held.push(text);
                    } else {
                        let _ = job.events.send(Event::Text(text));
                    }
                }
                last = step(&mut slot.ctx, &mut slot.tokens, token)?;
            }
            Feed::Call(call) => {
                grammar = None;
                let call = (call.name, call.arguments);
                if answered.contains(&call) {
                    ended = Ended::Repeated;
                    break;
                }
                if !calls.contains(&call) {
                    let _ = job.events.send(Event::Call {
                        name: call.0.clone(),
                        arguments: call.1.clone(),
                    });
                    calls.push(call);
                }
                last = step(&mut slot.ctx, &mut slot.tokens, token)?;
            }
        }
    }
    if ended == Ended::Done {
        if let Some(rest) = decoder.finish() {
            held.push(rest);
        }
        for text in held {
            let _ = job.events.send(Event::Text(text));
        }
    }
    if !calls.is_empty() && finish == "stop" {
        finish = "tool_calls";
    }
    let outcome = Outcome {
        content: decoder.content().trim_end().to_owned(),
        calls,
        finish,
        prompt_tokens: prompt.len(),
        cached_tokens: cached,
        output_tokens: decoder.taken(),
        prompt_ms,
        first_token_ms: first_token_ms.unwrap_or_else(|| ms(started)),
        generate_ms: ms(generating_from),
        unconstrained,
    };
    Ok(Attempt { outcome, ended })
}

/// Reads `tokens` after those in the context, in batches; the batch index
/// of the last one's logits.
pub(super) fn read(
    ctx: &mut LlamaContext<'_>,
    held: &mut Vec<LlamaToken>,
    tokens: &[LlamaToken],
    batch_size: u32,
) -> Result<i32, EngineError> {
    let size = batch_size.max(1) as usize;
    let mut batch = LlamaBatch::new(size, 1);
    let mut last = 0;
    let count = tokens.len();
    for (c, chunk) in tokens.chunks(size).enumerate() {
        batch.clear();
        for (i, &token) in chunk.iter().enumerate() {
            let pos = held.len() as i32;
            let final_one = c * size + i + 1 == count;
            batch
                .add(token, pos, &[0], final_one)
                .map_err(|e| EngineError::Other(format!("batch: {e}")))?;
            held.push(token);
        }
        ctx.decode(&mut batch)
            .map_err(|e| EngineError::Other(format!("llama.cpp could not read the prompt: {e}")))?;
        last = batch.n_tokens() - 1;
    }
    Ok(last)
}

/// Reads one generated token; the index of its logits.
pub(super) fn step(
    ctx: &mut LlamaContext<'_>,
    held: &mut Vec<LlamaToken>,
    token: LlamaToken,
) -> Result<i32, EngineError> {
    read(ctx, held, &[token], 1)
}

/// The logit gap between the model's own choice and the grammar's beyond
/// which, inside a tool's name, the model is taken to want a tool that is
/// not offered (about 7x less likely). Measured on the benchmark's 36
/// prompts with the 0.5B model: the refusals of a right tool's name were
/// within 1 (`echo` for `example__example_echo`), a question that needs
/// no tool (`Say hello in French.` wanting `hello__fr`) well past 2;
/// aborting on every refusal lost 4 of the 36.
const NO_SUCH_TOOL_GAP: f32 = 2.0;

/// Whether the grammar's `chosen` token is more than [`NO_SUCH_TOOL_GAP`]
/// below the model's own best at `last`.
fn refused_by(slot: &Slot<'_>, last: i32, chosen: LlamaToken) -> bool {
    let logits = slot.ctx.get_logits_ith(last);
    let own = logits.iter().copied().fold(f32::MIN, f32::max);
    let given = logits.get(chosen.0 as usize).copied().unwrap_or(f32::MIN);
    own - given > NO_SUCH_TOOL_GAP
}

/// The calls answered since the person last spoke.
fn answered_calls(messages: &[ChatMessage]) -> Vec<(String, Value)> {
    let since = messages
        .iter()
        .rposition(|m| m.role == ChatRole::User)
        .map_or(0, |i| i + 1);
    messages[since..]
        .iter()
        .filter(|m| m.role == ChatRole::Assistant)
        .flat_map(|m| &m.tool_calls)
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect()
}

pub(super) fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_root_allows_leading_white_space() {
        let gbnf = with_leading_space("root ::= \"{\" x\nx ::= \"}\"");
        assert!(
            gbnf.starts_with("root ::= [ \\t\\n]* call-root\ncall-root ::= \"{\" x\nx ::= \"}\"")
        );
    }

    #[test]
    fn answered_calls_are_those_since_the_last_user_message() {
        use oscova_core::provider::model::ToolCallRequest;
        let call = |n: &str| ToolCallRequest {
            id: n.into(),
            name: n.into(),
            arguments: serde_json::json!({}),
        };
        let messages = [
            ChatMessage::user("a"),
            ChatMessage::assistant("", vec![call("old")]),
            ChatMessage::user("b"),
            ChatMessage::assistant("", vec![call("new")]),
            ChatMessage::tool("new", "r"),
        ];
        let answered = answered_calls(&messages);
        assert_eq!(answered.len(), 1);
        assert_eq!(answered[0].0, "new");
    }
}
