//! `devhost --footprint`: what one request instantiates, per Spin component of the
//! manifest (its dependencies composed in, as `spin up` composes them), and how many such
//! requests Spin's default instance pool holds at once (DESIGN.md §13).
//!
//! A request instantiates its Spin component whole: every nested component's core
//! modules (the Rust module, the preview-1 adapter, wit-component's shim and fixup
//! modules), each with the memories and tables it defines. Wasmtime's pooling allocator,
//! which Spin uses by default, takes each of those from totals shared by every request in
//! flight; the first total to run out refuses the next instantiation (Spin answers that
//! request 500 with an empty body). So capacity is the smallest of total ÷ per-request
//! over the four totals.
//!
//! Counted from the component's own sections (wasmparser): a core instance is an
//! `instantiate` of a module (an instance made from exports allocates nothing), and its
//! memories and tables are the ones the module defines, not the ones it imports.

use crate::compose;
use crate::config::manifest::Manifest;
use anyhow::{Context, Result, bail};
use std::path::Path;
use wasmparser::{
    ComponentAlias, ComponentInstance, ComponentOuterAliasKind, Instance, Parser, Payload,
};

/// What one instantiation takes from the pool.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Component instances inside the top-level one: the composed components, and the
    /// core-module-free wrappers wit-component adds to type each one's exports.
    pub nested_components: u32,
    pub core_instances: u32,
    pub memories: u32,
    pub tables: u32,
}

impl std::ops::Add for Footprint {
    type Output = Footprint;
    fn add(self, other: Footprint) -> Footprint {
        Footprint {
            nested_components: self.nested_components + other.nested_components,
            core_instances: self.core_instances + other.core_instances,
            memories: self.memories + other.memories,
            tables: self.tables + other.tables,
        }
    }
}

/// The totals of Spin 4's default pooling allocator (spin-core's `Config::default`, with
/// the environment variables that override each), derived from `SPIN_MAX_INSTANCE_COUNT`
/// (1,000 by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpinPool {
    /// `SPIN_WASMTIME_INSTANCE_COUNT`: component instances (requests) alive at once.
    pub component_instances: u32,
    /// `SPIN_WASMTIME_TOTAL_MEMORIES`.
    pub memories: u32,
    /// `SPIN_WASMTIME_TOTAL_TABLES` (2 × the instance count).
    pub tables: u32,
    /// `SPIN_WASMTIME_TOTAL_CORE_INSTANCES` (4 × the instance count).
    pub core_instances: u32,
}

impl SpinPool {
    pub fn with_max_instances(max_instances: u32) -> SpinPool {
        SpinPool {
            component_instances: max_instances,
            memories: max_instances,
            tables: 2 * max_instances,
            core_instances: 4 * max_instances,
        }
    }

    /// Requests of this footprint alive at once, and the total that runs out first.
    pub fn capacity(&self, footprint: &Footprint) -> (u32, &'static str) {
        let per = |total: u32, each: u32| total.checked_div(each).unwrap_or(u32::MAX);
        [
            (self.component_instances, "component instances"),
            (per(self.memories, footprint.memories), "memories"),
            (per(self.tables, footprint.tables), "tables"),
            (
                per(self.core_instances, footprint.core_instances),
                "core instances",
            ),
        ]
        .into_iter()
        .min_by_key(|(capacity, _)| *capacity)
        .unwrap_or((0, "nothing"))
    }
}

/// The footprint of a component's instantiation, from its bytes.
pub fn of_component(bytes: &[u8]) -> Result<Footprint> {
    component(bytes, &[])
}

/// One component's footprint; `outer` holds the index spaces of the enclosing components
/// (innermost last), for `alias outer` of a module or a component.
fn component(bytes: &[u8], outer: &[Spaces]) -> Result<Footprint> {
    let mut spaces = Spaces::default();
    let mut total = Footprint::default();
    let mut depth = 0u32;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload?;
        // parse_all also yields the payloads of nested modules and components, between
        // their section and their End: only this component's own sections count here.
        match payload {
            Payload::ModuleSection {
                unchecked_range, ..
            } => {
                if depth == 0 {
                    spaces.modules.push(module(slice(bytes, unchecked_range)?)?);
                }
                depth += 1;
                continue;
            }
            Payload::ComponentSection {
                unchecked_range, ..
            } => {
                if depth == 0 {
                    let mut enclosing = outer.to_vec();
                    enclosing.push(spaces.clone());
                    spaces
                        .components
                        .push(component(slice(bytes, unchecked_range)?, &enclosing)?);
                }
                depth += 1;
                continue;
            }
            Payload::End(_) => {
                depth = depth.saturating_sub(1);
                continue;
            }
            _ if depth > 0 => continue,
            Payload::InstanceSection(reader) => {
                for instance in reader {
                    if let Instance::Instantiate { module_index, .. } = instance? {
                        let module = spaces
                            .modules
                            .get(module_index as usize)
                            .with_context(|| format!("core module {module_index} not found"))?;
                        total = total + *module;
                    }
                }
            }
            Payload::ComponentInstanceSection(reader) => {
                for instance in reader {
                    if let ComponentInstance::Instantiate {
                        component_index, ..
                    } = instance?
                    {
                        let nested = spaces
                            .components
                            .get(component_index as usize)
                            .with_context(|| format!("component {component_index} not found"))?;
                        total = total
                            + *nested
                            + Footprint {
                                nested_components: 1,
                                ..Footprint::default()
                            };
                    }
                }
            }
            Payload::ComponentAliasSection(reader) => {
                for alias in reader {
                    match alias? {
                        ComponentAlias::Outer { kind, count, index } => {
                            let from = outer
                                .len()
                                .checked_sub(count as usize)
                                .and_then(|at| outer.get(at))
                                .with_context(|| format!("alias outer {count} out of range"))?;
                            match kind {
                                ComponentOuterAliasKind::CoreModule => spaces.modules.push(
                                    *from.modules.get(index as usize).with_context(|| {
                                        format!("outer core module {index} not found")
                                    })?,
                                ),
                                ComponentOuterAliasKind::Component => spaces.components.push(
                                    *from.components.get(index as usize).with_context(|| {
                                        format!("outer component {index} not found")
                                    })?,
                                ),
                                _ => {}
                            }
                        }
                        ComponentAlias::InstanceExport { kind, .. } => {
                            use wasmparser::ComponentExternalKind as Kind;
                            if matches!(kind, Kind::Module | Kind::Component) {
                                bail!(
                                    "a module or component exported by an instance is not counted"
                                );
                            }
                        }
                        ComponentAlias::CoreInstanceExport { .. } => {}
                    }
                }
            }
            Payload::ComponentImportSection(reader) => {
                for import in reader {
                    use wasmparser::ComponentTypeRef;
                    if matches!(
                        import?.ty,
                        ComponentTypeRef::Module(_) | ComponentTypeRef::Component(_)
                    ) {
                        bail!("an imported module or component is not counted");
                    }
                }
            }
            _ => {}
        }
    }
    Ok(total)
}

/// The bytes of a nested section.
fn slice(bytes: &[u8], range: std::ops::Range<u64>) -> Result<&[u8]> {
    let start = usize::try_from(range.start)?;
    let end = usize::try_from(range.end)?;
    bytes
        .get(start..end)
        .with_context(|| format!("section {start}..{end} outside the component"))
}

/// The modules and components a component can instantiate, by index.
#[derive(Debug, Default, Clone)]
struct Spaces {
    modules: Vec<Footprint>,
    components: Vec<Footprint>,
}

/// A core module's instantiation: one core instance with the memories and tables it
/// defines.
fn module(bytes: &[u8]) -> Result<Footprint> {
    let mut footprint = Footprint {
        core_instances: 1,
        ..Footprint::default()
    };
    for payload in Parser::new(0).parse_all(bytes) {
        match payload? {
            Payload::MemorySection(reader) => footprint.memories += reader.count(),
            Payload::TableSection(reader) => footprint.tables += reader.count(),
            _ => {}
        }
    }
    Ok(footprint)
}

/// Each Spin component of the manifest with its dependencies composed in, and what one
/// request to it instantiates.
pub fn of_manifest(manifest_path: &Path) -> Result<Vec<(String, Footprint)>> {
    let manifest = Manifest::load(manifest_path)
        .with_context(|| format!("loading {}", manifest_path.display()))?;
    let mut footprints = Vec::new();
    for (id, spin_component) in &manifest.components {
        let bytes = compose::compose_manifest_component(id, spin_component)?;
        let footprint = of_component(&bytes).with_context(|| format!("component `{id}`"))?;
        footprints.push((id.clone(), footprint));
    }
    Ok(footprints)
}

/// The report `devhost --footprint` prints: one line per Spin component, as JSON when
/// asked (for the tests), else as text.
pub fn report(manifest_path: &Path, json: bool) -> Result<String> {
    let pool = SpinPool::with_max_instances(1_000);
    let mut lines = Vec::new();
    for (id, f) in of_manifest(manifest_path)? {
        let (capacity, bound) = pool.capacity(&f);
        lines.push(if json {
            serde_json::json!({
                "component": id,
                "nested_components": f.nested_components,
                "core_instances": f.core_instances,
                "memories": f.memories,
                "tables": f.tables,
                "spin_default_capacity": capacity,
                "spin_default_bound": bound,
            })
            .to_string()
        } else {
            format!(
                "{id}: {} memories, {} tables, {} core instances ({} nested component \
                 instances) per request; Spin's default pool holds {capacity} at once \
                 (bound: {bound})",
                f.memories, f.tables, f.core_instances, f.nested_components
            )
        });
    }
    Ok(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_is_the_first_total_to_run_out() {
        let pool = SpinPool::with_max_instances(1_000);
        let chat = Footprint {
            nested_components: 6,
            core_instances: 24,
            memories: 6,
            tables: 13,
        };
        assert_eq!(pool.capacity(&chat), (153, "tables"));
        let live = Footprint {
            nested_components: 0,
            core_instances: 3,
            memories: 1,
            tables: 1,
        };
        assert_eq!(pool.capacity(&live), (1_000, "component instances"));
        assert_eq!(
            pool.capacity(&Footprint::default()).0,
            1_000,
            "no division by zero"
        );
    }
}
