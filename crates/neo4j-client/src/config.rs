use base64::Engine;

/// Where and how to reach Neo4j.
#[derive(Clone)]
pub struct Config {
    /// `scheme://host[:port]`; a trailing slash is tolerated.
    pub origin: String,
    pub database: String,
    pub auth: Auth,
}

#[derive(Clone)]
pub enum Auth {
    None,
    Basic { user: String, password: String },
    Bearer(String),
}

impl Auth {
    /// The `Authorization` header value, if any.
    pub fn header(&self) -> Option<String> {
        match self {
            Auth::None => None,
            Auth::Basic { user, password } => Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
            )),
            Auth::Bearer(token) => Some(format!("Bearer {token}")),
        }
    }
}

// Secrets never reach logs through Debug.
impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => write!(f, "None"),
            Auth::Basic { user, .. } => {
                write!(f, "Basic {{ user: {user:?}, password: <redacted> }}")
            }
            Auth::Bearer(_) => write!(f, "Bearer(<redacted>)"),
        }
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("origin", &self.origin)
            .field("database", &self.database)
            .field("auth", &self.auth)
            .finish()
    }
}

impl Config {
    /// `{origin}/db/{database}/query/v2`, the database percent-encoded.
    pub fn query_url(&self) -> String {
        let database = percent_encoding::utf8_percent_encode(
            &self.database,
            percent_encoding::NON_ALPHANUMERIC,
        );
        format!(
            "{}/db/{database}/query/v2",
            self.origin.trim_end_matches('/')
        )
    }
}
