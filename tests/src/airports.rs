//! A second graph, of a shape nobody here designed: the world's airports from PyPI's
//! `airportsdata` (MIT licence; `airports.csv` and `iata_macs.csv`), loaded into an empty
//! graph so that tests can prove the graph tools work on a graph other than the demo's
//! (issue #47). The graph has no `id` property and no ontology nodes; each label's key is a
//! uniqueness constraint of the graph's own, one of them composite:
//!
//! ```text
//! (:Airport {icao, iata, name, elevation, lat, lon, tz})   key icao
//!   -[:SERVES]->    (:City {name, subd, country})        key (country, subd, name)
//!                     -[:IN_COUNTRY]->  (:Country {iso})  key iso
//!   -[:PART_OF]->   (:MetroArea {code, name})             key code
//! ```
//!
//! The subset loaded is every airport with an IATA code plus every airport of a city
//! called Springfield (about 7,900 airports and 6,800 cities): small enough to load in
//! seconds, and it keeps the ambiguities a real graph has, twelve cities called
//! Springfield in as many US states, and airports that share a name.
//!
//! The data comes from the pinned wheel, fetched once with pip (from a virtualenv of its
//! own, as tests/python-venv.sh makes them: Debian's python3 has pip only there), checked
//! against its hash and unpacked into `target/airportsdata/`.

use crate::{GRAPH_PASSWORD, Graph, Stack, workspace};
use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::process::Command;
use tokio::sync::OnceCell;

/// The `airportsdata` release the tests are written against: its counts and names are
/// asserted on, so it is pinned, and its wheel's hash with it.
pub const VERSION: &str = "20260905";
const WHEEL: &str = "airportsdata-20260905-py3-none-any.whl";
const WHEEL_SHA256: &str = "d7eaa9a57d373b0adaaae0d52da2af0bb0edf73f7baa170f7c415d3342bf4868";
/// The files of the wheel the graph is made from.
const FILES: [&str; 2] = ["airports.csv", "iata_macs.csv"];
/// Where the test's copy of spin.toml finds the airports' catalog folder (graph-profile.toml
/// and an empty actions.toml), mounted at /catalog in place of the demo's.
pub const CATALOG: &str = "tests/data/airports";
/// Rows per `UNWIND $rows` statement: few statements, none of them large.
const BATCH: usize = 1000;

/// One airport of `airports.csv`.
#[derive(Debug, Clone)]
pub struct Airport {
    pub icao: String,
    /// None where the airport has no IATA code (some of Springfield's airfields).
    pub iata: Option<String>,
    pub name: String,
    /// Empty where the file gives no city: the airport then serves no City node.
    pub city: String,
    /// Empty where the file gives no subdivision: the City then has no `subd`.
    pub subd: String,
    pub country: String,
    pub elevation: Option<f64>,
    pub lat: f64,
    pub lon: f64,
    pub tz: String,
}

/// A City node: the airports that serve it share its country, subdivision and name.
#[derive(Debug, Clone)]
pub struct City {
    pub country: String,
    pub subd: Option<String>,
    pub name: String,
    pub airports: Vec<String>,
}

/// The subset of the data that the graph holds, as nodes and relationships to create.
#[derive(Debug)]
pub struct Dataset {
    pub airports: Vec<Airport>,
    pub cities: Vec<City>,
    pub countries: Vec<String>,
    /// (code, name) of each metropolitan area.
    pub metro_areas: Vec<(String, String)>,
    /// (airport ICAO, metropolitan area code) of each `PART_OF`.
    pub part_of: Vec<(String, String)>,
}

impl Dataset {
    /// What the graph should hold once loaded: nodes per label, relationships per type.
    pub fn expected(&self) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
        let nodes = [
            ("Airport", self.airports.len()),
            ("City", self.cities.len()),
            ("Country", self.countries.len()),
            ("MetroArea", self.metro_areas.len()),
        ];
        let relationships = [
            ("SERVES", self.cities.iter().map(|c| c.airports.len()).sum()),
            ("IN_COUNTRY", self.cities.len()),
            ("PART_OF", self.part_of.len()),
        ];
        let owned = |pairs: &[(&str, usize)]| {
            pairs
                .iter()
                .map(|(name, n)| (name.to_string(), *n))
                .collect::<BTreeMap<_, _>>()
        };
        (owned(&nodes), owned(&relationships))
    }
}

/// What a load made and how long it took.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub nodes: usize,
    pub relationships: usize,
    pub took: Duration,
}

static DATASET: OnceCell<Dataset> = OnceCell::const_new();

/// The subset, read once per test binary (tests in it run side by side).
pub async fn dataset() -> Result<&'static Dataset> {
    DATASET
        .get_or_try_init(|| async {
            let dir = data_dir().await?;
            let read = |name: &str| {
                std::fs::read_to_string(dir.join(name))
                    .with_context(|| format!("reading {}", dir.join(name).display()))
            };
            subset(
                &table(&read("airports.csv")?)?,
                &table(&read("iata_macs.csv")?)?,
            )
        })
        .await
}

/// `target/airportsdata/<VERSION>/`, holding the wheel's CSV files: made on first use
/// (pip, PyPI or its mirror, the wheel's hash checked), kept for later runs. Made in a
/// folder of its own and renamed into place, so a concurrent run never reads half a file.
async fn data_dir() -> Result<PathBuf> {
    let root = workspace().join("target/airportsdata");
    let dir = root.join(VERSION);
    if FILES.iter().all(|f| dir.join(f).is_file()) {
        return Ok(dir);
    }
    std::fs::create_dir_all(&root)?;
    let work = tempfile::tempdir_in(&root)?;
    let venv = work.path().join("venv");
    run(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        "python3 -m venv (Debian needs python3-venv: scripts/test-deps.sh)",
    )
    .await?;
    let python = venv.join("bin/python");
    let download = work.path().join("download");
    run(
        Command::new(&python)
            .args(["-m", "pip", "download", "--quiet", "--no-deps"])
            .args(["--only-binary", ":all:", "--disable-pip-version-check"])
            .arg("--dest")
            .arg(&download)
            .arg(format!("airportsdata=={VERSION}")),
        "pip download airportsdata (PyPI is needed once)",
    )
    .await?;
    let wheel = download.join(WHEEL);
    let bytes = std::fs::read(&wheel).with_context(|| format!("reading {}", wheel.display()))?;
    let hash = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    ensure!(
        hash == WHEEL_SHA256,
        "{WHEEL} has sha256 {hash}, not the pinned {WHEEL_SHA256}"
    );
    // A wheel is a zip file; the venv's python unpacks the two members (no zip crate here).
    let unpacked = work.path().join(VERSION);
    std::fs::create_dir(&unpacked)?;
    run(
        Command::new(&python)
            .arg("-c")
            .arg(
                "import sys, zipfile\n\
                 wheel = zipfile.ZipFile(sys.argv[1])\n\
                 for name in sys.argv[3:]:\n\
                 \x20   open(sys.argv[2] + '/' + name, 'wb').write(wheel.read('airportsdata/' + name))\n",
            )
            .arg(&wheel)
            .arg(&unpacked)
            .args(FILES),
        "unpacking the wheel",
    )
    .await?;
    // Another run may have finished first: its copy is the same (same hash).
    if std::fs::rename(&unpacked, &dir).is_err() && !dir.join(FILES[1]).is_file() {
        bail!("could not move the data into {}", dir.display());
    }
    Ok(dir)
}

async fn run(command: &mut Command, what: &str) -> Result<()> {
    crate::process::succeeded(command, what).await?;
    Ok(())
}

/// A CSV file's rows as maps from its header's names: the files quote text (`""` inside
/// quotes is a quote) and leave numbers bare; names hold commas and quotes.
fn table(text: &str) -> Result<Vec<BTreeMap<String, String>>> {
    let mut rows = parse_csv(text)?.into_iter();
    let header = rows.next().context("a CSV file without a header")?;
    rows.enumerate()
        .map(|(i, row)| {
            ensure!(
                row.len() == header.len(),
                "CSV row {} has {} fields, the header {}",
                i + 2,
                row.len(),
                header.len()
            );
            Ok(header.iter().cloned().zip(row).collect())
        })
        .collect()
}

fn parse_csv(text: &str) -> Result<Vec<Vec<String>>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            '\r' => {}
            c => field.push(c),
        }
    }
    ensure!(!quoted, "a quoted CSV field is not closed");
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    Ok(rows)
}

/// Every airport with an IATA code, and every airport of a city called Springfield; their
/// cities and countries; and the metropolitan areas with the airports in them.
fn subset(
    airports: &[BTreeMap<String, String>],
    macs: &[BTreeMap<String, String>],
) -> Result<Dataset> {
    let column = |row: &BTreeMap<String, String>, name: &str| -> Result<String> {
        row.get(name)
            .cloned()
            .with_context(|| format!("no column `{name}`"))
    };
    let number = |text: String, what: &str| -> Result<f64> {
        text.parse()
            .with_context(|| format!("{what} `{text}` is not a number"))
    };
    let mut kept = Vec::new();
    for row in airports {
        let (iata, city) = (column(row, "iata")?, column(row, "city")?);
        if iata.is_empty() && city != "Springfield" {
            continue;
        }
        let elevation = column(row, "elevation")?;
        kept.push(Airport {
            icao: column(row, "icao")?,
            iata: (!iata.is_empty()).then_some(iata),
            name: column(row, "name")?,
            city,
            subd: column(row, "subd")?,
            country: column(row, "country")?,
            elevation: match elevation.as_str() {
                "" => None,
                _ => Some(number(elevation, "elevation")?),
            },
            lat: number(column(row, "lat")?, "lat")?,
            lon: number(column(row, "lon")?, "lon")?,
            tz: column(row, "tz")?,
        });
    }
    let mut cities: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
    for a in kept.iter().filter(|a| !a.city.is_empty()) {
        cities
            .entry((a.country.clone(), a.subd.clone(), a.city.clone()))
            .or_default()
            .push(a.icao.clone());
    }
    let countries: BTreeSet<String> = kept.iter().map(|a| a.country.clone()).collect();
    let by_iata: BTreeMap<&str, &str> = kept
        .iter()
        .filter_map(|a| Some((a.iata.as_deref()?, a.icao.as_str())))
        .collect();
    let mut metro_areas = BTreeMap::new();
    let mut part_of = Vec::new();
    for row in macs {
        let code = column(row, "City Code")?;
        let airport = column(row, "Airport Code")?;
        let icao = by_iata
            .get(airport.as_str())
            .with_context(|| format!("metro area {code}'s airport {airport} is not loaded"))?;
        metro_areas.insert(code.clone(), column(row, "City Name")?);
        part_of.push((icao.to_string(), code));
    }
    Ok(Dataset {
        airports: kept,
        cities: cities
            .into_iter()
            .map(|((country, subd, name), airports)| City {
                country,
                subd: (!subd.is_empty()).then_some(subd),
                name,
                airports,
            })
            .collect(),
        countries: countries.into_iter().collect(),
        metro_areas: metro_areas.into_iter().collect(),
        part_of,
    })
}

/// The graph's own single-property keys, created before the data so that every `MATCH`
/// by key while loading is an index seek.
const CONSTRAINTS: [&str; 3] = [
    "CREATE CONSTRAINT airport_icao FOR (a:Airport) REQUIRE a.icao IS UNIQUE",
    "CREATE CONSTRAINT country_iso FOR (c:Country) REQUIRE c.iso IS UNIQUE",
    "CREATE CONSTRAINT metro_area_code FOR (m:MetroArea) REQUIRE m.code IS UNIQUE",
];
/// City's key, composite (nothing in kg-agent names it), created once the cities are in:
/// nothing matches a City by it while loading, and devgraph checks a composite constraint
/// on each insert by reading the label (6,800 cities took 10 s with it in place, 0.1 s
/// without; creating it afterwards takes milliseconds and still proves the key unique).
const CITY_KEY: &str =
    "CREATE CONSTRAINT city_key FOR (c:City) REQUIRE (c.country, c.subd, c.name) IS UNIQUE";

/// Loads the subset into `graph` (expected empty) through its Query API, in batched
/// parameterised statements, then checks that the graph holds exactly the nodes and
/// relationships of the subset, per label and type.
pub async fn load(graph: &Graph) -> Result<Loaded> {
    let data = dataset().await?;
    let started = Instant::now();
    let client = reqwest::Client::new();
    for constraint in CONSTRAINTS {
        write(&client, graph, constraint, json!([])).await?;
    }
    let countries: Vec<Value> = data.countries.iter().map(|c| json!(c)).collect();
    let metro_areas: Vec<Value> = data
        .metro_areas
        .iter()
        .map(|(code, name)| json!({"code": code, "name": name}))
        .collect();
    // A null property is not written (Cypher's CREATE), so an airport without an IATA
    // code has no `iata`, and a city without a subdivision no `subd`.
    let airports: Vec<Value> = data
        .airports
        .iter()
        .map(|a| {
            json!({"icao": a.icao, "iata": a.iata, "name": a.name, "elevation": a.elevation,
                   "lat": a.lat, "lon": a.lon, "tz": a.tz})
        })
        .collect();
    let cities: Vec<Value> = data
        .cities
        .iter()
        .map(|c| json!({"country": c.country, "subd": c.subd, "name": c.name, "airports": c.airports}))
        .collect();
    let part_of: Vec<Value> = data
        .part_of
        .iter()
        .map(|(icao, code)| json!({"icao": icao, "code": code}))
        .collect();
    for (statement, rows) in [
        (
            "UNWIND $rows AS iso CREATE (:Country {iso: iso})",
            countries,
        ),
        (
            "UNWIND $rows AS r CREATE (:MetroArea {code: r.code, name: r.name})",
            metro_areas,
        ),
        (
            "UNWIND $rows AS r CREATE (:Airport {icao: r.icao, iata: r.iata, name: r.name, \
             elevation: r.elevation, lat: r.lat, lon: r.lon, tz: r.tz})",
            airports,
        ),
        // A city without a subdivision cannot be matched again by its properties (null is
        // equal to nothing), so each city is linked in the statement that creates it. Its
        // airports in a subquery: devgraph runs `WITH c, r UNWIND r.airports …` straight
        // after the CREATE some sixty times slower, and past its memory limit for 1,000 rows.
        (
            "UNWIND $rows AS r MATCH (k:Country {iso: r.country}) \
             CREATE (c:City {country: r.country, subd: r.subd, name: r.name})-[:IN_COUNTRY]->(k) \
             WITH c, r CALL (c, r) { UNWIND r.airports AS icao MATCH (a:Airport {icao: icao}) \
             CREATE (a)-[:SERVES]->(c) }",
            cities,
        ),
        (
            "UNWIND $rows AS r MATCH (a:Airport {icao: r.icao}), (m:MetroArea {code: r.code}) \
             CREATE (a)-[:PART_OF]->(m)",
            part_of,
        ),
    ] {
        for batch in rows.chunks(BATCH) {
            write(&client, graph, statement, json!(batch)).await?;
        }
    }
    write(&client, graph, CITY_KEY, json!([])).await?;
    let took = started.elapsed();

    let (nodes, relationships) = data.expected();
    let counted = |rows: Vec<Value>| -> BTreeMap<String, usize> {
        rows.iter()
            .filter_map(|r| Some((r[0].as_str()?.to_string(), r[1].as_u64()? as usize)))
            .collect()
    };
    let found_nodes = counted(
        graph
            .query("MATCH (n) UNWIND labels(n) AS label RETURN label, count(*)")
            .await?,
    );
    let found_relationships = counted(
        graph
            .query("MATCH ()-[r]->() RETURN type(r), count(*)")
            .await?,
    );
    ensure!(
        (&found_nodes, &found_relationships) == (&nodes, &relationships),
        "the graph holds {found_nodes:?} and {found_relationships:?}, not {nodes:?} and {relationships:?}"
    );
    let loaded = Loaded {
        nodes: nodes.values().sum(),
        relationships: relationships.values().sum(),
        took,
    };
    eprintln!(
        "airports: {} nodes and {} relationships loaded into {} in {:.2} s",
        loaded.nodes,
        loaded.relationships,
        graph.kind.name(),
        took.as_secs_f64()
    );
    Ok(loaded)
}

/// One WRITE statement with parameters (`Graph::write` sends none), its transient errors
/// retried as `Graph`'s are.
async fn write(
    client: &reqwest::Client,
    graph: &Graph,
    statement: &str,
    rows: Value,
) -> Result<()> {
    for _ in 0..20 {
        let body: Value = client
            .post(format!("{}/db/neo4j/query/v2", graph.url))
            .basic_auth("neo4j", Some(GRAPH_PASSWORD))
            // Not the application's statement: devgraph leaves it out of the lint gate's
            // capture (see devgraph::capture).
            .header("x-devgraph-capture", "test")
            .json(&json!({"statement": statement, "parameters": {"rows": rows}, "accessMode": "WRITE"}))
            .send()
            .await?
            .json()
            .await?;
        match body["errors"][0]["code"].as_str() {
            None => return Ok(()),
            Some(code) if code.starts_with("Neo.TransientError.") => continue,
            Some(code) => bail!(
                "the graph refused `{statement}`: {code}: {}",
                body["errors"][0]["message"]
            ),
        }
    }
    bail!("`{statement}` kept failing with transient errors")
}

/// A copy of this run's manifest in `dir` whose `/catalog` mount is the airports' catalog
/// folder ([`CATALOG`]).
pub fn manifest(dir: &Path) -> Result<PathBuf> {
    crate::manifest_with_catalog(dir, CATALOG)
}

/// The application on a graph holding the airports (and nothing else), with `extra`
/// variables (an LLM stub's…).
pub async fn stack(extra: &[(&str, String)]) -> Result<(Stack, Loaded)> {
    let graph = Graph::start_empty().await?;
    let loaded = load(&graph).await?;
    let dir = tempfile::tempdir()?;
    let manifest = manifest(dir.path())?;
    Ok((Stack::serve(&manifest, graph, dir, extra).await?, loaded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_may_be_quoted_with_commas_and_quotes_inside() {
        let rows = parse_csv("\"a\",\"b\",c\r\n\"x, \"\"y\"\"\",,12.5\n\"\",\"z\",-3").unwrap();
        assert_eq!(
            rows,
            [
                vec!["a", "b", "c"],
                vec!["x, \"y\"", "", "12.5"],
                vec!["", "z", "-3"]
            ]
        );
        assert!(parse_csv("\"open").is_err());
    }
}
