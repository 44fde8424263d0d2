//! Word error counting for speech recognition tests: a transcript is judged
//! by how many words would have to change to make it the reference, after
//! case and punctuation are set aside.

/// Lowercase words with punctuation stripped (apostrophes stay).
///
/// ```
/// use oscova_test_support::text::words;
///
/// assert_eq!(words("Hello, World!  it's"), ["hello", "world", "it's"]);
/// ```
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric() || *c == '\'')
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word-level Levenshtein distance: substitutions + deletions + insertions.
///
/// ```
/// use oscova_test_support::text::{word_errors, words};
///
/// assert_eq!(word_errors(&words("a b c"), &words("a x c d")), 2);
/// ```
pub fn word_errors(reference: &[String], hypothesis: &[String]) -> usize {
    let mut previous: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut current = vec![i + 1; hypothesis.len() + 1];
        for (j, h) in hypothesis.iter().enumerate() {
            let substitution = previous[j] + usize::from(r != h);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[hypothesis.len()]
}
