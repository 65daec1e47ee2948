//! Prompts: the questions kg-agent is built for, as templates an MCP client offers its
//! user. Each names the tools that answer it, so a model starts on the right path.

use serde_json::{Map, Value, json};

struct Prompt {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// The one argument: name and description.
    argument: (&'static str, &'static str),
    /// The message, with `{}` where the argument goes.
    text: &'static str,
}

const PROMPTS: &[Prompt] = &[
    Prompt {
        name: "pay_open_orders",
        title: "Pay a supplier's open orders",
        description: "Pay every approved, unpaid purchase order of one supplier, with the checks and approval the catalog requires.",
        argument: (
            "supplier",
            "The supplier's name or id, e.g. ACME Industrial.",
        ),
        text: "Pay every open (approved, not yet paid) purchase order of the supplier {}. \
Find the supplier and its orders with search_instances and get_instance_neighbors. \
Check them with action_validate (PurchaseOrder / makePayment) and say which cannot be paid and why. \
Then call action_plan for the payable ones. If approval_required is true, stop and report the plan \
and that a person with the right to approve must redeem its approval_token; do not try to approve \
it yourself. Otherwise run action_execute with an idempotency_key, and report what succeeded and \
what failed, with each failure's reason.",
    },
    Prompt {
        name: "explain_entity",
        title: "Explain an entity's neighbourhood",
        description: "What an entity is, what it is connected to, and what can be done with it.",
        argument: (
            "entity",
            "The entity's id or exact name, e.g. PO-0003 or ACME Industrial.",
        ),
        text: "Explain {} in the knowledge graph: read it with get_instance_neighbors (one or two \
hops), describe its class with describe_class, and say what it is connected to and why that \
matters. List the business actions that apply to it (action_list) without running any.",
    },
    Prompt {
        name: "suppliers_for_product",
        title: "Suppliers behind a product",
        description: "Which suppliers deliver the parts used in one product, from the graph.",
        argument: ("product", "The product's name or id."),
        text: "Which suppliers deliver parts used in the product {}? Use get_ontology_classes and get_ontology_relationships to find the \
relationships between products, parts and suppliers, then find_paths or get_instance_neighbors \
to follow them. Answer only from what the tools return, naming each supplier with the parts it \
delivers.",
    },
    Prompt {
        name: "policy_question",
        title: "Ask the policy documents",
        description: "Answer a question from the ingested documents, citing them.",
        argument: ("question", "The question."),
        text: "Answer from the ingested documents: {} \
Use search_documents, answer only from the chunks it returns, and cite each chunk's document id. \
If the documents do not answer it, say so.",
    },
];

/// `prompts/list`.
pub fn list() -> Vec<Value> {
    PROMPTS
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "title": p.title,
                "description": p.description,
                "arguments": [{"name": p.argument.0, "description": p.argument.1, "required": true}],
            })
        })
        .collect()
}

/// `prompts/get`: the prompt's message with its argument, or why not (invalid params).
pub fn get(name: &str, arguments: &Map<String, Value>) -> Result<Value, String> {
    let prompt = PROMPTS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| format!("no prompt named `{name}` (prompts/list has them)"))?;
    let value = match arguments.get(prompt.argument.0) {
        Some(Value::String(v)) if !v.trim().is_empty() => v.trim(),
        _ => {
            return Err(format!(
                "the prompt `{name}` needs the argument `{}` (a non-empty string)",
                prompt.argument.0
            ));
        }
    };
    Ok(json!({
        "description": prompt.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt.text.replacen("{}", value, 1)}}],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_fills_its_argument() {
        for listed in list() {
            let name = listed["name"].as_str().unwrap();
            let argument = listed["arguments"][0]["name"].as_str().unwrap();
            let mut args = Map::new();
            args.insert(argument.into(), json!("ACME {x}"));
            let got = get(name, &args).unwrap();
            let text = got["messages"][0]["content"]["text"].as_str().unwrap();
            assert!(text.contains("ACME {x}"), "{text}");
        }
    }

    #[test]
    fn a_missing_argument_or_prompt_is_named() {
        assert!(
            get("pay_open_orders", &Map::new())
                .unwrap_err()
                .contains("`supplier`")
        );
        assert!(get("nope", &Map::new()).unwrap_err().contains("`nope`"));
    }
}
