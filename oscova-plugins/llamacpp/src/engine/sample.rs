//! Picking the next token: greedy or with a temperature, freely or under
//! the call grammar.
//!
//! Rules: under the grammar the model's own best token is checked first
//! and taken when the grammar allows it, as llama.cpp's common sampler
//! does; only when it is refused is the grammar applied to the whole
//! vocabulary (masking 150,000 tokens every step cost 15–25% of the
//! generation speed, and inside a call the best token is almost always
//! allowed). That refusal is reported ([`Pick::overridden`]): while the
//! tool's name is written it means the model wanted a tool that is not
//! offered. A grammar that allows no token at all is an error, never a
//! token picked from nothing. Tokens the grammar accepted are the only
//! ones fed to it (`try_accept`), so its state never empties under it
//! (llama.cpp aborts the process on an empty grammar).

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

/// A picked token.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pick {
    /// The token.
    pub(crate) token: LlamaToken,
    /// The grammar refused the model's own choice.
    pub(crate) overridden: bool,
}

/// The sampling settings of one answer.
pub(crate) struct Sampling {
    /// The random draw, when sampling with a temperature; greedy without.
    dist: Option<LlamaSampler>,
}

impl Sampling {
    pub(crate) fn new(temperature: f32, seed: u32) -> Self {
        let dist = (temperature > 0.0).then(|| {
            LlamaSampler::chain_simple([LlamaSampler::temp(temperature), LlamaSampler::dist(seed)])
        });
        Self { dist }
    }

    /// The next token from the logits at `index`; `grammar` constrains it.
    pub(crate) fn pick(
        &mut self,
        ctx: &LlamaContext<'_>,
        index: i32,
        grammar: Option<&mut LlamaSampler>,
    ) -> Result<Pick, String> {
        let logits = ctx.get_logits_ith(index);
        let best = argmax(logits).ok_or("the model gave no logits")?;
        let Some(grammar) = grammar else {
            return match self.dist.as_mut() {
                None => Ok(Pick {
                    token: best,
                    overridden: false,
                }),
                Some(dist) => {
                    let mut all = ctx.token_data_array_ith(index);
                    all.apply_sampler(dist);
                    let token = all.selected_token().ok_or("the sampler chose no token")?;
                    Ok(Pick {
                        token,
                        overridden: false,
                    })
                }
            };
        };
        let mut one = LlamaTokenDataArray::new(
            vec![LlamaTokenData::new(best, logits_at(logits, best), 0.0)],
            false,
        );
        grammar.apply(&mut one);
        let allowed = one.data[0].logit().is_finite();
        if allowed && self.dist.is_none() {
            return Ok(Pick {
                token: best,
                overridden: false,
            });
        }
        let mut all = ctx.token_data_array_ith(index);
        grammar.apply(&mut all);
        if !all.data.iter().any(|d| d.logit().is_finite()) {
            return Err("the call grammar allows no token here".into());
        }
        let token = match self.dist.as_mut() {
            None => all
                .data
                .iter()
                .filter(|d| d.logit().is_finite())
                .max_by(|a, b| a.logit().total_cmp(&b.logit()))
                .map(LlamaTokenData::id)
                .ok_or("the call grammar allows no token here")?,
            Some(dist) => {
                all.apply_sampler(dist);
                all.selected_token().ok_or("the sampler chose no token")?
            }
        };
        Ok(Pick {
            token,
            overridden: !allowed,
        })
    }
}

fn logits_at(logits: &[f32], token: LlamaToken) -> f32 {
    logits
        .get(token.0 as usize)
        .copied()
        .unwrap_or(f32::NEG_INFINITY)
}

fn argmax(logits: &[f32]) -> Option<LlamaToken> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &l) in logits.iter().enumerate() {
        if best.is_none_or(|(_, b)| l > b) {
            best = Some((i, l));
        }
    }
    best.map(|(i, _)| LlamaToken(i as i32))
}
