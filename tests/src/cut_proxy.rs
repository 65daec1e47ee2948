//! A TCP proxy that breaks connections on demand, standing in for the proxies and
//! serverless request limits between a client and the application (or between the
//! application and the graph): it forwards every connection to one upstream address and
//! can cut every open connection at once ([`CutProxy::cut_all`]), cut each new
//! connection once it has carried a number of bytes back to its client
//! ([`CutProxy::cut_each_after`]), or hold every piece a client sends for a while, one
//! piece at a time across all connections ([`CutProxy::pace`]: a slow shared link, which
//! makes a batch of graph statements take a known time). It also stands in for a frozen or
//! killed graph server ([`CutProxy::hold`], [`CutProxy::close`]) where signals cannot be
//! used (every leased Neo4j lives in one JVM).

use anyhow::{Context, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What every connection reads of the proxy's settings.
struct Settings {
    upstream: String,
    /// Bumped to cut every connection open at that moment.
    cuts: watch::Sender<u64>,
    /// Bytes towards the client after which a new connection is cut (`None`: never).
    cut_after: Mutex<Option<u64>>,
    /// How long each piece a client sends is held (`None`: not at all).
    pace: Mutex<Option<Duration>>,
    /// The shared link a paced piece holds while it waits.
    link: tokio::sync::Mutex<()>,
    /// Connections cut so far (by either kind of cut).
    cut_connections: AtomicU64,
    /// While true, nothing passes either way (a frozen server).
    held: watch::Sender<bool>,
}

/// A running proxy; stops accepting (and cuts what is open) on drop.
pub struct CutProxy {
    /// `http://127.0.0.1:<port>`: what a client is pointed at instead of the upstream.
    pub url: String,
    settings: Arc<Settings>,
    accept: JoinHandle<()>,
}

impl CutProxy {
    /// A proxy on a free local port in front of `upstream` (a base URL such as
    /// `http://127.0.0.1:7474`, or `host:port`).
    pub async fn start(upstream: &str) -> Result<CutProxy> {
        let upstream = crate::raw_http::authority(upstream)?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let settings = Arc::new(Settings {
            upstream,
            cuts: watch::channel(0).0,
            cut_after: Mutex::new(None),
            pace: Mutex::new(None),
            link: tokio::sync::Mutex::new(()),
            cut_connections: AtomicU64::new(0),
            held: watch::channel(false).0,
        });
        let shared = settings.clone();
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let settings = shared.clone();
                tokio::spawn(async move {
                    if let Err(e) = forward(client, settings).await {
                        eprintln!("cut_proxy: a connection failed: {e:#}");
                    }
                });
            }
        });
        Ok(CutProxy {
            url,
            settings,
            accept,
        })
    }

    /// Cuts every connection open now (both of its sides are closed); later ones are
    /// forwarded as before.
    pub fn cut_all(&self) {
        self.settings
            .cuts
            .send_modify(|generation| *generation += 1);
    }

    /// Each connection opened from now on is cut once it has carried `bytes` towards its
    /// client (exactly that many are delivered); `None` lets them run.
    pub fn cut_each_after(&self, bytes: Option<u64>) {
        *lock(&self.settings.cut_after) = bytes;
    }

    /// Every piece a client sends from now on waits `delay` on one link shared by all
    /// connections before it is passed on; `None` passes pieces on at once.
    pub fn pace(&self, delay: Option<Duration>) {
        *lock(&self.settings.pace) = delay;
    }

    /// While `held`, every piece either side sends waits (connections are still accepted):
    /// a frozen server, as SIGSTOP makes one. Releasing passes on what queued up.
    pub fn hold(&self, held: bool) {
        self.settings.held.send_replace(held);
    }

    /// Stops accepting (new connections are refused) and cuts every open one: a killed
    /// server.
    pub fn close(&self) {
        self.accept.abort();
        self.cut_all();
    }

    /// How many connections were cut so far.
    pub fn cut_connections(&self) -> u64 {
        self.settings.cut_connections.load(Ordering::SeqCst)
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut_all();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn wait_while_held(settings: &Settings) {
    let mut held = settings.held.subscribe();
    // An error means the sender is gone with the proxy: nothing to wait for.
    let _ = held.wait_for(|held| !held).await;
}

/// Forwards one connection until both sides are done, or it is cut.
async fn forward(client: TcpStream, settings: Arc<Settings>) -> Result<()> {
    let mut cut = settings.cuts.subscribe();
    cut.mark_unchanged();
    let upstream = TcpStream::connect(&settings.upstream)
        .await
        .with_context(|| format!("connecting to {}", settings.upstream))?;
    client.set_nodelay(true)?;
    upstream.set_nodelay(true)?;
    let budget = *lock(&settings.cut_after);
    let (mut client_read, mut client_write) = client.into_split();
    let (mut upstream_read, mut upstream_write) = upstream.into_split();
    let requests = async {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            let n = client_read.read(&mut buffer).await?;
            if n == 0 {
                // The client is done sending; the answer may still come.
                upstream_write.shutdown().await?;
                return anyhow::Ok(false);
            }
            wait_while_held(&settings).await;
            let delay = *lock(&settings.pace);
            if let Some(delay) = delay {
                let _link = settings.link.lock().await;
                tokio::time::sleep(delay).await;
            }
            upstream_write.write_all(&buffer[..n]).await?;
        }
    };
    let answers = async {
        let mut buffer = vec![0u8; 16 * 1024];
        let mut left = budget;
        loop {
            let n = upstream_read.read(&mut buffer).await?;
            if n == 0 {
                client_write.shutdown().await?;
                return anyhow::Ok(false);
            }
            wait_while_held(&settings).await;
            let pass = left.map_or(n, |left| n.min(left as usize));
            client_write.write_all(&buffer[..pass]).await?;
            if let Some(left) = &mut left {
                *left -= pass as u64;
                if *left == 0 {
                    return Ok(true);
                }
            }
        }
    };
    tokio::pin!(requests, answers);
    let (mut requests_done, mut answers_done) = (false, false);
    let was_cut = loop {
        tokio::select! {
            done = &mut requests, if !requests_done => {
                requests_done = true;
                // A failed side ends the connection, as a real proxy's would.
                if done? || answers_done { break false; }
            }
            done = &mut answers, if !answers_done => {
                answers_done = true;
                if done? { break true; }
                if requests_done { break false; }
            }
            _ = cut.changed() => break true,
        }
    };
    if was_cut {
        settings.cut_connections.fetch_add(1, Ordering::SeqCst);
    }
    // Dropping both halves of both sockets closes them.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An upstream that answers every piece it reads with the same bytes, and then
    /// `extra` more.
    async fn echo(extra: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buffer = [0u8; 1024];
                    while let Ok(n) = socket.read(&mut buffer).await {
                        if n == 0 {
                            return;
                        }
                        let mut answer = buffer[..n].to_vec();
                        answer.extend(std::iter::repeat_n(b'x', extra));
                        if socket.write_all(&answer).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        url
    }

    async fn connect(proxy: &CutProxy) -> TcpStream {
        TcpStream::connect(crate::raw_http::authority(&proxy.url).unwrap())
            .await
            .unwrap()
    }

    /// Reads until `n` bytes or the end; returns what came.
    async fn read_some(socket: &mut TcpStream, n: usize) -> Vec<u8> {
        let mut got = Vec::new();
        let mut buffer = [0u8; 1024];
        while got.len() < n {
            match tokio::time::timeout(Duration::from_secs(5), socket.read(&mut buffer)).await {
                Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(k)) => got.extend_from_slice(&buffer[..k]),
                Err(_) => panic!("nothing within 5 s after {got:?}"),
            }
        }
        got
    }

    #[tokio::test]
    async fn forwards_both_ways_until_cut() {
        let proxy = CutProxy::start(&echo(0).await).await.unwrap();
        let mut socket = connect(&proxy).await;
        socket.write_all(b"hello").await.unwrap();
        assert_eq!(read_some(&mut socket, 5).await, b"hello");
        proxy.cut_all();
        // The cut closes the connection: the client reads its end.
        assert_eq!(read_some(&mut socket, 1).await, b"");
        assert_eq!(proxy.cut_connections(), 1);
        // A new connection is forwarded again.
        let mut again = connect(&proxy).await;
        again.write_all(b"more").await.unwrap();
        assert_eq!(read_some(&mut again, 4).await, b"more");
    }

    #[tokio::test]
    async fn a_held_proxy_passes_nothing_until_released_and_a_closed_one_refuses() {
        let proxy = CutProxy::start(&echo(0).await).await.unwrap();
        let mut socket = connect(&proxy).await;
        proxy.hold(true);
        socket.write_all(b"held").await.unwrap();
        let mut buffer = [0u8; 8];
        let waited =
            tokio::time::timeout(Duration::from_millis(300), socket.read(&mut buffer)).await;
        assert!(waited.is_err(), "an answer came through a held proxy");
        proxy.hold(false);
        assert_eq!(read_some(&mut socket, 4).await, b"held");
        proxy.close();
        assert_eq!(read_some(&mut socket, 1).await, b"");
        // The listener goes when the aborted accept task is dropped, at the runtime's next turn.
        let address = crate::raw_http::authority(&proxy.url).unwrap();
        let mut refused = false;
        for _ in 0..100 {
            if TcpStream::connect(&address).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(refused, "a closed proxy still accepts connections");
    }

    #[tokio::test]
    async fn cuts_a_connection_after_its_byte_budget() {
        let proxy = CutProxy::start(&echo(100).await).await.unwrap();
        proxy.cut_each_after(Some(50));
        let mut socket = connect(&proxy).await;
        socket.write_all(b"hi").await.unwrap();
        assert_eq!(read_some(&mut socket, 1000).await.len(), 50);
        assert_eq!(proxy.cut_connections(), 1);
    }

    #[tokio::test]
    async fn a_paced_link_passes_one_piece_at_a_time() {
        let proxy = CutProxy::start(&echo(0).await).await.unwrap();
        proxy.pace(Some(Duration::from_millis(100)));
        let (mut a, mut b) = (connect(&proxy).await, connect(&proxy).await);
        let started = std::time::Instant::now();
        a.write_all(b"a").await.unwrap();
        b.write_all(b"b").await.unwrap();
        assert_eq!(read_some(&mut a, 1).await, b"a");
        assert_eq!(read_some(&mut b, 1).await, b"b");
        assert!(started.elapsed() >= Duration::from_millis(200));
    }
}
