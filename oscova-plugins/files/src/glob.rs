//! The globs `search` takes, with a matcher whose work is bounded.
//!
//! Rules of the syntax: `?` is one character other than `/`; `*` is any run
//! of characters other than `/`; `[abc]`, `[a-z]` and `[!a-z]` are one
//! character (not `/`) in, or not in, the set (a `]` right after `[` or
//! `[!` is a member, as is a `-` first or last); `**` as a whole segment
//! (`**/x`, `a/**/b`, `a/**`) is any number of whole segments, none
//! included; every other character stands for itself. Matching is
//! case-sensitive, and `*` matches a leading dot. `**` inside a segment
//! (`a**`), an unclosed `[`, an empty set or a reversed range is an error,
//! as is a pattern over [`MAX_PATTERN_CHARS`].
//!
//! Rules of the work: the `glob` crate matched by backtracking, so
//! `**/*a*a*a*a*a*a*a*a*a*b/**/x` against a long path ran past 120 s.
//! Here a segment is matched in one pass that only ever returns to the
//! most recent `*` (correct, since every other token matches exactly one
//! character), at most `tokens × characters` steps; segments and `**` are
//! matched by dynamic programming over (pattern segment, path segment)
//! pairs, each pair decided once. A match therefore costs at most the
//! pattern's length times the path's, whatever the pattern.

/// The longest pattern accepted, in characters.
pub(crate) const MAX_PATTERN_CHARS: usize = 1_000;

/// One token of a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `?`
    One,
    /// `*`
    Star,
    /// `[...]`: inclusive ranges (a single character is a range of one).
    Set {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Token {
    /// Whether this single-character token matches `c` (never for `*`).
    fn matches(&self, c: char) -> bool {
        match self {
            Self::Literal(l) => *l == c,
            Self::One => true,
            Self::Star => false,
            Self::Set { negated, ranges } => {
                ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
            }
        }
    }
}

/// One `/`-separated segment of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of whole path segments.
    Any,
    Tokens(Vec<Token>),
}

/// A compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Glob {
    segments: Vec<Segment>,
}

impl Glob {
    /// Compiles `pattern`, or says what is wrong with it.
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        if pattern.chars().nth(MAX_PATTERN_CHARS).is_some() {
            return Err(format!("it is longer than {MAX_PATTERN_CHARS} characters"));
        }
        let segments = pattern
            .split('/')
            .map(|segment| match segment {
                "**" => Ok(Segment::Any),
                s if s.contains("**") => {
                    Err("recursive wildcards must form a single path component".to_owned())
                }
                s => tokens(s).map(Segment::Tokens),
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { segments })
    }

    /// Whether the `/`-separated `path` matches, segment for segment.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let parts: Vec<Vec<char>> = path.split('/').map(|p| p.chars().collect()).collect();
        // done[p][s]: the segments from p on match the parts from s on.
        let (ps, ss) = (self.segments.len(), parts.len());
        let mut done = vec![vec![false; ss + 1]; ps + 1];
        if let Some(end) = done.get_mut(ps).and_then(|row| row.get_mut(ss)) {
            *end = true;
        }
        for (p, segment) in self.segments.iter().enumerate().rev() {
            for s in (0..=ss).rev() {
                let next = |dp: &Vec<Vec<bool>>, p: usize, s: usize| {
                    dp.get(p)
                        .and_then(|row| row.get(s))
                        .copied()
                        .unwrap_or(false)
                };
                let value = match segment {
                    Segment::Any => next(&done, p + 1, s) || (s < ss && next(&done, p, s + 1)),
                    Segment::Tokens(tokens) => {
                        next(&done, p + 1, s + 1)
                            && parts
                                .get(s)
                                .is_some_and(|part| segment_matches(tokens, part))
                    }
                };
                if let Some(cell) = done.get_mut(p).and_then(|row| row.get_mut(s)) {
                    *cell = value;
                }
            }
        }
        done.first()
            .and_then(|row| row.first())
            .copied()
            .unwrap_or(false)
    }
}

/// Whether one path segment matches one pattern segment: a single pass
/// that, on a mismatch, resumes after the most recent `*`, one character
/// further along.
fn segment_matches(tokens: &[Token], text: &[char]) -> bool {
    let (mut t, mut c) = (0, 0);
    // The most recent `*` and where in the text it started to match.
    let mut star: Option<(usize, usize)> = None;
    while c < text.len() {
        match tokens.get(t) {
            Some(Token::Star) => {
                star = Some((t, c));
                t += 1;
            }
            Some(token) if text.get(c).is_some_and(|ch| token.matches(*ch)) => {
                t += 1;
                c += 1;
            }
            _ => match star {
                Some((star_at, from)) => {
                    t = star_at + 1;
                    c = from + 1;
                    star = Some((star_at, from + 1));
                }
                None => return false,
            },
        }
    }
    tokens
        .get(t..)
        .is_some_and(|rest| rest.iter().all(|tok| *tok == Token::Star))
}

/// The tokens of one segment (no `/` in it).
fn tokens(segment: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = segment.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(match c {
            '?' => Token::One,
            '*' => Token::Star,
            '[' => {
                let negated = chars.next_if_eq(&'!').is_some();
                let mut members = Vec::new();
                loop {
                    match chars.next() {
                        None => return Err("a `[` is not closed".to_owned()),
                        Some(']') if !members.is_empty() => break,
                        Some(c) => members.push(c),
                    }
                }
                Token::Set {
                    negated,
                    ranges: ranges(&members)?,
                }
            }
            c => Token::Literal(c),
        });
    }
    Ok(out)
}

/// The members of a `[...]` as ranges: `a-z` is one, a `-` first or last
/// is itself.
fn ranges(members: &[char]) -> Result<Vec<(char, char)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&lo) = members.get(i) {
        match (members.get(i + 1), members.get(i + 2)) {
            (Some('-'), Some(&hi)) => {
                if hi < lo {
                    return Err(format!("the range `{lo}-{hi}` is reversed"));
                }
                out.push((lo, hi));
                i += 3;
            }
            _ => {
                out.push((lo, lo));
                i += 1;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(p: &str) -> Glob {
        Glob::new(p).unwrap()
    }

    #[test]
    fn wildcards_stay_within_a_segment() {
        assert!(glob("*.md").matches("README.md"));
        assert!(glob("*.md").matches(".hidden.md"));
        assert!(!glob("*.md").matches("docs/guide.md"));
        assert!(glob("docs/*.md").matches("docs/guide.md"));
        assert!(!glob("docs/*.md").matches("docs/deep/more.md"));
        assert!(glob("?.txt").matches("a.txt") && !glob("?.txt").matches("ab.txt"));
        assert!(glob("a*b*c").matches("aXbYc") && glob("a*b*c").matches("abc"));
        assert!(!glob("a*b*c").matches("acb"));
        assert!(glob("*").matches("") && glob("**").matches("a/b"));
        assert!(!glob("Guide.md").matches("guide.md"));
    }

    #[test]
    fn double_stars_span_whole_segments() {
        let g = glob("docs/**/*.md");
        for path in ["docs/a.md", "docs/x/a.md", "docs/x/y/z/a.md"] {
            assert!(g.matches(path), "{path}");
        }
        assert!(!g.matches("other/a.md") && !g.matches("docs/a.txt"));
        assert!(glob("**/x").matches("x") && glob("**/x").matches("a/b/x"));
        assert!(glob("a/**").matches("a/b/c") && !glob("a/**").matches("b/c"));
    }

    #[test]
    fn sets_and_ranges() {
        assert!(glob("[abc].rs").matches("b.rs") && !glob("[abc].rs").matches("d.rs"));
        assert!(glob("[!a-c]x").matches("dx") && !glob("[!a-c]x").matches("bx"));
        assert!(glob("[]]").matches("]") && glob("[a-]").matches("-"));
        assert!(glob("file[0-9][0-9]").matches("file42"));
    }

    #[test]
    fn mistakes_are_errors() {
        for bad in ["[z-a]", "[z-a", "a**", "**b/x", "[]"] {
            assert!(Glob::new(bad).is_err(), "{bad}");
        }
        assert!(Glob::new(&"a".repeat(MAX_PATTERN_CHARS + 1)).is_err());
    }

    /// The pattern that ran past 120 s with the `glob` crate. What bounds
    /// the work is the algorithm (one pass per segment pair, each pair
    /// once); the ceiling here is only a generous guard.
    #[test]
    fn a_pathological_pattern_is_matched_in_bounded_work() {
        let pattern = "**/*a*a*a*a*a*a*a*a*a*b/**/x";
        let long = vec!["a".repeat(200); 30].join("/") + "/y";
        let started = std::time::Instant::now();
        assert!(!glob(pattern).matches(&long));
        assert!(glob(pattern).matches("aaaaaaaaab/x"));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
