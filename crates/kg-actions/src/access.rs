//! Who may run an action, on how many entities at once, and who may approve it: the
//! action-level half of the permission check (the route-level half is the dispatcher's).
//! The action-executor applies it to every call itself, so a caller of the component that
//! skipped the dispatcher's check still cannot act beyond the caller's roles.

use crate::catalog::ActionDef;
use kg_identity::{Permission, Role, permissions};

/// Why a caller may not do something, with the API's error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `forbidden` (a permission or the action's roles) or `batch_limit`.
    pub code: &'static str,
    pub message: String,
    pub permission: Option<&'static str>,
}

impl Refusal {
    fn forbidden(permission: Permission, message: String) -> Refusal {
        Refusal {
            code: "forbidden",
            message,
            permission: Some(permission.as_str()),
        }
    }
}

/// `permission` or a refusal naming it.
pub fn require(roles: &[Role], permission: Permission) -> Result<(), Refusal> {
    permissions::missing(roles, permission).map_err(|m| Refusal::forbidden(permission, m))
}

/// Whether `roles` may run `action` on `entities` distinct entities in one request.
pub fn may_run(action: &ActionDef, roles: &[Role], entities: usize) -> Result<(), Refusal> {
    require(roles, Permission::ActionsExecute)?;
    let eligible: Vec<Role> = roles
        .iter()
        .copied()
        .filter(|r| action.roles.is_empty() || action.roles.contains(r))
        .collect();
    if eligible.is_empty() {
        let names: Vec<&str> = action.roles.iter().map(|r| r.as_str()).collect();
        return Err(Refusal::forbidden(
            Permission::ActionsExecute,
            format!(
                "{}.{} may be run only by: {}",
                action.entity,
                action.name,
                names.join(", ")
            ),
        ));
    }
    // The most generous of the caller's eligible roles applies; a role with no limit
    // listed is not narrowed.
    let limit = eligible
        .iter()
        .map(|r| {
            action
                .batch_limits
                .get(r)
                .map_or(usize::MAX, |l| *l as usize)
        })
        .max()
        .unwrap_or(usize::MAX);
    if entities > limit {
        return Err(Refusal {
            code: "batch_limit",
            message: format!(
                "{}.{}: at most {limit} entities per request for your roles, got {entities}",
                action.entity, action.name
            ),
            permission: None,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::load;

    const CATALOG: &str = r#"
[entities.Order]
key = "id"
properties = { id = "string", status = "string" }

[[actions]]
entity = "Order"
name = "pay"
description = "d"
batch_limits = { operator = 2 }
effects = ["set this.status = 'paid'"]

[[actions]]
entity = "Order"
name = "purge"
description = "d"
roles = ["admin"]
effects = ["set this.status = 'gone'"]
"#;

    #[test]
    fn roles_and_batch_limits_narrow_the_matrix() {
        let catalog = load(CATALOG).unwrap();
        let pay = catalog.action("Order", "pay").unwrap();
        let purge = catalog.action("Order", "purge").unwrap();
        assert!(may_run(pay, &[Role::Operator], 2).is_ok());
        assert_eq!(
            may_run(pay, &[Role::Operator], 3).unwrap_err().code,
            "batch_limit"
        );
        assert!(
            may_run(pay, &[Role::Admin], 10_000).is_ok(),
            "admin is not listed"
        );
        assert!(
            may_run(pay, &[Role::Operator, Role::Admin], 3).is_ok(),
            "the most generous eligible role applies"
        );
        let viewer = may_run(pay, &[Role::Viewer], 1).unwrap_err();
        assert_eq!(viewer.permission, Some("actions:execute"));
        let operator = may_run(purge, &[Role::Operator], 1).unwrap_err();
        assert_eq!(operator.code, "forbidden");
        assert!(
            operator.message.contains("only by: admin"),
            "{}",
            operator.message
        );
        assert!(may_run(purge, &[Role::Admin], 1).is_ok());
    }

    #[test]
    fn unknown_roles_and_bad_limits_are_catalog_errors() {
        let bad = CATALOG.replace(r#"roles = ["admin"]"#, r#"roles = ["admn"]"#);
        assert!(
            load(&bad)
                .unwrap_err()
                .message
                .contains("`admn` is not a role")
        );
        let zero = CATALOG.replace("operator = 2", "operator = 0");
        assert!(load(&zero).unwrap_err().message.contains("at least 1"));
        let eyes = CATALOG.replace(r#"roles = ["admin"]"#, r#"approval = "others""#);
        assert!(
            load(&eyes)
                .unwrap_err()
                .message
                .contains("\"self\" or \"other\"")
        );
    }
}
