//! `GET /health/ready`: is this instance able to serve? The graph, the LLM and the
//! key-value store are each checked for real (a `RETURN 1`, a `GET {llm}/models`, a store
//! round trip) and reported with their latency and, when down, a short reason. Every one
//! is required: one down makes the answer 503.
//!
//! The route is public (orchestrators' probes carry no credential), so reasons are
//! redacted: configured origins are replaced by the dependency's name, and nothing but
//! up/down, latency and that reason is shown.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// KV key of the last LLM probe, shared by every instance on the store: the LLM is asked
/// at most once per `ttl` however often probes come.
pub const LLM_PROBE_KEY: &str = "health:llm";

/// How long an LLM probe's outcome is reused (up or down), unless `health_llm_cache_s`
/// says otherwise.
pub const DEFAULT_LLM_CACHE_MS: u64 = 30_000;

/// One dependency's check.
#[derive(Debug, Clone, PartialEq)]
pub struct DependencyCheck {
    pub ok: bool,
    pub latency_ms: f64,
    /// Why it is down (`None` when up).
    pub error: Option<String>,
    /// For a reused LLM outcome: how old it is.
    pub cached_age_ms: Option<u64>,
}

impl DependencyCheck {
    pub fn up(latency_ms: f64) -> Self {
        DependencyCheck {
            ok: true,
            latency_ms,
            error: None,
            cached_age_ms: None,
        }
    }

    pub fn down(latency_ms: f64, error: impl Into<String>) -> Self {
        DependencyCheck {
            ok: false,
            latency_ms,
            error: Some(error.into()),
            cached_age_ms: None,
        }
    }

    pub fn to_json(&self) -> Value {
        let mut check = json!({"ok": self.ok, "latency_ms": round_ms(self.latency_ms)});
        if let Some(error) = &self.error {
            check["error"] = json!(error);
        }
        if let Some(age) = self.cached_age_ms {
            check["cached"] = json!(true);
            check["age_ms"] = json!(age);
        }
        check
    }
}

/// What the KV store keeps of an LLM probe (under `LLM_PROBE_KEY`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmProbeRecord {
    /// The LLM's base URL when probed: a record of another configuration is not reused.
    pub base_url: String,
    pub ok: bool,
    pub latency_ms: f64,
    pub error: Option<String>,
    pub at_unix_ms: u64,
}

impl LlmProbeRecord {
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The stored record when it is for `base_url` and younger than `ttl_ms`; unreadable
    /// bytes, another URL, an old record or one from the future (clock skew between
    /// instances) are all "probe again".
    pub fn reusable(bytes: &[u8], base_url: &str, now_unix_ms: u64, ttl_ms: u64) -> Option<Self> {
        let record: LlmProbeRecord = serde_json::from_slice(bytes).ok()?;
        let age = now_unix_ms.checked_sub(record.at_unix_ms)?;
        (record.base_url == base_url && age < ttl_ms).then_some(record)
    }

    /// The check this record stands for, `now_unix_ms` deciding its age.
    pub fn check(&self, now_unix_ms: u64, fresh: bool) -> DependencyCheck {
        DependencyCheck {
            ok: self.ok,
            latency_ms: self.latency_ms,
            error: self.error.clone(),
            cached_age_ms: (!fresh).then(|| now_unix_ms.saturating_sub(self.at_unix_ms)),
        }
    }
}

/// The three checks of `/health/ready`.
#[derive(Debug, Clone, PartialEq)]
pub struct Readiness {
    pub graph: DependencyCheck,
    pub llm: DependencyCheck,
    pub kv: DependencyCheck,
}

impl Readiness {
    pub fn named(&self) -> [(&'static str, &DependencyCheck); 3] {
        [("graph", &self.graph), ("llm", &self.llm), ("kv", &self.kv)]
    }

    /// 200 `ready` when every dependency is up, else 503 `not_ready` with `down` naming
    /// the ones that are not.
    pub fn report(&self) -> (u16, Value) {
        let down: Vec<&str> = self
            .named()
            .iter()
            .filter(|(_, c)| !c.ok)
            .map(|(name, _)| *name)
            .collect();
        let checks: serde_json::Map<String, Value> = self
            .named()
            .iter()
            .map(|(name, c)| (name.to_string(), c.to_json()))
            .collect();
        let ready = down.is_empty();
        let body = json!({
            "status": if ready { "ready" } else { "not_ready" },
            "checks": checks,
            "down": down,
        });
        (if ready { 200 } else { 503 }, body)
    }
}

/// `message` with each configured origin replaced by its label (`[graph]`, `[llm]`), so a
/// public probe's reason names no internal host. Empty origins are skipped.
pub fn redact(message: &str, origins: &[(&str, &str)]) -> String {
    origins
        .iter()
        .filter(|(origin, _)| !origin.trim().is_empty())
        .fold(message.to_string(), |text, (origin, label)| {
            text.replace(origin.trim().trim_end_matches('/'), label)
        })
}

/// Milliseconds with two decimals: enough for a probe, short to read.
fn round_ms(ms: f64) -> f64 {
    (ms * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ok: bool, at: u64) -> LlmProbeRecord {
        LlmProbeRecord {
            base_url: "http://llm/v1".into(),
            ok,
            latency_ms: 3.0,
            error: (!ok).then(|| "connection refused".into()),
            at_unix_ms: at,
        }
    }

    #[test]
    fn a_record_is_reused_only_while_young_and_for_the_same_llm() {
        let bytes = record(true, 1_000).to_bytes();
        assert!(LlmProbeRecord::reusable(&bytes, "http://llm/v1", 30_999, 30_000).is_some());
        assert!(LlmProbeRecord::reusable(&bytes, "http://llm/v1", 31_000, 30_000).is_none());
        assert!(LlmProbeRecord::reusable(&bytes, "http://other/v1", 2_000, 30_000).is_none());
        // Written by an instance whose clock runs ahead: not trusted.
        assert!(LlmProbeRecord::reusable(&bytes, "http://llm/v1", 999, 30_000).is_none());
        assert!(LlmProbeRecord::reusable(b"garbage", "http://llm/v1", 1_000, 30_000).is_none());
    }

    #[test]
    fn a_reused_record_says_how_old_it_is() {
        let check = record(false, 1_000).check(4_000, false);
        assert_eq!(check.cached_age_ms, Some(3_000));
        assert_eq!(check.to_json()["cached"], true);
        assert_eq!(check.to_json()["error"], "connection refused");
        assert_eq!(
            record(true, 1_000)
                .check(1_000, true)
                .to_json()
                .get("cached"),
            None
        );
    }

    #[test]
    fn all_up_is_200_and_any_down_is_503_naming_it() {
        let up = DependencyCheck::up(1.234);
        let all = Readiness {
            graph: up.clone(),
            llm: up.clone(),
            kv: up.clone(),
        };
        let (status, body) = all.report();
        assert_eq!((status, body["status"].as_str()), (200, Some("ready")));
        assert_eq!(body["checks"]["graph"]["latency_ms"], 1.23);
        assert_eq!(body["down"], json!([]));

        let llm_down = Readiness {
            llm: DependencyCheck::down(0.5, "[llm] refused the connection"),
            ..all.clone()
        };
        let (status, body) = llm_down.report();
        assert_eq!((status, body["status"].as_str()), (503, Some("not_ready")));
        assert_eq!(body["down"], json!(["llm"]));
        assert_eq!(
            body["checks"]["llm"]["error"],
            "[llm] refused the connection"
        );
        assert_eq!(body["checks"]["graph"]["ok"], true);

        let two_down = Readiness {
            graph: DependencyCheck::down(1.0, "x"),
            kv: DependencyCheck::down(1.0, "y"),
            ..all
        };
        assert_eq!(two_down.report().1["down"], json!(["graph", "kv"]));
    }

    #[test]
    fn redaction_hides_configured_origins_only() {
        let text =
            "http://neo4j.internal:7474/db/neo4j/query/v2 refused; http://llm:11434/v1/models 404";
        assert_eq!(
            redact(
                text,
                &[
                    ("http://neo4j.internal:7474/", "[graph]"),
                    ("http://llm:11434", "[llm]"),
                    ("", "[x]")
                ]
            ),
            "[graph]/db/neo4j/query/v2 refused; [llm]/v1/models 404"
        );
    }
}
