//! A memory budget per query (issue #14): Grafeo has no memory limit per query, so a
//! statement like `RETURN range(1, 20000000)` grew devgraph past gigabytes. devgraph's
//! allocator ([`Counting`], installed by the binary) counts the bytes each thread
//! allocates while it runs a query ([`QueryScope`]); past the budget it sets the query's
//! deadline (Grafeo's operators, `range()` included, check it about every 2,048 values or
//! rows) to now, so Grafeo stops the statement as though it timed out, and the scope
//! reports the budget was spent ([`QueryScope::exceeded`]): the answer is Neo4j's
//! `Neo.TransientError.General.MemoryPoolOutOfMemoryError`. A process-wide ceiling
//! ([`PROCESS_LIMIT`]) stops whichever query allocates once devgraph as a whole holds too
//! much (worker threads and concurrent queries included).
//!
//! Without the allocator (a library user that does not install it) nothing is counted
//! and only Grafeo's own limits apply.
//!
//! Under the counting sits jemalloc ([`Inner`]), not the system allocator: Grafeo builds
//! and drops column vectors of 2,048 values (16 to 64 KiB) for every row a subquery runs
//! for, and glibc's malloc served each from its shared bins (a third of the executor's
//! batch statement's CPU in malloc, free and their consolidation). jemalloc keeps them in
//! a per-thread cache ([`JEMALLOC_CONF`]): 1,000 payments in chunks of 50 cost about a
//! quarter less CPU, one order's statement about 30 % less, with the same peak memory
//! (mimalloc 3 saved as much but held six times the memory and ran the first large
//! statement twice as slowly).

use grafeo_core::execution::deadline;
#[cfg(target_env = "msvc")]
use std::alloc::System as Inner;
use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
#[cfg(not(target_env = "msvc"))]
use tikv_jemallocator::Jemalloc as Inner;

/// Default bytes one query may hold at once: 256 MiB, Grafeo's own budget for one path
/// search; far above what any query of the demo graph needs (its largest answers are a
/// few MB).
pub const DEFAULT_QUERY_LIMIT: usize = 256 * 1024 * 1024;
/// Default bytes devgraph as a whole may hold before every query that allocates stops.
pub const PROCESS_LIMIT: usize = 1024 * 1024 * 1024;

static QUERY_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_QUERY_LIMIT);
static PROCESS: AtomicUsize = AtomicUsize::new(PROCESS_LIMIT);
/// Bytes held by the whole process (only counted with [`Counting`] installed).
static LIVE: AtomicIsize = AtomicIsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Net bytes this thread allocated since its query began (0 outside a query).
    static USED: Cell<isize> = const { Cell::new(0) };
    /// This thread's query budget in bytes; 0 when it runs no query.
    static LIMIT: Cell<usize> = const { Cell::new(0) };
    /// The budget was spent (and the deadline set).
    static TRIPPED: Cell<bool> = const { Cell::new(false) };
}

/// Sets the budgets (bytes): per query, and for the whole process.
pub fn configure(query: usize, process: usize) {
    QUERY_LIMIT.store(query.max(1), Ordering::Relaxed);
    PROCESS.store(process.max(1), Ordering::Relaxed);
}

pub fn query_limit() -> usize {
    QUERY_LIMIT.load(Ordering::Relaxed)
}

/// Bytes the process holds now (to within [`LIVE_BATCH`] per thread), when the allocator
/// is installed.
pub fn live_bytes() -> Option<usize> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| LIVE.load(Ordering::Relaxed).max(0) as usize)
}

/// jemalloc's options, read once at its start: cache blocks up to 128 KiB per thread
/// (default 32 KiB), so a vector of 2,048 `Value`s is reused instead of going back to the
/// arena. `_RJEM_MALLOC_CONF` in the environment still overrides it.
#[cfg(not(target_env = "msvc"))]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static JEMALLOC_CONF: &[u8; 18] = b"tcache_max:131072\0";

/// The counting allocator: [`Inner`] plus the bookkeeping above.
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { Inner.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { Inner.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { Inner.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { Inner.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// How far this thread's count may drift from [`LIVE`] before it is added there: one
/// atomic add on a line every thread writes cost a tenth of a batch statement's time
/// (Grafeo allocates and frees for every row a subquery runs for). The process ceiling is
/// then exact to within this much per thread; a query's start and end add the thread's
/// share too, so a thread that ends (tokio's blocking threads do) leaves out at most what
/// it allocated after its last query.
const LIVE_BATCH: isize = 256 * 1024;

thread_local! {
    /// Bytes this thread allocated (net) and has not added to [`LIVE`] yet.
    static PENDING: Cell<isize> = const { Cell::new(0) };
}

/// Records `delta` bytes. Runs inside the allocator: it must not allocate (the thread
/// locals are `const`-initialised cells without destructors).
#[inline]
fn note(delta: isize) {
    let pending = PENDING.try_with(|p| {
        let v = p.get() + delta;
        if v.abs() < LIVE_BATCH {
            p.set(v);
            Some(v)
        } else {
            p.set(0);
            LIVE.fetch_add(v, Ordering::Relaxed);
            None
        }
    });
    let live = match pending {
        Ok(Some(pending)) => LIVE.load(Ordering::Relaxed) + pending,
        Ok(None) => LIVE.load(Ordering::Relaxed),
        // The thread is going away: count the bytes at once.
        Err(_) => LIVE.fetch_add(delta, Ordering::Relaxed) + delta,
    };
    let _ = LIMIT.try_with(|limit| {
        let limit = limit.get();
        if limit == 0 {
            return;
        }
        let used = USED.with(|u| {
            let v = u.get() + delta;
            u.set(v);
            v
        });
        if delta > 0
            && !TRIPPED.with(Cell::get)
            && (used > limit as isize || live > PROCESS.load(Ordering::Relaxed) as isize)
        {
            TRIPPED.with(|t| t.set(true));
            // Stop the statement at Grafeo's next deadline check. The scope is left
            // alive on purpose: `QueryScope`'s own drop restores the deadline.
            std::mem::forget(deadline::enter(Some(std::time::Instant::now())));
        }
    });
}

/// Marks the allocator as installed (the binary calls it once).
pub fn installed() {
    INSTALLED.store(true, Ordering::Relaxed);
}

/// One query on this thread, with its budget. Dropping it ends the counting and undoes
/// any deadline the budget set.
pub struct QueryScope {
    /// The deadline before the query: restored when the scope drops.
    _deadline: deadline::DeadlineScope,
    outer_limit: usize,
    outer_used: isize,
    outer_tripped: bool,
}

impl QueryScope {
    pub fn begin() -> QueryScope {
        let deadline = deadline::enter(None);
        let scope = QueryScope {
            _deadline: deadline,
            outer_limit: LIMIT.with(Cell::get),
            outer_used: USED.with(Cell::get),
            outer_tripped: TRIPPED.with(Cell::get),
        };
        flush_pending();
        USED.with(|u| u.set(0));
        TRIPPED.with(|t| t.set(false));
        LIMIT.with(|l| l.set(query_limit()));
        scope
    }

    /// True once the query spent its budget (or the process its own).
    pub fn exceeded(&self) -> bool {
        TRIPPED.with(Cell::get)
    }

    /// Net bytes the query holds now.
    pub fn used(&self) -> isize {
        USED.with(Cell::get)
    }
}

/// Adds this thread's not yet counted bytes to [`LIVE`].
fn flush_pending() {
    let _ = PENDING.try_with(|p| LIVE.fetch_add(p.replace(0), Ordering::Relaxed));
}

impl Drop for QueryScope {
    fn drop(&mut self) {
        flush_pending();
        LIMIT.with(|l| l.set(self.outer_limit));
        USED.with(|u| u.set(self.outer_used));
        TRIPPED.with(|t| t.set(self.outer_tripped));
    }
}
