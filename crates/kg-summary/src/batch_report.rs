//! The factual batch report (seed 000 §11), in Chinese or English, built without the LLM:
//! totals, the successes, and every failure with its reason.

use crate::language::Language;
use kg_wit::types::{BatchSummary, EntityOutcome, FailureReason};

/// Successful ids listed one by one up to this many; the rest are counted.
const LISTED_SUCCESSES: usize = 50;

pub fn batch_report(batch: &BatchSummary, language: Language) -> String {
    let mut out = String::new();
    let zh = language == Language::Chinese;
    if zh {
        out.push_str(&format!(
            "已完成对 {} 个 {} 的 {} 处理。\n成功: {} 个\n失败: {} 个\n",
            batch.total, batch.entity_type, batch.action_name, batch.succeeded, batch.failed
        ));
    } else {
        out.push_str(&format!(
            "Finished {} on {} {} {}.\nSucceeded: {}\nFailed: {}\n",
            batch.action_name,
            batch.total,
            batch.entity_type,
            if batch.total == 1 {
                "entity"
            } else {
                "entities"
            },
            batch.succeeded,
            batch.failed
        ));
    }
    if batch.unknown > 0 {
        // Never counted as failed: they may have been applied (never twice).
        out.push_str(&if zh {
            format!(
                "结果未知: {} 个（可能已执行，绝不会重复执行；见下方说明）\n",
                batch.unknown
            )
        } else {
            format!(
                "Outcome unknown: {} (may have been applied, never twice; see below)\n",
                batch.unknown
            )
        });
    }
    if !batch.failures.is_empty() {
        out.push_str(if zh { "失败明细:\n" } else { "Failures:\n" });
        for outcome in &batch.failures {
            out.push_str(&format!(
                "- {}: {}\n",
                outcome.entity_id,
                reason(outcome, zh)
            ));
        }
    }
    if !batch.successes.is_empty() {
        let ids: Vec<&str> = batch
            .successes
            .iter()
            .take(LISTED_SUCCESSES)
            .map(|o| o.entity_id.as_str())
            .collect();
        let more = batch.successes.len().saturating_sub(LISTED_SUCCESSES);
        out.push_str(if zh { "成功: " } else { "Succeeded: " });
        out.push_str(&ids.join(", "));
        if more > 0 {
            out.push_str(&if zh {
                format!(" 等（另有 {more} 个）")
            } else {
                format!(" and {more} more")
            });
        }
        out.push('\n');
    }
    let replayed = batch
        .successes
        .iter()
        .chain(&batch.failures)
        .filter(|o| o.replayed)
        .count();
    let undone = batch
        .successes
        .iter()
        .filter(|o| o.undone.is_some())
        .count();
    if undone > 0 {
        out.push_str(&if zh {
            format!("其中 {undone} 个此前已执行的结果已被撤销，目前不再生效。\n")
        } else {
            format!("{undone} of them were undone since, and are no longer in effect.\n")
        });
    }
    if replayed > 0 {
        out.push_str(&if zh {
            format!("其中 {replayed} 个结果为此前已记录的执行结果（幂等重放），本次未重复执行。\n")
        } else {
            format!("{replayed} outcome(s) were recorded earlier under the same idempotency key and not executed again.\n")
        });
    }
    out
}

/// The failure's own message (the catalog's human wording), prefixed by its class.
fn reason(outcome: &EntityOutcome, zh: bool) -> String {
    let Some(failure) = &outcome.failure else {
        return if zh {
            "失败（原因未知）".into()
        } else {
            "failed (no reason given)".into()
        };
    };
    let class = match (failure.reason, zh) {
        (FailureReason::PreconditionFailed, true) => "前置条件不满足",
        (FailureReason::PreconditionFailed, false) => "precondition failed",
        (FailureReason::NotFound, true) => "未找到",
        (FailureReason::NotFound, false) => "not found",
        (FailureReason::Conflict, true) => "冲突",
        (FailureReason::Conflict, false) => "conflict",
        (FailureReason::Timeout, true) => "超时",
        (FailureReason::Timeout, false) => "timed out",
        (FailureReason::Cancelled, true) => "已取消",
        (FailureReason::Cancelled, false) => "cancelled",
        (FailureReason::Error, true) => "错误",
        (FailureReason::Error, false) => "error",
        (FailureReason::Unknown, true) => "结果未知",
        (FailureReason::Unknown, false) => "outcome unknown",
        (FailureReason::NotAttempted, true) => "未执行",
        (FailureReason::NotAttempted, false) => "not attempted",
    };
    let message = failure.message.trim();
    match (&failure.precondition, message.is_empty()) {
        (_, true) => class.to_string(),
        (Some(name), false) => format!("{message} ({class}: {name})"),
        (None, false) => format!("{message} ({class})"),
    }
}
