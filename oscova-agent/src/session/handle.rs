//! [`Session`]: one user's session, read from a store, written through it.
//!
//! Rules: a `Session` holds the entries as it last read or wrote them and
//! the leaf it saw; every write names that leaf, so a write after another
//! writer's fails with [`SessionError::Changed`] and leaves this handle as
//! it was: [`Session::resume`] reads the session again. Each call that
//! appends several entries appends them as one batch (all or nothing).
//! New entries follow the leaf; [`Session::fork`] moves the leaf to any
//! entry (or to none, for a new root) so the next append starts a branch
//! there.

use std::sync::Arc;

use oscova_core::UserInfo;
use oscova_core::provider::model::{ChatMessage, ChatRole};

use super::entry::{EntryKind, SessionEntry};
use super::error::SessionError;
use super::id::{EntryId, SessionId, iso_to_millis, now_iso};
use super::message::{AgentMessage, ContentPart, ModelRef};
use super::store::{SessionInfo, SessionStore};
use super::tree::SessionTree;
use super::view::{EntryIndex, ModelView, branch_path, build_context, context_messages, index};

/// One user's session (see the module rules).
///
/// ```
/// use std::sync::Arc;
/// use oscova_agent::session::{MemoryStore, Session};
/// use oscova_core::UserInfo;
/// use oscova_core::provider::model::ChatMessage;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = Arc::new(MemoryStore::new());
/// let alice = UserInfo::new("alice");
/// let mut session = Session::create(store.clone(), alice.clone(), "trip").await.unwrap();
/// let first = session.append_chat(&[ChatMessage::user("Plan a trip")]).await.unwrap();
/// session.append_chat(&[ChatMessage::assistant("Where to?", vec![])]).await.unwrap();
///
/// // Another process resumes it by name.
/// let resumed = Session::open(store, alice, "trip").await.unwrap();
/// assert_eq!(resumed.context().chat_messages().len(), 2);
///
/// // A branch from the first message.
/// session.fork(Some(&first[0])).await.unwrap();
/// session.append_chat(&[ChatMessage::assistant("Which dates?", vec![])]).await.unwrap();
/// assert_eq!(session.tree().branches().len(), 2);
/// # });
/// ```
pub struct Session {
    store: Arc<dyn SessionStore>,
    user: UserInfo,
    info: SessionInfo,
    entries: Vec<SessionEntry>,
    by_id: EntryIndex,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("user", &self.user.id())
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Creates a session named `name` for `user`.
    pub async fn create(
        store: Arc<dyn SessionStore>,
        user: UserInfo,
        name: &str,
    ) -> Result<Self, SessionError> {
        let info = store.create(&user, name).await?;
        Ok(Self {
            store,
            user,
            info,
            entries: Vec::new(),
            by_id: EntryIndex::new(),
        })
    }

    /// Opens the user's session named `name`.
    pub async fn open(
        store: Arc<dyn SessionStore>,
        user: UserInfo,
        name: &str,
    ) -> Result<Self, SessionError> {
        let info = store
            .find(&user, name)
            .await?
            .ok_or_else(|| SessionError::NotFound {
                session: name.to_owned(),
            })?;
        Self::open_id(store, user, &info.id).await
    }

    /// Opens the user's session named `name`, creating it when missing.
    pub async fn open_or_create(
        store: Arc<dyn SessionStore>,
        user: UserInfo,
        name: &str,
    ) -> Result<Self, SessionError> {
        match Self::open(store.clone(), user.clone(), name).await {
            Err(SessionError::NotFound { .. }) => {
                match Self::create(store.clone(), user.clone(), name).await {
                    // Another process created it meanwhile.
                    Err(SessionError::NameTaken { .. }) => Self::open(store, user, name).await,
                    other => other,
                }
            }
            other => other,
        }
    }

    /// Opens the user's session `id`.
    pub async fn open_id(
        store: Arc<dyn SessionStore>,
        user: UserInfo,
        id: &SessionId,
    ) -> Result<Self, SessionError> {
        let snapshot = store.load(&user, id).await?;
        let by_id = index(&snapshot.entries);
        Ok(Self {
            store,
            user,
            info: snapshot.info,
            entries: snapshot.entries,
            by_id,
        })
    }

    /// Reads the session again: the cure for [`SessionError::Changed`].
    pub async fn resume(&mut self) -> Result<(), SessionError> {
        let snapshot = self.store.load(&self.user, &self.info.id).await?;
        self.by_id = index(&snapshot.entries);
        self.info = snapshot.info;
        self.entries = snapshot.entries;
        Ok(())
    }

    /// What the store said of the session at the last read or write.
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.info.id
    }

    /// The user it belongs to.
    pub fn user(&self) -> &UserInfo {
        &self.user
    }

    /// The active branch's last entry.
    pub fn leaf(&self) -> Option<&EntryId> {
        self.info.leaf.as_ref()
    }

    /// Every entry, in append order.
    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    /// The entry `id`.
    pub fn entry(&self, id: &EntryId) -> Option<&SessionEntry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    /// The active branch, root first.
    pub fn branch(&self) -> Vec<&SessionEntry> {
        branch_path(&self.entries, &self.by_id, self.leaf())
    }

    /// What the model sees: the active branch as pi builds its context.
    pub fn context(&self) -> ModelView {
        build_context(&self.entries, &self.by_id, self.leaf())
    }

    /// The context as the chat loop sends it: the same as
    /// `self.context().chat_messages()`, made straight from the stored
    /// messages without copying them into a [`ModelView`] first (what
    /// the session agent sends the model at each turn).
    pub fn chat_messages(&self) -> Vec<ChatMessage> {
        let path = branch_path(&self.entries, &self.by_id, self.leaf());
        context_messages(&path)
            .iter()
            .filter_map(|message| message.to_chat())
            .collect()
    }

    /// The session's tree: roots, children, branches, labels.
    pub fn tree(&self) -> SessionTree<'_> {
        SessionTree::new(&self.entries, &self.by_id, self.leaf())
    }

    /// The session's name as set by the latest `session_info` entry on any
    /// branch, if any (the store's name is [`SessionInfo::name`]).
    pub fn display_name(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::SessionInfo { name } => Some(name.as_deref()),
            _ => None,
        })?
    }

    /// Appends one entry after the leaf.
    pub async fn append(&mut self, kind: EntryKind) -> Result<EntryId, SessionError> {
        let mut ids = self.append_all(vec![kind]).await?;
        ids.pop()
            .ok_or_else(|| SessionError::InvalidAppend("no entries were given".into()))
    }

    /// Appends entries after the leaf, as one batch.
    pub async fn append_all(
        &mut self,
        kinds: Vec<EntryKind>,
    ) -> Result<Vec<EntryId>, SessionError> {
        let parent = self.info.leaf.clone();
        self.append_from(parent, kinds).await
    }

    /// Appends chat messages after the leaf, as one batch. A tool message
    /// is stored with the name of the call it answers, from the assistant
    /// message that asked (in the batch or on the branch); an assistant
    /// message names the session's current model.
    pub async fn append_chat(
        &mut self,
        messages: &[ChatMessage],
    ) -> Result<Vec<EntryId>, SessionError> {
        let model = self.current_model();
        let now = now_iso();
        let millis = iso_to_millis(&now).unwrap_or(0);
        let kinds = messages
            .iter()
            .enumerate()
            .map(|(i, message)| {
                let name = match (&message.role, &message.tool_call_id) {
                    (ChatRole::Tool, Some(call)) => self.tool_name(&messages[..i], call),
                    _ => None,
                };
                EntryKind::Message {
                    message: AgentMessage::from_chat(
                        message,
                        millis,
                        name.as_deref(),
                        model.as_ref(),
                    ),
                }
            })
            .collect();
        self.append_all(kinds).await
    }

    fn tool_name(&self, before: &[ChatMessage], call: &str) -> Option<String> {
        let in_batch = before
            .iter()
            .rev()
            .flat_map(|m| m.tool_calls.iter())
            .find(|c| c.id == call)
            .map(|c| c.name.clone());
        in_batch.or_else(|| {
            self.ancestors().find_map(|e| match &e.kind {
                EntryKind::Message {
                    message: AgentMessage::Assistant(a),
                } => a.content.iter().find_map(|part| match part {
                    ContentPart::ToolCall { id, name, .. } if id == call => Some(name.clone()),
                    _ => None,
                }),
                _ => None,
            })
        })
    }

    /// The entries from the leaf up to the root, nearest first.
    pub(crate) fn ancestors(&self) -> impl Iterator<Item = &SessionEntry> + '_ {
        let mut current = self.leaf().and_then(|id| self.entry(id));
        let mut steps = 0;
        std::iter::from_fn(move || {
            let entry = current?;
            // A parent cycle (a hand-edited import) must not loop forever.
            steps += 1;
            current = entry
                .parent_id
                .as_ref()
                .and_then(|id| self.entry(id))
                .filter(|_| steps <= self.entries.len());
            Some(entry)
        })
    }

    /// The model the branch last chose or was answered by (what
    /// [`ModelView::model`] says), found without building the context.
    pub fn current_model(&self) -> Option<ModelRef> {
        self.ancestors().find_map(|e| match &e.kind {
            EntryKind::ModelChange { provider, model_id } => Some(ModelRef {
                provider: provider.clone(),
                model_id: model_id.clone(),
            }),
            EntryKind::Message {
                message: AgentMessage::Assistant(a),
            } => Some(ModelRef {
                provider: a.provider.clone(),
                model_id: a.model.clone(),
            }),
            _ => None,
        })
    }

    /// Moves the leaf to `from` (`None`: a new root), so the next append
    /// starts a branch there. Fails with [`SessionError::Changed`] when
    /// another writer moved the leaf first.
    pub async fn fork(&mut self, from: Option<&EntryId>) -> Result<(), SessionError> {
        if let Some(from) = from
            && !self.by_id.contains_key(from)
        {
            return Err(SessionError::UnknownEntry(from.clone()));
        }
        self.info = self
            .store
            .set_leaf(&self.user, &self.info.id, self.info.leaf.as_ref(), from)
            .await?;
        Ok(())
    }

    /// Starts a branch at `from` with a summary of the branch left behind
    /// (pi's `branchWithSummary`): one `branch_summary` entry, child of
    /// `from`, naming the old leaf.
    pub async fn fork_with_summary(
        &mut self,
        from: Option<&EntryId>,
        summary: impl Into<String>,
    ) -> Result<EntryId, SessionError> {
        let old = self.info.leaf.clone().ok_or_else(|| {
            SessionError::InvalidAppend("the session has no branch to leave".into())
        })?;
        if let Some(from) = from
            && !self.by_id.contains_key(from)
        {
            return Err(SessionError::UnknownEntry(from.clone()));
        }
        let kind = EntryKind::BranchSummary {
            from_id: old,
            summary: summary.into(),
            details: None,
            usage: None,
            from_hook: None,
        };
        let mut ids = self.append_from(from.cloned(), vec![kind]).await?;
        ids.pop()
            .ok_or_else(|| SessionError::InvalidAppend("no entries were given".into()))
    }

    async fn append_from(
        &mut self,
        parent: Option<EntryId>,
        kinds: Vec<EntryKind>,
    ) -> Result<Vec<EntryId>, SessionError> {
        let timestamp = now_iso();
        let mut batch: Vec<SessionEntry> = Vec::with_capacity(kinds.len());
        let mut parent = parent;
        for kind in kinds {
            let id = self.fresh_id(&batch)?;
            batch.push(SessionEntry {
                id: id.clone(),
                parent_id: parent.replace(id),
                timestamp: timestamp.clone(),
                kind,
            });
        }
        let info = self
            .store
            .append(&self.user, &self.info.id, self.info.leaf.as_ref(), &batch)
            .await?;
        let ids = batch.iter().map(|e| e.id.clone()).collect();
        for entry in batch {
            self.by_id.insert(entry.id.clone(), self.entries.len());
            self.entries.push(entry);
        }
        self.info = info;
        Ok(ids)
    }

    fn fresh_id(&self, batch: &[SessionEntry]) -> Result<EntryId, SessionError> {
        loop {
            let id = EntryId::random()?;
            if !self.by_id.contains_key(&id) && batch.iter().all(|e| e.id != id) {
                return Ok(id);
            }
        }
    }
}
