//! Conversations' KV caches kept between turns, least recently used out.
//!
//! Rules: the context holds one sequence, the conversation it last
//! answered, with the tokens it holds. When a request arrives, the
//! longest common token prefix with that sequence is kept and only the
//! rest is read; when a saved conversation shares a longer prefix (by at
//! least [`MIN_GAIN`] tokens), the live one is saved and that one restored
//! into the context first. Saved states are llama.cpp's own sequence
//! state, bounded in bytes (`cache_bytes`); the least recently used go
//! first. Conversations are told apart by their tokens alone, so every
//! session and user of the process shares the cache and none needs an id;
//! a conversation only ever resumes from a prefix of its own prompt.

use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{LlamaStateSeqFlags, SeqState};

use super::Slot;

/// A restore must save at least this many tokens of reading to be worth
/// a save and a restore (copying a few MB).
pub(crate) const MIN_GAIN: usize = 16;

/// Conversations shorter than this are not worth saving.
const MIN_SAVED: usize = 32;

/// One saved conversation.
struct Saved {
    tokens: Vec<LlamaToken>,
    state: SeqState,
    used: u64,
}

/// The saved conversations.
pub(crate) struct Cache {
    saved: Vec<Saved>,
    bytes: usize,
    limit: usize,
    clock: u64,
}

impl Cache {
    /// A cache holding at most `limit` bytes of saved state.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            saved: Vec::new(),
            bytes: 0,
            limit,
            clock: 0,
        }
    }

    /// Sets the limit (the configuration may change between requests);
    /// the next [`put`](Self::put) drops what no longer fits.
    pub(crate) fn limit_to(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// The saved conversation sharing the longest prefix with `prompt`,
    /// if it beats `live` (the live sequence's shared prefix) by
    /// [`MIN_GAIN`]: taken out of the cache, with its tokens.
    pub(crate) fn take_better(
        &mut self,
        prompt: &[LlamaToken],
        live: usize,
    ) -> Option<(Vec<LlamaToken>, SeqState)> {
        let (index, shared) = self
            .saved
            .iter()
            .enumerate()
            .map(|(i, s)| (i, common_prefix(&s.tokens, prompt)))
            .max_by_key(|&(_, shared)| shared)?;
        if shared < live + MIN_GAIN {
            return None;
        }
        let saved = self.saved.swap_remove(index);
        self.bytes -= saved.state.byte_len();
        Some((saved.tokens, saved.state))
    }

    /// Keeps `state` for `tokens`, dropping the least recently used past
    /// the limit. Short conversations and states over the whole limit are
    /// not kept.
    pub(crate) fn put(&mut self, tokens: Vec<LlamaToken>, state: SeqState) {
        let size = state.byte_len();
        if tokens.len() < MIN_SAVED || size > self.limit {
            return;
        }
        // The same conversation saved before, at an earlier turn, is
        // superseded by this one.
        self.saved.retain(|s| {
            let stale = tokens.starts_with(&s.tokens);
            if stale {
                self.bytes -= s.state.byte_len();
            }
            !stale
        });
        while self.bytes + size > self.limit {
            let Some(oldest) = (0..self.saved.len()).min_by_key(|&i| self.saved[i].used) else {
                break;
            };
            let dropped = self.saved.swap_remove(oldest);
            self.bytes -= dropped.state.byte_len();
        }
        self.clock += 1;
        self.bytes += size;
        self.saved.push(Saved {
            tokens,
            state,
            used: self.clock,
        });
    }
}

/// Keeps the longest cached prefix of `prompt` in the context (restoring
/// a saved conversation when it shares more), and returns its length;
/// always leaves at least one prompt token to read, for the logits.
pub(super) fn reuse_prefix(slot: &mut Slot<'_>, prompt: &[LlamaToken]) -> usize {
    let mut live = common_prefix(&slot.tokens, prompt);
    let diverging = slot.tokens.len() - live >= MIN_GAIN;
    if let Some((tokens, state)) = slot.cache.take_better(prompt, live) {
        save_live(slot);
        slot.ctx.clear_kv_cache_seq(Some(0), None, None).ok();
        slot.tokens.clear();
        if slot.ctx.state_seq_set(&state, 0).is_ok() {
            slot.tokens = tokens;
        } else {
            slot.ctx.clear_kv_cache();
        }
        live = common_prefix(&slot.tokens, prompt);
    } else if diverging {
        save_live(slot);
    }
    let keep = live.min(prompt.len().saturating_sub(1));
    if slot
        .ctx
        .kv_cache_seq_rm(0, Some(keep as u32), None)
        .is_err()
    {
        slot.ctx.clear_kv_cache();
        slot.tokens.clear();
        return 0;
    }
    slot.tokens.truncate(keep);
    keep
}

/// Saves the live conversation into the cache.
fn save_live(slot: &mut Slot<'_>) {
    if slot.settings.cache_bytes == 0 || slot.tokens.is_empty() {
        return;
    }
    if let Ok(state) = slot.ctx.state_seq_get(0, LlamaStateSeqFlags::empty()) {
        slot.cache.limit_to(slot.settings.cache_bytes);
        slot.cache.put(slot.tokens.clone(), state);
    }
}

/// How many leading tokens `a` and `b` share.
pub(crate) fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(range: std::ops::Range<i32>) -> Vec<LlamaToken> {
        range.map(LlamaToken).collect()
    }

    #[test]
    fn prefixes() {
        assert_eq!(common_prefix(&tokens(0..10), &tokens(0..5)), 5);
        assert_eq!(common_prefix(&tokens(0..10), &tokens(1..5)), 0);
    }
}
