//! Clause phonemes to the token chunks Kokoro synthesizes.
//!
//! Rules: each clause's phonemes (espeak-ng IPA with its punctuation put
//! back, from the phonemizer the onnxruntime voices share,
//! `crate::onnx::phonemes`) become token ids through the
//! vocabulary, symbols it lacks dropped (as kokoro-onnx does); clauses are
//! joined by a space. A chunk holds at most [`MAX_TOKENS`] tokens (the
//! model's 512 less the two pads) and is cut at the least disruptive
//! place: between sentences, else between clauses, else between words,
//! and only for a single word longer than a chunk, inside it. Consecutive
//! pieces are packed into one chunk while they fit, so short sentences
//! share a chunk and keep their natural pauses. Punctuation stays with the
//! text before it, as Kokoro was trained.

use crate::onnx::phonemes::Spoken;

use super::assets::Vocab;

/// The most tokens one chunk holds, pads not counted.
pub(crate) const MAX_TOKENS: usize = 510;

/// The chunks of token ids for `clauses`, each at most `limit` long.
pub(crate) fn chunks(clauses: &[Spoken], vocab: &Vocab, limit: usize) -> Vec<Vec<i64>> {
    let limit = limit.max(1);
    let space = vocab.get(&' ').copied();
    let mut atoms: Vec<Vec<i64>> = Vec::new();
    let mut sentence: Vec<Vec<i64>> = Vec::new();
    for (i, clause) in clauses.iter().enumerate() {
        let ids = tokens(&clause.phonemes, vocab);
        if !ids.is_empty() {
            sentence.push(ids);
        }
        if clause.ends_sentence || i + 1 == clauses.len() {
            let whole = join(&sentence, space);
            if whole.len() <= limit {
                if !whole.is_empty() {
                    atoms.push(whole);
                }
            } else {
                for clause in sentence.drain(..) {
                    split(clause, space, limit, &mut atoms);
                }
            }
            sentence.clear();
        }
    }
    pack(atoms, space, limit)
}

/// The ids of `phonemes`, unknown symbols dropped, no space at either end.
pub(crate) fn tokens(phonemes: &[char], vocab: &Vocab) -> Vec<i64> {
    let space = vocab.get(&' ').copied();
    let mut ids: Vec<i64> = phonemes
        .iter()
        .filter_map(|c| vocab.get(c).copied())
        .collect();
    if let Some(space) = space {
        while ids.last() == Some(&space) {
            ids.pop();
        }
        let lead = ids.iter().take_while(|id| **id == space).count();
        ids.drain(..lead);
    }
    ids
}

fn join(pieces: &[Vec<i64>], space: Option<i64>) -> Vec<i64> {
    let mut out = Vec::new();
    for piece in pieces {
        if !out.is_empty()
            && let Some(space) = space
        {
            out.push(space);
        }
        out.extend_from_slice(piece);
    }
    out
}

/// A clause as pieces within `limit`: itself, else its words, else slices.
fn split(clause: Vec<i64>, space: Option<i64>, limit: usize, atoms: &mut Vec<Vec<i64>>) {
    if clause.len() <= limit {
        atoms.push(clause);
        return;
    }
    let words: Vec<Vec<i64>> = match space {
        Some(space) => clause
            .split(|id| *id == space)
            .filter(|w| !w.is_empty())
            .map(<[i64]>::to_vec)
            .collect(),
        None => vec![clause],
    };
    for word in pack(words, space, limit) {
        if word.len() <= limit {
            atoms.push(word);
        } else {
            atoms.extend(word.chunks(limit).map(<[i64]>::to_vec));
        }
    }
}

/// Consecutive pieces joined by a space while they fit in `limit`.
fn pack(pieces: Vec<Vec<i64>>, space: Option<i64>, limit: usize) -> Vec<Vec<i64>> {
    let gap = usize::from(space.is_some());
    let mut out: Vec<Vec<i64>> = Vec::new();
    let mut current: Vec<i64> = Vec::new();
    for piece in pieces {
        if !current.is_empty() && current.len() + gap + piece.len() > limit {
            out.push(std::mem::take(&mut current));
        }
        if !current.is_empty()
            && let Some(space) = space
        {
            current.push(space);
        }
        current.extend(piece);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocab {
        [
            (' ', 16),
            ('.', 4),
            (',', 3),
            ('a', 43),
            ('b', 44),
            ('ˈ', 156),
        ]
        .into_iter()
        .collect()
    }

    fn spoken(text: &str, ends_sentence: bool) -> Spoken {
        Spoken {
            phonemes: text.chars().collect(),
            ends_sentence,
        }
    }

    #[test]
    fn unknown_symbols_are_dropped_and_spaces_trimmed() {
        assert_eq!(
            tokens(&" ˈaX b. ".chars().collect::<Vec<_>>(), &vocab()),
            [156, 43, 16, 44, 4]
        );
    }

    #[test]
    fn short_sentences_share_a_chunk() {
        let clauses = [
            spoken("ab, ", false),
            spoken("a.", true),
            spoken("b.", true),
        ];
        assert_eq!(
            chunks(&clauses, &vocab(), 510),
            [vec![43, 44, 3, 16, 43, 4, 16, 44, 4]]
        );
    }

    #[test]
    fn chunks_are_cut_between_sentences_then_clauses_then_words() {
        // Two sentences of 5 tokens: limit 6 cuts between them.
        let clauses = [spoken("a b a.", true), spoken("b a b.", true)];
        assert_eq!(
            chunks(&clauses, &vocab(), 6),
            [vec![43, 16, 44, 16, 43, 4], vec![44, 16, 43, 16, 44, 4]]
        );
        // One sentence of two clauses, too long together: cut at the clause.
        let clauses = [spoken("a a, ", false), spoken("b b.", true)];
        assert_eq!(
            chunks(&clauses, &vocab(), 5),
            [vec![43, 16, 43, 3], vec![44, 16, 44, 4]]
        );
        // One clause too long: cut between words; one word too long: sliced.
        let clauses = [spoken("aaa bbbbbbb.", true)];
        let out = chunks(&clauses, &vocab(), 4);
        assert_eq!(
            out,
            [vec![43, 43, 43], vec![44, 44, 44, 44], vec![44, 44, 44, 4]]
        );
        assert!(out.iter().all(|c| c.len() <= 4));
    }
}
