//! Rust bindings of `wit/`, generated once here so that every component and library uses
//! the same DTOs (DESIGN.md §2: the WIT records are the DTOs). Components generate only
//! their own export glue and reuse these types with wit-bindgen's `with`.

wit_bindgen::generate!({
    path: "../../wit",
    world: "dispatcher-component",
    additional_derives: [PartialEq, Clone],
    generate_all,
});

pub use kg::types::types;

mod errors;
