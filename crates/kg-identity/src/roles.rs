//! The four roles and the identity a request carries once authenticated.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Chat, query tools, search, the catalog, own conversations.
    Viewer,
    /// Viewer, plus validate, plan and execute actions within limits, the action log.
    Operator,
    /// Viewer, plus approve or reject plans.
    Approver,
    /// Everything: action setup, undo, document ingest and delete, all conversations.
    Admin,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Viewer, Role::Operator, Role::Approver, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Approver => "approver",
            Role::Admin => "admin",
        }
    }

    /// A role name as written in configuration, claims and the catalog (case-insensitive);
    /// `None` for names that are not one of the four.
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(name.trim()))
    }

    /// Every known role among `names`, sorted and without duplicates; unknown names are
    /// dropped (an identity provider's other groups are none of our business).
    pub fn parse_all<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Role> {
        let mut roles: Vec<Role> = names.into_iter().filter_map(Role::parse).collect();
        roles.sort();
        roles.dedup();
        roles
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a request proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMethod {
    ApiKey,
    Jwt,
    /// `auth_mode = "none"`: local experiments only; every request is this identity.
    Anonymous,
}

/// An authenticated caller: the subject recorded as the actor everywhere, and its roles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub subject: String,
    pub roles: Vec<Role>,
    pub method: AuthMethod,
}

impl Identity {
    pub fn has(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }

    pub fn role_names(&self) -> Vec<String> {
        self.roles.iter().map(|r| r.as_str().to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_roles_only() {
        assert_eq!(Role::parse(" Admin "), Some(Role::Admin));
        assert_eq!(Role::parse("superuser"), None);
        assert_eq!(
            Role::parse_all(["operator", "x", "viewer", "operator"]),
            vec![Role::Viewer, Role::Operator]
        );
    }
}
