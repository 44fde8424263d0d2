//! The "LocalAgreement-2" policy of whisper-streaming (Macháček, Dabre and
//! Bojar, 2023): a stable prefix from hypotheses of a growing window.
//!
//! Rules: each new hypothesis of the window (words with times from the
//! stream's start) first loses the words the committed text already
//! holds: those starting before the last committed word ended (less
//! 0.1 s), the point corrected by the text (whisper.cpp's word times are
//! rough): the committed text's last 5 to 1 words, found ending within
//! 3 words of that point, move it to just after them. What remains is
//! compared with the previous hypothesis's uncommitted words; their
//! longest common prefix (words compared lowercase, without punctuation)
//! is committed, in the newer hypothesis's spelling. Committed words never
//! change; the rest of the newer hypothesis is the tentative tail. At the
//! stream's end the last tail is committed as it stands.

/// A word heard, with its times in seconds from the stream's start.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    pub(crate) text: String,
    pub(crate) start: f64,
    pub(crate) end: f64,
}

impl Word {
    /// Whether the word ends a sentence (`.`, `?` or `!`, a closing quote
    /// or bracket after it allowed).
    pub(crate) fn ends_sentence(&self) -> bool {
        self.text
            .trim_end_matches(['"', '\'', ')', ']', '\u{201d}', '\u{2019}'])
            .ends_with(['.', '?', '!'])
    }
}

/// The committed words and the tentative tail of one stream.
#[derive(Debug, Default)]
pub(crate) struct Agreement {
    committed: Vec<Word>,
    tentative: Vec<Word>,
    last_end: f64,
}

/// How far before the last committed word's end a new word may start and
/// still count as new (whisper-streaming's 0.1 s).
const OVERLAP_SLACK: f64 = 0.1;
/// The longest n-gram of the committed text's end that aligns a new
/// hypothesis.
const MAX_NGRAM: usize = 5;
/// How many words from where time puts a hypothesis's new part the
/// committed text's end is looked for.
const ALIGN_REACH: usize = 3;

/// A word as hypotheses are compared: lowercase letters and digits.
fn key(text: &str) -> String {
    let key: String = text
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    if key.is_empty() { text.to_owned() } else { key }
}

impl Agreement {
    /// Takes the window's newest hypothesis; returns how many words it
    /// committed.
    pub(crate) fn insert(&mut self, mut hypothesis: Vec<Word>) -> usize {
        let cut = self.new_from(&hypothesis);
        let mut new = hypothesis.split_off(cut);
        let agreed = self
            .tentative
            .iter()
            .zip(&new)
            .take_while(|(a, b)| key(&a.text) == key(&b.text))
            .count();
        let rest = new.split_off(agreed);
        if let Some(last) = new.last() {
            self.last_end = self.last_end.max(last.end);
        }
        self.committed.extend(new);
        self.tentative = rest;
        agreed
    }

    /// Where the words of `hypothesis` that the committed text does not
    /// hold begin. By time first: the first word starting after the last
    /// committed one ended (less [`OVERLAP_SLACK`]). whisper.cpp's word
    /// times are rough, so the text corrects it: the committed text's last
    /// words (the longest n-gram of up to [`MAX_NGRAM`]) found ending
    /// within [`ALIGN_REACH`] words of that point move it to just after
    /// them.
    fn new_from(&self, hypothesis: &[Word]) -> usize {
        let by_time = hypothesis
            .iter()
            .position(|w| w.start > self.last_end - OVERLAP_SLACK)
            .unwrap_or(hypothesis.len());
        let low = by_time.saturating_sub(ALIGN_REACH);
        let high = (by_time + ALIGN_REACH).min(hypothesis.len());
        let mut candidates: Vec<usize> = (low..=high).collect();
        candidates.sort_by_key(|j| j.abs_diff(by_time));
        for n in (1..=self.committed.len().min(MAX_NGRAM)).rev() {
            let tail = &self.committed[self.committed.len() - n..];
            let found = candidates.iter().copied().find(|&j| {
                j >= n
                    && hypothesis[j - n..j]
                        .iter()
                        .zip(tail)
                        .all(|(a, b)| key(&a.text) == key(&b.text))
            });
            if let Some(j) = found {
                return j;
            }
        }
        by_time
    }

    /// Commits the tentative tail as it stands (the stream's end, or a
    /// window that must be cut with nothing agreed).
    pub(crate) fn commit_tentative(&mut self) {
        if let Some(last) = self.tentative.last() {
            self.last_end = self.last_end.max(last.end);
        }
        self.committed.append(&mut self.tentative);
    }

    /// The committed words, from the stream's start.
    pub(crate) fn committed(&self) -> &[Word] {
        &self.committed
    }

    /// The tentative tail.
    pub(crate) fn tentative(&self) -> &[Word] {
        &self.tentative
    }

    /// When the last committed word ended (0 before any).
    pub(crate) fn last_end(&self) -> f64 {
        self.last_end
    }

    /// When the last committed word that ends a sentence ended, if it did
    /// after `after`.
    pub(crate) fn last_sentence_end(&self, after: f64) -> Option<f64> {
        self.committed
            .iter()
            .rev()
            .take_while(|w| w.end > after)
            .find(|w| w.ends_sentence())
            .map(|w| w.end)
    }
}

/// Words joined by single spaces.
pub(crate) fn joined(words: &[Word]) -> String {
    let mut text = String::new();
    for word in words {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&word.text);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str, start: f64) -> Vec<Word> {
        text.split_whitespace()
            .enumerate()
            .map(|(i, w)| Word {
                text: w.to_owned(),
                start: start + i as f64 * 0.5,
                end: start + i as f64 * 0.5 + 0.4,
            })
            .collect()
    }

    #[test]
    fn two_agreeing_hypotheses_commit_their_common_prefix() {
        let mut a = Agreement::default();
        assert_eq!(a.insert(words("the cat sat", 0.0)), 0);
        assert_eq!(joined(a.tentative()), "the cat sat");
        // The second hypothesis agrees on two words (punctuation and case
        // aside), not the third.
        assert_eq!(a.insert(words("The cat, sad on", 0.0)), 2);
        assert_eq!(joined(a.committed()), "The cat,");
        assert_eq!(joined(a.tentative()), "sad on");
        assert!((a.last_end() - 0.9).abs() < 1e-9);
        // The window heard again from its start: committed words are
        // dropped by time, the rest compared with the tail.
        assert_eq!(a.insert(words("the cat sad on the mat.", 0.0)), 2);
        assert_eq!(joined(a.committed()), "The cat, sad on");
        assert_eq!(joined(a.tentative()), "the mat.");
        a.commit_tentative();
        assert_eq!(joined(a.committed()), "The cat, sad on the mat.");
        assert!(a.tentative().is_empty());
        assert_eq!(a.last_sentence_end(0.0), Some(2.9));
        assert_eq!(a.last_sentence_end(3.0), None);
    }

    #[test]
    fn a_repeated_ngram_after_a_cut_is_not_committed_twice() {
        let mut a = Agreement::default();
        a.insert(words("one two three", 0.0));
        a.insert(words("one two three four", 0.0));
        assert_eq!(joined(a.committed()), "one two three");
        // A hypothesis whose times drifted: "two three" starts after the
        // committed end but repeats it.
        let drifted = words("two three four five", 1.2);
        a.insert(drifted.clone());
        a.insert(drifted);
        assert_eq!(joined(a.committed()), "one two three four five");
    }

    #[test]
    fn rough_times_are_corrected_by_the_committed_text() {
        let mut a = Agreement::default();
        a.insert(words("unless to be rather cold-hearted", 0.0));
        a.insert(words("unless to be rather cold-hearted and", 0.0));
        assert_eq!(joined(a.committed()), "unless to be rather cold-hearted");
        // whisper.cpp put "and rather" before the committed end: time
        // alone would drop them, the text keeps them.
        let mut rough = words("unless to be rather cold-hearted and rather selfish", 0.0);
        for w in &mut rough[5..7] {
            w.start -= 0.6;
        }
        a.insert(rough.clone());
        a.insert(rough);
        assert_eq!(
            joined(a.committed()),
            "unless to be rather cold-hearted and rather selfish"
        );
    }

    #[test]
    fn committed_text_only_grows() {
        let mut a = Agreement::default();
        let hypotheses = [
            "I",
            "I went",
            "I want to",
            "I want to go",
            "I want to go home.",
            "I want to go home.",
        ];
        let mut before = String::new();
        for h in hypotheses {
            a.insert(words(h, 0.0));
            let now = joined(a.committed());
            assert!(now.starts_with(&before), "{before:?} then {now:?}");
            before = now;
        }
        assert_eq!(before, "I want to go home.");
        assert!(
            Word {
                text: "home.\"".into(),
                start: 0.0,
                end: 0.0
            }
            .ends_sentence()
        );
        assert!(
            !Word {
                text: "Mr".into(),
                start: 0.0,
                end: 0.0
            }
            .ends_sentence()
        );
    }
}
