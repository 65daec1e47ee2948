//! What the agent's JSON endpoints answer, free of the host: a whole turn (`/chat`, the
//! legacy `/api/qa/query`, `/chat/approve`), and the conversation history
//! (`/conversations`, `/conversations/{id}`).

use crate::events::Event;
use crate::memory::{self, Kv};
use crate::ownership;
use crate::turn::ports::Actor;
use crate::turn::{self, TurnResult};
use kg_http::ApiError;
use serde_json::{Map, Value, json};

/// A turn's JSON answer: the answer, its route, sources and usage, the graph its tools
/// returned (nodes and edges once each), and with `trace` every event but the answer's
/// own pieces as `intermediate_steps`.
pub fn turn_json(result: &TurnResult, events: &[Event], trace: bool, latency_ms: u64) -> Value {
    let mut nodes = Map::new();
    let mut edges = Map::new();
    for e in events {
        if let Event::GraphData(g) = e {
            for n in g["nodes"].as_array().into_iter().flatten() {
                nodes.insert(n["id"].to_string(), n.clone());
            }
            for x in g["edges"].as_array().into_iter().flatten() {
                edges.insert(x["id"].to_string(), x.clone());
            }
        }
    }
    let graph = (!nodes.is_empty()).then(|| {
        json!({"nodes": nodes.values().collect::<Vec<_>>(), "edges": edges.values().collect::<Vec<_>>()})
    });
    let mut body = json!({
        "conversation_id": result.conversation_id,
        "answer": result.answer,
        "route": result.route,
        "sources": result.sources,
        "graph_data": graph,
        "actions": result.actions,
        "approval": result.approval,
        "usage": {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens},
        "model_used": result.model_used,
        "latency_ms": latency_ms,
    });
    if trace {
        body["intermediate_steps"] = events
            .iter()
            .filter(|e| {
                !matches!(
                    e,
                    Event::Content(_) | Event::ContentStart | Event::ContentReset
                )
            })
            .map(|e| {
                let (kind, mut data) = e.encode();
                data["type"] = json!(kind);
                data
            })
            .collect();
    }
    body
}

fn unavailable(e: String) -> ApiError {
    ApiError::new(503, "unavailable", e)
}

fn no_conversation(id: &str) -> ApiError {
    ApiError::new(404, "not_found", format!("no conversation `{id}`"))
}

/// `GET /conversations`: the `subject`'s own conversations, newest first.
pub fn list(kv: &dyn Kv, subject: &str) -> Result<Value, ApiError> {
    let listed = ownership::list_owned(kv, subject).map_err(unavailable)?;
    Ok(json!({"conversations": listed}))
}

/// `GET /conversations/{id}`: its turns and summary, if `actor` may read it.
pub fn conversation(kv: &dyn Kv, id: &str, actor: &Actor) -> Result<Value, ApiError> {
    memory::check_id(id).map_err(ApiError::bad_request)?;
    turn::authorize(kv, id, actor, false)?;
    let conversation = memory::load(kv, id).map_err(unavailable)?;
    if conversation.turns.is_empty() {
        return Err(no_conversation(id));
    }
    let turns: Vec<Value> = conversation
        .turns
        .iter()
        .map(|t| json!({"role": t.role, "content": t.content, "at": t.at, "route": t.route}))
        .collect();
    Ok(json!({"conversation_id": id, "turns": turns, "summary": conversation.summary}))
}

/// `DELETE /conversations/{id}`, if `actor` may: its turns and its owner's record.
pub fn delete(kv: &dyn Kv, id: &str, actor: &Actor) -> Result<Value, ApiError> {
    memory::check_id(id).map_err(ApiError::bad_request)?;
    turn::authorize(kv, id, actor, false)?;
    let deleted = memory::delete(kv, id).map_err(unavailable)?;
    ownership::forget(kv, id).map_err(unavailable)?;
    if deleted == 0 {
        return Err(no_conversation(id));
    }
    Ok(json!({"conversation_id": id, "deleted": true}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::tests::MemKv;
    use kg_wit::types::Caller;

    fn result() -> TurnResult {
        TurnResult {
            conversation_id: "c1".into(),
            answer: "paid".into(),
            route: json!({"intent": "action"}),
            sources: vec![],
            actions: None,
            approval: None,
            prompt_tokens: 3,
            completion_tokens: 4,
            model_used: Some("m".into()),
            steps: 1,
            awaiting_approval: false,
        }
    }

    #[test]
    fn a_turn_answer_merges_its_graphs_and_traces_only_when_asked() {
        let graph = |node: &str| {
            Event::GraphData(json!({"nodes": [{"id": node}], "edges": [{"id": "e1"}]}))
        };
        let events = vec![
            graph("n1"),
            Event::ContentStart,
            Event::Content("paid".into()),
            graph("n2"),
        ];
        let plain = turn_json(&result(), &events, false, 12);
        assert_eq!(plain["graph_data"]["nodes"].as_array().unwrap().len(), 2);
        assert_eq!(plain["graph_data"]["edges"].as_array().unwrap().len(), 1);
        assert_eq!(plain["usage"]["completion_tokens"], 4);
        assert_eq!(
            (plain["latency_ms"].as_u64(), &plain["model_used"]),
            (Some(12), &json!("m"))
        );
        assert!(plain.get("intermediate_steps").is_none());
        let traced = turn_json(&result(), &events, true, 12);
        let kinds: Vec<&Value> = traced["intermediate_steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["type"])
            .collect();
        assert_eq!(kinds, [&json!("graph_data"), &json!("graph_data")]);
        assert_eq!(
            turn_json(&result(), &[], false, 0)["graph_data"],
            Value::Null
        );
    }

    #[test]
    fn conversations_are_refused_when_malformed_unknown_or_someone_else_s() {
        let kv = MemKv::default();
        let actor = |subject: &str| Actor {
            caller: Caller {
                subject: subject.into(),
                roles: vec![],
            },
            may_act: false,
            admin: false,
        };
        let status = |r: Result<Value, ApiError>| r.err().map(|e| e.status);
        assert_eq!(status(conversation(&kv, "a/b", &actor("alice"))), Some(400));
        assert_eq!(status(conversation(&kv, "c1", &actor("alice"))), Some(404));
        assert_eq!(status(delete(&kv, "c1", &actor("alice"))), Some(404));
        assert_eq!(list(&kv, "alice").unwrap(), json!({"conversations": []}));
    }
}
