//! Subscriptions updated when a file changes (`resources/subscribe`
//! before 2026-07-28, `subscriptions/listen` from it), and sessions on one
//! file watched as one resource.

use super::*;

#[tokio::test]
async fn a_subscribed_file_that_changes_is_an_update_and_unsubscribing_stops_them() {
    let dir = TempDir::new("watch");
    let root = dir.0.join("alice");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), "one").unwrap();
    std::fs::write(root.join("b.txt"), "one").unwrap();
    let (_host, scope) = scope(Some(&root));
    let server = McpServer::new(scope).resources(FilesResources::new());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = Updates(tx).serve(serve(server)).await.unwrap();

    #[allow(deprecated)]
    client
        .subscribe(SubscribeRequestParams::new("file:///a.txt"))
        .await
        .unwrap();
    std::fs::write(root.join("a.txt"), "two, longer").unwrap();
    let uri = timeout(PATIENCE, rx.recv()).await.unwrap().unwrap();
    assert_eq!(uri, "file:///a.txt");

    #[allow(deprecated)]
    client
        .unsubscribe(UnsubscribeRequestParams::new("file:///a.txt"))
        .await
        .unwrap();
    #[allow(deprecated)]
    client
        .subscribe(SubscribeRequestParams::new("file:///b.txt"))
        .await
        .unwrap();
    std::fs::write(root.join("a.txt"), "three, longer still").unwrap();
    std::fs::write(root.join("b.txt"), "two, longer").unwrap();
    // The next update is b's: a's change came after its unsubscribe.
    let uri = timeout(PATIENCE, rx.recv()).await.unwrap().unwrap();
    assert_eq!(uri, "file:///b.txt");
    client.cancel().await.unwrap();
}

// Issue 36, finding 3: a subscription used to be polled by its session's
// own task, so the work grew with every subscription. Now the server's one
// watcher keeps each resource once: sessions subscribing to one file are
// one resource watched, one change is one update to each of them, and a
// session that ends (its client gone) gives its subscription back.
#[tokio::test]
async fn sessions_subscribed_to_one_file_are_one_resource_watched() {
    let dir = TempDir::new("shared");
    let root = dir.0.join("alice");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), "one").unwrap();
    let (_host, scope) = scope(Some(&root));
    let server = McpServer::new(scope).resources(FilesResources::new());
    let stats = server.subscription_stats();
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let (tx, rx) = mpsc::unbounded_channel();
        let client = Updates(tx).serve(serve(server.clone())).await.unwrap();
        #[allow(deprecated)]
        client
            .subscribe(SubscribeRequestParams::new("file:///a.txt"))
            .await
            .unwrap();
        sessions.push((client, rx));
    }
    assert_eq!((stats.subscriptions(), stats.watched()), (3, 1));
    std::fs::write(root.join("a.txt"), "two, longer").unwrap();
    for (_, rx) in &mut sessions {
        let uri = timeout(PATIENCE, rx.recv()).await.unwrap().unwrap();
        assert_eq!(uri, "file:///a.txt");
    }
    let (client, _) = sessions.remove(0);
    client.cancel().await.unwrap();
    let mut waited = 0;
    while stats.subscriptions() != 2 {
        assert!(
            waited < 400,
            "the ended session's subscription is still held"
        );
        waited += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(stats.watched(), 1);
    for (client, _) in sessions {
        client.cancel().await.unwrap();
    }
    let mut waited = 0;
    while stats.watched() != 0 {
        assert!(waited < 400, "a file nobody subscribes to is still watched");
        waited += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn on_2026_07_28_subscriptions_listen_reports_a_changed_file() {
    let dir = TempDir::new("listen");
    let root = dir.0.join("alice");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.txt"), "one").unwrap();
    std::fs::write(root.join("b.txt"), "one").unwrap();
    let (_host, scope) = scope(Some(&root));
    let server = McpServer::new(scope).resources(FilesResources::new());
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = timeout(PATIENCE, ().serve_with_lifecycle(serve(server), lifecycle))
        .await
        .unwrap()
        .unwrap();
    // `resources/subscribe` is gone on 2026-07-28; `subscriptions/listen`
    // takes its place.
    let mut filter = SubscriptionFilter::new();
    filter.resource_subscriptions = Some(vec!["file:///a.txt".to_owned()]);
    let mut listening = timeout(PATIENCE, client.peer().listen(filter))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        listening.acknowledged().resource_subscriptions.as_deref(),
        Some(&["file:///a.txt".to_owned()][..])
    );
    // b is not subscribed: its changes are never reported, a's are. The
    // server takes a's first version once the acknowledgment is out, so a
    // change racing it may count as the first version: change a until
    // one is reported.
    let mut text = String::from("one");
    let update = loop {
        text.push_str(" more");
        std::fs::write(root.join("b.txt"), &text).unwrap();
        std::fs::write(root.join("a.txt"), &text).unwrap();
        match timeout(Duration::from_secs(2), listening.next()).await {
            Ok(update) => break update.unwrap().unwrap(),
            Err(_) if text.len() < 60 => continue,
            Err(_) => panic!("no update for a.txt after {text:?}"),
        }
    };
    let update = serde_json::to_value(update).unwrap();
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "{update}"
    );
    assert_eq!(update["params"]["uri"], "file:///a.txt", "{update}");
    client.cancel().await.unwrap();
}
