//! The engine: a conversation's next turn reads only what is new, other
//! conversations come back from the saved caches, cancellation stops an
//! answer and the engine goes on, and bad requests are errors, not
//! crashes.

use std::sync::Mutex;
use std::time::Duration;

use oscova_core::CancellationToken;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatStreamEvent, ModelError, ModelProvider,
    ModelProviderConfig,
};
use serde_json::json;

use crate::support::{config, host, provider};

async fn ask(
    provider: &dyn ModelProvider,
    config: &ModelProviderConfig,
    messages: &[ChatMessage],
) -> Result<ChatResponse, ModelError> {
    provider
        .chat(ChatRequest {
            config,
            api_key: None,
            model: "",
            messages,
            tools: &[],
            stream: None,
            cancel: CancellationToken::new(),
        })
        .await
}

fn cached(response: &ChatResponse) -> u64 {
    response
        .usage
        .and_then(|u| u.cached_input_tokens)
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversations_next_turn_reads_only_what_is_new_even_after_another_conversation() {
    let mut config = config().await;
    config.options.insert("max_tokens".into(), json!(24));
    let provider = provider(&host());
    let system = ChatMessage::system(
        "You are a terse assistant for a bakery in Lisbon. You answer in one short sentence. \
         The bakery opens at seven, sells pastel de nata, bread and coffee, and closes at six.",
    );
    let mut first = vec![system.clone(), ChatMessage::user("When do you open?")];
    let answer = ask(&*provider, &config, &first).await.unwrap();
    let prompt = answer.usage.unwrap().input_tokens.unwrap();
    first.push(answer.message.clone());
    first.push(ChatMessage::user("And when do you close?"));

    // Another conversation in between takes the context.
    let other = [ChatMessage::user("Name a prime number between 20 and 30.")];
    ask(&*provider, &config, &other).await.unwrap();

    let next = ask(&*provider, &config, &first).await.unwrap();
    let usage = next.usage.unwrap();
    // Everything up to the new message was cached: the first prompt and
    // the answer.
    assert!(
        cached(&next) >= prompt,
        "cached {:?} of {:?}, first prompt {prompt}",
        usage.cached_input_tokens,
        usage.input_tokens
    );
    assert!(
        usage.input_tokens.unwrap() - cached(&next) < 40,
        "{usage:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_the_answer_and_the_engine_answers_the_next_request() {
    let mut config = config().await;
    config.options.insert("max_tokens".into(), json!(2000));
    let provider = provider(&host());
    let messages = [ChatMessage::user(
        "Write a very long story about a lighthouse keeper.",
    )];
    let cancel = CancellationToken::new();
    let pieces = Mutex::new(0usize);
    let stop = cancel.clone();
    let sink = |e: ChatStreamEvent| {
        if let ChatStreamEvent::Text(_) = e {
            let mut n = pieces.lock().unwrap();
            *n += 1;
            if *n == 5 {
                stop.cancel();
            }
        }
    };
    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        provider.chat(ChatRequest {
            config: &config,
            api_key: None,
            model: "",
            messages: &messages,
            tools: &[],
            stream: Some(&sink),
            cancel,
        }),
    )
    .await
    .expect("the cancelled answer returned");
    assert!(matches!(outcome, Err(ModelError::Cancelled)), "{outcome:?}");
    assert!(*pieces.lock().unwrap() < 40);

    config.options.insert("max_tokens".into(), json!(8));
    let after = ask(&*provider, &config, &[ChatMessage::user("Say yes.")]).await;
    assert!(after.is_ok(), "{after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_longer_than_the_context_is_an_error_that_says_what_to_do() {
    let mut config = config().await;
    config.options.insert("context".into(), json!(256));
    let provider = provider(&host());
    let long = "word ".repeat(400);
    let error = ask(&*provider, &config, &[ChatMessage::user(long)])
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("more than the model's context of 256"),
        "{text}"
    );
    assert!(text.contains("/compact"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_a_model_is_an_error_and_the_engine_goes_on() {
    let config = config().await;
    let provider = provider(&host());
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.gguf");
    std::fs::write(&fake, b"not a model at all").unwrap();
    let path = fake.display().to_string();
    let error = provider
        .chat(ChatRequest {
            config: &config,
            api_key: None,
            model: &path,
            messages: &[ChatMessage::user("hi")],
            tools: &[],
            stream: None,
            cancel: CancellationToken::new(),
        })
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("cannot load the model"),
        "{error}"
    );
    let mut short = config.clone();
    short.options.insert("max_tokens".into(), json!(8));
    assert!(
        ask(&*provider, &short, &[ChatMessage::user("Say yes.")])
            .await
            .is_ok()
    );
}
