//! The template syntax: text with `{{ name }}` placeholders, nothing else. A placeholder
//! is `{{`, optional spaces, a variable name (ASCII letters, digits, `_`; not starting
//! with a digit), optional spaces, `}}`. Every `{{` starts a placeholder and a `}}`
//! outside one is an error, so a typo such as `{ language }}` is caught instead of being
//! sent to the model. Each prompt declares the variables it takes; any other name is an
//! error. Errors carry the 1-based line of the offending `{{` or `}}`.
//!
//! Why not minijinja: it added about 610 KB to a wasm32-wasip2 component (measured), for
//! loops and filters these prompts do not use.

/// A parsed template: literal text and the variables between it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Variable(String),
}

/// A syntax error at a line of the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub message: String,
}

impl Template {
    /// Parses `text`, accepting only the variables in `known`.
    pub fn parse(text: &str, known: &[&str]) -> Result<Template, SyntaxError> {
        let mut parts = Vec::new();
        let mut rest = text;
        let mut line = 1;
        loop {
            let open = rest.find("{{");
            let close = rest.find("}}");
            match (open, close) {
                (_, Some(c)) if open.is_none_or(|o| c < o) => {
                    return Err(SyntaxError {
                        line: line + count_lines(&rest[..c]),
                        message: "`}}` without an opening `{{`".into(),
                    });
                }
                (None, _) => {
                    if !rest.is_empty() {
                        parts.push(Part::Text(rest.to_string()));
                    }
                    return Ok(Template { parts });
                }
                (Some(o), _) => {
                    if o > 0 {
                        parts.push(Part::Text(rest[..o].to_string()));
                    }
                    line += count_lines(&rest[..o]);
                    let inside = &rest[o + 2..];
                    let Some(end) = inside.find("}}") else {
                        return Err(SyntaxError {
                            line,
                            message: "`{{` is never closed by `}}`".into(),
                        });
                    };
                    let name = inside[..end].trim();
                    check_name(name, known).map_err(|message| SyntaxError { line, message })?;
                    parts.push(Part::Variable(name.to_string()));
                    line += count_lines(&inside[..end]);
                    rest = &inside[end + 2..];
                }
            }
        }
    }

    /// `text` as it is, no placeholders.
    pub fn literal(text: &str) -> Template {
        Template {
            parts: vec![Part::Text(text.to_string())],
        }
    }

    /// The text with each placeholder replaced by its value in `values`; a variable the
    /// caller did not pass becomes empty (parsing already refused unknown names).
    pub fn render(&self, values: &[(&str, &str)]) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Variable(name) => {
                    if let Some((_, value)) = values.iter().find(|(n, _)| n == name) {
                        out.push_str(value);
                    }
                }
            }
        }
        out
    }
}

fn count_lines(text: &str) -> usize {
    text.matches('\n').count()
}

fn check_name(name: &str, known: &[&str]) -> Result<(), String> {
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "`{{{{ {name} }}}}` is not a placeholder: write `{{{{ name }}}}` with one variable name"
        ));
    }
    if known.contains(&name) {
        return Ok(());
    }
    Err(if known.is_empty() {
        format!("unknown variable `{name}`: this prompt takes no variables")
    } else {
        format!(
            "unknown variable `{name}`: this prompt takes {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_and_json_braces_left_alone() {
        let t = Template::parse(
            "Answer in {{ language }}.\n{\"intent\": \"x\"} {{language}}",
            &["language"],
        )
        .unwrap();
        assert_eq!(
            t.render(&[("language", "English")]),
            "Answer in English.\n{\"intent\": \"x\"} English"
        );
        assert_eq!(Template::parse("plain", &[]).unwrap().render(&[]), "plain");
        assert_eq!(Template::parse("", &[]).unwrap().render(&[]), "");
    }

    #[test]
    fn an_unknown_variable_is_refused_with_its_line_and_the_known_ones() {
        let e = Template::parse("one\ntwo\nAnswer in {{ langauge }}.", &["language"]).unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(
            e.message,
            "unknown variable `langauge`: this prompt takes `language`"
        );
        let e = Template::parse("{{ x }}", &[]).unwrap_err();
        assert_eq!(
            e.message,
            "unknown variable `x`: this prompt takes no variables"
        );
    }

    #[test]
    fn unclosed_stray_and_malformed_placeholders_are_refused_with_their_line() {
        let e = Template::parse("a\nb {{ language\nc", &["language"]).unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (2, "`{{` is never closed by `}}`")
        );
        let e = Template::parse("a\n\nb { language }}", &["language"]).unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (3, "`}}` without an opening `{{`")
        );
        let e = Template::parse("{{ a b }}", &["a"]).unwrap_err();
        assert!(e.message.contains("is not a placeholder"), "{}", e.message);
        let e = Template::parse("{{ }}", &["a"]).unwrap_err();
        assert!(e.message.contains("is not a placeholder"), "{}", e.message);
        // A placeholder spanning lines counts them for what follows.
        let e = Template::parse("{{\nlanguage\n}}\n}}", &["language"]).unwrap_err();
        assert_eq!(e.line, 4);
    }

    #[test]
    fn values_are_inserted_verbatim_and_never_parsed() {
        let t = Template::parse("[{{ v }}]", &["v"]).unwrap();
        assert_eq!(t.render(&[("v", "{{ v }}")]), "[{{ v }}]");
        assert_eq!(t.render(&[]), "[]");
    }
}
