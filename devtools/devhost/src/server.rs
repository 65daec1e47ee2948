//! The HTTP trigger: routes requests like Spin, instantiates the component per request
//! from its pre-linked form, and streams its response back.

use crate::app::App;
use crate::driven::Running;
use crate::host::RequestState;
use crate::request_body::RequestBody;
use anyhow::{Result, anyhow};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;
use tokio::net::TcpListener;
use wasmtime::Store;
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::bindings::http::types::Scheme;
use wasmtime_wasi_http::body::HyperOutgoingBody;
use wasmtime_wasi_http::io::TokioIo;

pub async fn serve(app: Arc<App>, listener: TcpListener) -> Result<()> {
    loop {
        let (stream, client) = listener.accept().await?;
        // A response may leave in several writes (head, then body chunks as the
        // component writes them); with Nagle's algorithm a write waits for the client's
        // ACK of the previous one, which the client delays: milliseconds per response.
        if let Err(e) = stream.set_nodelay(true) {
            eprintln!("devhost: connection from {client}: TCP_NODELAY: {e}");
        }
        let app = app.clone();
        tokio::task::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let app = app.clone();
                async move { Ok::<_, std::convert::Infallible>(handle(app, request, client).await) }
            });
            if let Err(e) = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                eprintln!("devhost: connection from {client}: {e}");
            }
        });
    }
}

async fn handle(
    app: Arc<App>,
    request: hyper::Request<hyper::body::Incoming>,
    client: SocketAddr,
) -> hyper::Response<HyperOutgoingBody> {
    let path = request.uri().path().to_string();
    let Some(matched) = app.routes.resolve(&path) else {
        return plain(404, "no route in spin.toml matches this path");
    };
    let Some(component) = app.components.get(&matched.component) else {
        return plain(500, "route names a component that was not loaded");
    };
    match invoke(&app, component, request, &matched, client).await {
        Ok(response) => response,
        Err(e) => {
            eprintln!("devhost: component `{}` failed: {e:?}", matched.component);
            plain(500, "component failed; see devhost's log")
        }
    }
}

async fn invoke(
    app: &App,
    component: &crate::app::LoadedComponent,
    request: hyper::Request<hyper::body::Incoming>,
    matched: &crate::config::routes::RouteMatch,
    client: SocketAddr,
) -> Result<hyper::Response<HyperOutgoingBody>> {
    let (mut parts, body) = request.into_parts();
    let host = parts
        .headers
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost")
        .to_string();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    // Spin hands the guest an absolute URL and these headers.
    parts.uri = format!("http://{host}{path_and_query}").parse()?;
    let full_url = parts.uri.to_string();
    let route = matched.route.clone();
    for (name, value) in [
        ("spin-full-url", full_url),
        ("spin-path-info", matched.path_info.clone()),
        ("spin-matched-route", route.clone()),
        ("spin-raw-component-route", route.clone()),
        ("spin-component-route", matched.base.clone()),
        ("spin-base-path", "/".to_string()),
        ("spin-client-addr", client.to_string()),
    ] {
        parts.headers.insert(name, value.parse()?);
    }
    let request = hyper::Request::from_parts(parts, RequestBody::new(body));

    // A pool slot for the instance, held until the instance is dropped with its store.
    let slot = match &app.instance_slots {
        Some(slots) => Some(slots.clone().acquire_owned().await?),
        None => None,
    };
    let timings = app
        .server_timing
        .then(|| Arc::new(crate::timing::RequestTimings::default()));
    let store_started = Instant::now();
    let mut store = Store::new(
        &app.engine,
        RequestState::new(
            component.policy.clone(),
            app.outbound.clone(),
            timings.clone(),
        )?,
    );
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let incoming = store
        .data_mut()
        .new_incoming_request(Scheme::Http, request)?;
    let outparam = store.data_mut().new_response_outparam(sender)?;
    if let Some(t) = &timings {
        t.store(store_started.elapsed());
    }
    // One call hook per store: the census (printed when the store goes) replaces the
    // timing's, whose `wasm` and `host` then read 0.
    if app.host_call_census {
        store.call_hook(crate::census::Census::default().hook());
    } else if let Some(t) = &timings {
        store.call_hook(t.clone().wasm_hook());
    }
    let pre = component.pre.clone();
    let instance_timings = timings.clone();
    let handler = async move {
        let mut store = store;
        let run = async {
            let instantiate_started = Instant::now();
            let proxy = pre.instantiate_async(&mut store).await?;
            if let Some(t) = &instance_timings {
                t.instantiated(instantiate_started);
            }
            let handler = proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, incoming, outparam);
            match &instance_timings {
                Some(t) => crate::polled::polled(handler, t.handler.clone()).await,
                None => handler.await,
            }
        };
        let result = run.await;
        // Freed after the response (src/driven.rs); the store first, so the instance's
        // memory is back in the pool before its slot is released.
        let remains: crate::driven::Remains = Box::new((store, slot));
        (result, remains)
    };
    // This task runs the handler (src/driven.rs): until the response is set, then as the
    // body is read.
    let mut running = Running::new(&matched.component, handler);
    let mut receiver: Pin<Box<dyn Future<Output = _> + Send>> = match &timings {
        Some(t) => Box::pin(crate::polled::polled(receiver, t.response.clone())),
        None => Box::pin(receiver),
    };
    // The handler first: a response it sets in this poll is taken in the same poll. An
    // ended handler that has not set one never will: its store, with the response's
    // sender, is only freed after the response, so its receiver would wait forever.
    let received = std::future::poll_fn(|cx| {
        let ended = running.poll_handler(cx);
        match receiver.as_mut().poll(cx) {
            Poll::Ready(received) => Poll::Ready(received.ok()),
            Poll::Pending if ended => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await;
    match received {
        Some(Ok(response)) => {
            let (mut parts, body) = response.into_parts();
            if let Some(t) = &timings {
                let header = t.header(t.since_instantiated());
                if let Ok(value) = hyper::header::HeaderValue::from_str(&header) {
                    parts.headers.append("server-timing", value);
                }
            }
            Ok(hyper::Response::from_parts(parts, running.into_body(body)))
        }
        Some(Err(code)) => Err(anyhow!("component answered with error code {code:?}")),
        None => {
            // The handler has ended (or its store went) without a response.
            let error = match running.take_result() {
                Some(Ok(())) => anyhow!("component returned without setting a response"),
                Some(Err(e)) => e,
                None => anyhow!("component dropped its response without ending"),
            };
            Err(error.context("component never set a response"))
        }
    }
}

/// A response devhost itself makes (Spin answers these in plain text too).
fn plain(status: u16, message: &str) -> hyper::Response<HyperOutgoingBody> {
    let body = Full::new(Bytes::from(format!("{message}\n")))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut response = hyper::Response::new(body);
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response
}
