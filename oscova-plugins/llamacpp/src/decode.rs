//! Reading the model's output as it is sampled: answer text, and tool
//! calls in the forms the Qwen models write them.
//!
//! Rules: a call starts at the `<tool_call>` tag (Qwen's native form,
//! anywhere in the answer), at a `{` that opens the answer (bare JSON),
//! or at a fenced ```` ```json ```` block that opens it; from there until
//! its object closes, tokens are sampled under the call grammar
//! ([`crate::grammar`]), so what is read here is always one valid call.
//! The bare and fenced forms are recognised *before* their first token is
//! taken ([`Feed::Constrain`]): the same logits are sampled again under
//! the grammar, so the opening brace is the grammar's too. After a call,
//! closing tags, fences and white space are skipped, another
//! `<tool_call>` starts the next call, and anything else ends the answer
//! (small models ramble after a call). Leading white space of an answer
//! is dropped. Text is streamed as it is decided, never text that turns
//! out to be a call.

use serde_json::Value;

/// What the sampler must do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    /// Sample freely (calls may start, unless banned).
    Free,
    /// Sample under the call grammar.
    Call,
}

/// What a fed token did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Feed {
    /// Taken; `text` (possibly empty) is new answer text.
    Text(String),
    /// Not taken: sample these logits again under the call grammar.
    Constrain,
    /// Taken; a call is complete.
    Call(ParsedCall),
    /// Not taken: the answer is over.
    Stop,
}

/// A complete call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParsedCall {
    /// The tool's name.
    pub(crate) name: String,
    /// Its arguments.
    pub(crate) arguments: Value,
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    /// Nothing but white space yet.
    Start,
    /// Answer text.
    Text,
    /// A fence opening the answer, held back until it is known to be a
    /// call (` ```json `) or not.
    Fence(String),
    /// Inside a call's JSON.
    Call(Json),
    /// After a call.
    After(usize),
}

/// The longest run of skippable tokens after a call.
const MAX_AFTER: usize = 16;

/// The output reader.
#[derive(Debug)]
pub(crate) struct Decoder {
    state: State,
    calls_allowed: bool,
    content: String,
    taken: usize,
}

impl Decoder {
    /// A reader for an answer; `tools` says whether any tool is offered.
    pub(crate) fn new(tools: bool) -> Self {
        Self {
            state: State::Start,
            calls_allowed: tools,
            content: String::new(),
            taken: 0,
        }
    }

    /// How the next token must be sampled.
    pub(crate) fn want(&self) -> Want {
        match self.state {
            State::Call(_) => Want::Call,
            _ => Want::Free,
        }
    }

    /// The answer text so far.
    pub(crate) fn content(&self) -> &str {
        &self.content
    }

    /// How many tokens were taken.
    pub(crate) fn taken(&self) -> usize {
        self.taken
    }

    /// Whether the call being read is still inside its `"name"` value
    /// (where a token the grammar refuses means the model wanted a tool
    /// that is not offered).
    pub(crate) fn in_call_name(&self) -> bool {
        match &self.state {
            State::Call(json) => name_value(&json.text).is_some(),
            _ => false,
        }
    }

    /// Reads one sampled token: its text (complete characters only) and
    /// whether it is the `<tool_call>` tag or an end-of-generation token.
    pub(crate) fn feed(&mut self, piece: &str, is_open_tag: bool, is_end: bool) -> Feed {
        let feed = self.step(piece, is_open_tag, is_end);
        if !matches!(feed, Feed::Constrain | Feed::Stop) {
            self.taken += 1;
        }
        feed
    }

    fn step(&mut self, piece: &str, is_open_tag: bool, is_end: bool) -> Feed {
        match &mut self.state {
            // A fence held back at the end is released by `finish`.
            State::Start | State::Text | State::Fence(_) if is_end => Feed::Stop,
            State::Start | State::Text if self.calls_allowed && is_open_tag => {
                self.enter_call();
                Feed::Text(String::new())
            }
            State::Start => {
                let trimmed = piece.trim_start();
                if trimmed.is_empty() {
                    return Feed::Text(String::new());
                }
                if self.calls_allowed && trimmed.starts_with('{') {
                    self.enter_call();
                    return Feed::Constrain;
                }
                if self.calls_allowed && trimmed.starts_with('`') {
                    self.state = State::Fence(trimmed.to_owned());
                    return Feed::Text(String::new());
                }
                self.state = State::Text;
                self.text(trimmed)
            }
            State::Text => self.text(piece),
            State::Fence(held) => {
                let fence = held.trim_end();
                let open = matches!(fence, "```json" | "```JSON")
                    || (fence == "```" && held.ends_with('\n'));
                if open || (fence == "```" && piece.trim_start().starts_with('{')) {
                    self.enter_call();
                    return Feed::Constrain;
                }
                let longer = format!("{held}{piece}");
                if "```json".starts_with(longer.trim_end()) || longer.trim_end() == "```json" {
                    *held = longer;
                    return Feed::Text(String::new());
                }
                // Not a call after all: the fence is text.
                self.state = State::Text;
                self.text(&longer)
            }
            State::Call(json) => {
                let Some(end) = json.push(piece) else {
                    return Feed::Text(String::new());
                };
                let text = std::mem::take(&mut json.text);
                self.state = State::After(0);
                match parse_call(&text[..end]) {
                    Some((name, arguments)) => Feed::Call(ParsedCall { name, arguments }),
                    // The grammar makes this unreachable; end the answer
                    // rather than return a call that is not one.
                    None => Feed::Stop,
                }
            }
            State::After(skipped) => {
                if is_end || *skipped >= MAX_AFTER {
                    return Feed::Stop;
                }
                if is_open_tag && self.calls_allowed {
                    self.enter_call();
                    return Feed::Text(String::new());
                }
                let trimmed = piece.trim();
                let closing = trimmed.is_empty()
                    || "</tool_call>".starts_with(trimmed)
                    || trimmed
                        .chars()
                        .all(|c| c == '`' || c == '<' || c == '/' || c == '>');
                if closing {
                    *skipped += 1;
                    Feed::Text(String::new())
                } else {
                    Feed::Stop
                }
            }
        }
    }

    fn enter_call(&mut self) {
        self.state = State::Call(Json::default());
    }

    fn text(&mut self, piece: &str) -> Feed {
        self.content.push_str(piece);
        Feed::Text(piece.to_owned())
    }

    /// Text held back when the answer ended (a fence that never became a
    /// call), which belongs to the answer.
    pub(crate) fn finish(&mut self) -> Option<String> {
        if let State::Fence(held) = &self.state {
            let held = held.clone();
            self.content.push_str(&held);
            self.state = State::Text;
            return Some(held);
        }
        None
    }
}

/// The `"name"` value written so far, when `text` (a call's JSON so far)
/// ends inside it.
fn name_value(text: &str) -> Option<&str> {
    let key = text.find("\"name\"")?;
    let rest = text[key + 6..].trim_start().strip_prefix(':')?;
    let value = rest.trim_start().strip_prefix('"')?;
    let mut escaped = false;
    for c in value.chars() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => return None,
            _ => {}
        }
    }
    Some(value)
}

/// Tracks where a JSON object ends as its text arrives.
#[derive(Debug, Clone, Default, PartialEq)]
struct Json {
    text: String,
    depth: usize,
    started: bool,
    in_string: bool,
    escaped: bool,
}

impl Json {
    /// Adds `piece`; the byte length of the object once it is closed.
    fn push(&mut self, piece: &str) -> Option<usize> {
        let base = self.text.len();
        self.text.push_str(piece);
        for (i, c) in piece.char_indices() {
            if self.in_string {
                match (self.escaped, c) {
                    (true, _) => self.escaped = false,
                    (false, '\\') => self.escaped = true,
                    (false, '"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => self.in_string = true,
                '{' | '[' => {
                    self.depth += 1;
                    self.started = true;
                }
                '}' | ']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.started && self.depth == 0 {
                        return Some(base + i + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// `{"name": ..., "arguments": {...}}` read as a call.
fn parse_call(text: &str) -> Option<(String, Value)> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    let name = value.get("name")?.as_str()?.to_owned();
    let arguments = value.get("arguments").cloned().unwrap_or(Value::Null);
    let arguments = match arguments {
        Value::Null => Value::Object(Default::default()),
        // A model that writes its arguments as a JSON string.
        Value::String(s) => serde_json::from_str(&s).ok()?,
        other => other,
    };
    Some((name, arguments))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Feeds pieces; `Constrain` is followed by feeding the same piece
    /// again (the grammar's pick in these tests).
    fn run(decoder: &mut Decoder, pieces: &[&str]) -> Vec<Feed> {
        let mut out = Vec::new();
        for piece in pieces {
            let tag = *piece == "<tool_call>";
            let end = *piece == "<|im_end|>";
            let mut feed = decoder.feed(piece, tag, end);
            if feed == Feed::Constrain {
                assert_eq!(decoder.want(), Want::Call);
                out.push(feed);
                feed = decoder.feed(piece, tag, end);
            }
            let stop = feed == Feed::Stop;
            out.push(feed);
            if stop {
                break;
            }
        }
        out
    }

    fn calls(feeds: &[Feed]) -> Vec<(String, Value)> {
        feeds
            .iter()
            .filter_map(|f| match f {
                Feed::Call(c) => Some((c.name.clone(), c.arguments.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn qwens_tagged_call_after_text() {
        let mut d = Decoder::new(true);
        let feeds = run(
            &mut d,
            &[
                "Let me",
                " check.\n",
                "<tool_call>",
                "\n{\"name\": \"t\", ",
                "\"arguments\": {\"z\": \"a}\\\"\"}}",
                "\n",
                "</tool_call>",
                "<|im_end|>",
            ],
        );
        assert_eq!(calls(&feeds), [("t".to_owned(), json!({"z": "a}\""}))]);
        assert_eq!(d.content(), "Let me check.\n");
        assert_eq!(feeds.last(), Some(&Feed::Stop));
    }

    #[test]
    fn bare_json_opening_the_answer_is_resampled_under_the_grammar() {
        let mut d = Decoder::new(true);
        let feeds = run(
            &mut d,
            &[
                "\n",
                "{\"",
                "name\": \"t\", \"arguments\": {}}",
                "<|im_end|>",
            ],
        );
        assert_eq!(feeds[1], Feed::Constrain);
        assert_eq!(calls(&feeds), [("t".to_owned(), json!({}))]);
        assert_eq!(d.content(), "");
    }

    #[test]
    fn a_json_fence_is_a_call_and_another_fence_is_text() {
        let mut d = Decoder::new(true);
        let feeds = run(
            &mut d,
            &[
                "```",
                "json",
                "\n",
                "{\"name\": \"t\", \"arguments\": {\"a\": 1}}",
                "\n```",
                "<|im_end|>",
            ],
        );
        assert_eq!(calls(&feeds), [("t".to_owned(), json!({"a": 1}))]);
        assert_eq!(d.content(), "");

        let mut d = Decoder::new(true);
        assert_eq!(
            run(&mut d, &["```", "<|im_end|>"]).last(),
            Some(&Feed::Stop)
        );
        assert_eq!(d.finish().as_deref(), Some("```"));
        assert_eq!(d.content(), "```");

        let mut d = Decoder::new(true);
        run(&mut d, &["```", "python", "\nprint(1)\n```", "<|im_end|>"]);
        assert_eq!(d.content(), "```python\nprint(1)\n```");
    }

    #[test]
    fn two_calls_in_a_row_and_rambling_after_a_call_ends_the_answer() {
        let mut d = Decoder::new(true);
        let feeds = run(
            &mut d,
            &[
                "<tool_call>",
                "{\"name\": \"a\", \"arguments\": {}}",
                "</tool_call>",
                "\n",
                "<tool_call>",
                "{\"name\": \"b\", \"arguments\": {}}",
                "\n",
                "Sure! I",
                "never",
            ],
        );
        assert_eq!(calls(&feeds).len(), 2);
        assert_eq!(feeds.last(), Some(&Feed::Stop));
    }

    #[test]
    fn without_tools_everything_is_text() {
        let mut d = Decoder::new(false);
        run(&mut d, &["{\"a\": 1}", " <tool_call>", "<|im_end|>"]);
        assert_eq!(d.content(), "{\"a\": 1} <tool_call>");
    }

    #[test]
    fn the_name_value_is_told_apart() {
        assert_eq!(name_value("{"), None);
        assert_eq!(name_value("{\"name\": "), None);
        assert_eq!(name_value("{\"name\": \""), Some(""));
        assert_eq!(name_value("{\"name\": \"oscova_ti"), Some("oscova_ti"));
        assert_eq!(name_value("{\"name\": \"t\", \"arg"), None);
        let mut d = Decoder::new(true);
        d.feed("<tool_call>", true, false);
        d.feed("{\"name\": \"os", false, false);
        assert!(d.in_call_name());
        d.feed("\", ", false, false);
        assert!(!d.in_call_name());
    }

    #[test]
    fn arguments_written_as_a_string_are_read_as_json() {
        assert_eq!(
            parse_call("{\"name\": \"t\", \"arguments\": \"{\\\"a\\\": 1}\"}"),
            Some(("t".to_owned(), json!({"a": 1})))
        );
        assert_eq!(
            parse_call("{\"name\": \"t\"}"),
            Some(("t".to_owned(), json!({})))
        );
        assert_eq!(parse_call("{\"arguments\": {}}"), None);
    }
}
