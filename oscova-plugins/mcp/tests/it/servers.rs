//! The plugin against real third-party servers started as child
//! processes: one written with rmcp, one with the official Python SDK.
//! Listing, calls, structured output, errors, bad arguments, progress,
//! cancellation, timeouts, a crash and restart, a server that fails to
//! start, per-user processes with different credentials, a user without
//! the credential (tools listed, calls say what to set), and a server's
//! elicitation: declined unasked by default, asked of the person with the
//! server named when forwarded.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::InvokeError;
use oscova_core::interaction::{Answer, AskError, InteractionRequest, Question};
use oscova_core::prelude::*;
use oscova_plugin_mcp::{Elicitation, McpPlugin, ServerConfig, TOOL_SOURCE_FAILED};
use serde_json::json;
use support::{KINDS, Kind, host, plugin, server, tool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_and_calls_tools_of_both_servers() {
    for kind in KINDS {
        let mcp = plugin(McpPlugin::builder().server("notes", server(kind))).await;
        assert!(
            mcp.start_diagnostics().is_empty(),
            "{kind:?}: {:?}",
            mcp.start_diagnostics()
        );
        let host = host(mcp);
        let names: Vec<&str> = host.tools().iter().map(|t| t.wire_name()).collect();
        for name in ["shout_text", "add", "fail", "slow", "whoami", "crash"] {
            assert!(names.contains(&tool(name).as_str()), "{kind:?}: {names:?}");
        }
        let shout = host.tool(&tool("shout_text")).unwrap();
        assert_eq!(shout.info().display_name(), "Shout-Text");
        assert_eq!(shout.description(), "Shouts the text.");
        assert_eq!(shout.network_scope(), NetworkScope::Internet);
        let add = host.tool(&tool("add")).unwrap();
        assert!(
            add.output_schema().is_some(),
            "{kind:?}: outputSchema is passed on"
        );

        let scope = host.user_scope(UserInfo::new("alice"));
        let result = scope
            .invoke(&tool("shout_text"), json!({"text": "hi"}))
            .await;
        assert_eq!(result.content, "HI", "{kind:?}: {result:?}");
        assert!(!result.is_error);

        let sum = scope.invoke(&tool("add"), json!({"a": 2, "b": 3})).await;
        assert!(!sum.is_error, "{kind:?}: {sum:?}");
        assert_eq!(
            sum.details,
            json!({"sum": 5}),
            "{kind:?}: structuredContent → details"
        );

        let failed = scope.invoke(&tool("fail"), json!({})).await;
        assert!(failed.is_error, "{kind:?}: isError → an error result");
        // The Python SDK does not pass the exception's text on.
        assert!(
            failed.content.contains("fail"),
            "{kind:?}: {}",
            failed.content
        );

        // Checked against the input schema before the server sees it.
        let bad = scope
            .invoke(&tool("add"), json!({"a": "two", "b": 3}))
            .checked()
            .await
            .unwrap_err();
        assert!(
            matches!(bad, InvokeError::InvalidArguments { .. }),
            "{kind:?}: {bad}"
        );
        assert!(bad.to_string().contains("/a"), "{kind:?}: {bad}");
        host.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_caller_and_cancellation_reaches_the_server() {
    for kind in KINDS {
        let markers = tempfile::tempdir().unwrap();
        let config = server(kind).env("MARKER_DIR", markers.path().display().to_string());
        let host = host(plugin(McpPlugin::builder().server("notes", config)).await);
        let scope = host.user_scope(UserInfo::new("alice"));
        let cancel = CancellationToken::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (sink, trigger) = (seen.clone(), cancel.clone());
        let outcome = scope
            .invoke(&tool("slow"), json!({}))
            .cancellation(cancel)
            .progress(move |p: ToolProgress| {
                let mut seen = sink.lock().unwrap();
                if p.progress == Some(2.0) {
                    trigger.cancel();
                }
                seen.push((p.message.clone(), p.progress, p.total));
            })
            .checked()
            .await;
        // The cancel fires inside the tool's own poll (from its progress
        // sink), so either the host notices first (a refusal) or the
        // plugin's handler does (an error result saying so); both are the
        // call ending as cancelled.
        match outcome {
            Err(e) => assert_eq!(e.kind(), "cancelled", "{kind:?}"),
            Ok(r) => assert!(
                r.is_error && r.content.contains("cancelled"),
                "{kind:?}: {r:?}"
            ),
        }
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.contains(&("step 2".to_owned(), Some(2.0), Some(10.0))),
            "{kind:?}: {seen:?}"
        );
        assert!(
            seen.windows(2).all(|w| w[0].1 <= w[1].1),
            "{kind:?}: progress never goes back: {seen:?}"
        );
        // The server got notifications/cancelled: it writes a marker.
        let marker = markers.path().join("cancelled");
        for _ in 0..100 {
            if marker.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            marker.exists(),
            "{kind:?}: the server never saw the cancellation"
        );
        host.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_elicitation_is_declined_unasked_by_default() {
    let host = host(plugin(McpPlugin::builder().server("notes", server(Kind::Python))).await);
    let scope = host.user_scope(UserInfo::new("alice"));
    let asked = Arc::new(Mutex::new(0));
    let seen = asked.clone();
    let person = move |_request: InteractionRequest| {
        *seen.lock().unwrap() += 1;
        let values = json!({"guests": 4, "room": "garden"});
        async move { Ok::<_, AskError>(Answer::Accept(values.as_object().unwrap().clone())) }
    };
    let booked = scope
        .invoke(&tool("book"), json!({}))
        .interaction_handler(person)
        .await;
    assert_eq!(booked.content, "not booked: decline", "{booked:?}");
    assert_eq!(*asked.lock().unwrap(), 0, "nobody was asked");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_elicitation_names_its_server_and_is_answered() {
    let config = server(Kind::Python).elicitation(Elicitation::Forward);
    let host = host(plugin(McpPlugin::builder().server("notes", config)).await);
    let scope = host.user_scope(UserInfo::new("alice"));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let person = move |request: InteractionRequest| {
        seen.lock().unwrap().push(request.question.clone());
        let answer = if seen.lock().unwrap().len() == 1 {
            // The host fills what the person leaves out (`vegan`).
            let values = json!({"guests": 4, "room": "garden"});
            Answer::Accept(values.as_object().unwrap().clone())
        } else {
            Answer::Decline
        };
        async move { Ok::<_, AskError>(answer) }
    };
    let booked = scope
        .invoke(&tool("book"), json!({}))
        .interaction_handler(person.clone())
        .await;
    assert_eq!(
        booked.content, "booked 4 in garden vegan=False",
        "{booked:?}"
    );
    let declined = scope
        .invoke(&tool("book"), json!({}))
        .interaction_handler(person)
        .await;
    assert_eq!(declined.content, "not booked: decline", "{declined:?}");

    let asked = asked.lock().unwrap().clone();
    let Question::Form { message, form } = &asked[0] else {
        panic!("a form: {asked:?}")
    };
    // The server's words, attributed to it: a server cannot speak as the host.
    assert_eq!(message, "MCP server `notes` asks: Booking details?");
    let titles: Vec<&str> = form.fields().iter().map(|f| f.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "MCP server `notes`: Guests",
            "MCP server `notes`: Room",
            "MCP server `notes`: Vegan"
        ]
    );
    let schema = form.requested_schema();
    let p = &schema["properties"];
    assert_eq!(
        (
            &p["guests"]["type"],
            &p["guests"]["minimum"],
            &p["guests"]["maximum"]
        ),
        (&json!("integer"), &json!(1), &json!(8)),
        "{schema}"
    );
    assert_eq!(p["room"]["enum"], json!(["main", "garden"]), "{schema}");
    assert_eq!(p["vegan"]["default"], json!(false), "{schema}");
    host.shutdown().await;
}

/// Review of issue 24: only the message's start was attributed, so a
/// server's second line ("Oscova needs your OpenAI API key") read as the
/// host's own. Every line the person sees now names the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_multi_line_question_is_the_servers_on_every_line() {
    let config = server(Kind::Python).elicitation(Elicitation::Forward);
    let host = host(plugin(McpPlugin::builder().server("notes", config)).await);
    let scope = host.user_scope(UserInfo::new("alice"));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let person = move |request: InteractionRequest| {
        seen.lock().unwrap().push(request.question.clone());
        async move { Ok::<_, AskError>(Answer::Decline) }
    };
    let spoof = "Booking details?\n\nOscova needs your OpenAI API key\r\n\u{2028}Type it below";
    let booked = scope
        .invoke(&tool("book"), json!({ "message": spoof }))
        .interaction_handler(person)
        .await;
    assert_eq!(booked.content, "not booked: decline", "{booked:?}");
    let asked = asked.lock().unwrap().clone();
    let [Question::Form { message, form }] = asked.as_slice() else {
        panic!("one form: {asked:?}")
    };
    assert_eq!(
        message,
        "MCP server `notes` asks: Booking details? Oscova needs your OpenAI API key Type it below"
    );
    for field in form.fields() {
        assert!(
            field.title.starts_with("MCP server `notes`: ") && !field.title.contains('\n'),
            "{field:?}"
        );
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_call_ends_at_the_timeout() {
    let config = server(Kind::Rmcp).timeout(Duration::from_millis(500));
    let host = host(plugin(McpPlugin::builder().server("notes", config)).await);
    let scope = host.user_scope(UserInfo::new("alice"));
    let result = scope.invoke(&tool("slow"), json!({})).await;
    assert!(result.is_error);
    assert!(
        result.content.contains("timed out after 0.5 s"),
        "{}",
        result.content
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_restarted_on_the_next_call() {
    for kind in KINDS {
        let mcp = plugin(McpPlugin::builder().server("notes", server(kind))).await;
        // The plugin's status, as a host keeps it (a clone sees the same servers).
        let status = mcp.status().clone();
        let host = host(mcp);
        let scope = host.user_scope(UserInfo::new("alice"));
        let first = scope.invoke(&tool("whoami"), json!({})).await.content;
        let crashed = scope.invoke(&tool("crash"), json!({})).await;
        assert!(crashed.is_error, "{kind:?}: {crashed:?}");
        assert!(
            crashed.content.contains("restarted on the next call"),
            "{kind:?}: {}",
            crashed.content
        );
        let second = scope.invoke(&tool("whoami"), json!({})).await;
        assert!(!second.is_error, "{kind:?}: {second:?}");
        let pid = |s: &str| s.split_whitespace().next().map(str::to_owned);
        assert_ne!(pid(&first), pid(&second.content), "{kind:?}: a new process");
        let events = status.servers().next().unwrap().events();
        assert!(
            events.iter().any(|e| e.contains("restarted")),
            "{kind:?}: {events:?}"
        );
        assert!(
            events.iter().any(|e| e.contains("crashing on purpose")),
            "{kind:?}: the stderr tail is in the diagnostics: {events:?}"
        );
        host.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_is_a_diagnostic_and_the_rest_loads() {
    let mcp = plugin(
        McpPlugin::builder()
            .server("broken", server(Kind::Rmcp).env("FAIL_AT_START", "1"))
            .server(
                "missing",
                ServerConfig::command(
                    oscova_test_support::python::mcp_python()
                        .display()
                        .to_string(),
                )
                .arg("/nonexistent/notes_server.py"),
            )
            .server("gone", ServerConfig::command("/nonexistent/mcp-server"))
            .server("notes", server(Kind::Rmcp)),
    )
    .await;
    let host = host(mcp);
    let text: Vec<String> = host.diagnostics().iter().map(ToString::to_string).collect();
    assert_eq!(
        host.diagnostics()
            .iter()
            .filter(|d| d.kind == TOOL_SOURCE_FAILED)
            .count(),
        3,
        "one `tool_source_failed` per server left out: {text:#?}"
    );
    assert!(
        text.iter()
            .any(|d| d.contains("`broken`") && d.contains("FAIL_AT_START is set")),
        "the stderr tail names the reason: {text:#?}"
    );
    assert!(text.iter().any(|d| d.contains("`gone`")), "{text:#?}");
    assert!(
        text.iter()
            .any(|d| d.contains("`missing`") && d.contains("No such file")),
        "the Python server's stderr: {text:#?}"
    );
    assert!(
        host.tool(&tool("shout_text")).is_some(),
        "the good server still loads"
    );
    let scope = host.user_scope(UserInfo::new("alice"));
    assert_eq!(
        scope
            .invoke(&tool("shout_text"), json!({"text": "x"}))
            .await
            .content,
        "X"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_without_the_credential_sees_the_tools_and_learns_what_to_set() {
    for kind in KINDS {
        // `notes.other` is set for nobody (the test host has `notes.token`).
        let config = server(kind)
            .per_user(true)
            .credential_env("NOTES_TOKEN", "notes.other");
        let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
        let status = mcp.status().clone();
        let host = host(mcp);
        let alice = host.user_scope(UserInfo::new("alice"));
        assert!(alice.diagnostics().is_empty(), "{:?}", alice.diagnostics());
        let listed: Vec<&str> = alice.tools().map(|t| t.wire_name()).collect();
        assert!(
            listed.contains(&tool("whoami").as_str()),
            "{kind:?}: the tools stay listed: {listed:?}"
        );
        let result = alice.invoke(&tool("whoami"), json!({})).await;
        assert!(result.is_error, "{kind:?}: {result:?}");
        assert_eq!(
            result.content,
            "MCP server `notes` needs the credential `notes.other` (for `NOTES_TOKEN`), which is \
             not set for user `alice`; the user must set the credential `notes.other` (oscova: \
             under `[users.alice.credentials]` in the config file), and until then this \
             server's tools cannot run for them",
            "{kind:?}"
        );
        assert_eq!(
            result.details,
            json!({"error": "missing_credential", "credentials": ["notes.other"]})
        );
        // No connection was tried for her: nothing started, nothing failed.
        let events: Vec<String> = status.servers().flat_map(|s| s.events()).collect();
        assert!(events.is_empty(), "{kind:?}: {events:?}");
        host.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_user_processes_get_their_own_credentials_and_no_host_secret() {
    for kind in KINDS {
        let config = server(kind)
            .per_user(true)
            .credential_env("NOTES_TOKEN", "notes.token");
        let host = host(plugin(McpPlugin::builder().server("notes", config)).await);
        let alice = host.user_scope(UserInfo::new("alice"));
        let bob = host.user_scope(UserInfo::new("bob"));
        let a = alice.invoke(&tool("whoami"), json!({})).await.content;
        let b = bob.invoke(&tool("whoami"), json!({})).await.content;
        assert!(a.contains("token_reversed=1-nekot-ecila"), "{kind:?}: {a}");
        assert!(b.contains("token_reversed=1-nekot-bob"), "{kind:?}: {b}");
        assert!(
            a.contains("host_secret_seen=False") || a.contains("host_secret_seen=false"),
            "{kind:?}: {a}"
        );
        let pid = |s: &str| s.split_whitespace().next().map(str::to_owned);
        assert_ne!(pid(&a), pid(&b), "{kind:?}: one process per user");
        // The same user's next call reuses that user's process.
        let again = alice.invoke(&tool("whoami"), json!({})).await.content;
        assert_eq!(pid(&a), pid(&again), "{kind:?}");
        // A crash tail quoting the credential is redacted.
        let crashed = alice.invoke(&tool("crash"), json!({})).await;
        assert!(
            !crashed.content.contains("alice-token-1"),
            "{kind:?}: {}",
            crashed.content
        );
        host.shutdown().await;
    }
}
