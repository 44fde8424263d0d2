//! The protocol's methods, apart from their binding: each takes the
//! caller's user id and the request as JSON and answers JSON or an
//! [`A2aError`]. Both bindings (`binding/`) call these, one arm per
//! [`Method`] that does not stream.
//!
//! Rules: every method that names a task reads it as the caller's
//! (another user's task is `TaskNotFound`, the same answer as a missing
//! one); a `SendMessage` waits for its task to end unless
//! `configuration.returnImmediately` is true; `ListTasks` pages are at
//! most 100 tasks (50 unless `pageSize` says), the page token being the
//! offset; streams are `stream.rs`'s, webhooks `push.rs`'s (answered
//! without their token and credentials); the extended card, when one is
//! configured, is answered before this module (`binding/mod.rs`), so here it is
//! refused with the error the specification names.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::model::{A2aError, Message, Method, PushConfig, TaskState};
use crate::store::TaskQuery;
use crate::tasks::Runner;

/// The default and the largest `ListTasks` page.
const DEFAULT_PAGE: usize = 50;
const MAX_PAGE: usize = 100;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SendConfiguration {
    #[serde(default)]
    return_immediately: bool,
    history_length: Option<usize>,
    task_push_notification_config: Option<PushConfig>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SendParams {
    message: Message,
    #[serde(default)]
    configuration: Option<SendConfiguration>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskParams {
    id: String,
    history_length: Option<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PushParams {
    task_id: String,
    id: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ListParams {
    context_id: Option<String>,
    status: Option<String>,
    page_size: Option<usize>,
    page_token: Option<String>,
    history_length: Option<usize>,
    include_artifacts: Option<bool>,
}

fn params<T: for<'de> Deserialize<'de>>(value: Value) -> Result<T, A2aError> {
    serde_json::from_value(value).map_err(|e| A2aError::InvalidParams(e.to_string()))
}

fn to_json(value: &impl serde::Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(value).map_err(|e| A2aError::Internal(e.to_string()))
}

/// Answers `method` with `params` for `user`.
pub(crate) async fn call(
    runner: &std::sync::Arc<Runner>,
    user: &str,
    method: Method,
    params_json: Value,
) -> Result<Value, A2aError> {
    match method {
        Method::SendMessage => {
            let p: SendParams = params(params_json)?;
            let configuration = p.configuration.unwrap_or_default();
            let task = runner
                .send(
                    user,
                    p.message,
                    !configuration.return_immediately,
                    configuration.task_push_notification_config,
                )
                .await?;
            let task = task.view(configuration.history_length, true);
            Ok(json!({"task": to_json(&task)?}))
        }
        Method::GetTask => {
            let p: TaskParams = params(params_json)?;
            let task = runner.get(user, &p.id).await?;
            to_json(&task.view(p.history_length, true))
        }
        Method::CancelTask => {
            let p: TaskParams = params(params_json)?;
            to_json(&runner.cancel(user, &p.id).await?)
        }
        Method::ListTasks => {
            let p: ListParams = params(params_json)?;
            let state = match p.status.as_deref() {
                None | Some("" | "TASK_STATE_UNSPECIFIED") => None,
                Some(name) => Some(TaskState::parse(name).ok_or_else(|| {
                    A2aError::InvalidParams(format!("status: `{name}` is not a task state"))
                })?),
            };
            let limit = match p.page_size {
                None | Some(0) => DEFAULT_PAGE,
                Some(n) if n > MAX_PAGE => {
                    return Err(A2aError::InvalidParams(format!(
                        "pageSize: at most {MAX_PAGE}"
                    )));
                }
                Some(n) => n,
            };
            let offset = match p.page_token.as_deref() {
                None | Some("") => 0,
                Some(token) => token.parse().map_err(|_| {
                    A2aError::InvalidParams("pageToken: not a token this server gave".into())
                })?,
            };
            let query = TaskQuery {
                context_id: p.context_id.filter(|c| !c.is_empty()),
                state,
                limit,
                offset,
            };
            let page = runner
                .store
                .list(user, &query)
                .await
                .map_err(|e| A2aError::Internal(e.to_string()))?;
            let next = offset + page.tasks.len();
            let next_token = if next < page.total {
                next.to_string()
            } else {
                String::new()
            };
            let artifacts = p.include_artifacts.unwrap_or(false);
            let tasks: Vec<Value> = page
                .tasks
                .iter()
                .map(|t| to_json(&t.view(p.history_length, artifacts)))
                .collect::<Result<_, _>>()?;
            Ok(json!({
                "tasks": tasks,
                "nextPageToken": next_token,
                "pageSize": limit,
                "totalSize": page.total,
            }))
        }
        // Answered as streams by the bindings (`stream.rs`), never here.
        Method::SendStreamingMessage | Method::SubscribeToTask => Err(A2aError::Internal(
            "a streaming method reached the unary dispatcher".into(),
        )),
        Method::CreateTaskPushNotificationConfig => {
            let config: PushConfig = params(params_json)?;
            let task = runner.get(user, &config.task_id).await?;
            to_json(&runner.pushes.set(user, &task.id, config).await?)
        }
        Method::GetTaskPushNotificationConfig | Method::DeleteTaskPushNotificationConfig => {
            let p: PushParams = params(params_json)?;
            let task = runner.get(user, &p.task_id).await?;
            let id = p.id.unwrap_or_default();
            if method == Method::DeleteTaskPushNotificationConfig {
                return if runner.pushes.delete(user, &task.id, &id).await? {
                    Ok(json!({}))
                } else {
                    Err(A2aError::InvalidParams(format!(
                        "no push config `{id}` on the task"
                    )))
                };
            }
            let config = runner
                .pushes
                .list(user, &task.id)
                .await?
                .into_iter()
                .find(|c| c.id == id)
                .ok_or_else(|| {
                    A2aError::InvalidParams(format!("no push config `{id}` on the task"))
                })?;
            to_json(&config)
        }
        Method::ListTaskPushNotificationConfigs => {
            let p: PushParams = params(params_json)?;
            let task = runner.get(user, &p.task_id).await?;
            let configs = runner.pushes.list(user, &task.id).await?;
            Ok(json!({"configs": to_json(&configs)?, "nextPageToken": ""}))
        }
        Method::GetExtendedAgentCard => Err(A2aError::ExtendedAgentCardNotConfigured),
    }
}
