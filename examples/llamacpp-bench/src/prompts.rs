//! The fixed prompt sets: a session of about 400 tokens, and 36 tool
//! prompts over the first-party tools with what a right call is.

use oscova_core::provider::model::ChatMessage;
use serde_json::Value;

/// A conversation of about 400 tokens whose last message is the new turn.
pub(crate) fn session() -> Vec<ChatMessage> {
    vec![
        ChatMessage::system(
            "You are the assistant of a small bakery in Lisbon. Answer in one or two short \
             sentences. The bakery opens at seven in the morning and closes at six in the \
             evening, every day but Sunday. It sells pastel de nata, sourdough bread, \
             croissants, coffee and tea. Orders for more than twenty pastries need a day's \
             notice. Delivery is free within two kilometres of the shop on orders over fifteen \
             euros. The shop is on Rua da Prata in Baixa, near the river, with four small tables \
             inside and two on the pavement; dogs are welcome on the terrace.",
        ),
        ChatMessage::user("Hello! Are you open on Sundays?"),
        ChatMessage::assistant(
            "Hello! We are closed on Sundays, but open every other day from seven to six.",
            vec![],
        ),
        ChatMessage::user("Can I order thirty pastel de nata for tomorrow morning?"),
        ChatMessage::assistant(
            "Yes: thirty pastéis need a day's notice, so an order placed today is ready \
             tomorrow from seven.",
            vec![],
        ),
        ChatMessage::user("Do you deliver to Alfama? It is about one kilometre away."),
        ChatMessage::assistant(
            "Yes, Alfama is within two kilometres, so delivery is free on orders over fifteen \
             euros, and thirty pastéis is well over that.",
            vec![],
        ),
        ChatMessage::user("What kinds of bread do you bake, and is there anything without gluten?"),
        ChatMessage::assistant(
            "We bake sourdough bread and croissants every morning; we have nothing without \
             gluten at the moment, sorry.",
            vec![],
        ),
        ChatMessage::user("Can I pay by card, and do you take orders by phone as well?"),
        ChatMessage::assistant(
            "Yes to both: we take cards and contactless payments, and phone orders are welcome \
             during opening hours; large orders still need a day's notice.",
            vec![],
        ),
        ChatMessage::user("Great. What time should I come by to pick up coffee on Saturday?"),
    ]
}

/// One tool prompt: the tool expected (the end of its wire name) and the
/// check on its arguments.
pub(crate) struct Case {
    pub(crate) prompt: &'static str,
    pub(crate) tool: &'static str,
    pub(crate) check: fn(&Value) -> bool,
}

fn text(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_lowercase()
}

fn has(v: &Value, key: &str, part: &str) -> bool {
    text(v, key).contains(&part.to_lowercase())
}

/// Any string argument contains `part`.
fn any(v: &Value, part: &str) -> bool {
    v.as_object().is_some_and(|m| {
        m.values()
            .filter_map(Value::as_str)
            .any(|s| s.to_lowercase().contains(&part.to_lowercase()))
    })
}

macro_rules! case {
    ($prompt:expr, $tool:expr, |$v:ident| $check:expr) => {
        Case {
            prompt: $prompt,
            tool: $tool,
            check: |$v: &Value| $check,
        }
    };
}

/// Prompts that need no tool: right is an answer without a call.
pub(crate) fn no_tool_prompts() -> [&'static str; 6] {
    [
        "Say hello in French.",
        "What is 2+2?",
        "Write a haiku about autumn.",
        "What is the capital of Italy?",
        "Translate 'thank you' into German.",
        "Tell me a short joke.",
    ]
}

/// The 36 tool prompts.
pub(crate) fn tool_prompts() -> Vec<Case> {
    vec![
        case!("What time is it in Tokyo?", "__now", |v| has(
            v,
            "zone",
            "Asia/Tokyo"
        )),
        case!("What's the current time in New York?", "__now", |v| has(
            v,
            "zone",
            "America/New_York"
        )),
        case!(
            "Tell me the date and time in London right now.",
            "__now",
            |v| has(v, "zone", "Europe/London")
        ),
        case!("What time is it in Sydney?", "__now", |v| has(
            v,
            "zone",
            "Australia/Sydney"
        )),
        case!("Current time in Paris, please.", "__now", |v| has(
            v,
            "zone",
            "Europe/Paris"
        )),
        case!("What time is it in Berlin?", "__now", |v| has(
            v,
            "zone",
            "Europe/Berlin"
        )),
        case!("What is the time in Los Angeles now?", "__now", |v| has(
            v,
            "zone",
            "America/Los_Angeles"
        )),
        case!(
            "Convert 2024-03-10T14:30 from Europe/Berlin to America/New_York.",
            "__convert",
            |v| has(v, "time", "2024-03-10T14:30") && has(v, "to_zone", "America/New_York")
        ),
        case!(
            "Convert 2025-01-15T09:00 in Europe/London to Asia/Tokyo.",
            "__convert",
            |v| has(v, "time", "2025-01-15T09:00") && has(v, "to_zone", "Asia/Tokyo")
        ),
        case!(
            "If it is 2025-06-01T18:00 in America/Los_Angeles, what time is it in Europe/Paris?",
            "__convert",
            |v| has(v, "to_zone", "Europe/Paris")
        ),
        case!(
            "What date is 90 days after 2025-01-01?",
            "__add_duration",
            |v| { has(v, "time", "2025-01-01") && has(v, "duration", "90") }
        ),
        case!("Add 3 hours to 2024-03-10T14:30.", "__add_duration", |v| {
            has(v, "time", "2024-03-10T14:30")
                && (has(v, "duration", "3") || has(v, "duration", "PT3H"))
        }),
        case!(
            "What is the date two weeks after 2026-02-20?",
            "__add_duration",
            |v| { has(v, "time", "2026-02-20") }
        ),
        case!(
            "How many days are there between 2025-01-01 and 2025-12-25?",
            "__difference",
            |v| { has(v, "start", "2025-01-01") && has(v, "end", "2025-12-25") }
        ),
        case!(
            "How long is it from 2024-01-01 to 2024-03-01?",
            "__difference",
            |v| { has(v, "start", "2024-01-01") && has(v, "end", "2024-03-01") }
        ),
        case!(
            "How many hours between 2025-05-01T08:00 and 2025-05-02T20:00?",
            "__difference",
            |v| { has(v, "start", "2025-05-01") && has(v, "end", "2025-05-02") }
        ),
        case!(
            "How many days are there from 2026-06-01 to 2026-12-31?",
            "__difference",
            |v| { has(v, "start", "2026-06-01") && has(v, "end", "2026-12-31") }
        ),
        case!("List the files in my docs folder.", "__list", |v| has(
            v, "path", "docs"
        )),
        case!(
            "Show me what is in the directory projects.",
            "__list",
            |v| has(v, "path", "projects")
        ),
        case!("List all my files.", "__list", |_v| true),
        case!("Read the file notes.txt.", "__read", |v| has(
            v,
            "path",
            "notes.txt"
        )),
        case!("Open todo.md and show me its contents.", "__read", |v| has(
            v, "path", "todo.md"
        )),
        case!("Read the file src/main.rs.", "__read", |v| has(
            v,
            "path",
            "src/main.rs"
        )),
        case!(
            "Search my files for the word invoice.",
            "__search",
            |v| any(v, "invoice")
        ),
        case!("Find the markdown files among my files.", "__search", |v| {
            any(v, "md")
        }),
        case!("Find files that mention budget.", "__search", |v| any(
            v, "budget"
        )),
        case!(
            "Write 'buy milk' to a new file called shopping.txt.",
            "__write",
            |v| { has(v, "path", "shopping.txt") && has(v, "content", "milk") }
        ),
        case!(
            "Save the text hello world into greeting.txt.",
            "__write",
            |v| { has(v, "path", "greeting.txt") && has(v, "content", "hello world") }
        ),
        case!(
            "Fetch https://example.com and tell me what it says.",
            "__fetch",
            |v| { has(v, "url", "https://example.com") }
        ),
        case!(
            "Get the page at https://www.rust-lang.org.",
            "__fetch",
            |v| has(v, "url", "rust-lang.org")
        ),
        case!(
            "Fetch the page https://example.org/about.",
            "__fetch",
            |v| has(v, "url", "example.org/about")
        ),
        case!("Echo back the text ping.", "__example_echo", |v| has(
            v, "text", "ping"
        )),
        case!(
            "Use the echo tool to repeat: hello there",
            "__example_echo",
            |v| has(v, "text", "hello there")
        ),
        case!(
            "Search the records for quarterly reports.",
            "__search_records",
            |v| has(v, "query", "quarterly")
        ),
        case!(
            "Search the records about invoices, at most 3 results.",
            "__search_records",
            |v| { has(v, "query", "invoice") && v.get("limit").and_then(Value::as_u64) == Some(3) }
        ),
        case!("Count slowly to 5.", "__slow_count", |v| v
            .get("to")
            .and_then(Value::as_u64)
            == Some(5)),
    ]
}
