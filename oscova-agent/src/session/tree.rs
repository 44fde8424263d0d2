//! The shape of a session: its roots, each entry's children, its branches
//! and labels.
//!
//! Rules: the tree is read from the entries alone, flat (no nesting, so a
//! branch of 100,000 entries needs no deep recursion). A root is an entry
//! without a parent, or whose parent is not in the session (pi shows such
//! orphans as roots too). A branch is a path from a root to an entry with no
//! children, its tip; every entry is on at least one. Children are in
//! append order. A label is the latest `label` entry naming the target,
//! anywhere in the session; a label entry without text clears it.

use std::collections::HashMap;

use super::entry::{EntryKind, SessionEntry};
use super::id::EntryId;
use super::view::EntryIndex;

/// One branch of a session: from a root to a tip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    /// The entry the branch ends with (it has no children).
    pub tip: EntryId,
    /// How many entries it has, root and tip included.
    pub len: usize,
    /// Whether the session's leaf is on it.
    pub active: bool,
}

/// A session's tree, borrowed from its entries.
#[derive(Debug)]
pub struct SessionTree<'a> {
    entries: &'a [SessionEntry],
    by_id: &'a EntryIndex,
    children: HashMap<&'a EntryId, Vec<usize>>,
    roots: Vec<usize>,
    labels: HashMap<&'a EntryId, &'a str>,
    leaf: Option<&'a EntryId>,
}

impl<'a> SessionTree<'a> {
    pub(crate) fn new(
        entries: &'a [SessionEntry],
        by_id: &'a EntryIndex,
        leaf: Option<&'a EntryId>,
    ) -> Self {
        let mut children: HashMap<&EntryId, Vec<usize>> = HashMap::new();
        let mut roots = Vec::new();
        let mut labels = HashMap::new();
        for (i, entry) in entries.iter().enumerate() {
            match entry.parent_id.as_ref().filter(|p| by_id.contains_key(*p)) {
                Some(parent) => children.entry(parent).or_default().push(i),
                None => roots.push(i),
            }
            if let EntryKind::Label { target_id, label } = &entry.kind {
                match label.as_deref().filter(|l| !l.is_empty()) {
                    Some(label) => labels.insert(target_id, label),
                    None => labels.remove(target_id),
                };
            }
        }
        Self {
            entries,
            by_id,
            children,
            roots,
            labels,
            leaf,
        }
    }

    /// The roots, in append order.
    pub fn roots(&self) -> impl Iterator<Item = &'a SessionEntry> + '_ {
        self.roots.iter().map(|&i| &self.entries[i])
    }

    /// The children of `id`, in append order.
    pub fn children(&self, id: &EntryId) -> impl Iterator<Item = &'a SessionEntry> + '_ {
        self.children
            .get(id)
            .into_iter()
            .flatten()
            .map(|&i| &self.entries[i])
    }

    /// The label on `id`, if any.
    pub fn label(&self, id: &EntryId) -> Option<&'a str> {
        self.labels.get(id).copied()
    }

    /// Every branch, in the order of their tips' appending.
    pub fn branches(&self) -> Vec<Branch> {
        let active: Vec<&EntryId> = {
            let mut on_path = Vec::new();
            let mut current = self.leaf;
            while let Some(id) = current {
                if on_path.len() > self.entries.len() {
                    break;
                }
                on_path.push(id);
                current = self
                    .by_id
                    .get(id)
                    .and_then(|&i| self.entries[i].parent_id.as_ref());
            }
            on_path
        };
        self.entries
            .iter()
            .filter(|e| !self.children.contains_key(&e.id))
            .map(|tip| {
                let mut len = 1;
                let mut current = tip;
                let mut on_active = active.contains(&&tip.id);
                while let Some(parent) = current
                    .parent_id
                    .as_ref()
                    .and_then(|p| self.by_id.get(p))
                    .map(|&i| &self.entries[i])
                {
                    if len > self.entries.len() {
                        break;
                    }
                    len += 1;
                    on_active |= active.first() == Some(&&parent.id);
                    current = parent;
                }
                Branch {
                    tip: tip.id.clone(),
                    len,
                    active: on_active,
                }
            })
            .collect()
    }
}
