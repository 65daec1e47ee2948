//! `/health`: the dispatcher's version, every dependency component's status (reached over
//! its WIT interface) and a key-value store round trip.

use kg_wit::types::ComponentStatus;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Key under which the health check records its own probes in the KV store.
pub const KV_PROBE_KEY: &str = "health:probe";

/// What the health check writes to the KV store on every call: how many probes so far and
/// when the last one ran. Reading back the previous record proves the store persists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvProbe {
    pub count: u64,
    pub at_unix_ms: u64,
}

impl KvProbe {
    /// The record to write now, given the bytes stored by the previous probe (if any).
    /// Unreadable earlier bytes restart the count rather than failing the health check.
    pub fn next(previous: Option<&[u8]>, now_unix_ms: u64) -> (KvProbe, Option<KvProbe>) {
        let previous = previous.and_then(|b| serde_json::from_slice::<KvProbe>(b).ok());
        let count = previous.map_or(0, |p| p.count).saturating_add(1);
        (
            KvProbe {
                count,
                at_unix_ms: now_unix_ms,
            },
            previous,
        )
    }

    pub fn to_bytes(self) -> Vec<u8> {
        json!({"count": self.count, "at_unix_ms": self.at_unix_ms})
            .to_string()
            .into_bytes()
    }
}

/// Outcome of the KV round trip.
#[derive(Debug, Clone, PartialEq)]
pub enum KvHealth {
    Ok {
        store: String,
        probe: KvProbe,
        previous: Option<KvProbe>,
    },
    Failed {
        store: String,
        reason: String,
    },
}

/// Builds the `/health` body and status: 200 when every component is ready and the store
/// answers, 503 otherwise.
pub fn report(version: &str, components: &[ComponentStatus], kv: &KvHealth) -> (u16, Value) {
    let components_json: Vec<Value> = components.iter().map(component_json).collect();
    let kv_json = match kv {
        KvHealth::Ok {
            store,
            probe,
            previous,
        } => json!({
            "ok": true,
            "store": store,
            "probes": probe.count,
            "previous_probe_at_unix_ms": previous.map(|p| p.at_unix_ms),
        }),
        KvHealth::Failed { store, reason } => {
            json!({"ok": false, "store": store, "detail": reason})
        }
    };
    let kv_ok = matches!(kv, KvHealth::Ok { .. });
    let healthy = kv_ok && components.iter().all(|c| c.ready);
    let status = if healthy { 200 } else { 503 };
    let mut problems: Vec<String> = components
        .iter()
        .filter(|c| !c.ready)
        .map(|c| {
            let failed: Vec<&str> = c
                .checks
                .iter()
                .filter(|k| !k.ok)
                .map(|k| k.detail.as_str())
                .collect();
            format!("{} not ready: {}", c.name, failed.join("; "))
        })
        .collect();
    if let KvHealth::Failed { reason, .. } = kv {
        problems.push(format!("key-value store: {reason}"));
    }
    let body = json!({
        "status": if healthy { "ok" } else { "degraded" },
        "version": version,
        "components": components_json,
        "kv": kv_json,
        "problems": problems,
    });
    (status, body)
}

fn component_json(c: &ComponentStatus) -> Value {
    json!({
        "name": c.name,
        "version": c.version,
        "ready": c.ready,
        "checks": c.checks.iter().map(|k| json!({"name": k.name, "ok": k.ok, "detail": k.detail})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kg_wit::types::Check;

    fn status(name: &str, ready: bool) -> ComponentStatus {
        ComponentStatus {
            name: name.into(),
            version: "0.1.0".into(),
            ready,
            checks: vec![Check {
                name: "self".into(),
                ok: ready,
                detail: if ready {
                    "ok".into()
                } else {
                    "graph unreachable".into()
                },
            }],
        }
    }

    fn kv_ok() -> KvHealth {
        KvHealth::Ok {
            store: "default".into(),
            probe: KvProbe {
                count: 2,
                at_unix_ms: 20,
            },
            previous: Some(KvProbe {
                count: 1,
                at_unix_ms: 10,
            }),
        }
    }

    #[test]
    fn probe_counts_up_from_the_previous_record() {
        let (first, prev) = KvProbe::next(None, 5);
        assert_eq!((first.count, prev), (1, None));
        let (second, prev) = KvProbe::next(Some(&first.to_bytes()), 9);
        assert_eq!(
            second,
            KvProbe {
                count: 2,
                at_unix_ms: 9
            }
        );
        assert_eq!(prev, Some(first));
        let (restart, prev) = KvProbe::next(Some(b"garbage"), 1);
        assert_eq!((restart.count, prev), (1, None));
    }

    #[test]
    fn all_ready_is_200_ok() {
        let (code, body) = report("0.1.0", &[status("router", true)], &kv_ok());
        assert_eq!(code, 200);
        assert_eq!(body["status"], "ok");
        assert_eq!(body["kv"]["probes"], 2);
        assert_eq!(body["kv"]["previous_probe_at_unix_ms"], 10);
        assert_eq!(body["components"][0]["name"], "router");
    }

    #[test]
    fn a_component_not_ready_is_503_with_the_reason() {
        let (code, body) = report(
            "0.1.0",
            &[status("router", true), status("query-tools", false)],
            &kv_ok(),
        );
        assert_eq!(code, 503);
        assert_eq!(body["status"], "degraded");
        assert_eq!(
            body["problems"][0],
            "query-tools not ready: graph unreachable"
        );
    }

    #[test]
    fn kv_failure_is_503() {
        let kv = KvHealth::Failed {
            store: "default".into(),
            reason: "access denied".into(),
        };
        let (code, body) = report("0.1.0", &[status("router", true)], &kv);
        assert_eq!(code, 503);
        assert_eq!(body["kv"]["ok"], false);
    }
}
