//! `TestHostBuilder::allow_internal`: an `Internet` tool reaches the
//! kit's loopback server when the test allows that server, and nothing
//! else internal.

use oscova_core::prelude::*;
use oscova_test_kit::TestHost;
use oscova_test_kit::http::{Reply, TestServer};

/// Fetches a page from the Internet.
pub struct FetchToolset {
    http: HttpClient,
    url: String,
}

#[toolset]
impl FetchToolset {
    /// Fetches the configured page.
    #[tool(network = Internet)]
    pub async fn fetch(&self) -> Result<String, String> {
        let response = self
            .http
            .get(&self.url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        response.text().await.map_err(|e| e.to_string())
    }
}

fn fetching(server: &TestServer) -> impl Fn(&AgentPluginContext) -> FetchToolset + use<> {
    let url = format!("{}/page", server.url());
    move |ctx: &AgentPluginContext| FetchToolset {
        http: ctx.http_client(),
        url: url.clone(),
    }
}

#[tokio::test]
async fn an_internet_tool_reaches_the_server_the_test_allows() {
    let server = TestServer::start(|_| Reply::new(200).body("the page")).await;
    let kit = TestHost::builder()
        .toolset(fetching(&server))
        .allow_internal(&server)
        .build();

    let call = kit.call("fetch", json!({})).await.assert_ok();
    assert_eq!(call.text(), "the page");
    assert_eq!(server.only_request().path, "/page");
}

#[tokio::test]
async fn without_it_the_server_is_refused_as_in_production() {
    let server = TestServer::start(|_| Reply::new(200).body("the page")).await;
    let kit = TestHost::for_toolset(fetching(&server));

    kit.call("fetch", json!({}))
        .await
        .assert_error("does not allow");
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn allowing_one_server_opens_no_other_loopback_port() {
    let allowed = TestServer::start(|_| Reply::new(204)).await;
    let other = TestServer::start(|_| Reply::new(200).body("secret")).await;
    let kit = TestHost::builder()
        .toolset(fetching(&other))
        .allow_internal(&allowed)
        .build();

    kit.call("fetch", json!({})).await.assert_error("port");
    assert_eq!(other.connections(), 0);
    assert_eq!(allowed.connections(), 0);
}
