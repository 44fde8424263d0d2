//! Text to phonemes, grouped by sentence, the way `piper-phonemize` does it
//! with espeak-ng, but through the `espeak-ng` program instead of its
//! library (so no GPL code is linked into the process).
//!
//! Rules: the text is cut into clauses at `.`, `?`, `!`, `,`, `:`, `;`,
//! `…` and a spaced dash when whitespace (or the end) follows, and at blank
//! lines. Each clause goes to espeak-ng without its punctuation, one per
//! paragraph (clauses separated by a blank line), in one run of
//! `espeak-ng -q --ipa -b 1 -v VOICE --stdin`, which prints one line of
//! IPA per clause. The text never appears on the command line (it is
//! stdin), and the voice comes from the voice's config, checked to be a
//! name. Each line is decomposed (Unicode NFD, as Piper does), language
//! switch flags such as `(fr)` are dropped, and the clause's punctuation is
//! put back the way `piper-phonemize` appends espeak's clause terminator
//! (`.`, `?`, `!`, or `,`/`:`/`;` followed by a space). A `.`, `?`, `!` or
//! blank line ends a sentence; Piper synthesizes sentence by sentence.
//! When espeak-ng splits differently (its line count does not match), its
//! lines are taken as sentences of their own, each ended with `.`: the
//! words are all there, only the pauses differ. espeak-ng runs through the
//! provider's spawn policy, killed on cancellation. Piper takes sentences
//! (`espeak`), kokoro the clauses' phonemes before they are grouped into
//! sentences (`espeak_clauses`): one cutter and one runner, so the rule
//! lives here once.

use oscova_core::CancellationToken;
use oscova_core::process::{ProcessSpawnPolicy, ProcessSpawnRequest, SpawnError};
use unicode_normalization::UnicodeNormalization;

use super::ESPEAK_INSTALL_COMMAND;
use super::error::OnnxError;

/// How a clause ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Terminator {
    Period,
    Question,
    Exclamation,
    Comma,
    Colon,
    Semicolon,
    /// A blank line or the end of the text.
    None,
}

impl Terminator {
    fn of(c: char) -> Option<Self> {
        Some(match c {
            '.' => Self::Period,
            '?' => Self::Question,
            '!' => Self::Exclamation,
            ',' => Self::Comma,
            ':' => Self::Colon,
            ';' | '…' => Self::Semicolon,
            '—' | '–' => Self::Comma,
            _ => return None,
        })
    }

    /// The phonemes `piper-phonemize` appends for this terminator.
    fn phonemes(self) -> &'static [char] {
        match self {
            Self::Period => &['.'],
            Self::Question => &['?'],
            Self::Exclamation => &['!'],
            Self::Comma => &[',', ' '],
            Self::Colon => &[':', ' '],
            Self::Semicolon => &[';', ' '],
            Self::None => &[],
        }
    }

    fn ends_sentence(self) -> bool {
        matches!(
            self,
            Self::Period | Self::Question | Self::Exclamation | Self::None
        )
    }
}

/// A clause: its text without the punctuation that ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Clause {
    pub(crate) text: String,
    pub(crate) terminator: Terminator,
}

/// Closing quotes and brackets that may follow a clause's punctuation.
fn is_closing(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '}' | '”' | '’' | '»')
}

/// The text's clauses (see the module rules).
pub(crate) fn clauses(text: &str) -> Vec<Clause> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            let mut j = i + 1;
            let mut newlines = 1;
            while j < chars.len() && chars[j].is_whitespace() {
                newlines += usize::from(chars[j] == '\n');
                j += 1;
            }
            if newlines >= 2 {
                push_clause(&mut out, &mut current, Terminator::None);
            } else {
                current.push(' ');
            }
            i = j;
            continue;
        }
        let Some(terminator) = Terminator::of(c) else {
            current.push(c);
            i += 1;
            continue;
        };
        let mut j = i + 1;
        while j < chars.len() && (Terminator::of(chars[j]).is_some() || is_closing(chars[j])) {
            j += 1;
        }
        let dash = matches!(c, '—' | '–');
        let spaced = !dash || i == 0 || chars[i - 1].is_whitespace();
        if spaced && (j == chars.len() || chars[j].is_whitespace()) {
            push_clause(&mut out, &mut current, terminator);
        } else {
            current.extend(&chars[i..j]);
        }
        i = j;
    }
    push_clause(&mut out, &mut current, Terminator::None);
    out
}

/// Ends the clause in `current`, keeping it if it has anything to say.
fn push_clause(out: &mut Vec<Clause>, current: &mut String, terminator: Terminator) {
    let text = current.trim();
    let speakable = text
        .chars()
        .any(|c| !c.is_whitespace() && Terminator::of(c).is_none() && !is_closing(c));
    if speakable {
        out.push(Clause {
            text: text.to_owned(),
            terminator,
        });
    } else if terminator.ends_sentence()
        && let Some(last) = out.last_mut()
        && !last.terminator.ends_sentence()
    {
        last.terminator = Terminator::None;
    }
    current.clear();
}

/// What espeak-ng reads: one clause per paragraph.
pub(crate) fn espeak_input(clauses: &[Clause]) -> String {
    let texts: Vec<&str> = clauses.iter().map(|c| c.text.as_str()).collect();
    texts.join("\n\n")
}

/// One line of espeak-ng's IPA as Piper's phonemes: NFD, without language
/// switch flags, trimmed.
fn clean(line: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(line.len());
    let mut in_flag = false;
    for c in line.trim().nfd() {
        match c {
            '(' => in_flag = true,
            ')' if in_flag => in_flag = false,
            _ if in_flag => {}
            _ => out.push(c),
        }
    }
    while out.last().is_some_and(|c| c.is_whitespace()) {
        out.pop();
    }
    out
}

/// One clause's phonemes, its punctuation put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spoken {
    pub(crate) phonemes: Vec<char>,
    /// Whether a sentence ends with this clause.
    pub(crate) ends_sentence: bool,
}

/// Each clause's phonemes from espeak-ng's output for `clauses`, clauses
/// with nothing to say left out (see the module rules).
pub(crate) fn spoken_clauses(clauses: &[Clause], output: &str) -> Vec<Spoken> {
    let lines: Vec<&str> = output.lines().collect();
    let nonempty: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let aligned = if lines.len() == clauses.len() {
        Some(lines)
    } else if nonempty.len() == clauses.len() {
        Some(nonempty.clone())
    } else {
        None
    };
    let Some(lines) = aligned else {
        // espeak-ng cut the text elsewhere: its lines as sentences.
        return nonempty
            .iter()
            .map(|line| {
                let mut phonemes = clean(line);
                phonemes.push('.');
                Spoken {
                    phonemes,
                    ends_sentence: true,
                }
            })
            .collect();
    };
    let mut out: Vec<Spoken> = Vec::new();
    for (clause, line) in clauses.iter().zip(lines) {
        let mut phonemes = clean(line);
        let ends_sentence = clause.terminator.ends_sentence();
        if phonemes.is_empty() {
            if ends_sentence && let Some(last) = out.last_mut() {
                last.ends_sentence = true;
            }
            continue;
        }
        phonemes.extend_from_slice(clause.terminator.phonemes());
        out.push(Spoken {
            phonemes,
            ends_sentence,
        });
    }
    out
}

/// Sentences of phonemes from espeak-ng's output for `clauses`.
pub(crate) fn sentences(clauses: &[Clause], output: &str) -> Vec<Vec<char>> {
    let mut out = Vec::new();
    let mut current: Vec<char> = Vec::new();
    for spoken in spoken_clauses(clauses, output) {
        current.extend(spoken.phonemes);
        if spoken.ends_sentence {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The phonemes of a voice whose phonemes are the text's characters.
pub(crate) fn text_sentences(text: &str) -> Vec<Vec<char>> {
    let phonemes: Vec<char> = text.trim().nfd().collect();
    if phonemes.is_empty() {
        Vec::new()
    } else {
        vec![phonemes]
    }
}

/// Runs espeak-ng for `text` with espeak voice `voice` and returns its
/// sentences of phonemes; `origin` is who the spawn policy is told it runs
/// for.
pub(crate) async fn espeak(
    origin: &str,
    policy: &ProcessSpawnPolicy,
    program: &str,
    voice: &str,
    text: &str,
    cancel: &CancellationToken,
) -> Result<Vec<Vec<char>>, OnnxError> {
    let clauses = clauses(text);
    if clauses.is_empty() {
        return Err(OnnxError::NothingToSay);
    }
    let stdout = run_espeak(origin, policy, program, voice, &clauses, cancel).await?;
    Ok(sentences(&clauses, &stdout))
}

/// Runs espeak-ng for `text` and returns each clause's phonemes.
pub(crate) async fn espeak_clauses(
    origin: &str,
    policy: &ProcessSpawnPolicy,
    program: &str,
    voice: &str,
    text: &str,
    cancel: &CancellationToken,
) -> Result<Vec<Spoken>, OnnxError> {
    let clauses = clauses(text);
    if clauses.is_empty() {
        return Err(OnnxError::NothingToSay);
    }
    let stdout = run_espeak(origin, policy, program, voice, &clauses, cancel).await?;
    Ok(spoken_clauses(&clauses, &stdout))
}

/// espeak-ng's IPA output for `clauses`.
async fn run_espeak(
    origin: &str,
    policy: &ProcessSpawnPolicy,
    program: &str,
    voice: &str,
    clauses: &[Clause],
    cancel: &CancellationToken,
) -> Result<String, OnnxError> {
    let request = ProcessSpawnRequest::new(program)
        .args(["-q", "--ipa", "-b", "1", "-v", voice, "--stdin"])
        .origin(origin);
    let output = policy
        .run(request, Some(espeak_input(clauses).into_bytes()), cancel)
        .await
        .map_err(|source| match source {
            SpawnError::NotFound { .. } => OnnxError::NotInstalled {
                missing: format!("the phonemizer program `{program}` was not found"),
                install: ESPEAK_INSTALL_COMMAND,
            },
            source => OnnxError::Program {
                source: Box::new(source),
            },
        })?;
    String::from_utf8(output.stdout).map_err(|_| OnnxError::BadPhonemes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<(String, Terminator)> {
        clauses(text)
            .into_iter()
            .map(|c| (c.text, c.terminator))
            .collect()
    }

    #[test]
    fn clauses_end_at_punctuation_followed_by_space() {
        use Terminator::*;
        assert_eq!(
            texts("Hello world, this is a test. How are you?! \"Fine.\" Pi is 3.14; e.g.x"),
            [
                ("Hello world".into(), Comma),
                ("this is a test".into(), Period),
                ("How are you".into(), Question),
                ("\"Fine".into(), Period),
                ("Pi is 3.14".into(), Semicolon),
                ("e.g.x".into(), None),
            ]
        );
    }

    #[test]
    fn blank_lines_end_sentences_and_single_newlines_are_spaces() {
        use Terminator::*;
        assert_eq!(
            texts("one\ntwo\n\n  three — four…  five—six"),
            [
                ("one two".into(), None),
                ("three".into(), Comma),
                ("four".into(), Semicolon),
                ("five—six".into(), None),
            ]
        );
    }

    #[test]
    fn punctuation_alone_says_nothing_but_ends_the_sentence() {
        use Terminator::*;
        assert!(clauses(" ... ?! ").is_empty());
        assert_eq!(
            texts("wait, . go"),
            [("wait".into(), None), ("go".into(), None)]
        );
    }

    #[test]
    fn output_lines_become_sentences_with_their_punctuation() {
        let clauses = clauses("Hello world, this is a test. How are you?");
        assert_eq!(
            espeak_input(&clauses),
            "Hello world\n\nthis is a test\n\nHow are you"
        );
        let out = sentences(&clauses, "həlˈoʊ wˈɜːld\nðɪs ɪz ɐ tˈɛst\nhˈaʊ ɑːɹ juː\n");
        let as_text: Vec<String> = out.iter().map(|s| s.iter().collect()).collect();
        assert_eq!(as_text, ["həlˈoʊ wˈɜːld, ðɪs ɪz ɐ tˈɛst.", "hˈaʊ ɑːɹ juː?"]);
    }

    #[test]
    fn clauses_keep_their_punctuation_and_where_sentences_end() {
        let clauses = clauses("Hello world, this is a test. How are you?");
        let spoken = spoken_clauses(&clauses, "həlˈoʊ wˈɜːld\nðɪs ɪz ɐ tˈɛst\nhˈaʊ ɑːɹ juː\n");
        let as_text: Vec<(String, bool)> = spoken
            .iter()
            .map(|s| (s.phonemes.iter().collect(), s.ends_sentence))
            .collect();
        assert_eq!(
            as_text,
            [
                ("həlˈoʊ wˈɜːld, ".to_owned(), false),
                ("ðɪs ɪz ɐ tˈɛst.".to_owned(), true),
                ("hˈaʊ ɑːɹ juː?".to_owned(), true),
            ]
        );
    }

    #[test]
    fn a_different_split_keeps_every_line_as_a_sentence() {
        // Two clauses for us; espeak-ng cut the first one once more.
        let clauses = clauses("Dr Smith, for example here");
        assert_eq!(clauses.len(), 2);
        let out = sentences(&clauses, "dˈɑːktɚ smˈɪθ\nfɚɹ ɛɡzˈæmpəl\nhˈɪɹ\n");
        let as_text: Vec<String> = out.iter().map(|s| s.iter().collect()).collect();
        assert_eq!(as_text, ["dˈɑːktɚ smˈɪθ.", "fɚɹ ɛɡzˈæmpəl.", "hˈɪɹ."]);
    }

    #[test]
    fn phonemes_are_decomposed_and_language_flags_dropped() {
        assert_eq!(
            clean(" (fr)bõ(en) ʒuʁ "),
            ['b', 'o', '\u{303}', ' ', 'ʒ', 'u', 'ʁ']
        );
        assert_eq!(text_sentences(" ç "), [vec!['c', '\u{327}']]);
        assert!(text_sentences("  ").is_empty());
    }
}
