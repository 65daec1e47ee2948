//! The permission matrix, written once: which role may do what. The dispatcher maps each
//! route to one permission and checks it at one place per request; the action-executor
//! re-checks the action permissions itself (DESIGN.md §9). The table in docs/security.md
//! is this matrix (a test keeps them equal).

use crate::roles::Role;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// The detailed `GET /health`.
    HealthRead,
    /// `GET /tools`, `POST /tools/{name}`.
    ToolsUse,
    /// `GET /documents`, `POST /search`.
    DocumentsSearch,
    /// `POST /chat`, `/chat/stream`, `/api/qa/query`; read and delete one's own conversations.
    Chat,
    /// `GET /actions`, `GET /actions/{type}/{name}`.
    ActionsRead,
    /// `GET /actions/log`.
    ActionLogRead,
    /// Validate, plan and execute actions (`/actions/{type}/{name}/validate|plan|execute`).
    ActionsExecute,
    /// Approve or reject a plan (`/chat/approve`, an approved execute).
    ActionsApprove,
    /// `POST /actions/setup`.
    ActionsSetup,
    /// `POST /actions/log/{id}/undo`.
    ActionsUndo,
    /// `POST /documents`, `DELETE /documents/{id}`.
    DocumentsWrite,
    /// Read and delete anyone's conversation.
    ConversationsAll,
    /// `GET /graph/policy`: the graph's visibility policy as declared.
    GraphPolicyRead,
}

/// Who holds each permission. `admin` holds all of them.
pub const MATRIX: &[(Permission, &[Role])] = {
    use Role::*;
    &[
        (Permission::HealthRead, &[Viewer, Operator, Approver, Admin]),
        (Permission::ToolsUse, &[Viewer, Operator, Approver, Admin]),
        (
            Permission::DocumentsSearch,
            &[Viewer, Operator, Approver, Admin],
        ),
        (Permission::Chat, &[Viewer, Operator, Approver, Admin]),
        (
            Permission::ActionsRead,
            &[Viewer, Operator, Approver, Admin],
        ),
        (Permission::ActionLogRead, &[Operator, Approver, Admin]),
        (Permission::ActionsExecute, &[Operator, Admin]),
        (Permission::ActionsApprove, &[Approver, Admin]),
        (Permission::ActionsSetup, &[Admin]),
        (Permission::ActionsUndo, &[Admin]),
        (Permission::DocumentsWrite, &[Admin]),
        (Permission::ConversationsAll, &[Admin]),
        (Permission::GraphPolicyRead, &[Admin]),
    ]
};

impl Permission {
    /// The name used in 403 bodies and the docs/security.md table.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::HealthRead => "health:read",
            Permission::ToolsUse => "tools:use",
            Permission::DocumentsSearch => "documents:search",
            Permission::Chat => "chat",
            Permission::ActionsRead => "actions:read",
            Permission::ActionLogRead => "actions:log",
            Permission::ActionsExecute => "actions:execute",
            Permission::ActionsApprove => "actions:approve",
            Permission::ActionsSetup => "actions:setup",
            Permission::ActionsUndo => "actions:undo",
            Permission::DocumentsWrite => "documents:write",
            Permission::ConversationsAll => "conversations:all",
            Permission::GraphPolicyRead => "graph:policy",
        }
    }

    /// The roles that hold this permission.
    pub fn roles(self) -> &'static [Role] {
        MATRIX
            .iter()
            .find(|(p, _)| *p == self)
            .map_or(&[], |(_, roles)| roles)
    }
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether any of `roles` holds `permission`.
pub fn allowed(roles: &[Role], permission: Permission) -> bool {
    permission.roles().iter().any(|r| roles.contains(r))
}

/// `Err` naming the missing permission and the roles that hold it, for a 403 body.
pub fn missing(roles: &[Role], permission: Permission) -> Result<(), String> {
    if allowed(roles, permission) {
        return Ok(());
    }
    let holders: Vec<&str> = permission.roles().iter().map(|r| r.as_str()).collect();
    Err(format!(
        "missing permission `{permission}` (held by: {})",
        holders.join(", ")
    ))
}

/// The matrix as a Markdown table (permission × role), as docs/security.md shows it.
pub fn markdown_table() -> String {
    let mut out = String::from("| permission |");
    for role in Role::ALL {
        out.push_str(&format!(" {role} |"));
    }
    out.push_str("\n|---|");
    out.push_str(&":-:|".repeat(Role::ALL.len()));
    out.push('\n');
    for (permission, roles) in MATRIX {
        out.push_str(&format!("| `{permission}` |"));
        for role in Role::ALL {
            out.push_str(if roles.contains(&role) {
                " ✓ |"
            } else {
                "   |"
            });
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_roles_hold_what_the_issue_says() {
        use Permission::*;
        let viewer = [Role::Viewer];
        for p in [HealthRead, ToolsUse, DocumentsSearch, Chat, ActionsRead] {
            assert!(allowed(&viewer, p), "{p}");
        }
        for p in [
            ActionsExecute,
            ActionsApprove,
            ActionsUndo,
            DocumentsWrite,
            ConversationsAll,
            GraphPolicyRead,
        ] {
            assert!(!allowed(&viewer, p), "{p}");
        }
        assert!(allowed(&[Role::Operator], ActionsExecute));
        assert!(!allowed(&[Role::Operator], ActionsApprove));
        assert!(allowed(&[Role::Approver], ActionsApprove));
        assert!(!allowed(&[Role::Approver], ActionsExecute));
        assert!(!allowed(&[], Chat), "no role, no permission");
    }

    #[test]
    fn every_permission_is_in_the_matrix_once_and_admin_holds_all() {
        for (i, (p, roles)) in MATRIX.iter().enumerate() {
            assert!(roles.contains(&Role::Admin), "{p}");
            assert!(MATRIX[i + 1..].iter().all(|(q, _)| q != p), "{p} twice");
        }
        assert_eq!(MATRIX.len(), 13);
    }

    #[test]
    fn a_refusal_names_the_permission_and_its_holders() {
        let e = missing(&[Role::Viewer], Permission::ActionsUndo).unwrap_err();
        assert_eq!(e, "missing permission `actions:undo` (held by: admin)");
        assert!(missing(&[Role::Admin], Permission::ActionsUndo).is_ok());
    }

    #[test]
    fn the_security_page_shows_this_matrix() {
        let page = include_str!("../../../docs/security.md");
        assert!(
            page.contains(&markdown_table()),
            "docs/security.md's permission table differs from the matrix; paste:\n{}",
            markdown_table()
        );
    }

    proptest! {
        /// More roles never take a permission away.
        #[test]
        fn permissions_are_monotonic(a in proptest::collection::vec(0usize..4, 0..4), extra in 0usize..4) {
            let roles: Vec<Role> = a.iter().map(|i| Role::ALL[*i]).collect();
            let mut more = roles.clone();
            more.push(Role::ALL[extra]);
            for (p, _) in MATRIX {
                prop_assert!(!allowed(&roles, *p) || allowed(&more, *p));
            }
        }
    }
}
