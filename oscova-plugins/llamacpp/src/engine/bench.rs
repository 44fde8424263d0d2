//! llama-bench's measurement on the engine's own context: a prompt read
//! in batches into an empty context, then tokens generated one at a time
//! (random token ids, as llama-bench feeds them; nothing is sampled).

use std::time::Instant;

use llama_cpp_2::token::LlamaToken;

use super::answer::{Loaded, Outcome, ms, read, step};
use super::{EngineError, Slot};

/// llama-bench's measurement: `prompt` tokens read in batches into an
/// empty context, then `generate` tokens read one at a time.
pub(super) fn bench(
    loaded: &Loaded<'_>,
    slot: &mut Slot<'_>,
    prompt: u32,
    generate: u32,
) -> Result<Outcome, EngineError> {
    let vocab = loaded.model.vocab();
    let n_vocab = vocab.n_tokens().max(1);
    let mut seed = 0x2545_f491_u32;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        LlamaToken((seed % n_vocab as u32) as i32)
    };
    slot.ctx.clear_kv_cache();
    slot.tokens.clear();
    let mut outcome = Outcome {
        content: String::new(),
        calls: Vec::new(),
        finish: "stop",
        prompt_tokens: prompt as usize,
        cached_tokens: 0,
        output_tokens: generate as usize,
        prompt_ms: 0.0,
        first_token_ms: 0.0,
        generate_ms: 0.0,
        unconstrained: Vec::new(),
    };
    if prompt > 0 {
        let tokens: Vec<LlamaToken> = (0..prompt).map(|_| next()).collect();
        let from = Instant::now();
        read(
            &mut slot.ctx,
            &mut slot.tokens,
            &tokens,
            slot.settings.batch,
        )?;
        slot.ctx.synchronize();
        outcome.prompt_ms = ms(from);
        slot.ctx.clear_kv_cache();
        slot.tokens.clear();
    }
    if generate > 0 {
        let from = Instant::now();
        for _ in 0..generate {
            step(&mut slot.ctx, &mut slot.tokens, next())?;
        }
        slot.ctx.synchronize();
        outcome.generate_ms = ms(from);
        slot.ctx.clear_kv_cache();
        slot.tokens.clear();
    }
    Ok(outcome)
}
