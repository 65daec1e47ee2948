use std::fmt;

/// A configured URL that cannot be used: which variable, what is wrong, what was expected.
/// The value itself is quoted only when it carries no user info (a password in a URL
/// must not reach a log through its error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlError {
    pub variable: String,
    pub reason: String,
    pub expected: &'static str,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "variable `{}`: {}; expected {}",
            self.variable, self.reason, self.expected
        )
    }
}

impl std::error::Error for UrlError {}
