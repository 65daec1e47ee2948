//! Action plans that wait for a person, as the conversation remembers them: the question
//! and the token of the conversation's pending plan, so "yes"/"确认" in the same
//! conversation resumes it and "no" cancels. The approval itself (who may redeem it, once,
//! until when) is recorded and redeemed in the graph by the action-executor; this is only
//! the conversation's note of it.

use crate::memory::{Kv, check_id};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionPlan {
    pub entity_type: String,
    pub action_name: String,
    pub entity_ids: Vec<String>,
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub token: String,
    pub conversation_id: String,
    pub question: String,
    pub plan: ActionPlan,
    pub idempotency_key: String,
    /// RFC 3339.
    pub created_at: String,
}

fn token_key(token: &str) -> String {
    format!("approval/{token}")
}

pub(crate) fn conversation_key(conversation: &str) -> String {
    format!("conv/{conversation}/pending")
}

pub fn store(kv: &dyn Kv, pending: &Pending) -> Result<(), String> {
    check_id(&pending.conversation_id)?;
    let value = serde_json::to_vec(pending).map_err(|e| e.to_string())?;
    kv.set(&token_key(&pending.token), &value)?;
    kv.set(
        &conversation_key(&pending.conversation_id),
        pending.token.as_bytes(),
    )
}

/// The conversation's note of a token's plan, if this service issued it to a conversation.
pub fn get(kv: &dyn Kv, token: &str) -> Result<Option<Pending>, String> {
    if token.is_empty()
        || token.len() > 128
        || !token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Ok(None);
    }
    let Some(value) = kv.get(&token_key(token))? else {
        return Ok(None);
    };
    serde_json::from_slice(&value)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Forgets the note once the plan ran or was rejected.
pub fn forget(kv: &dyn Kv, pending: &Pending) -> Result<(), String> {
    kv.delete(&token_key(&pending.token))?;
    let key = conversation_key(&pending.conversation_id);
    if kv.get(&key)?.as_deref() == Some(pending.token.as_bytes()) {
        kv.delete(&key)?;
    }
    Ok(())
}

/// The token of the conversation's pending plan, if any.
pub fn pending_token(kv: &dyn Kv, conversation: &str) -> Result<Option<String>, String> {
    check_id(conversation)?;
    Ok(kv
        .get(&conversation_key(conversation))?
        .map(|v| String::from_utf8_lossy(&v).into_owned()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Yes,
    No,
    Other,
}

/// Reads a short reply to an approval question, in English or Chinese.
pub fn classify_reply(message: &str) -> Reply {
    let m = message
        .trim()
        .trim_end_matches(['.', '!', '。', '！'])
        .to_lowercase();
    const YES: &[&str] = &[
        "yes", "y", "ok", "okay", "confirm", "approve", "approved", "go ahead", "do it", "确认",
        "是", "是的", "好", "好的", "同意", "执行", "可以",
    ];
    const NO: &[&str] = &[
        "no", "n", "cancel", "stop", "abort", "reject", "don't", "取消", "否", "不", "不要",
        "拒绝", "算了",
    ];
    if YES.contains(&m.as_str()) {
        Reply::Yes
    } else if NO.contains(&m.as_str()) {
        Reply::No
    } else {
        Reply::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tests::MemKv;
    use serde_json::json;

    fn pending(token: &str) -> Pending {
        Pending {
            token: token.into(),
            conversation_id: "c1".into(),
            question: "pay acme".into(),
            plan: ActionPlan {
                entity_type: "PurchaseOrder".into(),
                action_name: "makePayment".into(),
                entity_ids: vec!["PO-1".into()],
                parameters: json!({}),
            },
            idempotency_key: "k".into(),
            created_at: "t".into(),
        }
    }

    #[test]
    fn a_note_is_kept_until_forgotten() {
        let kv = MemKv::default();
        store(&kv, &pending("apv_1")).unwrap();
        assert_eq!(pending_token(&kv, "c1").unwrap().as_deref(), Some("apv_1"));
        assert_eq!(get(&kv, "apv_1").unwrap(), Some(pending("apv_1")));
        assert_eq!(get(&kv, "apv_1").unwrap(), Some(pending("apv_1")));
        forget(&kv, &pending("apv_1")).unwrap();
        assert_eq!(get(&kv, "apv_1").unwrap(), None);
        assert_eq!(pending_token(&kv, "c1").unwrap(), None);
        assert_eq!(get(&kv, "../etc").unwrap(), None);
    }

    #[test]
    fn replies() {
        assert_eq!(classify_reply("Yes!"), Reply::Yes);
        assert_eq!(classify_reply("确认"), Reply::Yes);
        assert_eq!(classify_reply("取消。"), Reply::No);
        assert_eq!(classify_reply("yes but only PO-1"), Reply::Other);
    }
}
