//! HTTP trigger routing as Spin does it: `/...` suffix is a wildcard prefix, anything else
//! an exact path; the most specific route wins.

use super::manifest::HttpTrigger;
use anyhow::{Result, bail};

#[derive(Debug)]
pub struct Routes {
    /// Sorted most specific first: exact routes, then wildcards by descending prefix length.
    routes: Vec<(Pattern, String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
enum Pattern {
    Exact(String),
    Prefix(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RouteMatch {
    pub component: String,
    /// The route as written in spin.toml.
    pub route: String,
    /// The matched part without `/...` (Spin's spin-component-route).
    pub base: String,
    /// The rest of the path (Spin's spin-path-info).
    pub path_info: String,
}

impl Routes {
    pub fn new(triggers: &[HttpTrigger]) -> Result<Routes> {
        let mut routes = Vec::new();
        for t in triggers {
            if !t.route.starts_with('/') {
                bail!("route `{}` must start with `/`", t.route);
            }
            let pattern = match t.route.strip_suffix("/...") {
                Some(prefix) => Pattern::Prefix(prefix.to_string()),
                None => Pattern::Exact(t.route.trim_end_matches('/').to_string()),
            };
            if routes.iter().any(|(p, _, _)| *p == pattern) {
                bail!("route `{}` is declared twice", t.route);
            }
            routes.push((pattern, t.route.clone(), t.component.clone()));
        }
        routes.sort_by_key(|(p, _, _)| match p {
            Pattern::Exact(_) => (0, 0),
            Pattern::Prefix(prefix) => (1, usize::MAX - prefix.len()),
        });
        Ok(Routes { routes })
    }

    pub fn resolve(&self, path: &str) -> Option<RouteMatch> {
        let trimmed = path.trim_end_matches('/');
        self.routes.iter().find_map(|(pattern, route, component)| {
            let (base, path_info) = match pattern {
                Pattern::Exact(p) if p == trimmed => (p.clone(), String::new()),
                Pattern::Prefix(prefix) => {
                    let rest = path.strip_prefix(prefix.as_str())?;
                    if !(rest.is_empty() || rest.starts_with('/')) {
                        return None;
                    }
                    (prefix.clone(), rest.to_string())
                }
                Pattern::Exact(_) => return None,
            };
            Some(RouteMatch {
                component: component.clone(),
                route: route.clone(),
                base,
                path_info,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn routes(pairs: &[(&str, &str)]) -> Routes {
        Routes::new(
            &pairs
                .iter()
                .map(|(r, c)| HttpTrigger {
                    route: r.to_string(),
                    component: c.to_string(),
                })
                .collect::<Vec<_>>(),
        )
        .unwrap()
    }

    #[test]
    fn most_specific_route_wins() {
        let r = routes(&[("/...", "all"), ("/api/...", "api"), ("/health", "health")]);
        let m = r.resolve("/health").unwrap();
        assert_eq!((m.component.as_str(), m.path_info.as_str()), ("health", ""));
        assert_eq!(r.resolve("/health/").unwrap().component, "health");
        let m = r.resolve("/api/tools/x").unwrap();
        assert_eq!(
            (m.component.as_str(), m.base.as_str(), m.path_info.as_str()),
            ("api", "/api", "/tools/x")
        );
        assert_eq!(r.resolve("/api").unwrap().component, "api");
        assert_eq!(r.resolve("/apix").unwrap().component, "all");
        let m = r.resolve("/other").unwrap();
        assert_eq!((m.base.as_str(), m.path_info.as_str()), ("", "/other"));
    }

    #[test]
    fn no_match_and_bad_routes() {
        assert!(routes(&[("/health", "h")]).resolve("/nope").is_none());
        let t = |r: &str| HttpTrigger {
            route: r.into(),
            component: "c".into(),
        };
        assert!(Routes::new(&[t("/a"), t("/a")]).is_err());
        assert!(Routes::new(&[t("a")]).is_err());
    }

    proptest! {
        #[test]
        fn resolve_never_panics(path in ".{0,30}") {
            let _ = routes(&[("/...", "all"), ("/a/...", "a"), ("/b", "b")]).resolve(&path);
        }
    }
}
