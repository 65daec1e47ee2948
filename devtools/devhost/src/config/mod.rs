//! The pure configuration side of devhost: the manifest, variables, outbound-host rules,
//! HTTP routes and runtime configuration, each as Spin defines them. No wasmtime here, so
//! it is unit-tested directly.

pub mod manifest;
pub mod outbound;
pub mod routes;
pub mod runtime_config;
pub mod variables;
