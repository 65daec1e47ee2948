//! What the tool calls of one incoming request share: the live schema's label and
//! relationship-type lists (looked up at most once per request, see [`Session`]) and the
//! server's notifications about every statement the tools sent.
//!
//! In the Spin app a component instance lives for exactly one incoming request (Spin and
//! devhost instantiate the composed dispatcher, dependencies included, per request), so
//! the query-tools component keeps one `Session` per instance: a turn's tool calls reuse
//! the lists, and the next request starts afresh.
//!
//! A tool whose statement requires its class's label (`MATCH (n:Label)`: the statistics,
//! instances by class, search and neighbours tools) reads the label list only when the
//! statement found nothing (`schema::require_label_unless_found`), so a turn of such calls
//! that find what they look for sends no schema statement at all.

use kg_graph_profile::{
    Audience, CONSTRAINTS_STATEMENT, Declared, Profile, View, keys_from_constraint_rows,
};
use neo4j_client::{AccessMode, Client, Neo4jError, Notification, QueryResult, Transport};
use serde_json::{Map, Value as Json};
use std::sync::{Arc, Mutex};

const LABELS: &str = "CALL db.labels() YIELD label RETURN label ORDER BY label LIMIT 1000";
const RELATIONSHIP_TYPES: &str = "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType ORDER BY relationshipType LIMIT 1000";
const PROPERTY_KEYS: &str =
    "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey ORDER BY propertyKey LIMIT 10000";

/// A graph's labels, relationship types and property keys.
pub type SchemaNames = (Vec<String>, Vec<String>, Vec<String>);

/// Both lists in one statement, each row tagged with its list (see [`Graph::read_both_lists`]).
const LABELS_AND_TYPES: &str = "CALL db.labels() YIELD label RETURN 'label' AS list, label AS name ORDER BY name LIMIT 1000 \
     UNION ALL CALL db.relationshipTypes() YIELD relationshipType RETURN 'type' AS list, relationshipType AS name ORDER BY name LIMIT 1000";

/// One request's schema lists and notifications. A list is read from the graph the first
/// time a tool needs it; it is read once more only when a tool asks for a name the list
/// lacks (a label a write in this same request may just have created), and only once per
/// request, so an unknown name costs at most one extra look-up.
#[derive(Default)]
pub struct Session {
    labels: Mutex<Names>,
    relationship_types: Mutex<Names>,
    notes: Mutex<Vec<Noted>>,
    /// The declared graph profile (`/catalog/graph-profile.toml`), and the profile merged
    /// with the graph's own constraints once a tool first needs it in this request.
    declared: Declared,
    profile: Mutex<Option<Arc<Profile>>>,
    constraint_lookups: Mutex<usize>,
    /// The declared visibility policy resolved for the audience the answers are for
    /// ([`Session::set_audience`]); None until first needed, then the narrowest audience's
    /// unless one was set.
    view: Mutex<Option<Arc<View>>>,
}

#[derive(Default)]
struct Names {
    list: Option<Vec<String>>,
    refreshed: bool,
    lookups: usize,
}

/// A notification and the statement it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Noted {
    pub statement: String,
    pub notification: Notification,
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    /// A session whose tools know the graph's shape from a declared profile as well as
    /// from its constraints.
    pub fn with_declared(declared: Declared) -> Self {
        Session {
            declared,
            ..Self::default()
        }
    }

    /// Who the answers are for from now on: every value the tools read is redacted for
    /// them (`crate::visibility`), and hidden names are refused in arguments and queries.
    pub fn set_audience(&self, audience: &Audience) {
        *lock(&self.view) = Some(Arc::new(self.declared.policy.view(audience)));
    }

    /// What the current audience is denied.
    pub fn view(&self) -> Arc<View> {
        lock(&self.view)
            .get_or_insert_with(|| Arc::new(self.declared.policy.view(&Audience::default())))
            .clone()
    }

    /// `SHOW CONSTRAINTS` statements sent so far (at most one per session).
    pub fn constraint_lookups(&self) -> usize {
        *lock(&self.constraint_lookups)
    }

    /// Schema statements sent so far (`db.labels()`, `db.relationshipTypes()`).
    pub fn schema_lookups(&self) -> usize {
        lock(&self.labels).lookups + lock(&self.relationship_types).lookups
    }

    /// The notifications recorded since the last call, oldest first.
    pub fn take_notifications(&self) -> Vec<Noted> {
        std::mem::take(&mut *lock(&self.notes))
    }

    pub(crate) fn notes_len(&self) -> usize {
        lock(&self.notes).len()
    }

    pub(crate) fn notes_since(&self, from: usize) -> Vec<Noted> {
        lock(&self.notes)
            .get(from..)
            .map(<[Noted]>::to_vec)
            .unwrap_or_default()
    }

    fn record(&self, statement: &str, result: &QueryResult) {
        if result.notifications.is_empty() {
            return;
        }
        lock(&self.notes).extend(result.notifications.iter().map(|n| Noted {
            statement: statement.to_string(),
            notification: n.clone(),
        }));
    }
}

fn lock<V>(m: &Mutex<V>) -> std::sync::MutexGuard<'_, V> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A client used within a [`Session`]: every statement's notifications are recorded, and
/// schema lists come from the session.
pub struct Graph<'a, T> {
    client: &'a Client<T>,
    session: &'a Session,
}

impl<'a, T: Transport> Graph<'a, T> {
    pub fn new(client: &'a Client<T>, session: &'a Session) -> Self {
        Graph { client, session }
    }

    pub fn config(&self) -> &neo4j_client::Config {
        self.client.config()
    }

    /// Runs one statement (see [`Client::run`]) and records its notifications.
    pub fn run(
        &self,
        statement: &str,
        parameters: Map<String, Json>,
        mode: AccessMode,
    ) -> Result<QueryResult, Neo4jError> {
        let mut result = self.client.run(statement, parameters, mode)?;
        self.session.record(statement, &result);
        crate::visibility::redact_rows(&mut result.rows, &self.session.view());
        Ok(result)
    }

    /// [`neo4j_client::Client::run_bounded`]: the statement under the server's
    /// `maxExecutionTime`, which Neo4j enforces only in a transaction begun with it. For
    /// Cypher from outside: a row holding anything the audience may not see is left out.
    pub fn run_bounded(
        &self,
        statement: &str,
        parameters: Map<String, Json>,
        mode: AccessMode,
    ) -> Result<QueryResult, Neo4jError> {
        let mut result = self.client.run_bounded(statement, parameters, mode)?;
        self.session.record(statement, &result);
        // Only Cypher from outside runs bounded: its rows are its own, so a row that held
        // something hidden can go whole (`crate::visibility`).
        crate::visibility::redact_rows_leaving_no_hole(&mut result.rows, &self.session.view());
        Ok(result)
    }

    /// The labels in use, each of `needed` among them if the graph has it.
    /// Hidden labels are not among them: to this audience they do not exist.
    pub fn labels(&self, needed: &[&str]) -> Result<Vec<String>, Neo4jError> {
        let view = self.view();
        let mut labels = self.names(&self.session.labels, LABELS, needed)?;
        labels.retain(|l| view.label_visible(l));
        Ok(labels)
    }

    /// What the session's audience is denied.
    pub fn view(&self) -> Arc<View> {
        self.session.view()
    }

    /// Every label the graph has, hidden ones included: for statements that must leave
    /// hidden labels out by name, never for answers.
    pub fn labels_in_graph(&self) -> Result<Vec<String>, Neo4jError> {
        self.names(&self.session.labels, LABELS, &[])
    }

    /// The labels the audience may not see that the graph has (none read when none is
    /// hidden): a label the graph lacks needs no leaving out, and naming one would make
    /// Neo4j warn.
    pub fn hidden_labels_in_graph(&self) -> Result<Vec<String>, Neo4jError> {
        let view = self.view();
        if view.hidden_labels.is_empty() {
            return Ok(Vec::new());
        }
        let mut labels = self.labels_in_graph()?;
        labels.retain(|l| !view.label_visible(l));
        Ok(labels)
    }

    /// Every label, relationship type and property key the graph has, hidden ones
    /// included: for the status check that compares the declared profile with the graph,
    /// never for answers.
    pub fn schema_names(&self) -> Result<SchemaNames, Neo4jError> {
        self.read_both_lists()?;
        let labels = self.names(&self.session.labels, LABELS, &[])?;
        let types = self.names(&self.session.relationship_types, RELATIONSHIP_TYPES, &[])?;
        let properties = self
            .client
            .run(PROPERTY_KEYS, Map::new(), AccessMode::Read)?
            .rows
            .iter()
            .filter_map(|r| r.first()?.as_str().map(str::to_string))
            .collect();
        Ok((labels, types, properties))
    }

    /// Reads the label and the relationship-type lists in one statement when a tool is
    /// about to check names of both and neither list has been read in this request: one
    /// round trip instead of two (`run_read_cypher` on a pattern with labels and types).
    /// Either list already read, nothing is sent; [`Self::labels`] and
    /// [`Self::relationship_types`] then read or refresh each on its own, as before.
    pub fn read_both_lists(&self) -> Result<(), Neo4jError> {
        let mut labels = lock(&self.session.labels);
        let mut types = lock(&self.session.relationship_types);
        if labels.list.is_some() || types.list.is_some() {
            return Ok(());
        }
        labels.lookups += 1;
        let result = self.run(LABELS_AND_TYPES, Map::new(), AccessMode::Read)?;
        let (mut label_list, mut type_list) = (Vec::new(), Vec::new());
        for row in &result.rows {
            let (Some(list), Some(name)) = (
                row.first().and_then(|v| v.as_str()),
                row.get(1).and_then(|v| v.as_str()),
            ) else {
                continue;
            };
            match list {
                "label" => label_list.push(name.to_string()),
                "type" => type_list.push(name.to_string()),
                _ => {}
            }
        }
        labels.list = Some(label_list);
        types.list = Some(type_list);
        Ok(())
    }

    /// The graph profile: the declared file merged with the graph's uniqueness and
    /// node-key constraints, read once per session. A graph that refuses to list its
    /// constraints (a user without the privilege) is profiled from the file alone.
    pub fn profile(&self) -> Result<Arc<Profile>, Neo4jError> {
        if let Some(profile) = &*lock(&self.session.profile) {
            return Ok(profile.clone());
        }
        *lock(&self.session.constraint_lookups) += 1;
        let keys = match self.run(CONSTRAINTS_STATEMENT, Map::new(), AccessMode::Read) {
            Ok(result) => {
                let rows: Vec<Vec<Json>> = result
                    .rows
                    .iter()
                    .map(|row| row.iter().map(neo4j_client::Value::to_plain_json).collect())
                    .collect();
                keys_from_constraint_rows(&rows)
            }
            Err(e) if e.is_retryable() || e.code.is_none() => return Err(e),
            Err(_) => Default::default(),
        };
        let profile = Arc::new(Profile::merge(&self.session.declared, &keys));
        *lock(&self.session.profile) = Some(profile.clone());
        Ok(profile)
    }

    /// A profile that knows `label`'s key: the declared file alone when it keys the label
    /// (a declared key wins over a constraint's, so the graph's constraints cannot change
    /// it and `SHOW CONSTRAINTS` is not worth its round trip), else [`Graph::profile`].
    pub fn profile_for(&self, label: &str) -> Result<Arc<Profile>, Neo4jError> {
        let known = self.known_profile();
        if known.label(label).is_some_and(|l| !l.key.is_empty()) {
            return Ok(known);
        }
        self.profile()
    }

    /// The profile as far as it is known without asking the graph: the merged one when a
    /// tool has read it in this request, else the declared file alone. For captions of
    /// nodes a statement happened to return (`run_read_cypher`), not worth a round trip.
    pub fn known_profile(&self) -> Arc<Profile> {
        if let Some(profile) = &*lock(&self.session.profile) {
            return profile.clone();
        }
        Arc::new(Profile::merge(&self.session.declared, &Default::default()))
    }

    /// The relationship types in use, each of `needed` among them if the graph has it.
    /// Hidden types are not among them.
    pub fn relationship_types(&self, needed: &[&str]) -> Result<Vec<String>, Neo4jError> {
        let view = self.view();
        let mut types = self.names(&self.session.relationship_types, RELATIONSHIP_TYPES, needed)?;
        types.retain(|t| view.type_visible(t));
        Ok(types)
    }

    fn names(
        &self,
        cache: &Mutex<Names>,
        statement: &str,
        needed: &[&str],
    ) -> Result<Vec<String>, Neo4jError> {
        let mut names = lock(cache);
        let stale = match &names.list {
            None => true,
            Some(list) => !names.refreshed && needed.iter().any(|n| !list.iter().any(|k| k == n)),
        };
        if stale {
            if names.list.is_some() {
                names.refreshed = true;
            }
            names.lookups += 1;
            let result = self.run(statement, Map::new(), AccessMode::Read)?;
            names.list = Some(
                result
                    .rows
                    .iter()
                    .filter_map(|r| r.first()?.as_str().map(str::to_string))
                    .collect(),
            );
        }
        Ok(names.list.clone().unwrap_or_default())
    }
}
