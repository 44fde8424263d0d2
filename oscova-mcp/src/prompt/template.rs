//! Text templates with `{argument}` placeholders, parsed once.
//!
//! Rules: `{name}` is replaced by the argument's value (an optional
//! argument not given becomes the empty string); `{{` and `}}` are a
//! literal brace. Everything is checked when the template is made: a
//! placeholder naming no declared argument, an empty `{}`, and a brace
//! left open or closed alone are errors, so a prompt that loaded renders
//! every time. A value is inserted as it is, never read as a template
//! itself.

use std::collections::BTreeMap;

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Argument(String),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

/// What is wrong with a template's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TemplateProblem {
    /// `{name}` where `name` is not a declared argument.
    Undeclared(String),
    /// A `{` with no `}` (or an empty `{}`), or a `}` alone, at this
    /// character offset.
    Unbalanced(usize),
}

impl Template {
    /// Parses `text`, whose placeholders must be among `declared`.
    pub(crate) fn parse(text: &str, declared: &[&str]) -> Result<Self, TemplateProblem> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|(_, c)| *c) == Some('{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek().map(|(_, c)| *c) == Some('}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let mut name = String::new();
                    let mut closed = false;
                    for (_, c) in chars.by_ref() {
                        if c == '}' {
                            closed = true;
                            break;
                        }
                        if c == '{' {
                            return Err(TemplateProblem::Unbalanced(at));
                        }
                        name.push(c);
                    }
                    let name = name.trim().to_owned();
                    if !closed || name.is_empty() {
                        return Err(TemplateProblem::Unbalanced(at));
                    }
                    if !declared.contains(&name.as_str()) {
                        return Err(TemplateProblem::Undeclared(name));
                    }
                    if !literal.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Argument(name));
                }
                '}' => return Err(TemplateProblem::Unbalanced(at)),
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        Ok(Self { pieces })
    }

    /// The text with each placeholder replaced by its value in `values`
    /// (the empty string when absent).
    pub(crate) fn render(&self, values: &BTreeMap<String, String>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(text) => out.push_str(text),
                Piece::Argument(name) => {
                    if let Some(value) = values.get(name) {
                        out.push_str(value);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn placeholders_are_replaced_and_doubled_braces_are_literal() {
        let t = Template::parse("Hi {name}, {{literal}} {name}{ tone }", &["name", "tone"])
            .expect("parses");
        assert_eq!(
            t.render(&values(&[("name", "Ann"), ("tone", "!")])),
            "Hi Ann, {literal} Ann!"
        );
        assert_eq!(t.render(&values(&[])), "Hi , {literal} ");
    }

    #[test]
    fn a_value_is_never_read_as_a_template() {
        let t = Template::parse("[{a}]", &["a"]).expect("parses");
        assert_eq!(t.render(&values(&[("a", "{b} }} {{")])), "[{b} }} {{]");
    }

    #[test]
    fn bad_templates_are_refused_when_made() {
        assert_eq!(
            Template::parse("x {nope}", &["a"]),
            Err(TemplateProblem::Undeclared("nope".to_owned()))
        );
        assert_eq!(
            Template::parse("x {a", &["a"]),
            Err(TemplateProblem::Unbalanced(2))
        );
        assert_eq!(
            Template::parse("x }", &["a"]),
            Err(TemplateProblem::Unbalanced(2))
        );
        assert_eq!(
            Template::parse("{}", &["a"]),
            Err(TemplateProblem::Unbalanced(0))
        );
        assert_eq!(
            Template::parse("{a{b}", &["a"]),
            Err(TemplateProblem::Unbalanced(0))
        );
    }
}
